//! Pane processes behind a trait, as zellij puts its OS behind `ServerOsApi`: the model starts,
//! sizes, types into and closes pane programs through [`Processes`] and [`PaneProcess`] alone.
//! The server runs real programs in real PTYs ([`Pty`]); the reducer's state tests run on
//! fakes (`fake_processes`, test builds only) that record what the model asked for, with no
//! PTY, thread or child process, so they take microseconds.

use std::fs::File;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use calyx_pty::{PaneEvents, SpawnOptions, Terminal};

/// Starts pane programs.
pub trait Processes: Send + Sync {
    /// Starts `options.command`; its output is parsed into `terminal`, and `events` hears about
    /// new output and the program's exit.
    fn spawn(
        &self,
        options: &SpawnOptions,
        terminal: Arc<Mutex<Terminal>>,
        events: Arc<dyn PaneEvents>,
    ) -> anyhow::Result<Box<dyn PaneProcess>>;

    /// Takes over a program already running on the PTY master `master` (inherited across an
    /// in-place upgrade), as [`Processes::spawn`] would have started it.
    fn adopt(
        &self,
        master: std::os::fd::OwnedFd,
        pid: u32,
        terminal: Arc<Mutex<Terminal>>,
        events: Arc<dyn PaneEvents>,
    ) -> anyhow::Result<Box<dyn PaneProcess>> {
        let _ = (master, pid, terminal, events);
        anyhow::bail!("these processes cannot be adopted")
    }
}

/// One running pane program, as the model uses it (see `calyx_pty::PaneProcess` for what each
/// call does to a real one).
pub trait PaneProcess: Send + std::fmt::Debug {
    /// Queues bytes for the program's input (never blocks).
    fn write(&self, bytes: Vec<u8>);
    /// Queues bytes typed at a shell's prompt, once its line editor reads the terminal or
    /// after `wait` (see `calyx_pty::PaneProcess::type_at_prompt`); at once by default.
    fn type_at_prompt(&self, bytes: Vec<u8>, wait: Duration) {
        let _ = wait;
        self.write(bytes);
    }
    /// Tells the program its new size.
    fn resize(&self, rows: u16, cols: u16);
    /// SIGHUP now and SIGKILL after `grace`; the thread that kills, to join before exiting.
    fn terminate(&mut self, grace: Duration) -> Option<std::thread::JoinHandle<()>>;
    /// SIGHUP to the program's process group, as a closing terminal does (test harnesses let
    /// their real programs go with it; the server closes panes with `terminate`).
    #[cfg(test)]
    fn hangup(&mut self);
    /// Whether nobody looks at or types into the pane.
    fn set_background(&self, background: bool);
    /// The child's pid.
    fn pid(&self) -> Option<u32>;
    /// The PTY master's descriptor number, for an in-place upgrade to hand over (None: there
    /// is no real PTY).
    fn master_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
    /// The PTY's foreground process group leader.
    fn foreground_pid(&self) -> Option<u32>;
    /// The owner reads the program's output itself until it gives it back (keystrokes' echoes).
    fn take_output(&self);
    /// The reader thread reads the output again.
    fn give_back_output(&self);
    /// A descriptor to wait on for the output the owner took.
    fn output_watch(&self) -> std::io::Result<File>;
    /// Reads and parses pending output on the caller's thread.
    fn read_output(&self, terminal: &Mutex<Terminal>) -> calyx_pty::OwnerRead;
}

/// Real programs in real PTYs (`calyx_pty::spawn`).
pub struct Pty;

impl Processes for Pty {
    fn spawn(
        &self,
        options: &SpawnOptions,
        terminal: Arc<Mutex<Terminal>>,
        events: Arc<dyn PaneEvents>,
    ) -> anyhow::Result<Box<dyn PaneProcess>> {
        Ok(Box::new(calyx_pty::spawn(options, terminal, events)?))
    }

    fn adopt(
        &self,
        master: std::os::fd::OwnedFd,
        pid: u32,
        terminal: Arc<Mutex<Terminal>>,
        events: Arc<dyn PaneEvents>,
    ) -> anyhow::Result<Box<dyn PaneProcess>> {
        Ok(Box::new(calyx_pty::adopt(master, pid, terminal, events)?))
    }
}

impl PaneProcess for calyx_pty::PaneProcess {
    fn write(&self, bytes: Vec<u8>) {
        calyx_pty::PaneProcess::write(self, bytes)
    }
    fn type_at_prompt(&self, bytes: Vec<u8>, wait: Duration) {
        calyx_pty::PaneProcess::type_at_prompt(self, bytes, wait)
    }
    fn resize(&self, rows: u16, cols: u16) {
        calyx_pty::PaneProcess::resize(self, rows, cols)
    }
    fn terminate(&mut self, grace: Duration) -> Option<std::thread::JoinHandle<()>> {
        calyx_pty::PaneProcess::terminate(self, grace)
    }
    #[cfg(test)]
    fn hangup(&mut self) {
        calyx_pty::PaneProcess::hangup(self)
    }
    fn set_background(&self, background: bool) {
        calyx_pty::PaneProcess::set_background(self, background)
    }
    fn pid(&self) -> Option<u32> {
        calyx_pty::PaneProcess::pid(self)
    }
    fn master_fd(&self) -> Option<std::os::fd::RawFd> {
        Some(calyx_pty::PaneProcess::master_fd(self))
    }
    fn foreground_pid(&self) -> Option<u32> {
        calyx_pty::PaneProcess::foreground_pid(self)
    }
    fn take_output(&self) {
        calyx_pty::PaneProcess::take_output(self)
    }
    fn give_back_output(&self) {
        calyx_pty::PaneProcess::give_back_output(self)
    }
    fn output_watch(&self) -> std::io::Result<File> {
        calyx_pty::PaneProcess::output_watch(self)
    }
    fn read_output(&self, terminal: &Mutex<Terminal>) -> calyx_pty::OwnerRead {
        calyx_pty::PaneProcess::read_output(self, terminal)
    }
}
