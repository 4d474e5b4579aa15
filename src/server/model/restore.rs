//! Building a session back from its saved record (issue 18 §2): every window in its split
//! tree with its ratios, numbers, names, zoom, focus and synchronize-panes, every pane in its
//! directory (`$HOME` when that is gone, and the pane says so) running what
//! [`crate::persist::relaunch::plan`] decides, under its saved lines of text when a graceful
//! stop kept them.

use std::collections::HashMap;

use tokio::sync::mpsc;

use crate::layout::{Layout, PaneId};
use crate::persist::relaunch::{plan, shell_edits_lines, Relaunch};
use crate::persist::{SavedPane, SavedSession};
use crate::server::messages::Msg;

use super::state::{SessionId, State, Window};

/// How long a line typed into a restored pane's shell waits for the shell's line editor
/// (startup files can take a while); then it is typed anyway.
const LINE_EDITOR_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// What a restore started in one pane, for the caller to report.
#[derive(Debug)]
pub struct Restored {
    pub session: SessionId,
    pub panes: Vec<(PaneId, Relaunch)>,
}

/// The leaves of `layout` renamed through `ids` (None when one is missing).
fn renamed(layout: &Layout, ids: &HashMap<PaneId, PaneId>) -> Option<Layout> {
    Some(match layout {
        Layout::Pane(p) => Layout::Pane(*ids.get(p)?),
        Layout::Split {
            dir,
            ratio,
            first,
            second,
        } => Layout::Split {
            dir: *dir,
            ratio: *ratio,
            first: Box::new(renamed(first, ids)?),
            second: Box::new(renamed(second, ids)?),
        },
    })
}

/// A dimmed line in a pane, before its program prints anything.
fn note_bytes(text: &str) -> Vec<u8> {
    let clean = calyx_tui::escape::visible(text);
    format!("\x1b[2m{clean}\x1b[0m\r\n").into_bytes()
}

