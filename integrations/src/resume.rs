//! How each agent CLI is brought back into a conversation by its session id, and which of the
//! original command line's flags must come along (model, profile, agent). Read from each
//! installed CLI's `--help` (the versions ../shared/realcli pins):
//!
//! | CLI | resume form | flags kept |
//! |---|---|---|
//! | Claude Code 2.1 | `claude --resume ID` | `--model`, `--agent`, `--permission-mode`, `--dangerously-skip-permissions` |
//! | Codex 0.171 | `codex resume ID` (`codex resume [OPTIONS] [SESSION_ID]`) | `-m`/`--model`, `-p`/`--profile`, `-s`/`--sandbox`, `-a`/`--ask-for-approval`, `--dangerously-bypass-hook-trust`, `--dangerously-bypass-approvals-and-sandbox`, `--full-auto` |
//! | OpenCode 1.18 | `opencode --session ID` | `-m`/`--model`, `--agent` |
//! | pi 0.73 | `pi --session ID` | `--model` |
//! | Copilot CLI 1.0 | `copilot --resume ID` | `--model`, `--agent` |
//! | Hermes 0.19 | `hermes --resume ID` | `-m`/`--model`, `--provider`, `--accept-hooks`, `--cli`, `--yolo` |
//! | Kimi 1.52 | `kimi --session ID` | `-m`/`--model`, `--agent` |
//! | Gemini CLI 0.61 | `gemini --resume ID` | `-m`/`--model` |
//!
//! Gemini CLI's `--help` names only `latest` or a list index for `--resume`, but it looks the
//! value up as a session id first (tests/realcli/resume.sh resumes it for real). Grok,
//! Antigravity and Cursor were not verified: those start fresh (the caller says so in the pane).

use crate::AgentKind;

/// Where the session id goes in a CLI's resume command line.
enum Form {
    /// `PROGRAM FLAG ID KEPT...`
    Flag(&'static str),
    /// `PROGRAM SUBCOMMAND KEPT... ID`
    Subcommand(&'static str),
}

/// Where the session id goes in the CLI's resume command line (None: it cannot resume by id).
fn form(kind: AgentKind) -> Option<Form> {
    match kind {
        AgentKind::ClaudeCode | AgentKind::Copilot | AgentKind::Gemini => {
            Some(Form::Flag("--resume"))
        }
        AgentKind::Hermes => Some(Form::Flag("--resume")),
        AgentKind::Codex => Some(Form::Subcommand("resume")),
        AgentKind::OpenCode | AgentKind::Pi | AgentKind::Kimi => Some(Form::Flag("--session")),
        AgentKind::Grok | AgentKind::Antigravity | AgentKind::Cursor => None,
    }
}

/// The flags (each taking a value) kept from the saved command line: model, profile, agent,
/// and the permission policy the user chose (a resume neither loosens nor tightens it).
fn kept_flags(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        AgentKind::ClaudeCode => &["--model", "--agent", "--permission-mode"],
        AgentKind::Copilot => &["--model", "--agent"],
        AgentKind::Codex => &[
            "-m",
            "--model",
            "-p",
            "--profile",
            "-s",
            "--sandbox",
            "-a",
            "--ask-for-approval",
        ],
        AgentKind::OpenCode | AgentKind::Kimi => &["-m", "--model", "--agent"],
        AgentKind::Pi => &["--model"],
        AgentKind::Hermes => &["-m", "--model", "--provider"],
        AgentKind::Gemini | AgentKind::Grok => &["-m", "--model"],
        AgentKind::Antigravity | AgentKind::Cursor => &["--model"],
    }
}

/// The switches (no value) kept from the saved command line: the permission and hook-trust
/// choices the user made when starting the CLI.
fn kept_switches(kind: AgentKind) -> &'static [&'static str] {
    match kind {
        AgentKind::ClaudeCode => &["--dangerously-skip-permissions"],
        AgentKind::Hermes => &["--accept-hooks", "--cli", "--yolo"],
        AgentKind::Codex => &[
            "--dangerously-bypass-hook-trust",
            "--dangerously-bypass-approvals-and-sandbox",
            "--full-auto",
        ],
        _ => &[],
    }
}

/// The name a CLI is run by (what its package puts on PATH): the first of the names setup
/// looks for.
pub fn command_name(kind: AgentKind) -> &'static str {
    crate::setup::binary_names(kind)
        .first()
        .copied()
        .unwrap_or_else(|| kind.as_str())
}

