//! The interactive `calyx --remote TARGET` and `calyx attach --remote TARGET` (issue 20 §1,
//! echo goal): ssh holds the terminal itself (`ssh -t`, this process's stdin, stdout and
//! stderr), and on the far side `calyx remote-bridge --tty` attaches the pty sshd allocated to
//! that machine's server as a local attach does (`remote::tty_bridge`). A keystroke goes
//! terminal -> ssh -> sshd -> pty -> server: one process fewer than `ssh -t host tmux attach`
//! (whose tmux client sits behind that pty), and no calyx process copies a byte.
//!
//! This process only supervises ssh:
//! - before handing it the terminal, a quick non-tty bridge call (`link::check`) checks the
//!   version (the same message and `--install` as every `--remote` verb) and starts the
//!   remote server; a far side without `--tty` (its header has no `tty=1`) gets the framed
//!   attach instead (None);
//! - ssh's exit status says how it ended: 0 detached (the far side printed why on this
//!   terminal), [`BACK_CODE`] `prefix L` back to the chooser's session, 255 or a signal a
//!   dropped connection: reconnect with backoff, saying so on the bottom line
//!   (`remote::reconnect`), while the remote panes keep running;
//! - the terminal's modes are put back as they were on leaving.

use std::process::{ExitCode, Stdio};
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};

use super::link::{self, Options};
use super::switch::BACK_CODE;
use super::{handshake, reconnect, words, Target};

/// What to attach to on the far side.
#[derive(Debug, Clone, Default)]
pub struct Attach {
    /// `-t SESSION`; None: the remote server's most recent session.
    pub session: Option<String>,
    /// Create the default session when there is none (plain `calyx --remote TARGET`).
    pub create: bool,
    /// The local session a chooser switch came from (`remote::switch`).
    pub back_to: Option<String>,
}

/// ssh's status when it could not reach the far side or lost the connection.
const SSH_FAILED: i32 = 255;

/// A session that lasted this long resets the give-up clock of the reconnects.
const STEADY: Duration = Duration::from_secs(10);

/// Runs the attach on this terminal. None: the far side has no `--tty` (a calyx from before
/// it): use the framed attach.
pub async fn attach(target: &Target, what: &Attach) -> anyhow::Result<Option<ExitCode>> {
    let first = Options {
        start: true,
        batch: false,
    };
    if !link::check(target, first).await?.tty {
        return Ok(None);
    }
    let saved = Modes::save();
    let ended = supervise(target, what).await;
    saved.restore();
    let ended = ended?;
    if let Some(message) = &ended.message {
        // The far side could not restore the screen: leave the alternate screen here.
        use std::io::Write;
        let mut out = std::io::stdout();
        let _ = out.write_all(crate::client::LEAVE.as_bytes());
        let _ = out.flush();
        eprintln!("[{}]", calyx_tui::escape::visible(message));
    }
    Ok(Some(ended.code))
}

/// How the supervised ssh ended.
struct Ended {
    code: ExitCode,
    /// Said here when the far side could not say it (gave up reconnecting, a signal).
    message: Option<String>,
}

impl Ended {
    fn local(message: String) -> Self {
        Self {
            code: ExitCode::SUCCESS,
            message: Some(message),
        }
    }
}

