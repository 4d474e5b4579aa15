//! What a restored pane starts: an agent resumed in its conversation, a program from the
//! `[persistence] restart` list with its argv, or the user's shell with a note of what ran there
//! (issue 18 §2). Pure: decided from the saved pane and the list, unit tested.

use calyx_integrations::resume;
use calyx_integrations::AgentKind;

use super::record::SavedPane;

/// What to start in a restored pane.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Relaunch {
    /// The pane's command (empty: the user's shell).
    pub command: Vec<String>,
    /// A command line typed into the shell once it runs (a program the user had started from
    /// it, so quitting it leaves the shell, as before).
    pub typed: Option<String>,
    /// One line shown in the pane, dimmed, before anything runs.
    pub note: Option<String>,
}

/// Programs that run scripts: their argv's first argument is the program the user named.
const INTERPRETERS: &[&str] = &["node", "nodejs", "bun", "deno", "sh", "bash", "dash", "zsh"];

/// The file name of a path.
fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// argv as the user ran it: `node /usr/bin/claude --model x` is `/usr/bin/claude --model x`.
fn as_run(argv: &[String]) -> &[String] {
    let Some(first) = argv.first() else {
        return argv;
    };
    let name = base(first);
    let interpreted = INTERPRETERS.contains(&name) || name.starts_with("python");
    match argv.get(1) {
        Some(script) if interpreted && !script.starts_with('-') => &argv[1..],
        _ => argv,
    }
}

/// Whether `argv` is one of the `restart` entries: an entry's first word is the program's
/// file name, and its other words must each be among the arguments (`tail -f`).
pub fn restartable(argv: &[String], restart: &[String]) -> bool {
    let Some(program) = argv.first().map(|p| base(p)) else {
        return false;
    };
    restart.iter().any(|entry| {
        let mut words = entry.split_whitespace();
        words.next() == Some(program) && words.all(|w| argv.iter().skip(1).any(|a| a == w))
    })
}

/// A command line for a POSIX shell: each word quoted when it needs it.
pub fn shell_line(argv: &[String]) -> String {
    argv.iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Shells that read their prompt with the terminal's own line discipline (no line editor):
/// a line typed while they start is echoed once, by the terminal, and never again.
const PLAIN_SHELLS: &[&str] = &["sh", "dash", "posh"];

/// Whether the shell at `path` (symbolic links followed: `/bin/sh` may be bash) takes its
/// prompt's keys through a line editor, which prints a typed line itself once it runs; a line
/// typed for it should wait for it (see `calyx_pty::PaneProcess::type_at_prompt`).
pub fn shell_edits_lines(path: &str) -> bool {
    let real = std::fs::canonicalize(path)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string());
    !PLAIN_SHELLS.contains(&base(&real))
}

/// Decides what `pane` starts again; `restart` is `[persistence] restart`.
pub fn plan(pane: &SavedPane, restart: &[String]) -> Relaunch {
    // What ran: a program started from the pane's shell, else the pane's own command.
    let (argv, under_shell) = if !pane.foreground.is_empty() {
        (as_run(&pane.foreground).to_vec(), true)
    } else if !pane.command.is_empty() {
        let own = if pane.program.is_empty() {
            &pane.command
        } else {
            &pane.program
        };
        (as_run(own).to_vec(), false)
    } else {
        return Relaunch::default();
    };
    if let Some(agent) = &pane.agent {
        if let Ok(kind) = agent.kind.parse::<AgentKind>() {
            return agent_plan(kind, agent.session_id.as_deref(), &argv, under_shell);
        }
    }
    if restartable(&argv, restart) {
        return start(argv, under_shell, None);
    }
    Relaunch {
        note: Some(format!(
            "calyx: `{}` ran here before the server stopped; not restarted",
            shell_line(&argv)
        )),
        ..Default::default()
    }
}

/// An agent CLI: resumed in its conversation where it can be, else started afresh (and the
/// pane says so).
fn agent_plan(
    kind: AgentKind,
    session: Option<&str>,
    argv: &[String],
    under_shell: bool,
) -> Relaunch {
    // The CLI's own flags come after the words that run it; resume reads them as one program.
    let (program, args) = program_words(argv);
    let mut saved = vec![String::new()];
    saved.extend_from_slice(args);
    let with_program = |mut line: Vec<String>| {
        line.splice(0..1, program.iter().cloned());
        line
    };
    if let Some(line) = session.and_then(|id| resume::resume_command(kind, &saved, id)) {
        return start(with_program(line), under_shell, None);
    }
    let why = if session.is_none() {
        "its conversation id was never reported"
    } else {
        "it cannot resume a conversation by id"
    };
    let note = format!("calyx: {} started afresh: {why}", kind.display_name());
    let fresh = if program.is_empty() {
        resume::fresh_command(kind, argv)
    } else {
        with_program(resume::fresh_command(kind, &saved))
    };
    start(fresh, under_shell, Some(note))
}

/// The words of `argv` that run the program, and its own arguments: `python -m MODULE` is
/// three words (Kimi CLI runs so), any other program one.
fn program_words(argv: &[String]) -> (&[String], &[String]) {
    let python_module = argv.first().is_some_and(|p| base(p).starts_with("python"))
        && argv.get(1).is_some_and(|a| a == "-m")
        && argv.len() >= 3;
    let at = if python_module { 3 } else { argv.len().min(1) };
    argv.split_at(at)
}

fn start(argv: Vec<String>, under_shell: bool, note: Option<String>) -> Relaunch {
    if under_shell {
        Relaunch {
            command: Vec::new(),
            typed: Some(shell_line(&argv)),
            note,
        }
    } else {
        Relaunch {
            command: argv,
            typed: None,
            note,
        }
    }
}

#[cfg(test)]
#[path = "relaunch_tests.rs"]
mod tests;
