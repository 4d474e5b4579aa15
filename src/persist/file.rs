//! `$XDG_STATE_HOME/calyx/sessions.json`: written atomically (a temp file in the same
//! directory, fsync, rename, then the directory fsynced) with mode 0600, so a crash at any
//! moment leaves the old file or the new one, never a mix. Read leniently: a file that does not
//! parse or has another version is moved aside (`sessions.json.bad-<time>`) and the server
//! starts without it.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use super::record::{SavedState, VERSION};

/// Where sessions are saved.
pub fn sessions_file() -> PathBuf {
    crate::paths::state_dir().join("sessions.json")
}

/// What reading the state file found.
#[derive(Debug)]
pub enum Loaded {
    /// No file: nothing was saved.
    Missing,
    Read(SavedState),
    /// The file was unusable and moved to `moved_to`; `why` says what was wrong.
    MovedAside {
        why: String,
        moved_to: PathBuf,
    },
    /// The file was unusable and could not be moved either.
    Unusable {
        why: String,
    },
}

/// Parses the file's text: the saved state, or why it cannot be used.
pub fn parse(text: &str) -> Result<SavedState, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let version = value.get("version").and_then(serde_json::Value::as_u64);
    if version != Some(u64::from(VERSION)) {
        let found = version.map_or("none".to_string(), |v| v.to_string());
        return Err(format!(
            "version {found}, but this calyx reads version {VERSION}"
        ));
    }
    serde_json::from_value(value).map_err(|e| format!("not a sessions file ({e})"))
}

/// Reads the state file without changing anything (clients: `calyx ls` with no server). An
/// unusable file reads as nothing saved.
pub fn read(path: &Path) -> Option<SavedState> {
    let text = std::fs::read_to_string(path).ok()?;
    parse(&text).ok()
}

/// Reads the state file for the server; an unusable one is moved aside so the next save does
/// not overwrite what the user may want to look at.
pub fn load(path: &Path) -> Loaded {
    let text = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Loaded::Missing,
        Err(e) => {
            return Loaded::Unusable {
                why: format!("cannot read it ({e})"),
            }
        }
    };
    let why = match std::str::from_utf8(&text) {
        Ok(text) => match parse(text) {
            Ok(state) => return Loaded::Read(state),
            Err(why) => why,
        },
        Err(_) => "not UTF-8 text".to_string(),
    };
    let moved_to = aside_path(path, super::record::now_secs());
    match std::fs::rename(path, &moved_to) {
        Ok(()) => Loaded::MovedAside { why, moved_to },
        Err(e) => Loaded::Unusable {
            why: format!("{why}; moving it aside failed ({e})"),
        },
    }
}

/// `sessions.json.bad-<time>` beside `path`, not naming an existing file.
fn aside_path(path: &Path, now: u64) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sessions.json".into());
    let mut candidate = path.with_file_name(format!("{name}.bad-{now}"));
    let mut n = 1;
    while candidate.exists() {
        candidate = path.with_file_name(format!("{name}.bad-{now}-{n}"));
        n += 1;
    }
    candidate
}

/// The files moved aside so far (for `calyx doctor`), oldest first.
pub fn moved_aside(path: &Path) -> Vec<PathBuf> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Vec::new();
    };
    let prefix = format!("{}.bad-", name.to_string_lossy());
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// Writes `state` to `path` atomically with mode 0600 (see the module comment); returns the
/// file's size.
pub fn write(path: &Path, state: &SavedState) -> std::io::Result<usize> {
    let bytes = serde_json::to_vec_pretty(state).map_err(std::io::Error::other)?;
    write_bytes(path, &bytes)?;
    Ok(bytes.len())
}

/// [`write`] for bytes already serialised.
pub fn write_bytes(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sessions.json".into());
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)?;
        // The rename itself is durable only once the directory is.
        std::fs::File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
