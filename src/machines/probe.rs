//! One connection to a saved machine that never prompts: the user's ssh with `BatchMode=yes`
//! and a connect timeout (`remote::link`), the whole attempt bounded too, so a machine that
//! wants a password or a host-key decision, or does not answer, fails fast with a reason
//! instead of waiting on a prompt nobody sees.

use std::time::{Duration, Instant};

use super::Machine;
use crate::remote::handshake::printable_line;
use crate::remote::link::{self, Link, Options};

/// The longest a whole connection attempt may take (ssh's own ConnectTimeout is 10 s).
pub const ATTEMPT: Duration = Duration::from_secs(15);

/// Why a machine could not be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// ssh wants the user: a password, a passphrase or a host-key decision.
    NeedsYou { target: String, reason: String },
    /// Its calyx speaks another protocol: what it runs and what to do.
    WrongVersion(String),
    /// Anything else: no route, refused, timed out, no calyx.
    Unreachable(String),
}

impl Failure {
    /// The line shown for machine `name`: `unreachable: NAME (reason)`, or what to do.
    pub fn line(&self, name: &str) -> String {
        match self {
            Failure::NeedsYou { target, reason } => format!(
                "needs you: {name} (run `ssh {target}` once yourself, then `calyx machine test \
                 {name}`; {reason})"
            ),
            Failure::Unreachable(reason) => format!("unreachable: {name} ({reason})"),
            Failure::WrongVersion(reason) => format!("wrong version: {name} ({reason})"),
        }
    }
}

/// Connects to `machine` (starting its server when `start`), without ever prompting.
/// Returns the link and how long connecting took.
pub async fn connect(machine: &Machine, start: bool) -> Result<(Link, Duration), Failure> {
    let target = machine
        .ssh_target()
        .map_err(|e| Failure::Unreachable(printable_line(&format!("{e:#}"))))?;
    let began = Instant::now();
    let options = Options { start, batch: true };
    match tokio::time::timeout(ATTEMPT, link::connect(&target, options)).await {
        Ok(Ok(link)) => Ok((link, began.elapsed())),
        Ok(Err(e)) => Err(match e.downcast_ref::<link::WrongVersion>() {
            Some(wrong) => Failure::WrongVersion(printable_line(&wrong.0)),
            None => classify(&machine.target, &format!("{e:#}")),
        }),
        Err(_) => Err(Failure::Unreachable(format!(
            "no answer within {} s",
            ATTEMPT.as_secs()
        ))),
    }
}

/// Tells a failure that needs the user (ssh said so on stderr) from any other.
pub fn classify(target: &str, message: &str) -> Failure {
    let reason = printable_line(message);
    let lower = reason.to_lowercase();
    let needs_you = [
        "permission denied",
        "host key verification failed",
        "passphrase",
        "password",
        "keyboard-interactive",
    ]
    .iter()
    .any(|sign| lower.contains(sign));
    if needs_you {
        Failure::NeedsYou {
            target: crate::remote::handshake::printable(target),
            reason,
        }
    } else {
        Failure::Unreachable(reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_told_apart_from_other_failures() {
        let f = classify(
            "me@build",
            "ssh could not reach me@build (ssh said: Host key verification failed.)",
        );
        assert!(matches!(f, Failure::NeedsYou { .. }), "{f:?}");
        assert!(f
            .line("build")
            .starts_with("needs you: build (run `ssh me@build` once"));
        let f = classify(
            "b",
            "ssh could not reach b (ssh said: me@b: Permission denied (publickey,password).)",
        );
        assert!(matches!(f, Failure::NeedsYou { .. }), "{f:?}");
        let f = classify("b", "ssh could not reach b (ssh said: connect to host b port 22: Connection refused\u{1b}[2J)");
        assert_eq!(
            f.line("b"),
            "unreachable: b (ssh could not reach b (ssh said: connect to host b port 22: \
             Connection refused [2J))"
        );
    }
}
