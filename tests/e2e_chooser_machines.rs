//! The session chooser across machines (issue 20 §2), against a real sshd on 127.0.0.1 in
//! front of a second calyx server (tests/support_sshd.rs) and a local client in a real PTY:
//! `prefix s` lists the saved machine's sessions under its name (and names the machine that
//! cannot be reached), Enter on one attaches there through `--remote`, and `prefix L` comes
//! back to the local session it left, which kept running meanwhile. A machine with a live
//! link is listed from its snapshot, with no new ssh login.

use crate::common::{wait_until, Client, Env};
use crate::support_sshd::{available, save_build_and_a_dead_machine, RemoteCalyx, Sshd};

/// A remote with session `farwork`, and a local world that saved it as `build` (and a dead
/// machine) with a client attached to session `home` in a real PTY (the local server starts
/// from it, with its CALYX_SSH).
fn home_with_build(sshd: &Sshd) -> (Env, Client) {
    sshd.remote.ok(&["new", "-d", "-s", "farwork"]);
    let local = Env::new();
    save_build_and_a_dead_machine(&local);
    let vars = sshd.client_vars(&local);
    let client = Client::spawn_with(&local, &["new", "-s", "home"], 24, 100, &vars);
    (local, client)
}

/// Whether `ls` (on the machine of `env`) shows `session` with a client attached.
fn attached(ls: &str, session: &str) -> bool {
    ls.lines()
        .any(|l| l.starts_with(&format!("{session}:")) && l.contains("(attached)"))
}

#[test]
fn chooser_attaches_to_a_saved_machine_s_session_and_prefix_l_comes_back() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let (local, mut client) = home_with_build(&sshd);
    client.send("echo near-$((3*3))\r");
    client.wait_for("near-9");

    client.prefix("s");
    client.wait_for("build:");
    client.wait_for("farwork");
    client.wait_for("unreachable: down");
    // Rows: home, build:, farwork, down:.
    client.send("jj");
    client.send("\r");

    // The remote server counts this client, and typing reaches the remote pane.
    wait_until("the remote session attached", || {
        attached(&sshd.remote.ok(&["ls"]), "farwork").then_some(())
    });
    client.send("echo far-$((5*5))\r");
    client.wait_for("far-25");
    wait_until("how to come back, on the remote status line", || {
        let raw = String::from_utf8_lossy(&client.raw()).to_string();
        raw.contains("C-b L: back to local session home")
            .then_some(())
    });
    // The local session kept running, detached.
    let ls = local.ok(&["ls"]);
    assert!(ls.contains("home:") && !attached(&ls, "home"), "{ls}");
    assert!(!client.exited(), "the client left");

    // A pasted "C-b L" is text for the remote pane (the remote server reads it as a
    // bracketed paste), not the way back.
    client.send("\x1b[200~\x02L\x1b[201~");
    client.send("\x15echo still-far-$((6*6))\r");
    client.wait_for("still-far-36");
    assert!(!client.exited(), "the pasted C-b L ended the remote attach");
    assert!(attached(&sshd.remote.ok(&["ls"]), "farwork"));

    client.prefix("L");
    client.wait_for("near-9");
    client.send("echo back-$((4*4))\r");
    client.wait_for("back-16");
    wait_until("the local session attached again", || {
        attached(&local.ok(&["ls"]), "home").then_some(())
    });
    wait_until("the remote client gone", || {
        (!attached(&sshd.remote.ok(&["ls"]), "farwork")).then_some(())
    });
    client.prefix("d");
    let said = client.wait_exit();
    assert!(said.contains("detached"), "{said}");
}

/// How many ssh logins the remote world's sshd accepted so far.
fn logins(sshd: &Sshd) -> usize {
    sshd.log().matches("Accepted publickey").count()
}

#[test]
fn the_chooser_reads_a_live_link_s_sessions_without_a_new_ssh_login() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let (local, mut client) = home_with_build(&sshd);
    client.wait_for("[home]");
    wait_until("build's link live", || {
        local
            .ok(&["machine", "list"])
            .lines()
            .any(|l| l.starts_with("build ") && l.ends_with("  live"))
            .then_some(())
    });
    let before = logins(&sshd);
    assert!(before >= 1, "the link's login is not in the sshd log");
    client.prefix("s");
    client.wait_for("farwork");
    // The machine with no live link is still asked (and named unreachable).
    client.wait_for("unreachable: down");
    assert_eq!(
        logins(&sshd),
        before,
        "the chooser logged in to build again"
    );
}
