//! Rebuilding the model from what the server this process replaced handed over
//! (`calyx server-upgrade`): sessions and windows with their ids, numbers and layouts, and
//! every pane around its inherited PTY master and still-running child, its terminal replayed
//! from the handed-over history (so a capture is the same as before the upgrade).

use std::sync::{Arc, Mutex};

use calyx_pty::{HistoryLimits, Terminal};
use tokio::sync::mpsc;

use crate::server::io::pane_notifier::PaneNotifier;
use crate::server::io::shell_integration::Shell;
use crate::server::messages::Msg;
use crate::upgrade::handover::{HandedPane, Handover};

use super::state::{Pane, State, Window};

impl State {
    /// Rebuilds the handed-over sessions and panes. A pane that cannot be adopted is left out
    /// of its layout (with a warning in the log); its program keeps running.
    pub fn adopt(&mut self, handover: &Handover, tx: &mpsc::UnboundedSender<Msg>) {
        for pane in &handover.panes {
            if let Err(e) = self.adopt_pane(pane, tx) {
                tracing::warn!("server-upgrade: pane %{} was not adopted: {e:#}", pane.id);
            }
        }
        for saved in &handover.sessions {
            let mut session = self.empty_session(
                saved.id,
                saved.name.clone(),
                saved.env.clone(),
                saved.rows,
                saved.cols,
            );
            session.roomy_size = saved.roomy_size;
            session.sidebar = saved.sidebar;
            for w in &saved.windows {
                let mut layout = w.layout.clone();
                for pane in w.layout.panes() {
                    if !self.panes.contains_key(&pane) {
                        layout.remove(pane);
                    }
                }
                let panes = layout.panes();
                if panes.iter().all(|p| !self.panes.contains_key(p)) {
                    continue;
                }
                let active = if panes.contains(&w.active) {
                    w.active
                } else {
                    panes[0]
                };
                let mut window = Window::new(w.name.clone(), w.auto_name, active);
                window.number = w.number;
                window.layout = layout;
                window.last_active = w.last_active.filter(|p| panes.contains(p));
                window.zoomed = w.zoomed && panes.len() > 1;
                window.synchronized = w.synchronized;
                session.windows.push(window);
            }
            if session.windows.is_empty() {
                continue;
            }
            session.active_window = saved.active_window.min(session.windows.len() - 1);
            session.last_window = saved.last_window.filter(|w| *w < session.windows.len());
            self.sessions.insert(saved.id, session);
        }
        self.next_pane = self.next_pane.max(handover.next_pane);
        self.next_session = self.next_session.max(handover.next_session);
        let ids: Vec<_> = self.sessions.keys().copied().collect();
        for id in ids {
            self.relayout(id);
        }
    }

    fn adopt_pane(
        &mut self,
        handed: &HandedPane,
        tx: &mpsc::UnboundedSender<Msg>,
    ) -> anyhow::Result<()> {
        let master = crate::upgrade::inherit::inherited_fd(
            handed.master_fd,
            nix::sys::stat::SFlag::S_IFCHR,
        )?;
        let limits = HistoryLimits {
            lines: self.config.scrollback_lines,
            bytes: self.config.scrollback_bytes,
        };
        let history = handed.history_pieces()?;
        let terminal = Terminal::from_history(handed.rows, handed.cols, limits, &history);
        let glance = terminal.glance();
        let terminal = Arc::new(Mutex::new(terminal));
        let notifier = Arc::new(PaneNotifier::new(handed.id, tx.clone()));
        let process =
            self.processes
                .adopt(master, handed.pid, terminal.clone(), notifier.clone())?;
        self.notifiers.insert(handed.id, notifier);
        self.panes.insert(
            handed.id,
            Pane {
                id: handed.id,
                surface_id: handed.surface_id.clone(),
                record_id: handed.record_id.clone(),
                glance,
                terminal,
                process,
                program: handed.program.clone(),
                start_command: handed.start_command.clone(),
                start_cwd: handed.start_cwd.clone(),
                rows: handed.rows,
                cols: handed.cols,
                exited: None,
                copy: None,
                session: handed.session,
                shell: handed.shell.as_deref().and_then(Shell::of),
                label_cache: Default::default(),
            },
        );
        Ok(())
    }
}
