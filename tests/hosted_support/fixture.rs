//! The project's fixture MCP server (examples/mcp_fixture), which `cargo test` builds next to
//! the test binary: what the hosting tests need from a server on demand.

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The fixture's 56-character tool name (examples/mcp_fixture/tools.rs): 59 characters
/// published under the alias `fx`.
pub const LONG: &str = "a_tool_name_long_enough_that_its_published_name_is_59chr";

/// `target/<profile>/examples/mcp_fixture`, beside `target/<profile>/deps/<test binary>`.
/// `cargo test` builds examples before it runs tests; a run of one test target
/// (`cargo test --test integration`) does not, hence the message.
pub fn mcp_fixture() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let fixture = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|profile| profile.join("examples/mcp_fixture"))
        .expect("the test binary sits in target/<profile>/deps");
    assert!(
        fixture.is_file(),
        "{} is missing: `cargo test` builds it; after `cargo test --test ...` alone run \
         `cargo build --example mcp_fixture`",
        fixture.display()
    );
    fixture
}

/// The text `big {mib}` answers with: `mib` MiB of `a`..`z` repeated.
pub fn big_text(mib: usize) -> String {
    (0..mib << 20)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect()
}

/// The fixture serving Streamable HTTP on a free loopback port; killed on drop.
pub struct HttpFixture {
    child: Child,
    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl HttpFixture {
    /// Starts the fixture in HTTP mode and reads the URL it prints; its `slow` records
    /// cancels in `cancel_record`.
    pub fn start(cancel_record: &std::path::Path) -> HttpFixture {
        Self::start_with(cancel_record, &[])
    }

    /// As [`HttpFixture::start`], with more arguments (`--oauth`: it wants a bearer and is its
    /// own authorization server, examples/mcp_fixture/oauth.rs).
    pub fn start_with(cancel_record: &std::path::Path, more: &[&str]) -> HttpFixture {
        let mut child = Command::new(mcp_fixture())
            .arg("http")
            .args(more)
            .arg("--cancel-record")
            .arg(cancel_record)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the fixture starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut url = String::new();
        std::io::BufReader::new(stdout)
            .read_line(&mut url)
            .expect("the fixture prints its URL");
        let url = url.trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "{url:?}");
        HttpFixture { child, url }
    }
}

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
