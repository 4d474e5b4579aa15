//! End to end: a server whose socket file is removed (a tmp cleaner, an `rm -rf` of the
//! runtime directory) binds it again and stays the user's server: the same sessions, the same
//! agent endpoint token, no second server started. SIGUSR1 asks for the same check.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::common::{self, wait_until, Env};

/// The agent endpoint's token: a new server would write a new one.
fn endpoint_token(env: &Env) -> String {
    common::mcp::endpoint(env).token
}

/// Waits until a socket is at `path` again, and returns its inode.
fn socket_back(path: &Path) -> u64 {
    wait_until("the socket bound again", || {
        std::fs::symlink_metadata(path)
            .ok()
            .filter(|m| m.mode() & 0o170000 == 0o140000)
            .map(|m| m.ino())
    })
}

#[test]
fn a_removed_socket_or_runtime_directory_is_bound_again_by_the_same_server() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "kept", "--", "sh"]);
    let token = endpoint_token(&env);
    let dir = env.path().join("run/calyx");
    let socket = dir.join("server.sock");
    let first = socket_back(&socket);

    // The socket file alone.
    std::fs::remove_file(&socket).expect("rm socket");
    let second = socket_back(&socket);
    assert_ne!(first, second, "a new socket file");
    assert!(env.ok(&["ls"]).contains("kept"), "the same sessions");
    assert_eq!(endpoint_token(&env), token, "the same server");
    let mode = std::fs::metadata(&socket).expect("stat").mode() & 0o777;
    assert_eq!(mode, 0o600, "as private as the first");

    // The whole runtime directory.
    std::fs::remove_dir_all(&dir).expect("rm -rf runtime dir");
    socket_back(&socket);
    let dir_mode = std::fs::metadata(&dir).expect("stat").mode() & 0o777;
    assert_eq!(dir_mode, 0o700, "the directory made private again");
    assert!(env.ok(&["ls"]).contains("kept"));
    assert_eq!(endpoint_token(&env), token, "still the same server");
    // The shell integration's scripts, which lived there, are back for new panes.
    wait_until("the bash integration script written again", || {
        dir.join("server.sock.shell/bash/calyx.bash")
            .is_file()
            .then_some(())
    });

    // Something else renamed over it (no deletion event for the socket itself): a stale file
    // at the path is replaced; a live server there would be left alone.
    let plain = dir.join("plain");
    std::fs::write(&plain, b"not a socket").expect("a plain file");
    std::fs::rename(&plain, &socket).expect("renamed over the socket");
    socket_back(&socket);
    assert!(env.ok(&["ls"]).contains("kept"));
    assert_eq!(endpoint_token(&env), token);

    // SIGUSR1 asks for the check, as in tmux (and no longer ends the server).
    let pid = server_pid(&env);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGUSR1,
    )
    .expect("SIGUSR1");
    assert!(env.ok(&["ls"]).contains("kept"));
    assert_eq!(server_pid(&env), pid, "the server lives on");
    assert_eq!(endpoint_token(&env), token);

    // What holds the runtime directory gone too (a test's temporary tree, a logout's
    // /run/user/UID): nothing is made again; SIGUSR1 then finds nothing to do either.
    let holder = env.path().join("run");
    std::fs::remove_dir_all(&holder).expect("rm -rf the runtime directory's parent");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGUSR1,
    )
    .expect("SIGUSR1");
    let log = env.path().join("state/calyx/server.log");
    wait_until("the server saying it leaves the tree alone", || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        text.contains("not making that again").then_some(())
    });
    assert!(!holder.exists(), "the removed tree stays removed");
    // Its socket is gone for good: end it as a user would.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
}

/// The server's pid, from the socket's peer credentials.
fn server_pid(env: &Env) -> i32 {
    let socket = env.path().join("run/calyx/server.sock");
    let stream = std::os::unix::net::UnixStream::connect(socket).expect("connect");
    let cred = nix::sys::socket::getsockopt(&stream, nix::sys::socket::sockopt::PeerCredentials)
        .expect("peer credentials");
    cred.pid()
}
