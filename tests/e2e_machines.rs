//! Saved machines (issue 20 §2): `calyx machine add|list|remove` on a real config directory,
//! `calyx machine test` and `calyx agents --all` against a real sshd on 127.0.0.1 in front of
//! a second calyx server (tests/support_sshd.rs), whose agent row comes from a real `calyx
//! hook` process playing a captured Claude Code payload.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{calyx_bin, Env};
use crate::support_sshd::{available, RemoteCalyx, Sshd, HOST};

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

/// A copy of the harness's ssh config in `local`'s directory, edited by `edit`: it outlives
/// the sshd, and can be made to want a host-key decision.
fn ssh_config_copy(
    sshd: &Sshd,
    local: &Env,
    name: &str,
    edit: impl Fn(String) -> String,
) -> String {
    let original = sshd
        .calyx_ssh()
        .strip_prefix("ssh -F ")
        .map(str::to_string)
        .expect("CALYX_SSH is ssh -F CONFIG");
    let config = std::fs::read_to_string(original).expect("ssh config");
    let path = local.path().join(name);
    std::fs::write(&path, edit(config)).expect("write ssh config");
    format!("ssh -F {}", path.display())
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
    let asking = ssh_config_copy(&sshd, &local, "asking_config", |c| {
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
    let kept = ssh_config_copy(&sshd, &local, "kept_config", |c| c);
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
