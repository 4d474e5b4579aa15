//! Opening another program's config file without trusting what sits at its path. A hostile
//! local user (or a broken dotfile setup) can put anything there: a FIFO, on which a plain
//! `open` blocks for ever; a symlink to `/dev/zero` or `/dev/urandom`, which a plain read
//! consumes until memory runs out; a multi-gigabyte file. So every config file calyx reads is
//! opened with `O_NONBLOCK` (an open never waits for a writer), checked with `fstat` on the
//! descriptor it got (what was checked is what is read, even if the path is swapped meanwhile),
//! refused unless it is a regular file of at most [`MAX_BYTES`], and read with that cap.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest config file calyx reads. Real CLI configs are kilobytes; Claude Code's
/// `~/.claude.json`, the largest seen, grows with project history to a few megabytes.
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Opens `real` (a path with its symlinks already resolved) for reading; `None` when it does
/// not exist. `shown` is the path as the user knows it, for the messages.
pub fn open(real: &Path, shown: &Path) -> io::Result<Option<(File, Metadata)>> {
    let file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(real)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let meta = file.metadata()?;
    check(&meta, real, shown)?;
    Ok(Some((file, meta)))
}

/// Refuses what is not a regular file, or is over [`MAX_BYTES`].
pub fn check(meta: &Metadata, real: &Path, shown: &Path) -> io::Result<()> {
    let via = if real == shown {
        String::new()
    } else {
        format!("links to {}, which ", real.display())
    };
    if !meta.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{via}is {}, not a regular file: calyx reads only regular config files and left it as it is",
                describe(meta)
            ),
        ));
    }
    if meta.len() > MAX_BYTES {
        return Err(too_big(&via, meta.len()));
    }
    Ok(())
}

fn too_big(via: &str, len: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "{via}is {len} bytes, over the 16 MiB calyx reads from a config file; left as it is"
        ),
    )
}

/// Reads the whole of a regular file (`None` when missing), never more than [`MAX_BYTES`]:
/// a file that grows past the cap between the `fstat` and the read is refused too.
pub fn read(real: &Path, shown: &Path) -> io::Result<Option<Vec<u8>>> {
    let Some((file, meta)) = open(real, shown)? else {
        return Ok(None);
    };
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(too_big("", bytes.len() as u64));
    }
    Ok(Some(bytes))
}

/// "a FIFO (named pipe)", "a character device", ... for the messages.
fn describe(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_and_directories_and_reads_regular_files() {
        let dir = tempfile::tempdir().unwrap();
        let err = read(Path::new("/dev/zero"), Path::new("/dev/zero")).unwrap_err();
        assert!(err.to_string().contains("a character device"), "{err}");
        let err = read(dir.path(), dir.path()).unwrap_err();
        assert!(err.to_string().contains("a directory"), "{err}");
        let f = dir.path().join("c.toml");
        std::fs::write(&f, "a = 1\n").unwrap();
        assert_eq!(read(&f, &f).unwrap().as_deref(), Some(&b"a = 1\n"[..]));
        assert_eq!(read(&dir.path().join("none"), &f).unwrap(), None);
    }
}