impl State {
    /// The shell a session's panes start (`$SHELL` of its environment, else `/bin/sh`).
    fn session_shell(&self, session: SessionId) -> String {
        self.sessions
            .get(&session)
            .and_then(|s| s.env.iter().find(|(k, _)| k == "SHELL"))
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| "/bin/sh".to_string())
    }

    /// Starts `saved` as a running session of `rows` x `cols` whose panes inherit `env`.
    /// `restart` is `[persistence] restart`.
    pub fn restore_session(
        &mut self,
        saved: &SavedSession,
        env: Vec<(String, String)>,
        (rows, cols): (u16, u16),
        tx: &mpsc::UnboundedSender<Msg>,
    ) -> anyhow::Result<Restored> {
        if self.sessions.values().any(|s| s.name == saved.name) {
            anyhow::bail!("duplicate session: {}", saved.name);
        }
        let (rows, cols) = calyx_pty::limits::clamp_size(rows, cols);
        let id = self.next_session;
        self.next_session += 1;
        let session = self.empty_session(id, saved.name.clone(), env, rows, cols);
        self.sessions.insert(id, session);
        let mut restored = Restored {
            session: id,
            panes: Vec::new(),
        };
        let mut windows = Vec::new();
        for w in &saved.windows {
            match self.restore_window(id, w, tx, &mut restored) {
                Ok(window) => windows.push(window),
                Err(e) => tracing::warn!("restoring a window of {}: {e:#}", saved.name),
            }
        }
        if windows.is_empty() {
            self.sessions.remove(&id);
            anyhow::bail!("no window of {} could be restored", saved.name);
        }
        windows.sort_by_key(|w| w.number);
        windows.dedup_by_key(|w| w.number);
        if let Some(s) = self.sessions.get_mut(&id) {
            s.active_window = saved.active_window.min(windows.len() - 1);
            s.windows = windows;
        }
        self.relayout(id);
        Ok(restored)
    }

    /// One window of a restored session, its panes started.
    fn restore_window(
        &mut self,
        session: SessionId,
        saved: &crate::persist::SavedWindow,
        tx: &mpsc::UnboundedSender<Msg>,
        restored: &mut Restored,
    ) -> anyhow::Result<Window> {
        let (rows, cols) = self
            .sessions
            .get(&session)
            .map(|s| s.pane_borders.content_size(s.layout_area()))
            .unwrap_or((24, 80));
        let mut ids = HashMap::new();
        for pane in &saved.panes {
            let (new, relaunch) = self.restore_pane(session, pane, rows, cols, tx)?;
            ids.insert(pane.id, new);
            restored.panes.push((new, relaunch));
        }
        // A layout naming panes the record lacks is not guessed at: the panes stack instead.
        let layout = renamed(&saved.layout, &ids).unwrap_or_else(|| {
            let mut panes = ids.values().copied().collect::<Vec<_>>();
            panes.sort_unstable();
            crate::layout_preset::Preset::EvenVertical
                .build(&panes)
                .unwrap_or(Layout::Pane(panes[0]))
        });
        let first = layout.panes()[0];
        let active = ids.get(&saved.active).copied().unwrap_or(first);
        let mut window = Window::new(saved.name.clone(), saved.auto_name, active);
        window.number = saved.number;
        window.layout = layout;
        window.zoomed = saved.zoomed && window.layout.panes().len() > 1;
        window.synchronized = saved.synchronized;
        Ok(window)
    }

    /// Starts one saved pane in its directory, as planned; a program that cannot start leaves
    /// the user's shell (and a note saying so).
    fn restore_pane(
        &mut self,
        session: SessionId,
        saved: &SavedPane,
        rows: u16,
        cols: u16,
        tx: &mpsc::UnboundedSender<Msg>,
    ) -> anyhow::Result<(PaneId, Relaunch)> {
        let mut relaunch = plan(saved, &self.config.persistence.restart);
        let mut notes = Vec::new();
        let cwd = if std::path::Path::new(&saved.cwd).is_dir() {
            saved.cwd.clone()
        } else {
            notes.push(format!(
                "calyx: {} no longer exists; this pane starts in $HOME",
                saved.cwd
            ));
            crate::paths::home_dir().display().to_string()
        };
        notes.extend(relaunch.note.clone());
        let pane = match self.spawn_pane_as(
            session,
            Some(saved.record_id.clone()),
            Some(cwd.clone()),
            relaunch.command.clone(),
            (rows, cols),
            tx,
        ) {
            Ok(pane) => pane,
            Err(e) if !relaunch.command.is_empty() => {
                notes.push(format!(
                    "calyx: could not start `{}` ({e}); here is a shell",
                    crate::persist::relaunch::shell_line(&relaunch.command)
                ));
                relaunch = Relaunch::default();
                let record = Some(saved.record_id.clone());
                self.spawn_pane_as(session, record, Some(cwd), Vec::new(), (rows, cols), tx)?
            }
            Err(e) => return Err(e),
        };
        if let Some(p) = self.panes.get(&pane) {
            let history = saved
                .history
                .as_ref()
                .filter(|_| self.config.persistence.scrollback_lines > 0);
            if let Some(history) = history {
                let when = crate::persist::summary::local_date_time(history.saved_at);
                p.term()
                    .process(&crate::persist::history::shown(history, &when));
            }
            if !notes.is_empty() {
                let mut term = p.term();
                for note in &notes {
                    term.process(&note_bytes(note));
                }
            }
            if let Some(line) = &relaunch.typed {
                // Typed for the shell once its line editor reads the terminal (the terminal
                // holds it until the shell reads it); typed earlier it would show twice.
                let wait = if shell_edits_lines(&self.session_shell(session)) {
                    LINE_EDITOR_WAIT
                } else {
                    std::time::Duration::ZERO
                };
                p.process
                    .type_at_prompt(format!("{line}\r").into_bytes(), wait);
            }
        }
        Ok((pane, relaunch))
    }
}
