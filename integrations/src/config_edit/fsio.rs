//! Reading and writing other programs' config files without ever leaving them half-written.
//!
//! - Symlinks are followed (dotfile managers link these files into a repository): the link
//!   stays, its target is replaced. A loop is an error, not a hang.
//! - A write goes to a temporary file in the target's own directory, is synced and renamed over
//!   the target, so a reader (or a crash) sees the old file or the new one, never a mix.
//! - An advisory lock on the target serialises two calyx processes editing one file.
//! - The file's mode is kept; a file calyx creates gets 0600 when it holds the token, and an
//!   existing one that will hold it is tightened to 0600 ([`Mode::Exact`]): other local users
//!   must not read the bearer token.
//! - Only regular files of at most 16 MiB are read, opened without blocking ([`regular`]).
//! - The previous contents are kept in `<name>.calyx.bak` (one generation).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use super::regular;

/// Symlink hops followed before giving up (the kernel's own limit is 40).
const MAX_LINKS: usize = 40;

/// The path a write to `path` must go to: `path` itself, or the end of its chain of symlinks
/// (relative targets resolved against the link's directory). The target need not exist.
pub fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&current)?;
                current = match current.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other(format!(
        "too many levels of symbolic links (a symlink loop?) at {}",
        path.display()
    )))
}

/// Reads a config file as UTF-8 text; `None` when it does not exist.
/// Anything but a regular file of at most 16 MiB is refused before it is read.
pub fn read_text(path: &Path) -> io::Result<Option<String>> {
    let real = resolve(path)?;
    match regular::read(&real, path)? {
        Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
            )
        }),
        None => Ok(None),
    }
}

/// The permission bits (`0o7777`) of the file a write to `path` would replace; `None` when
/// it does not exist.
pub fn mode_of(path: &Path) -> io::Result<Option<u32>> {
    match fs::metadata(resolve(path)?) {
        Ok(meta) => Ok(Some(meta.permissions().mode() & 0o7777)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The mode a write leaves the file with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A file that does not exist yet gets this; an existing file keeps its own.
    New(u32),
    /// The file gets exactly this, existing or not (a file that holds a secret).
    Exact(u32),
}

/// The message of the error [`replace`] returns when the file is not what the caller read.
pub const CHANGED: &str = "the file changed since calyx read it";

/// Replaces (or creates) `path` with `bytes` atomically, with the mode `mode` says. Parent
/// directories are created.
pub fn write_atomic(path: &Path, bytes: &[u8], mode: Mode) -> io::Result<()> {
    replace(path, None, bytes, mode)
}

/// [`write_atomic`], but only if the file still holds `expected` (`Some(None)`: still does not
/// exist) when the lock is held: a CLI rewriting its config (Claude Code updates ~/.claude.json
/// all the time) between calyx's read and write must not lose its change. On a mismatch the
/// error is `CHANGED` and nothing is written; the caller plans again.
pub fn replace(
    path: &Path,
    expected: Option<Option<&[u8]>>,
    bytes: &[u8],
    mode: Mode,
) -> io::Result<()> {
    let real = resolve(path)?;
    let dir = real
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    fs::create_dir_all(&dir)?;
    let name = real
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?
        .to_string_lossy()
        .into_owned();
    let existing = match fs::metadata(&real) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    if let Some(meta) = &existing {
        // A FIFO or a device there is not a config file calyx may replace.
        regular::check(meta, &real, path)?;
    }
    let old_mode = existing.as_ref().map(|m| m.permissions().mode() & 0o7777);
    // A rename would replace a read-only file just the same; a user who made it read-only
    // (often root, to whom permissions do not apply) meant nobody to change it.
    if let Some(old) = old_mode.filter(|m| m & 0o222 == 0) {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is read-only (mode {old:o}); calyx will not replace it",
                real.display()
            ),
        ));
    }
    let mode = match (mode, old_mode) {
        (Mode::Exact(m), _) | (Mode::New(m), None) => m,
        (Mode::New(_), Some(old)) => old,
    };
    // Lock the existing file (or, for a new one, the directory) for the read-compare-rename.
    let lock_target = if existing.is_some() { &real } else { &dir };
    let _lock = Lock::acquire(lock_target)?;
    let current = regular::read(&real, path)?;
    if let Some(expected) = expected {
        if current.as_deref() != expected {
            return Err(io::Error::other(CHANGED));
        }
    }
    if let Some(old) = current {
        // The backup gets the new mode: it holds what the file held (an older token, say),
        // and must be no easier to read than the file itself.
        let backup = dir.join(format!("{name}.calyx.bak"));
        write_new(&dir.join(format!(".{name}.calyx-bak.tmp")), &old, mode)
            .and_then(|tmp| fs::rename(&tmp, &backup))?;
    }
    let temp = dir.join(format!(".{name}.calyx-{}.tmp", std::process::id()));
    let result = write_new(&temp, bytes, mode).and_then(|tmp| fs::rename(&tmp, &real));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result?;
    if let Ok(d) = File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes a file calyx owns outright (a plugin, an extension, a hook file), or one calyx's
