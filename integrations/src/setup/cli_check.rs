//! Asking the installed agent CLI itself whether it accepts the config calyx is about to write
//! (setup) or has written (doctor). Parsing a file with calyx's own editors proves it is valid
//! TOML or JSON, not that the CLI takes it: Kimi validates its whole config.toml with pydantic
//! and refuses to start over one unknown hook event, which is how `calyx setup --agent kimi`
//! once left Kimi unable to start. So where the CLI offers a way, the files as they would be
//! are put in a private temporary directory and the CLI's own loader is run on them, bounded in
//! time; a rejection stops setup for that CLI with the CLI's complaint, and nothing is written.
//!
//! What can be checked this way, per CLI (docs/setup.md, "Checked by the CLI itself"), one
//! submodule each:
//! - Kimi (`kimi`): Kimi's own `load_config` and fastmcp's `MCPConfig`, in Kimi's interpreter.
//! - Codex (`codex`): `codex mcp list` with `CODEX_HOME` at the copy.
//! - Claude Code (`claude`): `claude mcp get calyx-ipc` with `CLAUDE_CONFIG_DIR` at the copy.
//! - Gemini CLI (`gemini`): `gemini mcp list` with `HOME` at the copy.
//! - Hermes (`hermes`): `hermes hooks list` and `hermes mcp list` with `HERMES_HOME` at the copy.
//! - OpenCode (`opencode`): `opencode debug config --pure` with the XDG directories at the copy.
//! - Copilot CLI (`copilot`): `copilot mcp get calyx-ipc` with `COPILOT_HOME` at the copy.
//! - pi, Grok, Antigravity, Cursor: no (docs/setup.md says why).

mod claude;
mod codex;
mod copilot;
mod gemini;
mod hermes;
mod kimi;
mod opencode;

use std::fs;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config_edit::fsio;
use crate::setup::{Ctx, Plan};
use crate::AgentKind;

/// What the CLI said about the config.
#[derive(Debug)]
pub enum Verdict {
    /// It loaded every file. The text says what ran (the CLI's version).
    Accepted(String),
    /// It refused `file` (the real path) with `complaint`, its own words.
    Rejected {
        file: PathBuf,
        cli: String,
        complaint: String,
    },
    /// It could not be asked; the text says why.
    Unchecked(String),
}

/// Checks the config of `kind` as `plan` would leave it (`None`: as it is on disk), when the
/// CLI is installed (on PATH) and calyx knows how to ask it. `None`: nothing to check.
///
/// A rejection of the new files that the CLI also gives for the files as they are now is not
/// calyx's doing (a key of the user's that this CLI version does not take, a setting that
/// only loads in the user's real home): it is reported as unchecked, not a refusal, so setup
/// is never blocked by what it did not write.
pub fn check(kind: AgentKind, ctx: &Ctx, plan: Option<&Plan>) -> Option<Verdict> {
    let verdict = check_once(kind, ctx, plan)?;
    let Verdict::Rejected { complaint, .. } = &verdict else {
        return Some(verdict);
    };
    if plan.is_none() {
        return Some(verdict);
    }
    match check_once(kind, ctx, None) {
        Some(Verdict::Rejected {
            cli,
            complaint: before,
            ..
        }) if before == *complaint => Some(Verdict::Unchecked(format!(
            "{cli} already rejects the config as it is now, before calyx's change: {before}"
        ))),
        _ => Some(verdict),
    }
}

/// The variables that relocate `kind`'s home-like directories, for the CLIs calyx checks
/// (None: a CLI without a check, run as it is).
fn home_vars(kind: AgentKind) -> Option<&'static [&'static str]> {
    Some(match kind {
        AgentKind::ClaudeCode => claude::VARS,
        AgentKind::Codex => codex::VARS,
        AgentKind::Gemini => gemini::VARS,
        AgentKind::Hermes => hermes::VARS,
        AgentKind::Kimi => kimi::VARS,
        AgentKind::OpenCode => opencode::VARS,
        AgentKind::Copilot => copilot::VARS,
        _ => return None,
    })
}

/// `BIN --version`'s first line for `calyx doctor`, run isolated as the checks' version runs
/// are (a private directory in place of the CLI's homes), so that asking a version writes
/// nothing of the user's: `gemini --version` leaves `projects.json.*.tmp` files in the
/// `~/.gemini` it is given.
pub fn version(kind: AgentKind, bin: &Path) -> Option<String> {
    match home_vars(kind) {
        Some(vars) => {
            let scratch = Scratch::new().ok()?;
            super::probe::version_of(isolated(bin, &scratch.0, vars))
        }
        None => super::probe::version_of(std::process::Command::new(bin)),
    }
}

