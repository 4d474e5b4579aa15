//! The owner loop's side of the command history tools: each pane's history (kept by its
//! terminal, filled on the reader thread) turned into MCP answers, and waits for a command that
//! wake when the pane's output shows it finished or the pane exits.

use tokio::sync::oneshot;

use calyx_pty::{CommandLog, CommandRecord, CommandState};

use crate::layout::PaneId;
use crate::mcp::commands::{command_id, parse_command_id};
use crate::mcp::{CommandInfo, CommandOutput, CommandStatus, CommandWait, PaneCommands};

use crate::server::model::state::Pane;
use crate::server::owner::Server;

/// A `terminal_await_command` (or `pane_run` with await) in progress.
pub struct CommandWaiter {
    pub pane: PaneId,
    pub seq: u64,
    pub reply: oneshot::Sender<CommandWait>,
}

/// The MCP view of a record.
fn info(pane: PaneId, r: &CommandRecord) -> CommandInfo {
    CommandInfo {
        id: command_id(&format!("%{pane}"), r.seq),
        pane: format!("%{pane}"),
        command: r.command.clone(),
        cwd: r.cwd.clone(),
        state: match r.state {
            CommandState::Running => CommandStatus::Running,
            CommandState::Finished => CommandStatus::Finished,
        },
        exit_code: r.exit_code,
        started_at_ms: r.started_ms,
        finished_at_ms: r.finished_ms,
        output_bytes: r.output_bytes,
        output_truncated: r.truncated,
    }
}

/// Whether a pane reports commands: calyx switched its integration on, or marks arrived anyway
/// (a shell with its own OSC 133 support).
fn integrated(p: &Pane, log: &CommandLog) -> bool {
    p.shell.is_some() || log.marks_seen()
}

fn no_commands(pane: &str) -> String {
    format!("{pane} reports no commands: it is not a bash, zsh or fish pane with calyx's shell integration (or shell_integration is off); use pane_read or agent_wait instead")
}

impl Server {
    fn shell_pane(&self, pane: &str) -> Result<(PaneId, &Pane), String> {
        let t = self
            .state
            .resolve(Some(pane))
            .map_err(|e| format!("{e}; pane_list shows the panes"))?;
        let p = self.state.panes.get(&t.pane).ok_or("that pane is gone")?;
        Ok((t.pane, p))
    }

    pub(crate) fn pane_commands(&self, pane: &str) -> Result<PaneCommands, String> {
        let (id, p) = self.shell_pane(pane)?;
        let term = p.term();
        let log = term.commands();
        Ok(PaneCommands {
            integrated: integrated(p, log),
            commands: log.records().map(|r| info(id, r)).collect(),
        })
    }

    pub(crate) fn command_output(&self, command: &str) -> Result<CommandOutput, String> {
        let (pane, seq) = parse_command_id(command)?;
        let (id, p) = self.shell_pane(&pane)?;
        let term = p.term();
        let log = term.commands();
        let missing = || {
            format!("no command {command} in {pane}'s history (it keeps the last 200); terminal_list_commands lists them")
        };
        let record = log.get(seq).ok_or_else(missing)?;
        let (output, truncated) = log.output(seq).ok_or_else(missing)?;
        let mut command = info(id, record);
        command.output_truncated = truncated;
        Ok(CommandOutput { command, output })
    }

    /// Which command a wait is for: `command_id` (one in the history, or the next to start),
    /// else the running one, else the next one.
    pub(crate) fn command_target(
        &self,
        pane: &str,
        command: Option<&str>,
    ) -> Result<(String, u64), String> {
        let (id, p) = self.shell_pane(pane)?;
        let name = format!("%{id}");
        let term = p.term();
        let log = term.commands();
        if !integrated(p, log) {
            return Err(no_commands(&name));
        }
        let Some(command) = command else {
            return Ok((name, log.running_seq().unwrap_or_else(|| log.next_seq())));
        };
        let (of, seq) = parse_command_id(command)?;
        if of != name && of != pane {
            return Err(format!("{command} is a command of {of}, not of {name}"));
        }
        // The next command may be awaited before it starts.
        if log.get(seq).is_none() && seq != log.next_seq() {
            return Err(format!("no command {command} in {name}'s history (it keeps the last 200); terminal_list_commands lists them, or leave command_id out to wait for the next one"));
        }
        Ok((name, seq))
    }

    /// Answers at once when the command already finished, else waits for it.
    pub(crate) fn command_await(
        &mut self,
        pane: &str,
        seq: u64,
        reply: oneshot::Sender<CommandWait>,
    ) {
        let Some(pane) = pane
            .trim_start_matches('%')
            .parse::<PaneId>()
            .ok()
            .filter(|p| self.state.panes.contains_key(p))
        else {
            let _ = reply.send(CommandWait::PaneClosed {
                command_id: command_id(pane, seq),
            });
            return;
        };
        match self.command_done(pane, seq, false) {
            Some(done) => {
                let _ = reply.send(done);
            }
            None => self
                .command_waiters
                .push(CommandWaiter { pane, seq, reply }),
        }
    }

    /// The end of a wait for command `seq` of `pane`, if it ended. `_hot`: called for pane
    /// output. (A busy terminal used to mean "not yet, the reader will notify again", but right
    /// after notifying, the reader takes the lock once more for a read that finds nothing: a
    /// try in that moment failed with no output left to wake the wait, which then timed out
    /// although its command had finished (tests/e2e_shell.rs, about one run in four). The
    /// owner now waits for the lock: at most one chunk's parse, and only while a command is
    /// awaited.)
    fn command_done(&self, pane: PaneId, seq: u64, _hot: bool) -> Option<CommandWait> {
        let closed = || CommandWait::PaneClosed {
            command_id: command_id(&format!("%{pane}"), seq),
        };
        let Some(p) = self.state.panes.get(&pane) else {
            return Some(closed());
        };
        let term = p.term();
        let log = term.commands();
        if let Some(r) = log.get(seq).filter(|r| r.state == CommandState::Finished) {
            return Some(CommandWait::Finished(CommandOutput {
                command: info(pane, r),
                output: r.output.clone(),
            }));
        }
        p.exited.is_some().then(closed)
    }

    /// Wakes waits whose command finished or whose pane is gone (`pane`: only that pane's).
    pub(crate) fn wake_command_waiters(&mut self, pane: Option<PaneId>) {
        if self.command_waiters.is_empty() {
            return;
        }
        for w in std::mem::take(&mut self.command_waiters) {
            if w.reply.is_closed() {
                continue;
            }
            if pane.is_some_and(|p| p != w.pane) {
                self.command_waiters.push(w);
                continue;
            }
            match self.command_done(w.pane, w.seq, pane.is_some()) {
                Some(done) => {
                    let _ = w.reply.send(done);
                }
                None => self.command_waiters.push(w),
            }
        }
    }

    /// The number the next command typed into `pane` will get, when the pane reports commands.
    pub(crate) fn next_command_seq(&self, pane: PaneId) -> Option<u64> {
        let p = self.state.panes.get(&pane)?;
        let term = p.term();
        let log = term.commands();
        integrated(p, log).then(|| log.next_seq())
    }
}
