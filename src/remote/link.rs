//! A connected client stream to a calyx server on another machine: `ssh TARGET calyx
//! remote-bridge` whose stdin and stdout are one end of a local socketpair, its handshake
//! checked. Whoever holds [`Link::stream`] (the other end) talks to the remote server exactly
//! as over the local socket (`client::request`, `client::attach`), so nothing above this
//! knows the server is remote; and no relay sits between it and ssh (a keystroke costs no
//! extra hop). It does not touch the terminal: saved machines can hold one per machine in the
//! background.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::net::UnixStream;

use super::handshake::{self, Peer};
use super::Target;

/// How a link is made.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Start the remote server when none runs (as a local `calyx` does).
    pub start: bool,
    /// Never prompt (`BatchMode=yes`): for reconnects, when a password prompt would land on
    /// a screen in raw mode.
    pub batch: bool,
}

/// A live connection to a remote server.
pub struct Link {
    /// The client's end: frames written here reach the remote server.
    pub stream: UnixStream,
    /// What the remote bridge said about itself.
    pub peer: Peer,
}

/// The last bytes ssh wrote on stderr, for the message when the link fails.
type StderrTail = Arc<Mutex<Vec<u8>>>;

const STDERR_KEPT: usize = 4096;

/// The machine's calyx speaks another protocol (what it runs and what to do, in words): told
/// apart from other failures so a saved machine's link shows it as its own state.
#[derive(Debug)]
pub struct WrongVersion(pub String);

impl std::fmt::Display for WrongVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WrongVersion {}

/// Runs ssh, checks the bridge's handshake and hands over the connected stream.
pub async fn connect(target: &Target, options: Options) -> anyhow::Result<Link> {
    let (link, mut child) = open(target, options).await?;
    // ssh ends when the stream is closed (its stdin ends) or the connection drops (the stream
    // ends); this only reaps it, and kills it if the runtime goes first.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok(link)
}

/// How long [`check`] waits for its ssh to end after closing the link.
const CHECK_CLOSE: std::time::Duration = std::time::Duration::from_secs(5);

/// Connects only to learn what the far side runs (and to start its server when
/// `options.start`), then closes the link and waits for that ssh to end: the interactive
/// attach (`remote::tty`) checks the version this way before it hands the terminal to ssh.
pub async fn check(target: &Target, options: Options) -> anyhow::Result<Peer> {
    let (link, mut child) = open(target, options).await?;
    let Link { stream, peer } = link;
    drop(stream);
    if tokio::time::timeout(CHECK_CLOSE, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
    Ok(peer)
}

/// The link and its ssh.
async fn open(target: &Target, options: Options) -> anyhow::Result<(Link, tokio::process::Child)> {
    let args = if options.start {
        "remote-bridge"
    } else {
        "remote-bridge --no-start"
    };
    let extra: &[&str] = if options.batch {
        &["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]
    } else {
        &[]
    };
    let (ours, theirs) =
        std::os::unix::net::UnixStream::pair().context("failed to make a socket pair")?;
    let mut cmd = target.ssh_command(extra, &handshake::remote_command(args))?;
    cmd.stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs.try_clone()?)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().with_context(|| {
        format!(
            "failed to run {} (set CALYX_SSH to the ssh command to use)",
            super::target::ssh_program()
                .ok()
                .and_then(|p| p.first().cloned())
                .unwrap_or_else(|| "ssh".into())
        )
    })?;
    // ssh holds its end now: the spawn closed this process's copies (the Command is dropped).
    drop(cmd);
    let tail: StderrTail = Arc::default();
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(keep_tail(stderr, tail.clone()));
    }
    ours.set_nonblocking(true)?;
    let mut stream = UnixStream::from_std(ours)?;
    let peer = match read_handshake(&mut stream).await {
        Ok(peer) => peer,
        Err(why) => return Err(failure(target, why, &mut child, &tail).await),
    };
    if !peer.compatible() {
        return Err(anyhow::Error::new(WrongVersion(format!(
            "{} runs calyx {} (protocol {}), this one speaks {}: run `calyx --remote {} \
             --install` (or install calyx {} there)",
            target.display(),
            peer.version,
            peer.protocol
                .map_or_else(|| "unknown".to_string(), |p| p.to_string()),
            handshake::PROTOCOL_VERSION,
            target.display(),
            env!("CARGO_PKG_VERSION"),
        ))));
    }
    match read_line(&mut stream).await {
        Some(line) if line == handshake::READY => {}
        Some(line) if line.starts_with(handshake::ERROR) => bail!(
            "{}: {}",
            target.display(),
            handshake::printable_line(&line[handshake::ERROR.len()..])
        ),
        _ => {
            let why = Handshake::Closed;
            return Err(failure(target, why, &mut child, &tail).await);
        }
    }
    Ok((Link { stream, peer }, child))
}

