//! What `calyx setup` writes into each agent CLI's own configuration, and how it takes it back.
//!
//! Each CLI module turns a [`Ctx`] (where the user's files are, calyx's binary, the endpoint's
//! port and token) into a [`Plan`]: the files it would create, change or delete, with their
//! text before and after. Planning reads but never writes, so the same plan drives the diff,
//! `--dry-run`, `doctor` ("would install change anything?") and the server's re-sync; only
//! [`apply`] writes. Install is "remove calyx's entries, then add them fresh", which makes a
//! second install a no-op and uninstall-after-install the identity. Before setup writes,
//! [`cli_check`] asks the installed CLI itself to load the files as the plan would leave them
//! ([`probe`] runs it, bounded in time).

mod antigravity;
mod claude;
pub mod cli_check;
mod codex;
mod copilot;
mod cursor;
mod gemini;
mod grok;
mod hermes;
mod hooks;
mod kimi;
pub mod mcp_entries;
pub mod mcp_entry_files;
mod opencode;
mod pi;
pub mod probe;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::config_edit::{fsio, EditError};
use crate::kind::AgentKind;

/// Everything a plan depends on. Built by the command from the real environment, by tests
/// from a temporary directory.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The user's home directory.
    pub home: PathBuf,
    /// Environment variables that relocate CLI config dirs (`CODEX_HOME`, `XDG_CONFIG_HOME`,
    /// `CLAUDE_CONFIG_DIR`, `COPILOT_HOME`, `HERMES_HOME`, `PI_CODING_AGENT_DIR`,
    /// `KIMI_SHARE_DIR`, `KIMI_CODE_HOME`, `GROK_HOME`, `GEMINI_CLI_HOME`); absent or empty
    /// means the CLI's default.
    pub env: BTreeMap<String, String>,
    /// Absolute path of the calyx binary the hooks run.
    pub calyx_bin: PathBuf,
    /// calyx's endpoint file, which the OpenCode plugin and pi extension read on every event.
    pub endpoint_file: PathBuf,
    /// The endpoint's port (MCP entries hold it literally).
    pub port: u16,
    /// The endpoint's bearer token (MCP entries hold it literally).
    pub token: String,
    /// Whether the `calyx-mcp` entry (the tools of the MCP servers calyx hosts for the user)
    /// is written beside `calyx-ipc`: `[mcp] host_servers` in calyx's config.toml. Off, install
    /// removes an existing one (see [`mcp_entries`]).
    pub host_servers: bool,
}

impl Ctx {
    /// A relocating variable's value, when set and non-empty.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `$VAR` if set, else `~/default`.
    fn dir(&self, var: &str, default: &str) -> PathBuf {
        self.var(var)
            .map(PathBuf::from)
            .unwrap_or_else(|| self.home.join(default))
    }

    /// `$XDG_CONFIG_HOME` or `~/.config`.
    fn xdg_config(&self) -> PathBuf {
        self.dir("XDG_CONFIG_HOME", ".config")
    }

    /// The MCP URL of calyx's own tools (`calyx-ipc`).
    pub fn mcp_url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The MCP URL of the hosted servers' tools (`calyx-mcp`).
    pub fn hosted_url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp-hosted", self.port)
    }

    /// The `Authorization` header value.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", self.token)
    }

    /// The `headers` object of a JSON MCP entry: the bearer token, the two identity variables
    /// in the CLI's own expansion syntax (`expand("CALYX_SURFACE_ID")`), and the agent kind,
    /// except for Claude Code (`kind` None: the endpoint defaults to it).
    pub(crate) fn mcp_headers(
        &self,
        expand: fn(&str) -> String,
        kind: Option<AgentKind>,
    ) -> crate::config_edit::J {
        use crate::config_edit::J;
        let mut headers = vec![
            ("Authorization", J::s(self.bearer())),
            ("X-Calyx-Surface-ID", J::s(expand("CALYX_SURFACE_ID"))),
            ("X-Calyx-Session-ID", J::s(expand("CALYX_SESSION_ID"))),
        ];
        if let Some(kind) = kind {
            headers.push(("X-Calyx-Agent-Kind", J::s(kind.as_str())));
        }
        J::obj(headers)
    }

    /// The hook command line: the binary's path in double quotes (paths with spaces), the
    /// `hook` verb, the kind, and `--approval` for a gate.
    pub fn hook_command(&self, kind: AgentKind, approval: bool) -> String {
        let gate = if approval { " --approval" } else { "" };
        format!(
            "\"{}\" hook {}{gate}",
            self.calyx_bin.display(),
            kind.as_str()
        )
    }
}

