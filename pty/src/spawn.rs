//! Starting a program in a PTY, with one reader thread that parses its output into the pane's
//! [`Terminal`] and one writer thread that feeds it input.
//!
//! The reader parses on its own thread (not the server's owner loop) so a flooding pane uses the
//! second core and never delays keystrokes to another pane; the owner only hears "pane changed".
//! A keystroke is written by the owner itself when nothing is queued before it (the PTY is
//! non-blocking, see `pty_fd`); larger or blocked input goes through the writer thread. The
//! output right after a keystroke (its echo) the owner may read itself (`read_gate`).

use crate::read_gate::{read_once, ReadGate, ReadOutcome};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use nix::poll::PollFlags;
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use portable_pty::{native_pty_system, CommandBuilder, PtySize};

use crate::master::Master;
use crate::pty_fd;
use crate::terminal::Terminal;

/// What a pane needs to start.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// Program and arguments; empty means the user's `$SHELL` (else /bin/sh).
    pub command: Vec<String>,
    /// Working directory (must exist; else the child starts in `$HOME`).
    pub cwd: Option<String>,
    /// The whole environment of the child (nothing else is inherited).
    pub env: Vec<(String, String)>,
    pub rows: u16,
    pub cols: u16,
}

/// Notifications from a pane's threads to whoever owns the pane. Called from those threads.
pub trait PaneEvents: Send + Sync + 'static {
    /// New output was parsed into the terminal (query replies were already written back; bells
    /// and clipboard writes wait in the terminal for `take_events`).
    fn output(&self);
    /// The program closed the PTY and exited with this status (None when unknown).
    fn exited(&self, status: Option<u32>);
}

/// Errors starting a pane.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("failed to open a pty: {0}")]
    OpenPty(String),
    #[error("failed to start {command:?}: {reason}")]
    Start { command: String, reason: String },
}

/// A running pane process: resize it, write to it, kill it.
pub struct PaneProcess {
    /// Whether the reader thread or the owner reads the next output (see `read_gate`).
    gate: Arc<ReadGate>,
    master: Master,
    input: InputQueue,
    /// The master, non-blocking, for writing keystrokes without the writer thread.
    direct: File,
    pid: Option<u32>,
    /// Set by the reader thread once the child is reaped, so a delayed SIGKILL never hits a
    /// recycled pid.
    reaped: Arc<AtomicBool>,
    /// Whether the pane is in the background (not focused): its reader thread lowers its
    /// priority.
    background: Arc<AtomicBool>,
}

impl std::fmt::Debug for PaneProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PaneProcess")
            .field("pid", &self.pid)
            .finish()
    }
}

/// Reads are done in chunks of this size (one `blocking` read, one parse, one notification).
const READ_CHUNK: usize = 64 * 1024;

/// Input up to this size (keys, escape sequences, short pastes) is written by the caller
/// directly when nothing waits in the queue.
const DIRECT_WRITE_MAX: usize = 256;

/// Input for the writer thread, with a count of chunks not yet written so a direct write never
/// overtakes queued input.
#[derive(Clone)]
struct InputQueue {
    tx: std_mpsc::Sender<Vec<u8>>,
    pending: Arc<AtomicUsize>,
}

