//! `calyx --remote` (issue 20 §1) against a real sshd on 127.0.0.1 and a second calyx server
//! behind it (tests/support_sshd.rs): scripting verbs, an attached client in a real PTY that
//! types and sees the echo, detaches and re-attaches, survives its ssh being killed, and the
//! version check and `--install` on remotes with another calyx or none.

use crate::common::{calyx_bin, wait_until, Client, Env};
use crate::support_sshd::{available, RemoteCalyx, Sshd, HOST};

/// The pane list of the remote server, asked on the remote machine itself.
fn remote_pane_pid(sshd: &Sshd, session: &str) -> u64 {
    let panes = sshd.remote.panes();
    panes
        .iter()
        .find(|p| p["session"] == session)
        .and_then(|p| p["pid"].as_u64())
        .unwrap_or_else(|| panic!("no pane in {session}: {panes:?}"))
}

#[test]
fn remote_scripting_verbs_reach_the_server_behind_ssh() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    // No server runs there yet: `ls` does not start one.
    let out = sshd.client_run(&local, &["ls", "--remote", HOST]);
    assert!(!out.status.success(), "ls started a server?");
    sshd.client_ok(
        &local,
        &[
            "--remote", HOST, "new", "-d", "-s", "far", "-x", "80", "-y", "24",
        ],
    );
    // The session is on the remote server, not on a local one.
    assert!(sshd.remote.ok(&["ls"]).contains("far:"));
    assert!(
        !local.run(&["ls"]).status.success(),
        "a local server started"
    );
    let listed = sshd.client_ok(&local, &["ls", "--remote", HOST]);
    assert!(listed.contains("far: 1 window, 1 pane"), "{listed}");
    sshd.client_ok(
        &local,
        &[
            "send-keys",
            "--remote",
            HOST,
            "-t",
            "far",
            "echo far-$((40+2))",
            "Enter",
        ],
    );
    let captured = wait_until("the echo captured over ssh", || {
        let text = sshd.client_ok(&local, &["capture", "--remote", HOST, "-t", "far"]);
        text.contains("far-42").then_some(text)
    });
    assert!(captured.contains("far-42"), "{captured}");
    // The pane lives in the remote login's environment, not this machine's: its HOME is the
    // remote one, and a command is found on the remote PATH.
    sshd.client_ok(
        &local,
        &[
            "send-keys",
            "--remote",
            HOST,
            "-t",
            "far",
            "echo home=$HOME",
            "Enter",
        ],
    );
    let remote_home = format!("home={}", sshd.remote_home().display());
    wait_until("the remote HOME in the pane", || {
        let text = sshd.client_ok(&local, &["capture", "--remote", HOST, "-t", "far"]);
        text.contains(&remote_home).then_some(())
    });
    sshd.client_ok(
        &local,
        &[
            "new",
            "-d",
            "-s",
            "cmd",
            "--remote",
            HOST,
            "--",
            "sh",
            "-c",
            "echo via-path; exec cat",
        ],
    );
    wait_until("a command started from the remote PATH", || {
        let text = sshd.client_ok(&local, &["capture", "--remote", HOST, "-t", "cmd"]);
        text.contains("via-path").then_some(())
    });
    let panes = sshd.client_ok(&local, &["list-panes", "--remote", HOST, "--json"]);
    assert!(panes.contains("\"far\""), "{panes}");
    let agents = sshd.client_run(&local, &["agents", "--remote", HOST, "--json"]);
    assert!(agents.status.success(), "{agents:?}");
    // An ssh:// address reaches the same machine: user and port from the URL (given to ssh
    // as `-p`), key and HostName from the config's entry for the host.
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let url = format!("ssh://{user}@{HOST}:{}", sshd.port);
    let listed = sshd.client_ok(&local, &["ls", "--remote", &url]);
    assert!(listed.contains("far:"), "{listed}");
}

