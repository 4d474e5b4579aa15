//! Where calyx keeps its files. One place, so the server, clients, hooks and setup agree.

use std::path::PathBuf;

/// The private directory holding the server socket: `$XDG_RUNTIME_DIR/calyx`, else `/tmp/calyx-$UID`.
/// It is created with mode 0700 by the server; a client only reads it.
pub fn runtime_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("calyx"),
        _ => PathBuf::from(format!("/tmp/calyx-{}", current_uid())),
    }
}

/// The server's Unix socket. `CALYX_SOCKET` overrides it (tests, nested experiments).
pub fn socket_path() -> PathBuf {
    match std::env::var_os("CALYX_SOCKET") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => runtime_dir().join("server.sock"),
    }
}

/// calyx's state directory: `$XDG_STATE_HOME/calyx` (default `~/.local/state/calyx`) on Linux,
/// `~/Library/Application Support/Calyx` on macOS. Holds the agent endpoint file and logs.
pub fn state_dir() -> PathBuf {
    if cfg!(target_os = "macos") {
        return home_dir().join("Library/Application Support/Calyx");
    }
    match std::env::var_os("XDG_STATE_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("calyx"),
        _ => home_dir().join(".local/state/calyx"),
    }
}

/// The endpoint file `{"port":N,"token":"..."}` that `calyx hook` reads on every call.
pub fn endpoint_file() -> PathBuf {
    state_dir().join("agent-endpoint.json")
}

/// calyx's config file: `$XDG_CONFIG_HOME/calyx/config.toml` (default `~/.config/calyx/config.toml`).
pub fn config_file() -> PathBuf {
    let base = match std::env::var_os("XDG_CONFIG_HOME") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => home_dir().join(".config"),
    };
    base.join("calyx").join("config.toml")
}

/// The user's home directory from `$HOME` (falls back to `/` so nothing panics without one).
pub fn home_dir() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"))
}

/// The real uid of this process.
pub fn current_uid() -> u32 {
    nix::unistd::getuid().as_raw()
}
