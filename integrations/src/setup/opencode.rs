//! OpenCode (verified on 1.18.33): the MCP entry (`type: remote`, `{env:VAR}` headers) in
//! `$XDG_CONFIG_HOME/opencode/opencode.json` (or `opencode.jsonc` when that is the file the
//! user has), and calyx's own plugin in `plugins/calyx.js`, which posts plugin hooks as
//! `{hook, input, output, directory}` and bus events as themselves, reading the endpoint file
//! (cached by modification time) so a restarted server is found.

use super::hooks::edit_mcp_entries;
use super::{edit_file, owned_file, Ctx, Op, Plan, SetupError};
use crate::config_edit::{JsonDoc, J};
use crate::kind::AgentKind;

const KIND: AgentKind = AgentKind::OpenCode;

/// The plugin's file name in OpenCode's plugin directory.
pub const PLUGIN_FILE: &str = "calyx.js";

/// The plugin's text, with the endpoint file's path filled in.
pub fn plugin_source(ctx: &Ctx) -> String {
    include_str!("assets/opencode-plugin.js").replace(
        "__CALYX_ENDPOINT_FILE__",
        &serde_json::Value::String(ctx.endpoint_file.display().to_string()).to_string(),
    )
}

fn mcp_entry(ctx: &Ctx, url: &str) -> J {
    J::obj([
        ("type", J::s("remote")),
        ("url", J::s(url)),
        (
            "headers",
            ctx.mcp_headers(|v| format!("{{env:{v}}}"), Some(KIND)),
        ),
    ])
}

/// `opencode.json`, or `opencode.jsonc` when that is the one the user has.
pub(super) fn config_file(ctx: &Ctx) -> std::path::PathBuf {
    let dir = super::config_dir(KIND, ctx);
    let jsonc = dir.join("opencode.jsonc");
    if !dir.join("opencode.json").exists() && jsonc.exists() {
        jsonc
    } else {
        dir.join("opencode.json")
    }
}

pub(super) fn plan(ctx: &Ctx, op: Op, plan: &mut Plan) -> Result<(), SetupError> {
    let dir = super::config_dir(KIND, ctx);
    edit_file(plan, &config_file(ctx), 0o600, op, |text| {
        let mut doc = JsonDoc::parse(text)?;
        edit_mcp_entries(&mut doc, "mcp", ctx, op, |url| mcp_entry(ctx, url))?;
        Ok(doc.text())
    })?;
    owned_file(
        plan,
        &dir.join("plugins").join(PLUGIN_FILE),
        op,
        &plugin_source(ctx),
        |t| t.contains("calyx's OpenCode plugin"),
    )
}