/// uninstall left empty, if it still holds `expected` (when given). Missing is fine.
pub fn remove(path: &Path, expected: Option<&[u8]>) -> io::Result<()> {
    let real = resolve(path)?;
    if let Some(expected) = expected {
        let _lock = Lock::acquire(&real);
        match regular::read(&real, path)? {
            Some(current) if current != expected => return Err(io::Error::other(CHANGED)),
            None => return Ok(()),
            _ => {}
        }
    }
    match fs::remove_file(&real) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Writes `bytes` to a fresh file at `temp` with `mode` and syncs it; returns `temp`.
fn write_new(temp: &Path, bytes: &[u8], mode: u32) -> io::Result<PathBuf> {
    let _ = fs::remove_file(temp);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(temp)?;
    // The umask may have narrowed `mode`; the target's mode must survive exactly.
    file.set_permissions(fs::Permissions::from_mode(mode))?;
    file.write_all(bytes)?;
    file.sync_all()?;
    Ok(temp.to_path_buf())
}

/// An exclusive `flock` held until dropped (nix's `Flock` unlocks on drop; unlocking a lock
/// held on an open descriptor cannot fail, so its drop never panics).
struct Lock {
    _held: Flock<File>,
}

impl Lock {
    fn acquire(path: &Path) -> io::Result<Self> {
        // O_NONBLOCK: opening a FIFO swapped in since the check must not block.
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)?;
        Flock::lock(file, FlockArg::LockExclusive)
            .map(|held| Self { _held: held })
            .map_err(|(_, errno)| errno.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn writes_through_symlinks_and_keeps_mode_and_backup() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/settings.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("settings.json");
        symlink("dotfiles/settings.json", &link).unwrap();
        write_atomic(&link, b"new", Mode::New(0o600)).unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(
            fs::metadata(&real).unwrap().permissions().mode() & 0o777,
            0o640
        );
        let bak = dir.path().join("dotfiles/settings.json.calyx.bak");
        assert_eq!(fs::read_to_string(bak).unwrap(), "old");
    }

    #[test]
    fn new_files_get_the_requested_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.json");
        write_atomic(&path, b"{}", Mode::New(0o600)).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(read_text(&path).unwrap().as_deref(), Some("{}"));
        remove(&path, Some(b"{}")).unwrap();
        assert_eq!(read_text(&path).unwrap(), None);
    }

    #[test]
    fn symlink_loops_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        let b = dir.path().join("b");
        symlink(&b, &a).unwrap();
        symlink(&a, &b).unwrap();
        assert!(read_text(&a).is_err());
        assert!(write_atomic(&a, b"x", Mode::New(0o600)).is_err());
    }
}
