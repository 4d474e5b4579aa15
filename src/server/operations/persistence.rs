//! Sessions saved and brought back (issue 18 §1-2): the owner builds a snapshot at most once a
//! second after a change (and at shutdown) and hands it to the writer thread
//! (`crate::persist::writer`); sessions saved by an earlier server wait here ("dormant") until
//! an attach, the chooser or `restore = "at-start"` brings them back, or `calyx kill -t NAME`
//! forgets them.

use std::time::Duration;

use tokio::time::Instant;

use crate::config::persistence::Restore;
use crate::persist::file::{self, Loaded};
use crate::persist::writer::{PaneProcs, Saver, Snapshot};
use crate::persist::{SavedAgent, SavedPane, SavedSession, SavedState, SavedWindow, VERSION};
use crate::server::model::state::SessionId;
use crate::server::owner::Server;

/// Shortest time between two saves.
pub const SAVE_INTERVAL: Duration = Duration::from_secs(1);

/// The owner's side of persistence.
#[derive(Default)]
pub struct Persisted {
    saver: Option<Saver>,
    /// Saved sessions that are not running, as read at start (minus those restored or forgotten).
    pub dormant: Vec<SavedSession>,
    /// When the next save is due (a change happened since the last).
    due: Option<Instant>,
    last_save: Option<Instant>,
    /// `kill-server --forget`: the last save drops every record.
    pub forget_all: bool,
    /// Saved approval rules not set yet: a pane's, until its session is restored (see
    /// `persist_rules`); at start, every rule the file held.
    pub waiting_rules: Vec<crate::persist::record::SavedRule>,
}

impl Persisted {
    /// Reads the state file and starts the writer thread. A bad file is moved aside (see
    /// [`file::load`]); nothing here stops the server from starting.
    pub fn start() -> Self {
        let path = file::sessions_file();
        let (state, problem) = match file::load(&path) {
            Loaded::Missing => (None, None),
            Loaded::Read(state) => (Some(state), None),
            Loaded::MovedAside { why, moved_to } => (
                None,
                Some(format!(
                    "{} was unusable ({why}); moved to {}",
                    path.display(),
                    moved_to.display()
                )),
            ),
            Loaded::Unusable { why } => (
                None,
                Some(format!("{} is unusable ({why})", path.display())),
            ),
        };
        if let Some(problem) = &problem {
            tracing::warn!("{problem}");
        }
        let saver = match Saver::start(path.clone(), state.clone()) {
            Ok(saver) => Some(saver),
            Err(e) => {
                tracing::warn!("sessions will not be saved: cannot start the writer: {e}");
                None
            }
        };
        let (dormant, waiting_rules) = state
            .map(|s| (s.sessions, s.approval_rules))
            .unwrap_or_default();
        Self {
            saver,
            dormant,
            waiting_rules,
            ..Default::default()
        }
    }

    /// When a save is due.
    pub fn due(&self) -> Option<Instant> {
        self.due
    }

    /// Something may have changed: a save within [`SAVE_INTERVAL`] of the last one.
    pub fn changed(&mut self, now: Instant) {
        if self.saver.is_some() && self.due.is_none() {
            let earliest = self.last_save.map_or(now, |t| t + SAVE_INTERVAL);
            self.due = Some(earliest.max(now));
        }
    }

    /// Takes the dormant session named `name`.
    pub fn take(&mut self, name: &str) -> Option<SavedSession> {
        let at = self.dormant.iter().position(|s| s.name == name)?;
        Some(self.dormant.remove(at))
    }
}

impl Server {
    /// The state as it would be saved now: running sessions (their processes to be read by the
    /// writer), then the dormant ones whose names no running session took.
    pub(crate) fn persist_snapshot(&self) -> Snapshot {
        let mut sessions = Vec::new();
        let mut procs = Vec::new();
        let mut approval_rules = Vec::new();
        if !self.persisted.forget_all {
            approval_rules = self.saved_rules();
            for s in self.state.sessions.values() {
                sessions.push(self.saved_session(s, &mut procs));
            }
            let live: Vec<String> = sessions.iter().map(|s| s.name.clone()).collect();
            sessions.extend(
                self.persisted
                    .dormant
                    .iter()
                    .filter(|d| !live.contains(&d.name))
                    .cloned(),
            );
        }
        Snapshot {
            state: SavedState {
                version: VERSION,
                saved_at: 0,
                sessions,
                approval_rules,
            },
            procs,
        }
    }

    fn saved_session(
        &self,
        s: &crate::server::model::state::Session,
        procs: &mut Vec<PaneProcs>,
    ) -> SavedSession {
        let windows = s
            .windows
            .iter()
            .map(|w| SavedWindow {
                number: w.number,
                name: self.state.window_name(w),
                auto_name: w.auto_name,
                layout: w.layout.clone(),
                active: w.active,
                zoomed: w.zoomed,
                synchronized: w.synchronized,
                panes: w
                    .layout
                    .panes()
                    .into_iter()
                    .filter_map(|id| self.saved_pane(id, procs))
                    .collect(),
            })
            .collect();
        SavedSession {
            name: s.name.clone(),
            saved_at: 0,
            active_window: s.active_window,
            windows,
        }
    }