/// Why no handshake came.
enum Handshake {
    /// ssh's stdout closed first (ssh failed, or no calyx there).
    Closed,
    /// Too much text without a header: not a calyx bridge.
    NoHeader,
}

async fn read_handshake(stdout: &mut UnixStream) -> Result<Peer, Handshake> {
    let mut seen = 0usize;
    loop {
        let Some(line) = read_line(stdout).await else {
            return Err(Handshake::Closed);
        };
        if let Some(peer) = handshake::parse_header(&line) {
            return Ok(peer);
        }
        seen += line.len() + 1;
        if seen > handshake::MAX_PREAMBLE {
            return Err(Handshake::NoHeader);
        }
    }
}

/// One line (without its newline), at most [`handshake::MAX_PREAMBLE`] bytes; None at the end.
/// Read a byte at a time: nothing after the `ready` line may be taken from the stream, it is
/// the client's.
async fn read_line(stream: &mut UnixStream) -> Option<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match stream.read(&mut byte).await {
            Ok(0) | Err(_) if line.is_empty() => return None,
            Ok(0) | Err(_) => break,
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => line.push(byte[0]),
        }
        if line.len() > handshake::MAX_PREAMBLE {
            break;
        }
    }
    let text = String::from_utf8_lossy(&line);
    Some(text.trim_end_matches('\r').to_string())
}

/// The message for a link that ended before `ready`: no calyx there (exit 127), ssh's own
/// failure (255: its stderr says why), or something else.
async fn failure(
    target: &Target,
    why: Handshake,
    child: &mut tokio::process::Child,
    tail: &StderrTail,
) -> anyhow::Error {
    let status = tokio::time::timeout(std::time::Duration::from_secs(5), child.wait())
        .await
        .ok()
        .and_then(Result::ok);
    // Give the stderr reader a moment to take the last words.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let stderr = {
        let bytes = tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        handshake::printable_line(&String::from_utf8_lossy(&bytes))
    };
    let host = target.display();
    let said = if stderr.is_empty() {
        String::new()
    } else {
        format!(" (ssh said: {stderr})")
    };
    match (why, status.and_then(|s| s.code())) {
        (_, Some(127)) => anyhow::anyhow!(
            "{host} has no calyx (neither `calyx` on the PATH of a non-interactive ssh nor \
             ~/.local/bin/calyx): run `calyx --remote {host} --install` to copy this one there"
        ),
        (_, Some(255)) => anyhow::anyhow!("ssh could not reach {host}{said}"),
        (Handshake::NoHeader, _) => anyhow::anyhow!(
            "{host} printed no calyx bridge header: the calyx there may be too old for \
             `--remote`; `calyx --remote {host} --install` copies this version"
        ),
        (Handshake::Closed, code) => anyhow::anyhow!(
            "the calyx bridge on {host} ended before it was ready (exit {}){said}; a calyx \
             older than `--remote` has no bridge: `calyx --remote {host} --install` copies \
             this version",
            code.map_or_else(|| "by a signal".to_string(), |c| c.to_string())
        ),
    }
}

async fn keep_tail(mut stderr: impl AsyncRead + Unpin, tail: StderrTail) {
    let mut buf = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut kept = tail
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.extend_from_slice(&buf[..n]);
        let excess = kept.len().saturating_sub(STDERR_KEPT);
        kept.drain(..excess);
    }
}
