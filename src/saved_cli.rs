//! The client's side of saved sessions: `calyx ls` lists the ones not running (asking the
//! server, or reading the state file when no server runs), and `calyx kill -t NAME` /
//! `kill-server --forget` forget them even with no server to ask.

use crate::persist::{file, summary, SavedSession};
use crate::protocol::Response;

/// The saved sessions that are not running: the server's list when it answered, else the
/// state file's (no server runs, so none of them is running).
pub fn not_running(server: Option<Response>) -> Vec<SavedSession> {
    match server {
        Some(Response::Json(value)) => serde_json::from_value(value).unwrap_or_default(),
        Some(_) => Vec::new(),
        None => file::read(&file::sessions_file())
            .map(|s| s.sessions)
            .unwrap_or_default(),
    }
}

/// `calyx ls`'s lines for them, newest first.
pub fn lines(mut saved: Vec<SavedSession>) -> Vec<String> {
    saved.sort_by(|a, b| b.saved_at.cmp(&a.saved_at).then(a.name.cmp(&b.name)));
    let now = crate::persist::record::now_secs();
    saved
        .iter()
        .map(|s| summary::line(s, &summary::local_clock(s.saved_at, now)))
        .collect()
}

/// Whether the state file holds the session `target` names (any session for None), so an
/// attach with no server running starts one to restore it.
pub fn is_saved(target: Option<&str>) -> bool {
    let Some(state) = file::read(&file::sessions_file()) else {
        return false;
    };
    match target.map(|t| t.split(':').next().unwrap_or(t)) {
        Some(name) => state.sessions.iter().any(|s| s.name == name),
        None => !state.sessions.is_empty(),
    }
}

/// Forgets saved sessions in the state file directly (no server runs to do it): the one named
/// `name`, or every one. True when something was forgotten.
pub fn forget_in_file(name: Option<&str>) -> std::io::Result<bool> {
    let path = file::sessions_file();
    let Some(mut state) = file::read(&path) else {
        return Ok(false);
    };
    let before = state.sessions.len();
    state.sessions.retain(|s| name.is_some_and(|n| s.name != n));
    if state.sessions.len() == before {
        return Ok(false);
    }
    file::write(&path, &state)?;
    Ok(true)
}
