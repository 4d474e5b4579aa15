//! Pane processes that are not there, for the reducer's state tests: each records what the
//! model asked of it (started with which command and size, typed into, resized, closed), and
//! none runs anything.

use std::fs::File;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use calyx_pty::{PaneEvents, SpawnOptions, Terminal};

use super::processes::{PaneProcess, Processes};

/// What one fake process was asked to do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Spawned {
        command: Vec<String>,
        rows: u16,
        cols: u16,
    },
    Wrote(Vec<u8>),
    Resized {
        rows: u16,
        cols: u16,
    },
    Terminated,
    HungUp,
}

/// Starts fake processes; `calls(pid)` is what the one with that pid was asked.
#[derive(Default, Clone)]
pub struct FakeProcesses {
    log: Arc<Mutex<Vec<(u32, Call)>>>,
}

impl FakeProcesses {
    /// Every call to the process with `pid` (pids start at 1 in spawn order).
    pub fn calls(&self, pid: u32) -> Vec<Call> {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(p, _)| *p == pid)
            .map(|(_, c)| c.clone())
            .collect()
    }

    /// How many processes were started.
    pub fn spawned(&self) -> usize {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, c)| matches!(c, Call::Spawned { .. }))
            .count()
    }
}

impl Processes for FakeProcesses {
    fn spawn(
        &self,
        options: &SpawnOptions,
        _terminal: Arc<Mutex<Terminal>>,
        _events: Arc<dyn PaneEvents>,
    ) -> anyhow::Result<Box<dyn PaneProcess>> {
        let pid = u32::try_from(self.spawned() + 1)?;
        let process = FakeProcess {
            pid,
            log: self.log.clone(),
        };
        process.record(Call::Spawned {
            command: options.command.clone(),
            rows: options.rows,
            cols: options.cols,
        });
        Ok(Box::new(process))
    }
}

#[derive(Debug)]
struct FakeProcess {
    pid: u32,
    log: Arc<Mutex<Vec<(u32, Call)>>>,
}

impl FakeProcess {
    fn record(&self, call: Call) {
        self.log
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((self.pid, call));
    }
}

impl PaneProcess for FakeProcess {
    fn write(&self, bytes: Vec<u8>) {
        self.record(Call::Wrote(bytes));
    }
    fn resize(&self, rows: u16, cols: u16) {
        self.record(Call::Resized { rows, cols });
    }
    fn terminate(&mut self, _grace: Duration) -> Option<std::thread::JoinHandle<()>> {
        self.record(Call::Terminated);
        None
    }
    fn hangup(&mut self) {
        self.record(Call::HungUp);
    }
    fn set_background(&self, _background: bool) {}
    fn pid(&self) -> Option<u32> {
        None
    }
    fn foreground_pid(&self) -> Option<u32> {
        None
    }
    fn take_output(&self) {}
    fn give_back_output(&self) {}
    fn output_watch(&self) -> std::io::Result<File> {
        Err(std::io::Error::other("a fake process has no PTY"))
    }
    fn read_output(&self, _terminal: &Mutex<Terminal>) -> calyx_pty::OwnerRead {
        calyx_pty::OwnerRead::Nothing
    }
}