/// Install or uninstall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Install,
    Uninstall,
}

/// One file a plan creates (`before` None), changes, or deletes (`after` None).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// The path as the user knows it (a symlink stays a symlink; its target is written).
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Mode for a file that does not exist yet (0600 when it will hold the token).
    pub new_mode: u32,
    /// `Some(mode)`: the file exists with this mode, which lets other local users read it,
    /// and it will hold calyx's token, so the write sets it to `new_mode` (0600). A change may
    /// be only this (`before == after`): an install made before the rule is tightened too.
    pub old_mode: Option<u32>,
}

impl FileChange {
    /// Whether the text changes (not only the mode).
    pub fn edits_text(&self) -> bool {
        self.before != self.after
    }
}

/// What setup would do for one CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub kind: AgentKind,
    pub changes: Vec<FileChange>,
    /// Things the user should know: events skipped because of their shape, steps left to do.
    pub notes: Vec<String>,
}

/// A refusal: the file and what is wrong with it (with the line, when known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for SetupError {}

impl SetupError {
    /// Whether the write was refused because the file changed after it was read (planning
    /// again and re-applying is safe).
    pub fn changed(&self) -> bool {
        self.message == fsio::CHANGED
    }

    fn edit(path: &Path, e: EditError) -> Self {
        Self {
            path: path.to_path_buf(),
            message: format!("{e}; the file was left as it is"),
        }
    }

    fn io(path: &Path, e: std::io::Error) -> Self {
        Self {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }
}

/// Environment variables that move a CLI's config directory: `calyx setup` copies the ones set
/// into [`Ctx::env`], so plans follow them.
pub const RELOCATING_VARS: [&str; 10] = [
    "XDG_CONFIG_HOME",
    "CLAUDE_CONFIG_DIR",
    "CODEX_HOME",
    "COPILOT_HOME",
    "HERMES_HOME",
    "PI_CODING_AGENT_DIR",
    "KIMI_SHARE_DIR",
    "KIMI_CODE_HOME",
    "GROK_HOME",
    "GEMINI_CLI_HOME",
];

/// Whether calyx wires this CLI without being asked by name. Antigravity and Cursor Agent
/// could not be run here, so their file formats come from published notes only: they are wired
/// only with `--agent NAME`, and `doctor` says so. Kimi is run by tests/realcli (kimi-cli
/// 1.52.0), like the other verified CLIs.
pub fn verified(kind: AgentKind) -> bool {
    !matches!(kind, AgentKind::Antigravity | AgentKind::Cursor)
}

/// The executable names a CLI installs.
pub fn binary_names(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        AgentKind::ClaudeCode => &["claude"],
        AgentKind::Codex => &["codex"],
        AgentKind::OpenCode => &["opencode"],
        AgentKind::Hermes => &["hermes"],
        AgentKind::Grok => &["grok"],
        AgentKind::Pi => &["pi"],
        AgentKind::Gemini => &["gemini"],
        AgentKind::Copilot => &["copilot"],
        AgentKind::Kimi => &["kimi"],
        AgentKind::Antigravity => &["agy"],
        AgentKind::Cursor => &["cursor-agent"],
    }
}

/// Where a CLI's binary is on PATH, if anywhere.
pub fn find_binary(kind: AgentKind) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    binary_names(kind).iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
    })
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Claude Code's MCP file: `~/.claude.json`, beside (not in) its config directory, unless
/// `CLAUDE_CONFIG_DIR` moves both. The config check copies it under the name Claude reads.
pub fn claude_mcp_file(ctx: &Ctx) -> PathBuf {
    claude::mcp_file(ctx)
}

/// The config directory whose existence means the CLI is (or was) installed.
pub fn config_dir(kind: AgentKind, ctx: &Ctx) -> PathBuf {
    match kind {
        AgentKind::ClaudeCode => claude::config_dir(ctx),
        AgentKind::Codex => ctx.dir("CODEX_HOME", ".codex"),
        AgentKind::OpenCode => ctx.xdg_config().join("opencode"),
        AgentKind::Hermes => ctx.dir("HERMES_HOME", ".hermes"),
        AgentKind::Grok => ctx.dir("GROK_HOME", ".grok"),
        AgentKind::Pi => ctx.dir("PI_CODING_AGENT_DIR", ".pi/agent"),
        // Gemini (0.61) takes `$GEMINI_CLI_HOME` as its home directory, `.gemini` under it.
        AgentKind::Gemini => ctx
            .var("GEMINI_CLI_HOME")
            .map_or_else(|| ctx.home.clone(), PathBuf::from)
            .join(".gemini"),
        AgentKind::Copilot => ctx.dir("COPILOT_HOME", ".copilot"),
        AgentKind::Kimi => kimi::config_dir(ctx),
        AgentKind::Antigravity => ctx.home.join(".gemini/config"),
        AgentKind::Cursor => ctx.home.join(".cursor"),
    }
}

