//! The MCP Apps example servers from npm (`@modelcontextprotocol/server-*`, see
//! /work/shared/mcp/apps-servers.md), installed once per test process into
//! `target/mcp-test-servers/<name>` (one prefix each: two `npm install`s into one prefix race).

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// `@modelcontextprotocol/server-basic-vanillajs`, whose view has the four buttons.
pub const VANILLA: &str = "@modelcontextprotocol/server-basic-vanillajs@2.0.3";
/// `@modelcontextprotocol/server-system-monitor`, whose view polls an app-only tool.
pub const SYSTEM_MONITOR: &str = "@modelcontextprotocol/server-system-monitor@2.0.3";
/// `@modelcontextprotocol/server-budget-allocator`, whose view registers tools of its own
/// (offline; run with `--stdio`).
pub const BUDGET: &str = "@modelcontextprotocol/server-budget-allocator@2.0.3";

/// The `dist/index.js` of `package` (`@scope/name@version`), installing it when missing; None
/// (with the reason printed) when npm cannot, a failure when `CALYX_REQUIRE_NODE` is set.
pub fn apps_server(package: &str) -> Option<PathBuf> {
    static INSTALLED: OnceLock<Mutex<()>> = OnceLock::new();
    let _one_at_a_time = INSTALLED
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let name = package
        .rsplit_once('@')
        .map_or(package, |(name, _)| name)
        .to_string();
    let short = name.rsplit('/').next().unwrap_or(&name).to_string();
    let prefix = std::env::var_os("CALYX_MCP_TEST_SERVERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/mcp-test-servers")
        })
        .join(&short);
    let index = prefix
        .join("node_modules")
        .join(&name)
        .join("dist/index.js");
    if index.is_file() {
        return Some(index);
    }
    std::fs::create_dir_all(&prefix).expect("cache dir");
    let installed = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--prefix"])
        .arg(&prefix)
        .arg(package)
        .status();
    match installed {
        Ok(status) if status.success() && index.is_file() => Some(index),
        other => {
            assert!(
                std::env::var_os("CALYX_REQUIRE_NODE").is_none(),
                "CALYX_REQUIRE_NODE is set and {package} could not be installed: {other:?}"
            );
            println!("SKIP: cannot install {package} with npm ({other:?})");
            None
        }
    }
}