    fn saved_pane(
        &self,
        id: crate::layout::PaneId,
        procs: &mut Vec<PaneProcs>,
    ) -> Option<SavedPane> {
        let p = self.state.panes.get(&id)?;
        procs.push(PaneProcs {
            child: p.process.pid(),
            foreground: p.process.foreground_pid(),
        });
        let title = p.glance.title().map(|t| t.to_string()).unwrap_or_default();
        let agent = self.agents.row(u64::from(id)).map(|row| SavedAgent {
            kind: row.kind.as_str().to_string(),
            session_id: row.session_id.clone(),
            state: row.state.as_str().to_string(),
            transcript_path: row.transcript_path.clone(),
        });
        Some(SavedPane {
            id,
            record_id: p.record_id.clone(),
            cwd: p.start_cwd.clone(),
            command: p.start_command.clone(),
            foreground: Vec::new(),
            program: Vec::new(),
            title,
            agent,
            history: None,
        })
    }

    /// Saves now if a save is due (called from the owner's timer).
    pub(crate) fn save_if_due(&mut self, now: Instant) {
        if self.persisted.due.is_some_and(|t| t <= now) {
            self.persisted.due = None;
            self.persisted.last_save = Some(now);
            let started = std::time::Instant::now();
            let snapshot = self.persist_snapshot();
            tracing::trace!(
                "snapshot of {} panes in {:?}",
                snapshot.procs.len(),
                started.elapsed()
            );
            if let Some(saver) = &self.persisted.saver {
                saver.save(snapshot);
            }
        }
    }

    /// The last save, waited for (at shutdown, before the panes' programs are stopped, so
    /// /proc still shows what ran in them), with each pane's last lines of text.
    pub(crate) fn save_at_shutdown(&mut self) {
        // Called again by `shutdown` after the loop's own call: the first one saved.
        let Some(saver) = self.persisted.saver.take() else {
            return;
        };
        let mut snapshot = self.persist_snapshot();
        if !self.persisted.forget_all {
            self.add_history(&mut snapshot);
        }
        saver.finish(snapshot);
    }

    /// Brings back the saved session `name` for a client of `rows` x `cols`; `env` is what
    /// its panes inherit (the attaching client's, else the server's). None when nothing by
    /// that name is saved or restoring is off.
    pub(crate) fn restore_saved(
        &mut self,
        name: &str,
        env: Option<Vec<(String, String)>>,
        size: (u16, u16),
    ) -> Option<Result<SessionId, String>> {
        if self.state.config.persistence.restore == Restore::Off {
            return None;
        }
        let saved = self.persisted.take(name)?;
        let env = env.unwrap_or_else(|| std::env::vars().collect());
        let result = self
            .state
            .restore_session(&saved, env, size, &self.tx)
            .map_err(|e| format!("{e:#}"));
        match &result {
            Ok(r) => {
                tracing::info!("restored session {name} ({} panes)", r.panes.len());
                self.apply_saved_rules_for(r.session);
                self.persisted.changed(Instant::now());
            }
            Err(e) => {
                tracing::warn!("restoring session {name}: {e}");
                self.persisted.dormant.push(saved);
            }
        }
        Some(result.map(|r| r.session))
    }

    /// The most recently saved dormant session's name.
    pub(crate) fn latest_saved(&self) -> Option<String> {
        self.persisted
            .dormant
            .iter()
            .max_by_key(|s| s.saved_at)
            .map(|s| s.name.clone())
    }

    /// `restore = "at-start"`: every saved session, now.
    pub(crate) fn restore_at_start(&mut self) {
        if self.state.config.persistence.restore != Restore::AtStart {
            return;
        }
        let names: Vec<String> = self
            .persisted
            .dormant
            .iter()
            .map(|s| s.name.clone())
            .collect();
        for name in names {
            let _ = self.restore_saved(&name, None, crate::server::model::state::DETACHED_SIZE);
        }
    }

    /// Forgets the saved session `name` (`calyx kill -t NAME`); false when none is saved.
    pub(crate) fn forget_saved(&mut self, name: &str) -> bool {
        let Some(session) = self.persisted.take(name) else {
            return false;
        };
        self.forget_rules_of(&session);
        self.persisted.changed(Instant::now());
        true
    }

    /// Why a new session (or a renamed one) may not take `name`: a saved session that is not
    /// running has it, and taking it would silently replace that record. Says how to bring the
    /// saved one back or forget it, as tmux's `duplicate session` would for a running one.
    pub(crate) fn saved_name_taken(&self, name: &str) -> Option<String> {
        self.persisted
            .dormant
            .iter()
            .any(|s| s.name == name)
            .then(|| {
                format!(
                    "duplicate session: {name} (saved, not running: `calyx attach -t {name}` \
                 restores it, `calyx kill -t {name}` forgets it)"
                )
            })
    }

    /// Names an unnamed new session (as `create_session` would: the first free number from
    /// the next session id) so that it takes no saved session's name either; left unnamed
    /// when no session is saved.
    pub(crate) fn name_clear_of_saved(&self, spec: &mut crate::protocol::NewSession) {
        if spec.name.is_some() || self.persisted.dormant.is_empty() {
            return;
        }
        let taken = |n: &str| {
            self.state.sessions.values().any(|s| s.name == n)
                || self.persisted.dormant.iter().any(|s| s.name == n)
        };
        let mut n = self.state.next_session;
        while taken(&n.to_string()) {
            n += 1;
        }
        spec.name = Some(n.to_string());
    }

    /// The saved sessions that are not running, for `calyx ls`.
    pub(crate) fn saved_list(&self) -> serde_json::Value {
        serde_json::to_value(&self.persisted.dormant).unwrap_or_default()
    }
}
