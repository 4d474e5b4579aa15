//! What the hosted-server tests share: the real server-everything from npm, and the project's
//! fixture server.

pub mod apps;
pub mod fixture;
pub mod oauth_server;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The pinned server-everything (issue 16; ../shared/mcp/apps-servers.md).
pub const EVERYTHING: &str = "@modelcontextprotocol/server-everything@2026.8.31";

/// `dist/index.js` of server-everything, installed on first use into a cache under the target
/// directory (`CALYX_MCP_TEST_SERVERS` overrides the cache). `None` (printed) when npm or node
/// is missing, unless `CALYX_REQUIRE_NODE` is set (CI): then that is a failure. The tests share
/// one process, so the install runs once for all of them.
pub fn server_everything() -> Option<PathBuf> {
    static INSTALLED: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = INSTALLED.get_or_init(install).clone();
    if found.is_none() && std::env::var_os("CALYX_REQUIRE_NODE").is_some() {
        panic!("CALYX_REQUIRE_NODE is set and {EVERYTHING} could not be installed");
    }
    found
}

fn install() -> Option<PathBuf> {
    npm_install(EVERYTHING, &test_servers())
}

/// Where the tests' npm servers are installed: `CALYX_MCP_TEST_SERVERS`, else
/// `target/mcp-test-servers`.
pub fn test_servers() -> PathBuf {
    std::env::var_os("CALYX_MCP_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-test-servers")
        })
}

/// The `dist/index.js` of `package` (`@scope/name@version`) under `prefix`, installed with npm
/// when missing; None (with the reason printed) when npm cannot.
pub fn npm_install(package: &str, prefix: &std::path::Path) -> Option<PathBuf> {
    let name = package.rsplit_once('@').map_or(package, |(name, _)| name);
    let index = prefix.join("node_modules").join(name).join("dist/index.js");
    if index.is_file() {
        return Some(index);
    }
    std::fs::create_dir_all(prefix).expect("cache dir");
    let installed = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(prefix)
        .arg(package)
        .status();
    match installed {
        Ok(status) if status.success() && index.is_file() => Some(index),
        other => {
            println!("SKIP: cannot install {package} with npm ({other:?})");
            None
        }
    }
}

/// server-everything serving HTTP on a free loopback port, stopped (with its group) on drop.
pub struct HttpEverything {
    child: std::process::Child,
    pub port: u16,
}

impl HttpEverything {
    /// Starts `index` in `mode` (`streamableHttp` or `sse`) and waits (deadline 90 s) until it
    /// accepts connections.
    pub fn start(index: &std::path::Path, mode: &str) -> HttpEverything {
        use std::os::unix::process::CommandExt;
        // The preload binds port 0 and writes the port it got here: no probe-and-release race
        // with another test's server for the same port.
        let dir = tempfile::tempdir().expect("tempdir");
        let port_file = dir.path().join("port");
        let preload = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/hosted_support/bind-localhost.cjs");
        let child = Command::new("node")
            .arg("-r")
            .arg(preload)
            .arg(index)
            .arg(mode)
            .env("PORT", "3001")
            .env("CALYX_TEST_PORT_FILE", &port_file)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0)
            .spawn()
            .expect("node starts");
        let mut server = HttpEverything { child, port: 0 };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
        loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|text| text.trim().parse::<u16>().ok())
            {
                server.port = port;
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "server-everything {mode} did not listen within 90 s"
            );
            assert!(
                server.child.try_wait().ok().flatten().is_none(),
                "server-everything {mode} exited before listening"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        server
    }

    /// The URL of its MCP endpoint (`/mcp` for Streamable HTTP, `/sse` for legacy SSE).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.wait();
    }
}