/// The command line that brings `kind` back into conversation `session_id`, from the argv it
/// was saved with (`saved[0]` the program as the user ran it, then its arguments, of which the
/// flags that matter are kept). None when the CLI cannot resume by id, or `saved` is empty.
pub fn resume_command(kind: AgentKind, saved: &[String], session_id: &str) -> Option<Vec<String>> {
    let form = form(kind)?;
    let program = saved.first()?.clone();
    let kept = kept(saved.get(1..).unwrap_or_default(), kind);
    let mut out = vec![program];
    match form {
        Form::Flag(flag) => {
            out.push(flag.to_string());
            out.push(session_id.to_string());
            out.extend(kept);
        }
        Form::Subcommand(sub) => {
            out.push(sub.to_string());
            out.extend(kept);
            out.push(session_id.to_string());
        }
    }
    Some(out)
}

/// The command line that starts `kind` afresh with the flags that matter from `saved`.
pub fn fresh_command(kind: AgentKind, saved: &[String]) -> Vec<String> {
    let program = saved
        .first()
        .cloned()
        .unwrap_or_else(|| command_name(kind).to_string());
    let mut out = vec![program];
    out.extend(kept(saved.get(1..).unwrap_or_default(), kind));
    out
}

/// `kind`'s kept flags (with their values, as `--flag VALUE` or `--flag=VALUE`) and switches
/// in `args`, in order.
fn kept(args: &[String], kind: AgentKind) -> Vec<String> {
    let flags = kept_flags(kind);
    let switches = kept_switches(kind);
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if switches.contains(&arg.as_str()) {
            out.push(arg.clone());
            i += 1;
            continue;
        }
        if flags.contains(&arg.as_str()) {
            if let Some(value) = args.get(i + 1) {
                out.push(arg.clone());
                out.push(value.clone());
            }
            i += 2;
            continue;
        }
        let joined = flags
            .iter()
            .any(|f| f.starts_with("--") && arg.starts_with(&format!("{f}=")));
        if joined {
            out.push(arg.clone());
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn claude_resumes_with_its_model_and_agent() {
        let saved = argv("claude --model opus --verbose --agent reviewer");
        assert_eq!(
            resume_command(AgentKind::ClaudeCode, &saved, "abc"),
            Some(argv("claude --resume abc --model opus --agent reviewer"))
        );
    }

    #[test]
    fn codex_resumes_through_its_subcommand_keeping_the_profile() {
        let saved = argv("/opt/bin/codex -p work --model=gpt-5 --full-auto");
        assert_eq!(
            resume_command(AgentKind::Codex, &saved, "019a"),
            Some(argv(
                "/opt/bin/codex resume -p work --model=gpt-5 --full-auto 019a"
            ))
        );
    }

    #[test]
    fn the_session_flag_forms() {
        let cases = [
            (
                AgentKind::OpenCode,
                "opencode --agent plan",
                "opencode --session S --agent plan",
            ),
            (AgentKind::Pi, "pi --model x", "pi --session S --model x"),
            (AgentKind::Copilot, "copilot", "copilot --resume S"),
            (AgentKind::Hermes, "hermes -m m1", "hermes --resume S -m m1"),
            (
                AgentKind::Hermes,
                "hermes chat --cli --accept-hooks",
                "hermes --resume S --cli --accept-hooks",
            ),
            (AgentKind::Kimi, "kimi", "kimi --session S"),
        ];
        for (kind, saved, want) in cases {
            assert_eq!(
                resume_command(kind, &argv(saved), "S"),
                Some(argv(want)),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn gemini_resumes_by_id_with_its_model() {
        assert_eq!(
            resume_command(AgentKind::Gemini, &argv("gemini -m flash --yolo"), "S"),
            Some(argv("gemini --resume S -m flash"))
        );
    }

    #[test]
    fn clis_without_resume_by_id_have_none() {
        assert_eq!(resume_command(AgentKind::Grok, &argv("grok"), "S"), None);
        assert_eq!(resume_command(AgentKind::ClaudeCode, &[], "S"), None);
    }

    #[test]
    fn codex_keeps_the_sandbox_approval_policy_and_hook_trust_it_was_started_with() {
        let saved = argv("codex --dangerously-bypass-hook-trust -s read-only -a on-request hi");
        assert_eq!(
            resume_command(AgentKind::Codex, &saved, "T"),
            Some(argv(
                "codex resume --dangerously-bypass-hook-trust -s read-only -a on-request T"
            ))
        );
    }

    #[test]
    fn a_fresh_start_keeps_the_flags_too() {
        assert_eq!(
            fresh_command(AgentKind::Codex, &argv("codex --model m exec")),
            argv("codex --model m")
        );
        assert_eq!(fresh_command(AgentKind::Gemini, &[]), argv("gemini"));
    }

    #[test]
    fn a_flag_without_its_value_is_dropped() {
        assert_eq!(
            resume_command(AgentKind::ClaudeCode, &argv("claude --model"), "S"),
            Some(argv("claude --resume S"))
        );
    }
}