#[test]
fn remote_attach_echoes_detaches_reattaches_and_survives_a_killed_ssh() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    sshd.client_ok(&local, &["--remote", HOST, "new", "-d", "-s", "far"]);
    let vars = sshd.client_vars(&local);
    let args = ["--remote", HOST, "attach", "-t", "far"];
    let mut client = Client::spawn_with(&local, &args, 24, 80, &vars);
    client.send("echo typed-$((6*7))\r");
    client.wait_for("typed-42");
    client.prefix("d");
    let said = client.wait_exit();
    assert!(said.contains("detached"), "{said}");
    // The pane kept running on the remote; a new client sees its screen again.
    let mut client = Client::spawn_with(&local, &args, 24, 80, &vars);
    client.wait_for("typed-42");
    let pane_pid = remote_pane_pid(&sshd, "far");
    // Kill this client's ssh (a dropped connection): the client connects again by itself.
    let ssh_pid = wait_until("the client's ssh", || child_named(client.pid(), "ssh"));
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(ssh_pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    wait_until("a new ssh", || {
        child_named(client.pid(), "ssh").filter(|pid| *pid != ssh_pid)
    });
    // The status line said so while it happened.
    wait_until("the reconnecting message", || {
        let raw = String::from_utf8_lossy(&client.raw()).to_string();
        raw.contains(&format!("reconnecting to {HOST}"))
            .then_some(())
    });
    client.send("echo again-$((7*7))\r");
    client.wait_for("again-49");
    assert!(!client.exited(), "the client gave up");
    assert_eq!(
        remote_pane_pid(&sshd, "far"),
        pane_pid,
        "the pane restarted"
    );
    client.prefix("d");
    client.wait_exit();
}

/// ssh holds the terminal (`remote::tty`): keys typed before anything is drawn reach the
/// remote pane, a resize of the local terminal reaches the remote session through sshd's
/// window change, and a detach leaves no ssh chatter on the terminal.
#[test]
fn remote_attach_keeps_early_keys_and_follows_resizes() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    sshd.remote.ok(&["new", "-d", "-s", "far"]);
    let local = Env::new();
    let vars = sshd.client_vars(&local);
    let args = ["--remote", HOST, "attach", "-t", "far"];
    let mut client = Client::spawn_with(&local, &args, 24, 80, &vars);
    // Typed at once, while the client still checks the version and connects.
    client.send("echo early-$((8*8))\r");
    client.wait_for("early-64");
    // The client's ssh holds the terminal and runs the bridge that attaches sshd's pty.
    let ssh_pid = wait_until("the client's ssh", || child_named(client.pid(), "ssh"));
    let cmdline = std::fs::read(format!("/proc/{ssh_pid}/cmdline")).unwrap_or_default();
    let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
    assert!(
        cmdline.contains(" -t ") && cmdline.contains("remote-bridge --tty"),
        "{cmdline}"
    );
    client.resize(30, 100);
    wait_until("the remote session at the new size", || {
        sshd.remote.ok(&["ls"]).contains("[100x30]").then_some(())
    });
    client.prefix("d");
    let said = client.wait_exit();
    assert!(said.contains("detached"), "{said}");
    assert!(
        !said.contains("Connection to"),
        "ssh's closing line under calyx's: {said}"
    );
}

#[test]
fn remote_server_upgrade_keeps_the_attached_remote_client() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    sshd.client_ok(&local, &["--remote", HOST, "new", "-d", "-s", "up"]);
    let vars = sshd.client_vars(&local);
    let mut client = Client::spawn_with(&local, &["--remote", HOST, "attach"], 24, 80, &vars);
    client.send("echo before-$((1+1))\r");
    client.wait_for("before-2");
    let pane_pid = remote_pane_pid(&sshd, "up");
    let binary = calyx_bin().display().to_string();
    let said = sshd.client_ok(
        &local,
        &["server-upgrade", "--remote", HOST, "--binary", &binary],
    );
    assert!(said.contains("upgraded"), "{said}");
    // The client followed the server through a new bridge, to the same session.
    client.send("echo after-$((2+2))\r");
    client.wait_for("after-4");
    assert!(!client.exited());
    assert_eq!(remote_pane_pid(&sshd, "up"), pane_pid);
    client.prefix("d");
    client.wait_exit();
}

