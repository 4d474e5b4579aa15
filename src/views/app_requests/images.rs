//! Where a view's message images go: `$TMPDIR/calyx-mcp-apps/<view-id>/<n>.<ext>`, the
//! directories 0700 and the files 0600, so the agent can read an image by its path and other
//! users of the machine cannot. A directory in the way that is not ours (or is a symlink, a
//! classic `/tmp` trick) is refused rather than written through.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::views::registry::ViewId;

/// The default root: `calyx-mcp-apps` in the system's temporary directory.
pub fn default_root() -> PathBuf {
    std::env::temp_dir().join("calyx-mcp-apps")
}

/// Makes `dir` (0700) or checks the one there is a real directory of ours, and makes it 0700.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.file_type().is_dir() || meta.uid() != nix::unistd::getuid().as_raw() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} is not a directory of this user", dir.display()),
        ));
    }
    if meta.permissions().mode() & 0o777 != 0o700 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Saves image `n` of view `view` under `root`; returns its path. Never overwrites a file.
pub fn save(root: &Path, view: ViewId, n: u64, data: &[u8], ext: &str) -> std::io::Result<PathBuf> {
    private_dir(root)?;
    let dir = root.join(view.to_string());
    private_dir(&dir)?;
    let path = dir.join(format!("{n}.{ext}"));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(data)?;
    Ok(path)
}

/// Deletes view `view`'s image directory under `root`, when it is a real directory of this
/// user (a symlink or a stranger's directory is left alone). Errors are only logged: nothing
/// waits on it.
pub fn remove_view(root: &Path, view: ViewId) {
    let dir = root.join(view.to_string());
    let Ok(meta) = std::fs::symlink_metadata(&dir) else {
        return;
    };
    if !meta.file_type().is_dir() || meta.uid() != nix::unistd::getuid().as_raw() {
        return;
    }
    if let Err(e) = std::fs::remove_dir_all(&dir) {
        tracing::warn!("cannot remove {}: {e}", dir.display());
    }
}