impl InputQueue {
    fn send(&self, bytes: Vec<u8>) {
        self.pending.fetch_add(1, Ordering::AcqRel);
        if self.tx.send(bytes).is_err() {
            self.pending.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn is_empty(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }
}

/// Starts `options.command` in a new PTY whose output is parsed into `terminal`.
pub fn spawn(
    options: &SpawnOptions,
    terminal: Arc<Mutex<Terminal>>,
    events: Arc<dyn PaneEvents>,
) -> Result<PaneProcess, SpawnError> {
    let (rows, cols) = crate::limits::clamp_size(options.rows, options.cols);
    let pty = native_pty_system()
        .openpty(PtySize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(|e| SpawnError::OpenPty(e.to_string()))?;

    let mut builder = if options.command.is_empty() {
        let shell = options
            .env
            .iter()
            .find(|(k, _)| k == "SHELL")
            .map(|(_, v)| v.clone())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "/bin/sh".to_string());
        let mut b = CommandBuilder::new(shell);
        // A login-less interactive shell, like tmux's default-command.
        b.args(Vec::<String>::new());
        b
    } else {
        let mut b = CommandBuilder::new(&options.command[0]);
        b.args(&options.command[1..]);
        b
    };
    builder.env_clear();
    for (k, v) in &options.env {
        builder.env(k, v);
    }
    if let Some(cwd) = options
        .cwd
        .as_deref()
        .filter(|c| std::path::Path::new(c).is_dir())
    {
        // PWD must name the directory the program really starts in (shells and some CLIs
        // trust it over getcwd), not the directory of whoever created the pane.
        builder.cwd(cwd);
        builder.env("PWD", cwd);
    } else if let Some((_, home)) = options.env.iter().find(|(k, _)| k == "HOME") {
        builder.cwd(home);
        builder.env("PWD", home);
    }

    let command_text = options.command.join(" ");
    let mut child = pty
        .slave
        .spawn_command(builder)
        .map_err(|e| SpawnError::Start {
            command: command_text.clone(),
            reason: e.to_string(),
        })?;
    drop(pty.slave);
    let pid = child.process_id();
    let master_fd = pty
        .master
        .as_raw_fd()
        .ok_or_else(|| SpawnError::OpenPty("the pty master has no descriptor".into()))?;
    let writer = pty.master.take_writer().map_err(|e| SpawnError::Start {
        command: command_text.clone(),
        reason: e.to_string(),
    })?;
    // SAFETY: portable-pty hands out only the raw number of the master it owns; `pty.master`
    // is alive (and so is the descriptor) for this borrow's one use, and nothing closes it
    // meanwhile. Neither portable-pty nor nix offers a borrowed form.
    let master = unsafe { BorrowedFd::borrow_raw(master_fd) };
    let start_error = |e: std::io::Error| SpawnError::Start {
        command: command_text.clone(),
        reason: e.to_string(),
    };
    let master = pty_fd::duplicate(master).map_err(start_error)?;
    let wait = Box::new(move || child.wait().ok().map(|s| s.exit_code()));
    let started = Started {
        master,
        writer,
        wait,
        pid,
    };
    start_threads(started, Master::Opened(pty.master), terminal, events).map_err(start_error)
}

/// Takes over a pane whose program runs already: `master` is its PTY master, inherited from
/// the server this process replaced (`calyx server-upgrade`), and `pid` its child, still this
/// process's child (the upgrade kept the pid), so it is reaped here as a spawned one is.
pub fn adopt(
    master: std::os::fd::OwnedFd,
    pid: u32,
    terminal: Arc<Mutex<Terminal>>,
    events: Arc<dyn PaneEvents>,
) -> std::io::Result<PaneProcess> {
    let master = File::from(master);
    let started = Started {
        master: pty_fd::duplicate(master.as_fd())?,
        writer: Box::new(pty_fd::duplicate(master.as_fd())?),
        wait: Box::new(move || wait_for(pid)),
        pid: Some(pid),
    };
    start_threads(started, Master::Inherited(master), terminal, events)
}

/// Waits for the child `pid` to end: its exit code, 1 when a signal ended it (as portable-pty
/// reports it), None when it cannot be waited for.
fn wait_for(pid: u32) -> Option<u32> {
    use nix::sys::wait::{waitpid, WaitStatus};
    let pid = Pid::from_raw(i32::try_from(pid).ok()?);
    loop {
        match waitpid(pid, None) {
            Ok(WaitStatus::Exited(_, code)) => return u32::try_from(code).ok(),
            Ok(WaitStatus::Signaled(..)) => return Some(1),
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(_) => return None,
        }
    }
}

/// What a pane's threads need of a started program.
struct Started {
    /// A descriptor of the PTY master, for the duplicates the threads and the owner use.
    master: File,
    /// Where queued input is written.
    writer: Box<dyn Write + Send>,
    /// Waits for the program to end (called by the reader thread once the PTY closed).
    wait: Box<dyn FnOnce() -> Option<u32> + Send>,
    pid: Option<u32>,
}

/// Starts the reader and writer threads of a pane whose program runs on `started.master`.
fn start_threads(
    started: Started,
    master: Master,
    terminal: Arc<Mutex<Terminal>>,
    events: Arc<dyn PaneEvents>,
) -> std::io::Result<PaneProcess> {
    let Started {
        master: base,
        writer,
        wait,
        pid,
    } = started;
    let master_fd = base.as_fd();
    let reaped = Arc::new(AtomicBool::new(false));
    let reaped_by_reader = reaped.clone();
    let background = Arc::new(AtomicBool::new(false));
    let background_for_reader = background.clone();
    pty_fd::set_nonblocking(master_fd)?;
    let reader = pty_fd::duplicate(master_fd)?;
    let direct = pty_fd::duplicate(master_fd)?;
    let writer_ready = pty_fd::duplicate(master_fd)?;
    let gate = Arc::new(crate::read_gate::ReadGate::new(reader)?);
    let gate_for_reader = gate.clone();

    let (input_tx, input_rx) = std_mpsc::channel::<Vec<u8>>();
    let input = InputQueue {
        tx: input_tx,
        pending: Arc::new(AtomicUsize::new(0)),
    };
    let written = input.pending.clone();
    std::thread::Builder::new()
        .name("calyx-pane-writer".into())
        .spawn(move || write_loop(writer, &writer_ready, &input_rx, &written))?;

    let replies_tx = input.clone();
    std::thread::Builder::new()
        .name("calyx-pane-reader".into())
        .spawn(move || {
            read_loop(
                &background_for_reader,
                &gate_for_reader,
                &terminal,
                &replies_tx,
                events.as_ref(),
            );
            let status = wait();
            reaped_by_reader.store(true, Ordering::Release);
            events.exited(status);
        })?;

    Ok(PaneProcess {
        gate,
        master,
        input,
        direct,
        pid,
        reaped,
        background,
    })
}

fn read_loop(
    background: &AtomicBool,
    gate: &ReadGate,
    terminal: &Mutex<Terminal>,
    replies: &InputQueue,
    events: &dyn PaneEvents,
) {
    let priorities = crate::reader_priority::ReaderPriorities::for_this_thread();
    let mut niced = false;
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        let want = background.load(Ordering::Relaxed);
        if want != niced {
            priorities.apply(want);
            niced = want;
        }
        match read_once(gate.reader(), terminal, &mut buf, gate.stats()) {
            ReadOutcome::Parsed { answers, .. } => {
                if !answers.is_empty() {
                    replies.send(answers);
                }
                events.output();
            }
            ReadOutcome::Nothing => {
                if !gate.wait() {
                    return;
                }
            }
            ReadOutcome::Closed => return,
        }
    }
}

/// What the owner's own read of a pane's output ([`PaneProcess::read_output`]) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerRead {
    /// Output, parsed into the terminal. `full`: the read filled its buffer, so more may be
    /// waiting (bulk output, not an echo).
    Parsed { full: bool },
    /// Nothing yet (the readiness that woke the owner was stale): the echo is still to come.
    Nothing,
    /// The program closed the PTY, or reading failed: the reader thread sees it too.
    Closed,
}

