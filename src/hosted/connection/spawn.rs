//! Starting a stdio server: in its own process group (an `npx` wrapper and the node child it
//! starts both die when the server is removed), with the configured environment added to
//! calyx's, stdout for MCP only, stderr drained into the [`StderrRing`]. Stopping follows the
//! MCP spec: close stdin, wait 3 s, SIGTERM to the group, wait 3 s, SIGKILL.

use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::ring::StderrRing;
use super::ConnectError;

/// How long each shutdown step waits for the server to exit.
pub const SHUTDOWN_STEP: Duration = Duration::from_secs(3);

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct StdioLaunch {
    pub command: String,
    pub args: Vec<String>,
    pub cwd: Option<String>,
    /// Configured variables (values from the secret store), added to calyx's environment.
    pub env: Vec<(String, String)>,
}

/// A running stdio server process. Dropping it kills the whole group.
pub struct ServerProcess {
    child: Child,
    pgid: Option<Pid>,
    pub stderr: StderrRing,
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
    /// Set once [`ServerProcess::shutdown`] has finished, so dropping it signals nothing (the
    /// group id may belong to someone else by then).
    finished: bool,
}

/// Starts `launch`; returns the process and its stdin/stdout for the transport.
pub fn spawn(
    launch: &StdioLaunch,
) -> Result<(ServerProcess, ChildStdin, ChildStdout), ConnectError> {
    let mut command = Command::new(&launch.command);
    command
        .args(&launch.args)
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &launch.cwd {
        command.current_dir(cwd);
    }
    let mut child = command.spawn().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ConnectError::CommandNotFound {
                command: launch.command.clone(),
                path: std::env::var("PATH").unwrap_or_default(),
            }
        } else {
            ConnectError::Spawn {
                command: launch.command.clone(),
                reason: e.to_string(),
            }
        }
    })?;
    let pgid = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let (Some(stdin), Some(stdout), Some(mut err)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(ConnectError::Spawn {
            command: launch.command.clone(),
            reason: "its standard streams could not be opened".into(),
        });
    };
    let stderr = StderrRing::default();
    let ring = stderr.clone();
    let stderr_reader = tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = err.read(&mut buf).await {
            if n == 0 {
                break;
            }
            ring.push(&buf[..n]);
        }
    });
    let process = ServerProcess {
        child,
        pgid,
        stderr,
        stderr_reader: Some(stderr_reader),
        finished: false,
    };
    Ok((process, stdin, stdout))
}

impl ServerProcess {
    /// The exit status if the process has ended, as a phrase (`exit status 1`, `signal 9`).
    pub fn exited(&mut self) -> Option<String> {
        self.child.try_wait().ok().flatten().map(|s| s.to_string())
    }

    /// Waits up to `limit` for the process to end; its status phrase when it did.
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<String> {
        tokio::time::timeout(limit, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok)
            .map(|s| s.to_string())
    }

    /// Waits up to `limit` for everything the process wrote to stderr to reach the ring (after
    /// it exited, so a failure shows its last words).
    pub async fn drain_stderr(&mut self, limit: Duration) {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = tokio::time::timeout(limit, reader).await;
        }
    }

    /// The spec's shutdown after stdin was closed (the transport closes it when dropped):
    /// 3 s, SIGTERM to the group, 3 s, SIGKILL to the group.
    pub async fn shutdown(mut self) {
        if self.wait_exit(SHUTDOWN_STEP).await.is_some() {
            self.kill_group(Signal::SIGKILL);
            self.finished = true;
            return;
        }
        self.kill_group(Signal::SIGTERM);
        if self.wait_exit(SHUTDOWN_STEP).await.is_none() {
            self.kill_group(Signal::SIGKILL);
            let _ = self.child.wait().await;
        }
        // Children of the server (an npx wrapper's node) may outlive it.
        self.kill_group(Signal::SIGKILL);
        self.finished = true;
    }

    fn kill_group(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is gone) is the expected outcome more often than not.
            let _ = killpg(pgid, signal);
        }
    }

    /// The process group id, for tests that check the whole group is gone.
    pub fn pgid(&self) -> Option<i32> {
        self.pgid.map(Pid::as_raw)
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if !self.finished {
            self.kill_group(Signal::SIGKILL);
        }
    }
}
