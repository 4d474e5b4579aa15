//! Saved machines (issue 20 §2): `calyx machine add|list|remove` on a real config directory,
//! `calyx machine test` and `calyx agents --all` against a real sshd on 127.0.0.1 in front of
//! a second calyx server (tests/support_sshd.rs), whose agent row comes from a real `calyx
//! hook` process playing a captured Claude Code payload.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{calyx_bin, wait_until, Env};
use crate::support_sshd::{available, save_build_and_a_dead_machine, RemoteCalyx, Sshd, HOST};

/// Runs `calyx ARGS` in the `local` world with `CALYX_SSH` = `ssh`.
fn run(local: &Env, ssh: &str, args: &[&str]) -> Output {
    Command::new(calyx_bin())
        .args(args)
        .env_clear()
        .envs(local.vars())
        .env("CALYX_SSH", ssh)
        .stdin(Stdio::null())
        .output()
        .expect("run calyx")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn machine_add_list_remove_keep_a_private_file_and_refuse_bad_input() {
    use std::os::unix::fs::PermissionsExt as _;
    let local = Env::new();
    let file = local.path().join("config/calyx/machines.toml");
    let listed = local.ok(&["machine", "list"]);
    assert!(listed.contains("no saved machines"), "{listed}");
    local.ok(&["machine", "add", "build", "me@build.example"]);
    local.ok(&["machine", "add", "gpu-1", "ssh://me@10.0.0.7:2222"]);
    let mode = std::fs::metadata(&file)
        .expect("machines.toml")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let listed = local.ok(&["machine", "list"]);
    assert!(
        listed.contains("build ") && listed.contains("me@build.example"),
        "{listed}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&local.ok(&["machine", "list", "--json"])).expect("json");
    assert_eq!(json[1]["name"], "gpu-1");
    assert_eq!(json[1]["target"], "ssh://me@10.0.0.7:2222");
    // Refused: a target ssh would read as an option, a bad name, a taken name.
    for args in [
        &["machine", "add", "evil", "-oProxyCommand=touch /tmp/x"][..],
        &["machine", "add", "a b", "host"],
        &["machine", "add", "build", "other"],
        &["machine", "remove", "nope"],
    ] {
        let out = local.run(args);
        assert!(!out.status.success(), "{args:?}: {}", text(&out));
    }
    local.ok(&["machine", "remove", "build"]);
    let listed = local.ok(&["machine", "list"]);
    assert!(
        !listed.contains("build ") && listed.contains("gpu-1"),
        "{listed}"
    );
    // `--remote` does not apply: the list is this machine's.
    assert!(!local
        .run(&["machine", "list", "--remote", "x"])
        .status
        .success());
    // A file broken by hand: the error names the file and the line, and nothing rewrites it.
    let broken = "[machines.gpu-1]\ntarget = \"h\"\nport = 22\n";
    std::fs::write(&file, broken).expect("break");
    for args in [
        &["machine", "list"][..],
        &["machine", "add", "other", "host"],
        &["agents", "--all"],
    ] {
        let out = local.run(args);
        let said = text(&out);
        assert!(!out.status.success(), "{args:?}: {said}");
        let wanted = format!("{}: line 3:", file.display());
        assert!(
            said.contains(&wanted) && said.contains("`port`"),
            "{args:?}: {said}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).expect("read"), broken);
}

#[test]
fn machine_test_reports_version_and_round_trip_or_why_not_without_prompting() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    let ssh = sshd.calyx_ssh();
    local.ok(&["machine", "add", "build", HOST]);
    let out = run(&local, &ssh, &["machine", "test", "build"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}\nsshd log: {}", sshd.log());
    let version = format!("calyx {}", env!("CARGO_PKG_VERSION"));
    assert!(said.starts_with("ok: build (calyx-remote): "), "{said}");
    assert!(
        said.contains(&version) && said.contains("round trip "),
        "{said}"
    );
    assert!(said.contains(" ms (median of 5)"), "{said}");

    // A host key nobody accepted yet: ssh would ask; calyx says who must answer instead.
    let asking = sshd.config_copy(&local, "asking_config", |c| {
        c.replace("StrictHostKeyChecking no", "StrictHostKeyChecking ask")
            .replace("known_hosts", "empty_known_hosts")
    });
    let began = Instant::now();
    let out = run(&local, &asking, &["machine", "test", "build"]);
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(
        said.starts_with("needs you: build (run `ssh calyx-remote` once yourself"),
        "{said}"
    );
    assert!(
        began.elapsed() < Duration::from_secs(10),
        "it waited on a prompt"
    );

    // The sshd stops: unreachable, with ssh's reason, at once.
    let kept = sshd.config_copy(&local, "kept_config", |c| c);
    drop(sshd);
    let began = Instant::now();
    let out = run(&local, &kept, &["machine", "test", "build"]);
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.starts_with("unreachable: build ("), "{said}");
    assert!(said.contains("Connection refused"), "{said}");
    assert!(began.elapsed() < Duration::from_secs(10));
    // A name that is not saved.
    let out = run(&local, &kept, &["machine", "test", "nope"]);
    assert!(!out.status.success() && text(&out).contains("no saved machine named nope"));
}

/// The `payload` of a captured fixture.
fn fixture(name: &str) -> serde_json::Value {
    let mut payload = crate::common::gates::fixture_payload(name);
    payload["session_id"] = serde_json::Value::from("machines-1");
    payload
}

#[test]
fn agents_all_lists_every_machine_and_names_the_unreachable_one() {
    if !available() {
        return;
    }
    let sshd = Sshd::start(RemoteCalyx::ThisBinary);
    let local = Env::new();
    let ssh = sshd.calyx_ssh();
    // The "remote" machine: a pane whose agent asked for permission.
    sshd.remote.ok(&["new", "-d", "-s", "far"]);
    let far = sshd.remote.first_surface();
    sshd.remote.hook_event(
        &far,
        "claude-code",
        &fixture("claude-2.1.197-SessionStart.json"),
    );
    sshd.remote.hook_event(
        &far,
        "claude-code",
        &fixture("claude-2.1.197-PermissionRequest.json"),
    );
    // This machine: an idle agent.
    local.ok(&["new", "-d", "-s", "near"]);
    let near = local.first_surface();
    local.hook_event(
        &near,
        "claude-code",
        &fixture("claude-2.1.197-SessionStart.json"),
    );
    // Saved: the remote, and one whose port nothing listens on.
    save_build_and_a_dead_machine(&local);

    let began = Instant::now();
    let out = run(&local, &ssh, &["agents", "--all", "--json"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        began.elapsed() < Duration::from_secs(12),
        "a dead machine held it up"
    );
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = answer["agents"].as_array().expect("agents");
    let of = |machine: &str| {
        rows.iter()
            .find(|r| r["machine"] == machine)
            .unwrap_or_else(|| panic!("no {machine} row: {answer}"))
    };
    assert_eq!(of("build")["state"], "blocked", "{answer}");
    assert_eq!(of("local")["state"], "idle", "{answer}");
    assert_eq!(rows.len(), 2, "{answer}");
    assert_eq!(answer["unreachable"][0]["machine"], "down", "{answer}");
    let reason = answer["unreachable"][0]["reason"].as_str().unwrap_or("");
    assert!(reason.contains("Connection refused"), "{answer}");

    // A machine whose host key nobody accepted yet: named as needing the user, no prompt,
    // and the other machines' rows still come.
    let with_asking = sshd.config_copy(&local, "with_asking", |c| {
        let asking = c
            .replace(&format!("Host {HOST}"), "Host calyx-asking")
            .replace("StrictHostKeyChecking no", "StrictHostKeyChecking ask")
            .replace("known_hosts", "empty_known_hosts");
        format!("{c}\n{asking}")
    });
    local.ok(&["machine", "add", "asking", "calyx-asking"]);
    let out = run(&local, &with_asking, &["agents", "--all", "--json"]);
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let asking = answer["unreachable"]
        .as_array()
        .and_then(|u| u.iter().find(|u| u["machine"] == "asking"))
        .unwrap_or_else(|| panic!("asking is not named: {answer}"));
    assert_eq!(asking["needs_you"], true, "{answer}");
    assert_eq!(
        answer["agents"].as_array().map(Vec::len),
        Some(2),
        "{answer}"
    );
    local.ok(&["machine", "remove", "asking"]);

    // The table: a MACHINE column, and the unreachable machine named on its own line.
    let out = run(&local, &ssh, &["agents", "--all"]);
    let table = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(table.starts_with("MACHINE      PANE"), "{table}");
    let line = |machine: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{machine} ")))
            .unwrap_or_else(|| panic!("no {machine} line: {table}"))
            .to_string()
    };
    assert!(line("build").contains("blocked"), "{table}");
    assert!(line("local").contains("idle"), "{table}");
    assert!(
        table.contains("unreachable: down (ssh could not reach 127.0.0.1:"),
        "{table}"
    );

    // `ls --all`: every machine's sessions, each line with its machine.
    let out = run(&local, &ssh, &["ls", "--all"]);
    let listed = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", text(&out));
    assert!(listed.contains("local: near: 1 window, 1 pane"), "{listed}");
    assert!(listed.contains("build: far: 1 window, 1 pane"), "{listed}");
    assert!(listed.contains("unreachable: down ("), "{listed}");

    // Without a local server, the remote rows still come.
    local.ok(&["kill-server"]);
    wait_until("the local server gone", || {
        (!local.run(&["ls"]).status.success()).then_some(())
    });
    let out = run(&local, &ssh, &["agents", "--all", "--json"]);
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(answer["agents"][0]["machine"], "build", "{answer}");
    assert_eq!(
        answer["agents"].as_array().map(Vec::len),
        Some(1),
        "{answer}"
    );
    // A machine with no server running has no rows and is not unreachable; nothing starts
    // one there.
    sshd.remote.ok(&["kill-server"]);
    let out = run(&local, &ssh, &["agents", "--all", "--json"]);
    let answer: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        answer["agents"].as_array().map(Vec::len),
        Some(0),
        "{answer}"
    );
    let unreachable = answer["unreachable"].as_array().expect("unreachable");
    assert!(
        unreachable.iter().all(|u| u["machine"] != "build"),
        "{answer}"
    );
    assert!(
        !sshd.remote.run(&["ls"]).status.success(),
        "--all started a server there"
    );
}

#[test]
fn a_machine_running_another_protocol_is_its_own_state_not_unreachable() {
    if !available() {
        return;
    }
    // A calyx of protocol 1 there (the fixture of tests/e2e_remote.rs).
    let sshd = Sshd::start(RemoteCalyx::protocol_one());
    let local = Env::new();
    local.ok(&["machine", "add", "build", HOST]);
    sshd.client_ok(&local, &["new", "-d", "-s", "near"]);
    let listed = wait_until("build's link wrong-version in machine list", || {
        let listed = local.ok(&["machine", "list"]);
        listed.contains("wrong version: build (").then_some(listed)
    });
    assert!(
        listed.contains("runs calyx 0.4.0 (protocol 1), this one speaks 3")
            && listed.contains("--install"),
        "{listed}"
    );
    assert!(!listed.contains("unreachable"), "{listed}");
    let json: serde_json::Value =
        serde_json::from_str(&local.ok(&["machine", "list", "--json"])).expect("json");
    assert_eq!(json[0]["link"], "wrong-version", "{json}");
    let agents: serde_json::Value =
        serde_json::from_str(&local.ok(&["agents", "--json"])).expect("agents json");
    let down = &agents["machines_down"][0];
    assert_eq!(down["state"], "wrong-version", "{agents}");
    assert!(
        down["line"]
            .as_str()
            .is_some_and(|l| l.starts_with("wrong version: build (")),
        "{agents}"
    );
    // The chooser names it so too.
    let mut client = local.client(&["attach", "-t", "near"], 30, 200);
    client.wait_for("[near]");
    client.prefix("s");
    client.wait_for("wrong version: build (");
}
