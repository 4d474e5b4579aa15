// Where Debian's Chromium and npm's playwright-core are, for the MCP App view browser tests:
// `include!`d by the view server's own (src/views/server/browser_tests.rs) and by the end-to-end
// ones (tests/support_browser.rs), which live in different crates.

/// Debian's Chromium, where its package puts it.
fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/lib/chromium/chromium"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// Where `.ci/run` (and /work/shared/mcp/browser.sh) install playwright-core.
fn playwright_core() -> Option<PathBuf> {
    let tools = std::env::var_os("CONFORMANCE_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(cache.join("calyx-mcp-tools"))
        })?;
    let dir = tools.join("node_modules/playwright-core");
    dir.join("index.mjs").is_file().then_some(dir)
}
