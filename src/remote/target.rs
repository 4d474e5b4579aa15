//! What `--remote` names (an SSH config alias, `user@host`, or `ssh://[user@]host[:port]`)
//! and the `ssh` command line that reaches it: the user's own `ssh` from PATH, or
//! `CALYX_SSH` split like a shell command line (as git's `GIT_SSH_COMMAND`), so their config,
//! keys, agent, known_hosts and ProxyJump all apply.

use anyhow::{bail, Context};

/// A remote machine as `ssh` will be told to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `host`, `user@host` or an SSH config alias, as given to `ssh`.
    pub destination: String,
    /// A port from an `ssh://` URL (else ssh's config decides).
    pub port: Option<u16>,
}

impl Target {
    /// Parses `--remote`'s value. A value starting with `-` is refused: ssh would read it as
    /// an option.
    pub fn parse(text: &str) -> anyhow::Result<Self> {
        let text = text.trim();
        if let Some(rest) = text.strip_prefix("ssh://") {
            let rest = rest.trim_end_matches('/');
            let (user, hostport) = match rest.rsplit_once('@') {
                Some((user, hostport)) => (Some(user), hostport),
                None => (None, rest),
            };
            let (host, port) = split_port(hostport)?;
            let destination = match user {
                Some(user) if !user.is_empty() => format!("{user}@{host}"),
                _ => host.to_string(),
            };
            return Self::checked(destination, port);
        }
        Self::checked(text.to_string(), None)
    }

    fn checked(destination: String, port: Option<u16>) -> anyhow::Result<Self> {
        if destination.is_empty() || destination.ends_with('@') {
            bail!("--remote needs a host: an SSH alias, user@host or ssh://user@host:port");
        }
        if destination.starts_with('-') {
            bail!("--remote {destination:?}: a host cannot start with '-'");
        }
        if destination
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
        {
            bail!("--remote {destination:?}: a host has no spaces or control characters");
        }
        Ok(Self { destination, port })
    }

    /// The name shown to the user ("reconnecting to NAME…").
    pub fn display(&self) -> String {
        match self.port {
            Some(port) => format!("{}:{port}", self.destination),
            None => self.destination.clone(),
        }
    }

    /// The `ssh` command running `remote_command` on this machine: `ssh -T -o
    /// ServerAliveInterval=15 [extra] [-p PORT] -- DESTINATION REMOTE_COMMAND`. `extra` are
    /// more options (`BatchMode=yes` when a prompt would land on a raw-mode screen).
    pub fn ssh_command(
        &self,
        extra: &[&str],
        remote_command: &str,
    ) -> anyhow::Result<tokio::process::Command> {
        self.ssh("-T", extra, remote_command)
    }

    /// The same with a terminal (`ssh -t`) for the interactive attach (`remote::tty`): ssh
    /// holds this process's terminal and `remote_command` gets a pty on the far side.
    pub fn ssh_tty_command(
        &self,
        extra: &[&str],
        remote_command: &str,
    ) -> anyhow::Result<tokio::process::Command> {
        self.ssh("-t", extra, remote_command)
    }

    fn ssh(
        &self,
        tty: &str,
        extra: &[&str],
        remote_command: &str,
    ) -> anyhow::Result<tokio::process::Command> {
        let base = ssh_program()?;
        let (program, args) = base
            .split_first()
            .context("CALYX_SSH is empty: it should name an ssh command")?;
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .arg(tty)
            .args(["-o", "ServerAliveInterval=15"])
            .args(extra);
        if let Some(port) = self.port {
            cmd.arg("-p").arg(port.to_string());
        }
        cmd.arg("--").arg(&self.destination).arg(remote_command);
        Ok(cmd)
    }
}

/// `host`, `host:port` or `[v6]:port`.
fn split_port(hostport: &str) -> anyhow::Result<(&str, Option<u16>)> {
    if let Some(rest) = hostport.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .context("ssh:// address: an unclosed '['")?;
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, Some(parse_port(port)?))),
            None if after.is_empty() => Ok((host, None)),
            None => bail!("ssh:// address: unexpected {after:?} after ']'"),
        };
    }
    match hostport.rsplit_once(':') {
        Some((host, port)) => Ok((host, Some(parse_port(port)?))),
        None => Ok((hostport, None)),
    }
}

fn parse_port(text: &str) -> anyhow::Result<u16> {
    text.parse::<u16>()
        .ok()
        .filter(|p| *p > 0)
        .with_context(|| format!("ssh:// address: {text:?} is not a port"))
}

/// The ssh command and its own arguments: `CALYX_SSH` split as a shell would, else `ssh`.
pub fn ssh_program() -> anyhow::Result<Vec<String>> {
    match std::env::var("CALYX_SSH") {
        Ok(line) if !line.trim().is_empty() => crate::argsplit::split_args(&line)
            .map_err(|e| anyhow::anyhow!("CALYX_SSH {line:?}: {e}")),
        _ => Ok(vec!["ssh".to_string()]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> (String, Option<u16>) {
        let t = Target::parse(text).expect(text);
        (t.destination, t.port)
    }

    #[test]
    fn aliases_users_and_urls() {
        assert_eq!(parsed("workbox"), ("workbox".into(), None));
        assert_eq!(parsed("me@build"), ("me@build".into(), None));
        assert_eq!(
            parsed("ssh://me@host.example:2222"),
            ("me@host.example".into(), Some(2222))
        );
        assert_eq!(parsed("ssh://host/"), ("host".into(), None));
        assert_eq!(parsed("ssh://me@[::1]:22"), ("me@::1".into(), Some(22)));
    }

    #[test]
    fn option_like_or_empty_targets_are_refused() {
        for bad in [
            "",
            "-oProxyCommand=evil",
            "ssh://-oProxyCommand=x",
            "ssh://me@",
            "ssh://host:0",
            "ssh://host:http",
            "a b",
            "host\u{1b}[2J",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn display_names_the_port() {
        let t = Target::parse("ssh://me@h:2200").expect("parse");
        assert_eq!(t.display(), "me@h:2200");
    }
}
