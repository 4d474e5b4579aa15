//! The MCP Apps example servers from npm (`@modelcontextprotocol/server-*`, see
//! /work/shared/mcp/apps-servers.md), installed once per test process into
//! `target/mcp-test-servers/<name>` (one prefix each: two `npm install`s into one prefix race).

use std::path::PathBuf;
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
    let name = package.rsplit_once('@').map_or(package, |(name, _)| name);
    let short = name.rsplit('/').next().unwrap_or(name);
    let found = super::npm_install(package, &super::test_servers().join(short));
    assert!(
        found.is_some() || std::env::var_os("CALYX_REQUIRE_NODE").is_none(),
        "CALYX_REQUIRE_NODE is set and {package} could not be installed"
    );
    found
}