fn check_once(kind: AgentKind, ctx: &Ctx, plan: Option<&Plan>) -> Option<Verdict> {
    let bin = super::find_binary(kind)?;
    type Loader<'a> = Box<dyn FnOnce() -> Load + Send + 'a>;
    let (loaded, vars, load): (&str, &[&str], Loader) = match kind {
        AgentKind::ClaudeCode => (
            claude::LOADED,
            claude::VARS,
            Box::new(|| claude::load(&bin, ctx, plan)),
        ),
        AgentKind::Codex => (
            codex::LOADED,
            codex::VARS,
            Box::new(|| codex::load(&bin, ctx, plan)),
        ),
        AgentKind::Gemini => (
            gemini::LOADED,
            gemini::VARS,
            Box::new(|| gemini::load(&bin, ctx, plan)),
        ),
        AgentKind::Hermes => (
            hermes::LOADED,
            hermes::VARS,
            Box::new(|| hermes::load(&bin, ctx, plan)),
        ),
        AgentKind::Kimi => (
            "loaded config.toml and mcp.json",
            kimi::VARS,
            Box::new(|| kimi::load(&bin, ctx, plan)),
        ),
        AgentKind::OpenCode => (
            opencode::LOADED,
            opencode::VARS,
            Box::new(|| opencode::load(&bin, ctx, plan)),
        ),
        AgentKind::Copilot => (
            copilot::LOADED,
            copilot::VARS,
            Box::new(|| copilot::load(&bin, ctx, plan)),
        ),
        _ => return None,
    };
    Some(ask(&bin, loaded, vars, load))
}

/// What a CLI's loader gave: Ok(None) accepted; Ok(Some((real file, complaint))) rejected;
/// Err(why) it could not be asked.
type Load = Result<Option<(PathBuf, String)>, String>;

/// Runs `load` with `BIN --version` in parallel (the verdict names the version that judged),
/// and turns its answer into a verdict; `loaded` says what an accepting CLI loaded. The
/// version run is isolated like the check (`vars`): `gemini --version` leaves
/// `projects.json.*.tmp` files in the `~/.gemini` it is given.
fn ask(bin: &Path, loaded: &str, vars: &[&str], load: impl FnOnce() -> Load + Send) -> Verdict {
    let (verdict, version) = std::thread::scope(|s| {
        let version = s.spawn(|| {
            let scratch = Scratch::new().ok()?;
            super::probe::version_of(isolated(bin, &scratch.0, vars))
        });
        let verdict = load();
        (verdict, version.join().ok().flatten())
    });
    let cli = match &version {
        Some(v) => format!("{} ({v})", bin.display()),
        None => format!("{} (version unknown)", bin.display()),
    };
    match verdict {
        Ok(None) => Verdict::Accepted(format!("{cli} {loaded}")),
        Ok(Some((file, complaint))) => Verdict::Rejected {
            file,
            cli,
            complaint,
        },
        Err(why) => Verdict::Unchecked(format!("{cli}: {why}")),
    }
}

/// Variables that hold a model credential: removed from every check's environment. Together
/// with a HOME at the private copy (no stored login), a CLI that took the check's arguments
/// for a prompt (a version without the command) could not reach a model.
const CREDENTIALS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "COPILOT_GITHUB_TOKEN",
    "KIMI_API_KEY",
    "MOONSHOT_API_KEY",
    "OPENROUTER_API_KEY",
];

/// `program` to run in `dir` (the private copy), with each of `vars` (the CLI's HOME-like
/// variables) pointed there too, so that it reads only the copy and writes nothing of the
/// user's, without model credentials and without colours in its messages.
fn isolated(program: &Path, dir: &Path, vars: &[&str]) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(dir).env("NO_COLOR", "1");
    for var in vars {
        cmd.env(var, dir);
    }
    for var in CREDENTIALS {
        cmd.env_remove(var);
    }
    cmd
}

/// The text `path` will have: the plan's new text when it changes the file (`None` when it
/// deletes it), else what is on disk.
fn text_after(path: &Path, plan: Option<&Plan>) -> Result<Option<String>, String> {
    if let Some(change) = plan.and_then(|p| p.changes.iter().find(|c| c.path == path)) {
        return Ok(change.after.clone());
    }
    fsio::read_text(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// A private temporary directory (0700; its files 0600: the MCP entries hold the token),
/// removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!("calyx-check-{}", uuid::Uuid::new_v4()));
        fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(Self(path))
    }

    /// Puts there, under the same names, the files of `dir` named in `names` as `plan` would
    /// leave them (a file that would not exist is left out).
    fn copy_after(&self, dir: &Path, names: &[&str], plan: Option<&Plan>) -> Result<(), String> {
        for name in names {
            self.copy_file_after(&dir.join(name), name, plan)?;
        }
        Ok(())
    }

    /// Puts there, as `name`, the file `real` as `plan` would leave it (nothing when it would
    /// not exist).
    fn copy_file_after(&self, real: &Path, name: &str, plan: Option<&Plan>) -> Result<(), String> {
        match text_after(real, plan)? {
            Some(text) => self
                .write(name, &text)
                .map_err(|e| format!("could not copy {name}: {e}")),
            None => Ok(()),
        }
    }

    fn write(&self, name: &str, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)?;
        }
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)?
            .write_all(text.as_bytes())
    }

    /// `text` (the CLI's output) with the scratch path replaced by `real`, trimmed: the
    /// user should read the names of their own files.
    fn shown(&self, text: &str, real: &Path) -> String {
        text.replace(&self.0.display().to_string(), &real.display().to_string())
            .trim()
            .to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}
