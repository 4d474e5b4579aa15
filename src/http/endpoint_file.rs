//! `agent-endpoint.json`: how hooks find the server. `calyx hook` reads it afresh on every call,
//! so a restarted server on a new port is picked up at once; the server reuses the remembered
//! port and token when it can, so MCP entries that hold them literally keep working.
//!
//! The file holds a secret, so it is 0600 in a 0700 directory and replaced atomically: a reader
//! sees the old file or the new one, never a half-written or world-readable one.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use serde_json::{json, Value};

/// What the endpoint file records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointInfo {
    /// The loopback port the server listens on.
    pub port: u16,
    /// The bearer token every request must carry (64 hex digits).
    pub token: String,
}

impl EndpointInfo {
    /// Parses the file's JSON; `None` for anything that is not a usable port and valid token,
    /// so a corrupt or hand-edited file is treated like a missing one.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        let value: Value = serde_json::from_slice(bytes).ok()?;
        let port = u16::try_from(value.get("port")?.as_u64()?).ok()?;
        let token = value.get("token")?.as_str()?;
        if port == 0 || !super::token::is_valid(token) {
            return None;
        }
        Some(Self {
            port,
            token: token.to_owned(),
        })
    }

    /// The file's JSON text.
    pub fn to_json(&self) -> String {
        json!({ "port": self.port, "token": self.token }).to_string()
    }
}

/// Reads and parses the endpoint file; `None` when it is missing, unreadable or malformed.
pub fn read(path: &Path) -> Option<EndpointInfo> {
    let bytes = fs::read(path).ok()?;
    EndpointInfo::parse(&bytes)
}

/// Writes the endpoint file atomically with mode 0600, creating its directory with mode 0700.
/// Returns the file's inode, by which [`remove_if_ours`] tells this write from a later one.
pub fn write(path: &Path, info: &EndpointInfo) -> io::Result<u64> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "endpoint path has no file name",
        )
    })?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let result = write_synced(&temp, info.to_json().as_bytes())
        .and_then(|()| fs::symlink_metadata(&temp))
        .and_then(|meta| fs::rename(&temp, path).map(|()| meta.ino()));
    let inode = match result {
        Ok(inode) => inode,
        Err(e) => {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
    };
    // Make the rename itself durable; a failure here leaves a correct file, so it is not fatal.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(inode)
}

fn write_synced(temp: &Path, bytes: &[u8]) -> io::Result<()> {
    // A leftover from a crashed earlier write with our pid would make create_new fail.
    let _ = fs::remove_file(temp);
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(temp)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Removes the endpoint file if it is still the one we wrote (`inode`, from [`write`]) and
/// describes `info`. Another server may have replaced it since, and its file must survive our
/// shutdown, even when it reuses our port and token (as the next server does, so that MCP
/// entries keep working) while we are still exiting.
pub fn remove_if_ours(path: &Path, info: &EndpointInfo, inode: u64) -> io::Result<()> {
    let same_file = fs::symlink_metadata(path).is_ok_and(|meta| meta.ino() == inode);
    if !same_file || read(path).as_ref() != Some(info) {
        return Ok(());
    }
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn info(port: u16) -> EndpointInfo {
        EndpointInfo {
            port,
            token: "1f".repeat(32),
        }
    }

    #[test]
    fn round_trips_with_private_modes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/calyx/agent-endpoint.json");
        write(&path, &info(41830)).unwrap();
        assert_eq!(read(&path), Some(info(41830)));
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        // Overwriting leaves no temp file behind.
        write(&path, &info(41831)).unwrap();
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 1);
    }

    #[test]
    fn rejects_malformed_files() {
        for text in [
            "",
            "{",
            "[]",
            r#"{"port":0,"token":"1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f"}"#,
            r#"{"port":70000,"token":"1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f"}"#,
            r#"{"port":41830,"token":"short"}"#,
            r#"{"port":"41830","token":"1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f1f"}"#,
        ] {
            assert_eq!(EndpointInfo::parse(text.as_bytes()), None, "{text}");
        }
        assert_eq!(
            EndpointInfo::parse(info(9).to_json().as_bytes()),
            Some(info(9))
        );
    }

    #[test]
    fn removes_only_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent-endpoint.json");
        let ours = write(&path, &info(2)).unwrap();
        remove_if_ours(&path, &info(1), ours).unwrap();
        assert!(path.exists());
        remove_if_ours(&path, &info(2), ours).unwrap();
        assert!(!path.exists());
        remove_if_ours(&path, &info(2), ours).unwrap();
    }

    #[test]
    fn a_later_servers_file_with_the_same_port_and_token_survives() {
        // The next server reuses the port and token and writes while we are still exiting.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent-endpoint.json");
        let ours = write(&path, &info(2)).unwrap();
        let theirs = write(&path, &info(2)).unwrap();
        assert_ne!(ours, theirs);
        remove_if_ours(&path, &info(2), ours).unwrap();
        assert_eq!(read(&path), Some(info(2)), "the later server's file stays");
        remove_if_ours(&path, &info(2), theirs).unwrap();
        assert!(!path.exists());
    }
}
