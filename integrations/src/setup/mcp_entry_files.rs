//! Where each CLI keeps calyx's two MCP entries ([`super::mcp_entries`]), so `calyx doctor` can
//! say which of the two are there.

use std::path::{Path, PathBuf};

use super::mcp_entries::{ENTRIES, IPC_ENTRY};
use super::{read, Ctx, SetupError};
use crate::config_edit::{yaml, JsonDoc};
use crate::kind::AgentKind;

/// Where a CLI keeps its MCP entries, and in which syntax.
enum Location {
    /// A JSON (or JSONC) file; entries are members of the object at `parent`.
    Json(PathBuf, &'static [&'static str]),
    /// A TOML file; entries are `[mcp_servers.<name>]` tables.
    Toml(PathBuf),
    /// A YAML file; entries are children of the top-level `mcp_servers:`.
    Yaml(PathBuf),
    /// pi's extension, whose `calyx_mcp` tool stands in for `calyx-mcp`.
    PiExtension(PathBuf),
}

fn location(kind: AgentKind, ctx: &Ctx) -> Option<Location> {
    let dir = super::config_dir(kind, ctx);
    const SERVERS: &[&str] = &["mcpServers"];
    Some(match kind {
        AgentKind::ClaudeCode => Location::Json(super::claude::mcp_file(ctx), SERVERS),
        AgentKind::Codex | AgentKind::Grok => Location::Toml(dir.join("config.toml")),
        AgentKind::OpenCode => Location::Json(super::opencode::config_file(ctx), &["mcp"]),
        AgentKind::Hermes => Location::Yaml(dir.join("config.yaml")),
        AgentKind::Gemini => Location::Json(dir.join("settings.json"), SERVERS),
        AgentKind::Copilot => Location::Json(dir.join("mcp-config.json"), SERVERS),
        AgentKind::Kimi | AgentKind::Cursor => Location::Json(dir.join("mcp.json"), SERVERS),
        AgentKind::Pi => {
            Location::PiExtension(dir.join("extensions").join(super::pi::EXTENSION_FILE))
        }
        AgentKind::Antigravity => return None,
    })
}

impl Location {
    fn path(&self) -> &Path {
        match self {
            Location::Json(path, _)
            | Location::Toml(path)
            | Location::Yaml(path)
            | Location::PiExtension(path) => path,
        }
    }

    /// Whether `text` (the file's contents) holds the entry `name`. A file that does not parse
    /// holds nothing.
    fn holds(&self, text: &str, name: &str) -> bool {
        match self {
            Location::Json(_, parent) => JsonDoc::parse(text).is_ok_and(|doc| {
                let at: Vec<&str> = parent.iter().copied().chain([name]).collect();
                doc.root().get(&at).is_some()
            }),
            Location::Toml(_) => crate::config_edit::split_bom(text)
                .1
                .parse::<toml_edit::DocumentMut>()
                .is_ok_and(|doc| {
                    doc.get("mcp_servers")
                        .and_then(|servers| servers.get(name))
                        .is_some()
                }),
            Location::Yaml(_) => {
                yaml::remove_child(text, "mcp_servers", name).is_ok_and(|rest| rest != text)
            }
            Location::PiExtension(_) => {
                let marker = if name == IPC_ENTRY {
                    super::pi::IPC_TOOL_MARKER
                } else {
                    super::pi::HOSTED_TOOL_MARKER
                };
                text.contains("calyx's pi extension") && text.contains(marker)
            }
        }
    }
}

/// Which of calyx's entries the CLI's config holds now: `(name, present)` for both, or None for
/// a CLI calyx writes no MCP entry for (Antigravity). For pi, `calyx-ipc` is its extension's
/// `calyx` tool and `calyx-mcp` its `calyx_mcp` tool.
pub fn present(
    kind: AgentKind,
    ctx: &Ctx,
) -> Result<Option<[(&'static str, bool); 2]>, SetupError> {
    let Some(location) = location(kind, ctx) else {
        return Ok(None);
    };
    let text = read(location.path())?.unwrap_or_default();
    Ok(Some(
        ENTRIES.map(|name| (name, location.holds(&text, name))),
    ))
}