/// Steps calyx cannot do for the user right after an install changed the CLI's files.
pub fn user_steps(kind: AgentKind) -> Vec<&'static str> {
    let mut steps =
        vec!["restart running sessions of this CLI: it reads hooks and MCP servers at start"];
    steps.extend(standing_steps(kind));
    steps
}

/// What stays true of a CLI whether or not anything just changed (`calyx doctor` shows these;
/// "restart running sessions" only follows a change).
pub fn standing_steps(kind: AgentKind) -> Vec<&'static str> {
    let mut steps = Vec::new();
    match kind {
        AgentKind::Codex => steps.push(
            "open codex, run /hooks and trust calyx's entries: Codex runs new hooks only after this review",
        ),
        AgentKind::Hermes => steps.push(
            "Hermes asks before running shell hooks: accept calyx's (or start it with --accept-hooks); MCP needs the hermes-agent[mcp] extra",
        ),
        AgentKind::Gemini => steps.push("hooks run only while hooksConfig.enabled is not false in ~/.gemini/settings.json"),
        AgentKind::Antigravity => steps.push("Antigravity has no permission signal: blocked prompts do not show in calyx"),
        _ => {}
    }
    steps
}

/// Plans installing or removing calyx's entries for one CLI.
pub fn plan(kind: AgentKind, ctx: &Ctx, op: Op) -> Result<Plan, SetupError> {
    let mut plan = Plan {
        kind,
        changes: Vec::new(),
        notes: Vec::new(),
    };
    match kind {
        AgentKind::ClaudeCode => claude::plan(ctx, op, &mut plan)?,
        AgentKind::Codex => codex::plan(ctx, op, &mut plan)?,
        AgentKind::OpenCode => opencode::plan(ctx, op, &mut plan)?,
        AgentKind::Hermes => hermes::plan(ctx, op, &mut plan)?,
        AgentKind::Grok => grok::plan(ctx, op, &mut plan)?,
        AgentKind::Pi => pi::plan(ctx, op, &mut plan)?,
        AgentKind::Gemini => gemini::plan(ctx, op, &mut plan)?,
        AgentKind::Copilot => copilot::plan(ctx, op, &mut plan)?,
        AgentKind::Kimi => kimi::plan(ctx, op, &mut plan)?,
        AgentKind::Antigravity => antigravity::plan(ctx, op, &mut plan)?,
        AgentKind::Cursor => cursor::plan(ctx, op, &mut plan)?,
    }
    protect_token(&mut plan, ctx)?;
    plan.changes
        .retain(|c| c.edits_text() || c.old_mode.is_some());
    Ok(plan)
}

/// The mode a file holding the token gets: readable and writable by its owner only.
pub const TOKEN_MODE: u32 = 0o600;

/// Every file that will hold the bearer token ends up [`TOKEN_MODE`]: a new one is created so,
/// and an existing one that others can read (group or other bits set, e.g. 0644 under the usual
/// umask 022) is tightened, whether or not its text changes. The token lets any local process
/// act as an agent in calyx (post events, ask for approvals, drive panes through MCP).
fn protect_token(plan: &mut Plan, ctx: &Ctx) -> Result<(), SetupError> {
    if ctx.token.is_empty() {
        return Ok(());
    }
    for change in &mut plan.changes {
        if !change
            .after
            .as_deref()
            .is_some_and(|t| t.contains(&ctx.token))
        {
            continue;
        }
        change.new_mode = TOKEN_MODE;
        if change.before.is_some() {
            let mode = fsio::mode_of(&change.path).map_err(|e| SetupError::io(&change.path, e))?;
            change.old_mode = mode.filter(|m| m & 0o077 != 0);
        }
    }
    Ok(())
}

