//! Running an agent CLI (or its interpreter) from `calyx setup` and `calyx doctor`, bounded in
//! time: a broken, slow or hostile binary on PATH must never make setup hang. The child gets no
//! stdin, its output is read on threads (so a chatty child cannot block on a full pipe) and
//! capped, and it is killed when the deadline passes.

use std::io::Read;
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long `BIN --version` may take (some CLIs check for updates first).
/// Some CLIs are slow to start (Gemini CLI takes about 4 s to print its version here).
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(8);

/// Output kept per stream: enough for any error message, bounded for a runaway child.
const MAX_OUTPUT: u64 = 64 * 1024;

/// What a bounded run gave.
#[derive(Debug)]
pub struct Ran {
    /// The exit code (`None`: killed by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Why a bounded run gave nothing.
#[derive(Debug)]
pub enum Failed {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It ran past the deadline and was killed.
    Timeout(Duration),
}

impl std::fmt::Display for Failed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failed::Spawn(e) => write!(f, "could not be started ({e})"),
            Failed::Timeout(d) => {
                write!(f, "did not finish within {} s and was killed", d.as_secs())
            }
        }
    }
}

/// Multiplies every deadline here by `CALYX_SETUP_TIMEOUT_SCALE` (a whole number, 1 to 10;
/// anything else counts as 1): for machines where the CLIs start slowly, such as a loaded CI
/// box, without making setup wait longer everywhere. The tests that run real CLIs set it.
fn scaled(timeout: Duration) -> Duration {
    let scale = std::env::var("CALYX_SETUP_TIMEOUT_SCALE")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .filter(|n| (1..=10).contains(n))
        .unwrap_or(1);
    timeout.saturating_mul(scale)
}

/// Runs `cmd` to completion or until `timeout` (scaled, see [`scaled`]), whichever comes first.
pub fn run(mut cmd: Command, timeout: Duration) -> Result<Ran, Failed> {
    let timeout = scaled(timeout);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(Failed::Spawn)?;
    let out = child.stdout.take().map(reader);
    let err = child.stderr.take().map(reader);
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => break None,
        }
    };
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(Failed::Timeout(timeout));
    };
    Ok(Ran {
        code: status.code(),
        stdout: joined(out, deadline),
        stderr: joined(err, deadline),
    })
}

fn reader(pipe: impl Read + Send + 'static) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.take(MAX_OUTPUT).read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    })
}

/// The reader's text, waiting no later than `deadline`: a grandchild that inherited the pipe
/// and outlives the child would otherwise keep the read (and setup) going.
fn joined(handle: Option<JoinHandle<String>>, deadline: Instant) -> String {
    let Some(handle) = handle else {
        return String::new();
    };
    while !handle.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if handle.is_finished() {
        handle.join().unwrap_or_default()
    } else {
        String::new()
    }
}

/// The first non-empty line of `text`, trimmed.
pub fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// `BIN --version`'s first line (stdout, else stderr: pi prints it there) for a prepared
/// command (the config check runs it in its private directory), or None when it fails or
/// takes longer than [`VERSION_TIMEOUT`].
pub fn version_of(mut cmd: Command) -> Option<String> {
    cmd.arg("--version");
    let ran = run(cmd, VERSION_TIMEOUT).ok()?;
    first_line(&ran.stdout).or_else(|| first_line(&ran.stderr))
}