#[test]
fn remote_pane_clipboard_reaches_the_local_terminal() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    // The remote machine's own config lets its focused pane set the user's clipboard.
    sshd.remote.write_config("set_clipboard = \"on\"\n");
    let local = Env::new();
    let vars = sshd.client_vars(&local);
    let script = "read -r line; printf '\\033]52;c;%s\\007' \"$line\"; echo copied; exec cat";
    let args = [
        "--remote", HOST, "new", "-s", "clip", "--", "sh", "-c", script,
    ];
    let mut client = Client::spawn_with(&local, &args, 24, 80, &vars);
    client.wait_for("[clip]");
    // "remote" in base64: what the pane puts on the clipboard, through ssh to this terminal.
    client.send("cmVtb3Rl\r");
    client.wait_for("copied");
    wait_until("the remote pane's OSC 52 on the local terminal", || {
        String::from_utf8_lossy(&client.raw())
            .contains("\x1b]52;c;cmVtb3Rl\x07")
            .then_some(())
    });
    client.prefix("d");
    client.wait_exit();
}

#[test]
fn remote_of_another_protocol_is_named_and_replaced_only_with_install() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::Fake {
        header: "calyx-remote-bridge calyx=0.0.1 protocol=999".into(),
        version: "0.0.1".into(),
    });
    let local = Env::new();
    let out = sshd.client_run(&local, &["ls", "--remote", HOST]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("calyx 0.0.1"), "{err}");
    assert!(err.contains("--install"), "{err}");
    // Nothing was written there without --install.
    assert!(!sshd.remote_home().join(".local/bin/calyx").exists());
    let out = sshd.client_run(
        &local,
        &["--remote", HOST, "--install", "new", "-d", "-s", "up"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}\n{}", sshd.log());
    assert!(err.contains("replacing calyx 0.0.1"), "{err}");
    assert!(sshd.remote.ok(&["ls"]).contains("up:"));
}

#[test]
fn remote_without_calyx_gets_this_binary_with_install() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::Missing);
    let local = Env::new();
    let out = sshd.client_run(&local, &["ls", "--remote", HOST]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has no calyx"), "{err}");
    assert!(err.contains("--install"), "{err}");
    let out = sshd.client_run(
        &local,
        &["new", "-d", "-s", "fresh", "--remote", HOST, "--install"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}\n{}", sshd.log());
    assert!(err.contains("installed calyx"), "{err}");
    let copied = sshd.remote_home().join(".local/bin/calyx");
    assert_eq!(
        std::fs::read(&copied).expect("the copy"),
        std::fs::read(calyx_bin()).expect("this binary"),
        "the copy differs"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&copied)
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o755);
    let listed = sshd.client_ok(&local, &["ls", "--remote", HOST]);
    assert!(listed.contains("fresh:"), "{listed}");
    // A second --install finds the same version and copies nothing.
    let out = sshd.client_run(&local, &["ls", "--remote", HOST, "--install"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("already has calyx"), "{err}");
}

#[test]
fn remote_install_onto_another_platform_copies_nothing_and_says_what_to_install() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::Missing);
    sshd.remote_script("uname", "#!/bin/sh\necho 'SunOS sun4v'\n");
    let local = Env::new();
    let out = sshd.client_run(&local, &["ls", "--remote", HOST, "--install"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SunOS sun4v"), "{err}");
    assert!(
        err.contains(&format!("install calyx {}", env!("CARGO_PKG_VERSION"))),
        "{err}"
    );
    assert!(!sshd.remote_home().join(".local/bin/calyx").exists());
}

/// The pid of a child of `parent` whose command is `name`.
fn child_named(parent: u32, name: &str) -> Option<u32> {
    let children =
        std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    children
        .split_whitespace()
        .filter_map(|pid| pid.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim() == name)
        })
}

#[test]
fn a_saved_machine_running_a_calyx_from_before_links_is_named_with_its_protocol() {
    if !available() {
        return;
    }
    // A calyx of protocol 1 (before live links and calls across machines) there.
    let sshd = Sshd::start(RemoteCalyx::protocol_one());
    let local = Env::new();
    local.ok(&["machine", "add", "build", HOST]);
    let out = sshd.client_run(&local, &["machine", "test", "build"]);
    assert!(!out.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("runs calyx 0.4.0 (protocol 1), this one speaks 3"),
        "{said}"
    );
    assert!(said.contains(&format!("calyx --remote {HOST}")), "{said}");
    assert!(said.contains("--install"), "{said}");
    assert!(!sshd.remote_home().join(".local/bin/calyx").exists());
}
