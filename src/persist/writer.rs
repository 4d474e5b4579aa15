//! The thread that writes `sessions.json`. The owner hands it a snapshot (plain data and the
//! pids of each pane's processes); this thread reads /proc for their directories and argv,
//! compares with what it wrote last, and writes only when something changed. The owner never
//! waits for a disk or for /proc, except once at shutdown for the last save.

use std::path::PathBuf;
use std::sync::mpsc;

use super::record::{now_secs, SavedState};

/// The processes of one pane, for the writer to look up in /proc.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PaneProcs {
    /// The pane's own program.
    pub child: Option<u32>,
    /// The process group in front on its terminal.
    pub foreground: Option<u32>,
}

/// A state to write: sessions of the running server have `saved_at` 0 (stamped when written);
/// `procs` holds each live pane's pids, in the order the sessions, windows and panes come.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub state: SavedState,
    pub procs: Vec<PaneProcs>,
}

enum Job {
    Save(Snapshot),
    /// Write this one and stop.
    Finish(Snapshot),
}

/// The owner's handle on the writer thread.
pub struct Saver {
    tx: mpsc::Sender<Job>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Saver {
    /// Starts the writer thread for `path`; `last` is what the file already holds (nothing is
    /// rewritten until the state differs from it).
    pub fn start(path: PathBuf, last: Option<SavedState>) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("calyx-save".into())
            .spawn(move || run(&path, last, &rx))?;
        Ok(Self {
            tx,
            thread: Some(thread),
        })
    }

    /// Queues a save (the newest snapshot wins when the thread is behind).
    pub fn save(&self, snapshot: Snapshot) {
        let _ = self.tx.send(Job::Save(snapshot));
    }

    /// Writes `snapshot` and waits for the thread to finish (at shutdown).
    pub fn finish(mut self, snapshot: Snapshot) {
        let _ = self.tx.send(Job::Finish(snapshot));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(path: &std::path::Path, mut last: Option<SavedState>, rx: &mpsc::Receiver<Job>) {
    if let Some(state) = last.as_mut() {
        unstamp(state);
    }
    while let Ok(mut job) = rx.recv() {
        // Only the newest snapshot matters; older ones queued behind a slow disk are skipped.
        while let Ok(newer) = rx.try_recv() {
            let finishing = matches!(job, Job::Finish(_));
            job = newer;
            if finishing {
                if let Job::Save(s) = job {
                    job = Job::Finish(s);
                }
            }
        }
        let (snapshot, finish) = match job {
            Job::Save(s) => (s, false),
            Job::Finish(s) => (s, true),
        };
        let started = std::time::Instant::now();
        let state = resolve(snapshot);
        if last.as_ref() != Some(&state) {
            let stamped = stamp(state.clone(), now_secs());
            match super::file::write(path, &stamped) {
                Ok(bytes) => {
                    tracing::debug!(
                        "saved {} sessions ({bytes} bytes) in {:?}",
                        state.sessions.len(),
                        started.elapsed()
                    );
                    last = Some(state);
                }
                Err(e) => tracing::warn!("cannot save sessions to {}: {e}", path.display()),
            }
        }
        if finish {
            break;
        }
    }
}

/// Fills in each live pane's directory and argv from /proc.
pub fn resolve(snapshot: Snapshot) -> SavedState {
    let Snapshot { mut state, procs } = snapshot;
    let mut procs = procs.into_iter();
    for session in state.sessions.iter_mut().filter(|s| s.saved_at == 0) {
        for pane in session.windows.iter_mut().flat_map(|w| w.panes.iter_mut()) {
            let Some(p) = procs.next() else {
                return state;
            };
            if let Some(child) = p.child {
                pane.program = super::proc_info::argv(child);
            }
            let front = p.foreground.or(p.child);
            if let Some(cwd) = front.and_then(super::proc_info::cwd) {
                pane.cwd = cwd;
            }
            pane.foreground = match p.foreground {
                Some(fg) if Some(fg) != p.child => super::proc_info::argv(fg),
                _ => Vec::new(),
            };
        }
    }
    state
}

/// The state as written: live sessions and the file stamped with `now`.
fn stamp(mut state: SavedState, now: u64) -> SavedState {
    state.saved_at = now;
    for s in state.sessions.iter_mut().filter(|s| s.saved_at == 0) {
        s.saved_at = now;
    }
    state
}

/// The file as read, made comparable with a snapshot: nothing to compare for live sessions'
/// stamps (dormant ones keep theirs, and the server sends them unchanged).
fn unstamp(state: &mut SavedState) {
    state.saved_at = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::persist::record::{SavedPane, SavedSession, SavedWindow, VERSION};

    fn snapshot(name: &str) -> Snapshot {
        let pane = SavedPane {
            id: 1,
            record_id: String::new(),
            cwd: "/nowhere".into(),
            command: Vec::new(),
            foreground: Vec::new(),
            program: Vec::new(),
            title: String::new(),
            agent: None,
            history: None,
        };
        Snapshot {
            state: SavedState {
                version: VERSION,
                saved_at: 0,
                sessions: vec![SavedSession {
                    name: name.into(),
                    saved_at: 0,
                    active_window: 0,
                    windows: vec![SavedWindow {
                        number: 0,
                        name: String::new(),
                        auto_name: true,
                        layout: crate::layout::Layout::Pane(1),
                        active: 1,
                        zoomed: false,
                        synchronized: false,
                        panes: vec![pane],
                    }],
                }],
                approval_rules: Vec::new(),
            },
            procs: vec![PaneProcs {
                child: Some(std::process::id()),
                foreground: Some(std::process::id()),
            }],
        }
    }

    #[test]
    fn a_pane_gets_its_process_cwd_and_argv() {
        let state = resolve(snapshot("a"));
        let pane = &state.sessions[0].windows[0].panes[0];
        let here = std::env::current_dir().expect("cwd").display().to_string();
        assert_eq!(pane.cwd, here);
        assert!(!pane.program.is_empty());
        assert!(
            pane.foreground.is_empty(),
            "the pane's own program is in front"
        );
    }

    #[test]
    fn the_thread_writes_the_last_snapshot_before_finishing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sessions.json");
        let saver = Saver::start(path.clone(), None).expect("start");
        saver.save(snapshot("first"));
        saver.finish(snapshot("last"));
        let state = crate::persist::file::read(&path).expect("written");
        assert_eq!(state.sessions[0].name, "last");
        assert!(state.sessions[0].saved_at > 0, "live sessions are stamped");
    }
}