/// What the owner reads of a pane's output at once: an echo is a few bytes; a read that fills
/// this is bulk output, which the owner hands back to the reader thread (`READ_CHUNK`s).
const OWNER_READ_CHUNK: usize = 4096;

/// Writes queued input in order, waiting for room when the program is slow to read it.
/// `writer` is portable-pty's (it sends EOF when dropped, as the pane closes); `ready` is a
/// duplicate of the same descriptor to wait on.
fn write_loop(
    mut writer: Box<dyn Write + Send>,
    ready: &File,
    input: &std_mpsc::Receiver<Vec<u8>>,
    pending: &AtomicUsize,
) {
    while let Ok(bytes) = input.recv() {
        let mut rest: &[u8] = &bytes;
        while !rest.is_empty() {
            match writer.write(rest) {
                Ok(0) => return,
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if !pty_fd::wait(ready, PollFlags::POLLOUT) {
                        return;
                    }
                }
                Err(_) => return,
            }
        }
        pending.fetch_sub(1, Ordering::AcqRel);
    }
}

impl PaneProcess {
    /// Queues bytes for the program's input (never blocks the caller).
    pub fn write(&self, bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        // A keystroke goes straight to the PTY when nothing is queued before it: one thread
        // hop less on its way to the echo. The descriptor is non-blocking, so a program that
        // stopped reading never blocks the caller; what does not fit is queued.
        if bytes.len() <= DIRECT_WRITE_MAX && self.input.is_empty() {
            // Would block (no room) or failed: the writer thread takes it all, and reports.
            let written = (&self.direct).write(&bytes).unwrap_or(0);
            if written < bytes.len() {
                self.input.send(bytes[written..].to_vec());
            }
            return;
        }
        self.input.send(bytes);
    }

