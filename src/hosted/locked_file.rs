//! The two files calyx owns for hosted servers (the server list and the secrets file) are
//! written the same way: under an exclusive `flock` on a sidecar `<name>.lock` (locking the file
//! itself would lock the inode a rename replaces), to a temporary file in the same directory
//! with mode 0600, synced, then renamed over the target. A reader or a crash sees the old file
//! or the new one, never a mix, and two calyx processes never interleave a read-modify-write.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

/// Mode of every file written here: they hold secrets or the names of secrets.
pub const FILE_MODE: u32 = 0o600;

/// An exclusive lock on `<path>.lock`, held until dropped.
pub struct FileLock {
    _lock: Flock<File>,
}

/// Takes the exclusive lock for `path`, creating its directory (with `dir_mode` when given,
/// tightening an existing one to it) and the lock file. Blocks while another process holds it.
pub fn lock(path: &Path, dir_mode: Option<u32>) -> io::Result<FileLock> {
    let dir = parent_of(path);
    ensure_dir(&dir, dir_mode)?;
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(FILE_MODE)
        .open(lock_path(path))?;
    let lock =
        Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, errno)| io::Error::from(errno))?;
    Ok(FileLock { _lock: lock })
}

/// The file's bytes; `None` when it does not exist.
pub fn read(path: &Path) -> io::Result<Option<Vec<u8>>> {
    match File::open(path) {
        Ok(mut file) => {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok(Some(bytes))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Replaces `path` with `bytes` atomically (mode 0600). The caller holds [`lock`].
pub fn write_atomic(_held: &FileLock, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = parent_of(path);
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?
        .to_string_lossy()
        .into_owned();
    let temp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let written = (|| {
        let mut file = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .mode(FILE_MODE)
            .open(&temp)?;
        // The mode given at creation is masked by the umask; this is exact.
        file.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        // The rename itself is durable once the directory is synced.
        File::open(&dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
    written
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    parent_of(path).join(name)
}

fn parent_of(path: &Path) -> PathBuf {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

fn ensure_dir(dir: &Path, mode: Option<u32>) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    if let Some(mode) = mode {
        let current = fs::metadata(dir)?.permissions().mode() & 0o7777;
        if current != mode {
            fs::set_permissions(dir, fs::Permissions::from_mode(mode))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_0600_and_replace_whole() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/file.json");
        let held = lock(&path, Some(0o700)).expect("lock");
        assert_eq!(read(&path).expect("read"), None);
        write_atomic(&held, &path, b"one").expect("write");
        write_atomic(&held, &path, b"two").expect("write");
        assert_eq!(read(&path).expect("read").as_deref(), Some(&b"two"[..]));
        let mode = fs::metadata(&path).expect("meta").permissions().mode() & 0o7777;
        assert_eq!(mode, 0o600);
        let dir_mode = fs::metadata(dir.path().join("sub"))
            .expect("meta")
            .permissions()
            .mode()
            & 0o7777;
        assert_eq!(dir_mode, 0o700);
        let leftovers: Vec<_> = fs::read_dir(dir.path().join("sub"))
            .expect("list")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".tmp."))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
}