/// Writes a plan: each file atomically, in order, and only if it still holds what the plan
/// read (see [`SetupError::changed`]). Stops at the first failure; files already written stay
/// written (each is complete and valid on its own).
pub fn apply(plan: &Plan) -> Result<(), SetupError> {
    for change in &plan.changes {
        let expected = change.before.as_deref().map(str::as_bytes);
        let mode = match change.old_mode {
            Some(_) => fsio::Mode::Exact(change.new_mode),
            None => fsio::Mode::New(change.new_mode),
        };
        match &change.after {
            Some(text) => fsio::replace(&change.path, Some(expected), text.as_bytes(), mode),
            None => fsio::remove(&change.path, expected),
        }
        .map_err(|e| SetupError::io(&change.path, e))?;
    }
    Ok(())
}

/// Plans and applies, planning again (up to three times) when a file changed between the read
/// and the write, as config files of running CLIs do. Returns the plan that was applied.
pub fn plan_and_apply(kind: AgentKind, ctx: &Ctx, op: Op) -> Result<Plan, SetupError> {
    let mut attempt = 0;
    loop {
        let plan = plan(kind, ctx, op)?;
        match apply(&plan) {
            Err(e) if e.changed() && attempt < 2 => attempt += 1,
            Err(e) => return Err(e),
            Ok(()) => return Ok(plan),
        }
    }
}

/// Whether calyx's entries are installed for this CLI (an uninstall would change something).
pub fn is_installed(kind: AgentKind, ctx: &Ctx) -> Result<bool, SetupError> {
    Ok(plan(kind, ctx, Op::Uninstall)?
        .changes
        .iter()
        .any(FileChange::edits_text))
}

/// Reads a file for planning.
fn read(path: &Path) -> Result<Option<String>, SetupError> {
    fsio::read_text(path).map_err(|e| SetupError::io(path, e))
}

/// Plans an edit of a shared config file: `edit` maps the current text ("" when the file is
/// missing) to the new one. A file calyx would leave empty (nothing but `{}`, whitespace or an
/// empty TOML/YAML document) is deleted on uninstall rather than left behind.
fn edit_file(
    plan: &mut Plan,
    path: &Path,
    new_mode: u32,
    op: Op,
    edit: impl FnOnce(&str) -> Result<String, EditError>,
) -> Result<(), SetupError> {
    let before = read(path)?;
    let current = before.as_deref().unwrap_or("");
    let mut after = edit(current).map_err(|e| SetupError::edit(path, e))?;
    if before.is_none() && !after.is_empty() && !after.ends_with('\n') {
        after.push('\n');
    }
    if after == current {
        // Kept (as a change that edits nothing) so that [`protect_token`] can still tighten
        // the file's mode; [`plan`] drops it otherwise.
        if before.is_some() {
            plan.changes.push(FileChange {
                path: path.to_path_buf(),
                after: before.clone(),
                before,
                new_mode,
                old_mode: None,
            });
        }
        return Ok(());
    }
    let empty = is_empty_document(&after);
    let after = match (op, empty) {
        (Op::Uninstall, true) => None,
        _ => Some(after),
    };
    if before.is_none() && after.is_none() {
        return Ok(());
    }
    plan.changes.push(FileChange {
        path: path.to_path_buf(),
        before,
        after,
        new_mode,
        old_mode: None,
    });
    Ok(())
}

/// Nothing but whitespace, or a JSON object with nothing in it (`{}`, `{"version": 1}`).
fn is_empty_document(text: &str) -> bool {
    let body = crate::config_edit::split_bom(text).1.trim();
    if body.is_empty() || body == "{}" {
        return true;
    }
    serde_json::from_str::<serde_json::Value>(body).is_ok_and(|v| {
        v.as_object()
            .is_some_and(|m| m.iter().all(|(k, v)| k == "version" && v == 1))
    })
}

/// Plans a file calyx owns outright: written on install, deleted on uninstall, but only when
/// it is calyx's (`is_ours` on its current text): a file with the same name that someone else
/// wrote is left alone, and the note says so.
fn owned_file(
    plan: &mut Plan,
    path: &Path,
    op: Op,
    text: &str,
    is_ours: impl Fn(&str) -> bool,
) -> Result<(), SetupError> {
    let before = read(path)?;
    if let Some(existing) = &before {
        if !is_ours(existing) {
            plan.notes.push(format!(
                "{} exists and is not calyx's: left alone",
                path.display()
            ));
            return Ok(());
        }
    }
    let after = match op {
        Op::Install => Some(text.to_string()),
        Op::Uninstall => None,
    };
    if before == after {
        return Ok(());
    }
    plan.changes.push(FileChange {
        path: path.to_path_buf(),
        before,
        after,
        new_mode: 0o644,
        old_mode: None,
    });
    Ok(())
}
