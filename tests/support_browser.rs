//! Headless Chromium for the MCP App view tests: Debian's `chromium` driven by npm's
//! `playwright-core` (both installed by `.ci/run`), and the node scripts in `tests/views/`
//! that open a view's URL and print one JSON line of what they saw.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

/// Where the browser and its driver are.
pub(crate) struct Browser {
    pub chromium: PathBuf,
    pub playwright: PathBuf,
}

include!("views/browser_paths.rs");

/// Chromium and playwright-core, or None with the reason printed (a failure when
/// `CALYX_REQUIRE_BROWSER` is set, as under CI).
pub(crate) fn browser() -> Option<Browser> {
    match (chromium(), playwright_core()) {
        (Some(chromium), Some(playwright)) => Some(Browser {
            chromium,
            playwright,
        }),
        _ => {
            assert!(
                std::env::var_os("CALYX_REQUIRE_BROWSER").is_none(),
                "CALYX_REQUIRE_BROWSER is set but Chromium or playwright-core is missing"
            );
            eprintln!("skipped: Chromium or playwright-core is not installed");
            None
        }
    }
}

impl Browser {
    /// `node tests/views/<script> URL PLAYWRIGHT CHROMIUM EXTRA...`, not yet run.
    pub(crate) fn command(
        &self,
        script: &str,
        url: &str,
        extra: &[&str],
    ) -> tokio::process::Command {
        let mut command = tokio::process::Command::new("node");
        command
            .arg(format!(
                "{}/tests/views/{script}",
                env!("CARGO_MANIFEST_DIR")
            ))
            .arg(url)
            .arg(&self.playwright)
            .arg(&self.chromium)
            .args(extra)
            .kill_on_drop(true);
        command
    }

    /// Runs `script` on `url` (within 120 s) and returns the JSON line it printed last,
    /// which must carry no `error`. The script's stderr (the page's console) is printed.
    pub(crate) async fn run(&self, script: &str, url: &str, extra: &[&str]) -> Value {
        let run = self.command(script, url, extra).output();
        let output = tokio::time::timeout(Duration::from_secs(120), run)
            .await
            .expect("the browser run finishes in time")
            .expect("node runs");
        last_line(&output)
    }
}

/// The JSON line a script printed last (it must carry no `error`); its stderr is printed.
pub(crate) fn last_line(output: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("the browser's console:\n{stderr}");
    let seen: Value = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no result line; stdout {stdout}; stderr {stderr}"));
    assert!(seen.get("error").is_none(), "{seen}\n{stderr}");
    seen
}