    /// Queues `bytes` as if typed at the shell's prompt: once the shell's line editor has the
    /// terminal (readline, zle and fish read keys with ICANON off), or after `wait` when none
    /// takes it. Typed earlier, the line would show twice: echoed by the terminal while the
    /// shell starts, then printed again by the line editor when it reads it.
    pub fn type_at_prompt(&self, bytes: Vec<u8>, wait: Duration) {
        let watch = match self.direct.try_clone() {
            Ok(watch) if !wait.is_zero() => watch,
            _ => return self.input.send(bytes),
        };
        let input = self.input.clone();
        let typed = bytes.clone();
        let spawned = std::thread::Builder::new()
            .name("calyx-pane-typist".into())
            .spawn(move || {
                let deadline = std::time::Instant::now() + wait;
                while !crate::pty_fd::line_editing(&watch) && std::time::Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(20));
                }
                input.send(typed);
            });
        if spawned.is_err() {
            self.input.send(bytes);
        }
    }

    /// How often this pane's reads (the reader thread's and the owner's) waited for the
    /// terminal's lock: (reads that parsed output, reads that waited).
    pub fn read_stats(&self) -> (u64, u64) {
        self.gate.stats().counts()
    }

    /// The owner reads the program's output itself from here on (the echoes of keys typed):
    /// the reader thread is not woken for it. See [`crate::read_gate`].
    pub fn take_output(&self) {
        self.gate.take();
    }

    /// The reader thread reads the program's output again.
    pub fn give_back_output(&self) {
        self.gate.give_back();
    }

    /// A new descriptor of the PTY master to wait on for the output the owner took.
    pub fn output_watch(&self) -> std::io::Result<File> {
        pty_fd::duplicate(self.direct.as_fd())
    }

    /// Reads and parses what the program printed, on the caller's thread (the owner, while it
    /// reads the pane keys go to); query answers go back to the program as the reader
    /// thread's do.
    pub fn read_output(&self, terminal: &Mutex<Terminal>) -> OwnerRead {
        let mut buf = [0u8; OWNER_READ_CHUNK];
        match read_once(&self.direct, terminal, &mut buf, self.gate.stats()) {
            ReadOutcome::Parsed { answers, full } => {
                if !answers.is_empty() {
                    self.input.send(answers);
                }
                OwnerRead::Parsed { full }
            }
            ReadOutcome::Nothing => OwnerRead::Nothing,
            ReadOutcome::Closed => OwnerRead::Closed,
        }
    }

    /// Tells the program its new size (SIGWINCH).
    pub fn resize(&self, rows: u16, cols: u16) {
        // The program sees the size its screen has (see `crate::limits`).
        let (rows, cols) = crate::limits::clamp_size(rows, cols);
        self.master.resize(rows, cols);
    }

    /// Marks the pane as in the background (nobody looks at or types into it) or not.
    pub fn set_background(&self, background: bool) {
        self.background.store(background, Ordering::Relaxed);
    }

    /// The number of the PTY master's descriptor the owner writes through: what an in-place
    /// upgrade keeps open across its `execve` for the next server to [`adopt`].
    pub fn master_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.direct)
    }

    /// The child's pid.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The foreground process group leader of the PTY (what the user is running now).
    pub fn foreground_pid(&self) -> Option<u32> {
        self.master
            .process_group_leader()
            .and_then(|p| u32::try_from(p).ok())
    }

    /// Hangs up on the program: SIGHUP to its process group, as a terminal closing does.
    pub fn hangup(&mut self) {
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
            signal_group_and_leader(pid, Signal::SIGHUP);
        }
    }

    /// Closes the pane's program: SIGHUP to its process group now, as a closing terminal does,
    /// and SIGKILL after `grace` if it is still there (a program that ignores SIGHUP).
    /// The returned thread ends within `grace`; join it before the process exits so the kill
    /// is not lost.
    pub fn terminate(&mut self, grace: Duration) -> Option<std::thread::JoinHandle<()>> {
        self.hangup();
        let pid = self.pid.and_then(|p| i32::try_from(p).ok())?;
        let reaped = self.reaped.clone();
        std::thread::Builder::new()
            .name("calyx-pane-reaper".into())
            .spawn(move || {
                std::thread::sleep(grace);
                if !reaped.load(Ordering::Acquire) {
                    signal_group_and_leader(pid, Signal::SIGKILL);
                }
            })
            .ok()
    }
}

/// Sends `signal` to the process group `pid` leads (the pane's shell and what it runs), then to
/// `pid` itself in case it left its group. Failures (the process is gone) are of no interest.
fn signal_group_and_leader(pid: i32, signal: Signal) {
    let _ = kill(Pid::from_raw(-pid), signal);
    let _ = kill(Pid::from_raw(pid), signal);
}