async fn supervise(target: &Target, what: &Attach) -> anyhow::Result<Ended> {
    let mut hup = signal(SignalKind::hangup())?;
    let mut term = signal(SignalKind::terminate())?;
    let mut reconnecting = false;
    let mut lost_since: Option<tokio::time::Instant> = None;
    loop {
        // A reconnect attaches to the session named at the start, else the remote server's
        // most recent one (the one this client was on): it never creates one.
        let create = what.create && !reconnecting;
        let command = handshake::remote_command(&bridge_args(what, create)?);
        // `LogLevel=ERROR`: no "Connection to HOST closed." under the far side's own words.
        let mut extra = vec!["-o", "LogLevel=ERROR"];
        if reconnecting {
            // The screen is in raw mode: a prompt could not be answered.
            extra.extend(["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]);
        }
        let mut cmd = target.ssh_tty_command(&extra, &command)?;
        cmd.stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        let started = tokio::time::Instant::now();
        let mut child = cmd.spawn().map_err(|e| {
            anyhow::anyhow!(
                "failed to run {} (set CALYX_SSH to the ssh command to use): {e}",
                super::target::ssh_program()
                    .ok()
                    .and_then(|p| p.first().cloned())
                    .unwrap_or_else(|| "ssh".into())
            )
        })?;
        let status = tokio::select! {
            status = child.wait() => status?,
            _ = hup.recv() => {
                let _ = child.kill().await;
                return Ok(Ended::local("detached (hangup)".into()));
            }
            _ = term.recv() => {
                let _ = child.kill().await;
                return Ok(Ended::local("detached (terminated)".into()));
            }
        };
        match status.code() {
            Some(0) => {
                return Ok(Ended {
                    code: ExitCode::SUCCESS,
                    message: None,
                })
            }
            Some(code) if code == i32::from(BACK_CODE) => {
                return Ok(Ended {
                    code: ExitCode::from(BACK_CODE),
                    message: None,
                })
            }
            // The far side printed why (a session that does not exist ...).
            Some(code) if code != SSH_FAILED => {
                return Ok(Ended {
                    code: ExitCode::from(u8::try_from(code).unwrap_or(1)),
                    message: None,
                })
            }
            // Lost: the network, sleep, a killed ssh.
            Some(_) | None => {}
        }
        if started.elapsed() >= STEADY {
            lost_since = None;
        }
        let since = *lost_since.get_or_insert_with(tokio::time::Instant::now);
        if since.elapsed() >= reconnect::GIVE_UP {
            return Ok(Ended::local(format!(
                "lost the connection to {} (its panes keep running)",
                target.display()
            )));
        }
        // Keys typed meanwhile wait unechoed for the next ssh, which takes them.
        let _ = crossterm::terminal::enable_raw_mode();
        match reconnect::again(target, &mut hup, &mut term).await {
            // The check connection only: the next ssh carries the attach.
            Ok(stream) => drop(stream),
            Err(message) => return Ok(Ended::local(message)),
        }
        reconnecting = true;
    }
}

/// `remote-bridge --tty ...` for the far side's shell: every value a plain word or `hex:`
/// (`remote::words`), so no remote shell reads it; the user's terminal variables other than
/// `TERM` (which ssh forwards) go as `--env`, those with control characters left out.
fn bridge_args(what: &Attach, create: bool) -> anyhow::Result<String> {
    let mut args = vec!["remote-bridge".to_string(), "--tty".to_string()];
    if create {
        args.push("--create".into());
    }
    if let Some(session) = &what.session {
        args.push("-t".into());
        args.push(words::encode(session)?);
    }
    if let Some(back) = &what.back_to {
        args.push("--back-to".into());
        args.push(words::encode(back)?);
    }
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| crate::client::is_terminal_var(k) && k != "TERM")
        .collect();
    vars.sort();
    for (name, value) in vars {
        if let Ok(word) = words::encode(&format!("{name}={value}")) {
            args.push("--env".into());
            args.push(word);
        }
    }
    Ok(args.join(" "))
}

/// The terminal's modes when the attach started, put back on leaving: ssh restores what it
/// found, but an ssh killed mid-session restores nothing, and a reconnect ran in raw mode.
struct Modes(Option<nix::sys::termios::Termios>);

impl Modes {
    fn save() -> Self {
        Self(nix::sys::termios::tcgetattr(std::io::stdin()).ok())
    }

    /// `TCSANOW`: keys typed meanwhile stay readable for the shell.
    fn restore(&self) {
        if let Some(modes) = &self.0 {
            let _ = nix::sys::termios::tcsetattr(
                std::io::stdin(),
                nix::sys::termios::SetArg::TCSANOW,
                modes,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bridge_line_holds_no_shell_syntax_from_names() {
        let what = Attach {
            session: Some("it's $(id)".into()),
            create: false,
            back_to: Some("home".into()),
        };
        let line = bridge_args(&what, true).expect("args");
        assert!(
            line.starts_with("remote-bridge --tty --create -t hex:"),
            "{line}"
        );
        assert!(line.contains(" --back-to home"), "{line}");
        for bad in ['\'', '$', '(', '`', '"', ';', '\\'] {
            assert!(!line.contains(bad), "{bad:?} in {line}");
        }
        let word = line.split(' ').nth(4).expect("the session word");
        assert_eq!(words::decode(word).expect("decodes"), "it's $(id)");
    }

    #[test]
    fn a_name_with_a_control_character_is_refused() {
        let what = Attach {
            session: Some("x\u{1b}[2J".into()),
            ..Attach::default()
        };
        assert!(bridge_args(&what, false).is_err());
    }
}
