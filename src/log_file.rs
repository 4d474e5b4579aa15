//! `server.log` with a size limit: the tracing writer that rotates it.
//!
//! A server that runs for weeks, or one that a hostile client keeps busy, must not fill the
//! disk with its log. When writing a line would take the file past its limit, the file is
//! renamed to `NAME.1` (replacing an older one) and a new one is started, so at most two files
//! exist and each holds at most the limit (or a single line longer than it). Files are created
//! 0600: log lines may name paths and sessions.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The size a log file may reach before it is rotated: enough for weeks of ordinary use at
/// the default level, little enough that two of them never matter on a disk.
pub const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;

/// A log file that rotates itself by size. Wrap it in a `Mutex` for the tracing subscriber:
/// every write (tracing's fmt layer writes each formatted event with one `write_all`) then
/// rotates and appends under that one lock, so a line is never split between the two files.
#[derive(Debug)]
pub struct RotatingFile {
    path: PathBuf,
    max_bytes: u64,
    file: File,
    /// Bytes in the current file (what was there when it was opened, plus what was written).
    len: u64,
}

impl RotatingFile {
    /// Opens (or creates, 0600) `path` for appending; an existing file keeps its content and
    /// counts towards the limit, and is made private if it was not.
    pub fn open(path: impl Into<PathBuf>, max_bytes: u64) -> io::Result<Self> {
        let path = path.into();
        let file = open_private(&path)?;
        let len = file.metadata()?.len();
        Ok(Self {
            path,
            max_bytes: max_bytes.max(1),
            file,
            len,
        })
    }

    /// The rotated file's path: `NAME.1` next to `NAME`.
    pub fn rotated_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_owned();
        name.push(".1");
        PathBuf::from(name)
    }

    /// Moves the current file to `NAME.1` and starts a new one. On failure the current file
    /// stays in use: a log that grows is better than a server that loses its log.
    fn rotate(&mut self) -> io::Result<()> {
        std::fs::rename(&self.path, self.rotated_path())?;
        // The old handle now points at NAME.1; if a new file cannot be made, keep using it.
        self.file = open_private(&self.path)?;
        self.len = 0;
        Ok(())
    }
}

impl Write for RotatingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let incoming = u64::try_from(buf.len()).unwrap_or(u64::MAX);
        if self.len > 0 && self.len.saturating_add(incoming) > self.max_bytes {
            // Rotation failing (a read-only directory, say) must not lose the line.
            let _ = self.rotate();
        }
        let written = self.file.write(buf)?;
        self.len = self
            .len
            .saturating_add(u64::try_from(written).unwrap_or(u64::MAX));
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Opens `path` for appending, creating it 0600, and narrows an existing file to 0600.
fn open_private(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let mode = file.metadata()?.permissions().mode();
    if mode & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// The limit for `server.log`: [`MAX_LOG_BYTES`], or `CALYX_LOG_MAX_BYTES` when it is a
/// positive number (meant for tests, which need rotation without writing 16 MiB).
pub fn max_bytes_from_env() -> u64 {
    std::env::var("CALYX_LOG_MAX_BYTES")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(MAX_LOG_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len(path: &Path) -> u64 {
        std::fs::metadata(path).map_or(0, |m| m.len())
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o777)
    }

    #[test]
    fn rotates_past_the_limit_keeping_two_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("server.log");
        let mut log = RotatingFile::open(&path, 100).expect("open");
        let line = [b'x'; 29];
        for _ in 0..3 {
            log.write_all(&line).expect("write");
            log.write_all(b"\n").expect("write");
        }
        assert_eq!(len(&path), 90);
        assert!(!log.rotated_path().exists());
        // The fourth line would pass 100 bytes: it starts a new file.
        log.write_all(b"fourth line\n").expect("write");
        assert_eq!(len(&path), 12);
        assert_eq!(len(&log.rotated_path()), 90);
        // Twice more: the older .1 is replaced, never a .2.
        for _ in 0..12 {
            log.write_all(b"0123456789abcdefghi\n").expect("write");
        }
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("dir")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        assert!(len(&path) <= 100 && len(&log.rotated_path()) <= 100);
        let rotated = std::fs::read_to_string(log.rotated_path()).expect("read");
        assert!(!rotated.contains("fourth"), "the older .1 was replaced");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&log.rotated_path()), 0o600);
    }

    #[test]
    fn a_line_longer_than_the_limit_is_written_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("server.log");
        let mut log = RotatingFile::open(&path, 10).expect("open");
        log.write_all(b"a long line of thirty bytes..\n")
            .expect("write");
        assert_eq!(len(&path), 30);
        log.write_all(b"short\n").expect("write");
        assert_eq!(len(&path), 6);
        assert_eq!(len(&log.rotated_path()), 30);
    }

    #[test]
    fn an_existing_file_counts_and_is_made_private() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("server.log");
        std::fs::write(&path, "x".repeat(95)).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let mut log = RotatingFile::open(&path, 100).expect("open");
        assert_eq!(mode(&path), 0o600);
        log.write_all(b"0123456789\n").expect("write");
        assert_eq!(len(&path), 11);
        assert_eq!(len(&log.rotated_path()), 95);
    }

    #[test]
    fn safe_behind_the_subscribers_mutex() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("server.log");
        let log = std::sync::Arc::new(std::sync::Mutex::new(
            RotatingFile::open(&path, 1000).expect("open"),
        ));
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let log = log.clone();
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let mut guard = log.lock().unwrap_or_else(|e| e.into_inner());
                        // One write per event, as tracing's fmt layer does.
                        let _ = guard.write_all(format!("thread {t} line {i:04}\n").as_bytes());
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let rotated = dir.path().join("server.log.1");
        for p in [&path, &rotated] {
            let text = std::fs::read_to_string(p).expect("read");
            assert!(text.len() <= 1000);
            // Lines are never torn across the two files or interleaved.
            assert!(text
                .lines()
                .all(|l| l.starts_with("thread ") && l.len() == 18));
        }
    }
}
