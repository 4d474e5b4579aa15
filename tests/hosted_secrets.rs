//! The secret store against the real Secret Service client, in every state a machine can be
//! in: no session bus, a bus without a provider, a locked gnome-keyring, an unlocked one (a
//! private `dbus-daemon` per test, see `bus.rs`), and the session bus of the run itself when
//! `scripts/test-secret-service.sh` runs these tests inside `dbus-run-session`. `auto` must
//! pick the Secret Service only when it works, otherwise the file and say why; `keyring` must
//! fail with the reason instead of hanging; `calyx doctor` must say the same.
//!
//! Each case runs in a child process of this test binary with the bus environment it needs,
//! so the environment of the other tests is never touched.

#[path = "hosted_secrets/bus.rs"]
mod bus;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use bus::{Bus, Provider};
use calyx::hosted::secrets::{
    choose, Backend, FileStore, KeyringStore, SecretStore, SecretStoreSetting,
};

const CHILD: &str = "CALYX_TEST_SECRETS_CHILD";
/// Set by `scripts/test-secret-service.sh` inside `dbus-run-session` with gnome-keyring
/// unlocked: the run's own session bus must hold secrets.
const UNLOCKED_SESSION: &str = "CALYX_TEST_UNLOCKED_SECRET_SERVICE";

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// The environment of a process that has no session bus.
fn no_bus_env() -> Vec<(String, String)> {
    vec![
        (
            "DBUS_SESSION_BUS_ADDRESS".into(),
            "unix:path=/nonexistent/calyx-test/bus".into(),
        ),
        ("XDG_RUNTIME_DIR".into(), "/nonexistent/calyx-test".into()),
    ]
}

/// Runs the test `name` of this binary again in a child with `env`; returns its combined
/// output after asserting it passed.
fn in_child(name: &str, env: &[(String, String)]) -> String {
    let exe = std::env::current_exe().expect("test binary");
    // The test's full name in this binary: this file's module path without the crate's.
    let module = module_path!()
        .split_once("::")
        .map_or(module_path!(), |(_, m)| m);
    let full = format!("{module}::{name}");
    let out = Command::new(exe)
        .args([full.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .expect("child runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran the test:\n{text}");
    // What the child found is part of this test's output (the reasons, the times).
    eprintln!("{name}:\n{text}");
    text
}

/// `calyx doctor` with `env` on top of a clean one whose state directory is `state`; its
/// standard output.
fn doctor(env: &[(String, String)], state: &Path) -> String {
    doctor_with_config(env, state, None)
}

/// [`doctor`] with `config` as calyx's config.toml. (Its exit status says nothing here: with
/// no endpoint and no agent CLI it is always a failure.)
fn doctor_with_config(env: &[(String, String)], state: &Path, config: Option<&str>) -> String {
    let home = state.join("doctor-home");
    std::fs::create_dir_all(home.join(".config/calyx")).expect("mkdir");
    if let Some(text) = config {
        std::fs::write(home.join(".config/calyx/config.toml"), text).expect("config");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_calyx"))
        .arg("doctor")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_STATE_HOME", state)
        .output()
        .expect("calyx doctor runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `auto` over the real Secret Service client, with the file in `dir`.
fn choose_auto(dir: &Path) -> calyx::hosted::secrets::Chosen {
    let file = FileStore::new(dir.join("mcp-secrets.json"));
    choose(SecretStoreSetting::Auto, KeyringStore::secret_service, file).expect("auto never fails")
}

/// `keyring` over the real client must fail: prints the sentence and how long it took.
fn keyring_refused(dir: &Path) -> String {
    let path = dir.join("mcp-secrets.json");
    let started = Instant::now();
    let err = choose(
        SecretStoreSetting::Keyring,
        KeyringStore::secret_service,
        FileStore::new(path.clone()),
    )
    .err()
    .expect("keyring never falls back");
    println!("REFUSED after {:?}: {err}", started.elapsed());
    assert!(err.to_string().contains("unlock your keyring"), "{err}");
    assert!(
        err.to_string().contains("set secret_store = \"file\""),
        "{err}"
    );
    assert!(!path.exists(), "keyring never writes the file");
    err.to_string()
}

/// `auto` must take the file, say why, and the file must work.
fn auto_takes_the_file(dir: &Path) -> String {
    let chosen = choose_auto(dir);
    println!("CHOSEN: {}", chosen.summary);
    assert_eq!(chosen.store.backend(), Backend::File);
    assert!(
        chosen
            .summary
            .contains(" (0600) (no usable Secret Service: "),
        "{}",
        chosen.summary
    );
    chosen.store.set("ev/env/K", "v").expect("the file works");
    assert_eq!(
        chosen.store.get("ev/env/K").expect("get").as_deref(),
        Some("v")
    );
    chosen.summary
}

/// With a working Secret Service: `auto` and `keyring` take it, values round-trip through
/// it, and the secrets file is never created.
fn secret_service_holds_secrets(dir: &Path) {
    let started = Instant::now();
    let chosen = choose_auto(dir);
    println!("CHOSEN after {:?}: {}", started.elapsed(), chosen.summary);
    assert_eq!(
        chosen.store.backend(),
        Backend::Keyring,
        "{}",
        chosen.summary
    );
    assert_eq!(chosen.summary, "secrets: Secret Service");
    let store = chosen.store;
    let account = format!("test{}/env/API_KEY", std::process::id());
    let started = Instant::now();
    assert_eq!(store.get(&account), Ok(None));
    store.set(&account, "s3cret").expect("set");
    assert_eq!(store.get(&account), Ok(Some("s3cret".into())));
    store.set(&account, "rotated").expect("replace");
    assert_eq!(store.get(&account), Ok(Some("rotated".into())));
    store.delete(&account).expect("delete");
    store
        .delete(&account)
        .expect("deleting a missing one succeeds");
    assert_eq!(store.get(&account), Ok(None));
    println!("ROUND TRIP (9 calls) took {:?}", started.elapsed());
    let keyring = choose(
        SecretStoreSetting::Keyring,
        KeyringStore::secret_service,
        FileStore::new(dir.join("mcp-secrets.json")),
    )
    .expect("keyring works");
    assert_eq!(keyring.store.backend(), Backend::Keyring);
    assert!(
        !dir.join("mcp-secrets.json").exists(),
        "the file stays absent"
    );
}

#[test]
fn auto_without_a_session_bus_picks_the_file_and_says_why() {
    if !is_child() {
        let out = in_child(
            "auto_without_a_session_bus_picks_the_file_and_says_why",
            &no_bus_env(),
        );
        assert!(out.contains("CHOSEN: secrets: file "), "{out}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = auto_takes_the_file(dir.path());
    assert!(summary.contains("Failed to connect"), "{summary}");
}

#[test]
fn keyring_without_a_session_bus_fails_with_the_reason() {
    if !is_child() {
        let out = in_child(
            "keyring_without_a_session_bus_fails_with_the_reason",
            &no_bus_env(),
        );
        assert!(out.contains("REFUSED after "), "{out}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    keyring_refused(dir.path());
}

#[test]
fn doctor_without_a_session_bus_says_the_file_and_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state");
    let report = doctor(&no_bus_env(), &state);
    let expected = format!(
        "\nsecrets: file {} (0600) (no usable Secret Service: ",
        state.join("calyx/mcp-secrets.json").display()
    );
    assert!(report.contains(&expected), "{report}");
}

#[test]
fn keyring_on_a_bus_without_a_provider_fails_with_the_reason() {
    if !is_child() {
        let Some(bus) = Bus::start(Provider::None) else {
            return;
        };
        let out = in_child(
            "keyring_on_a_bus_without_a_provider_fails_with_the_reason",
            &bus.env(),
        );
        assert!(out.contains("org.freedesktop.secrets"), "{out}");
        // doctor follows [mcp] secret_store: `keyring` is a failure with the reason, `file`
        // says so without asking D-Bus.
        let state = bus.dir.path().join("state");
        let config = "[mcp]\nsecret_store = \"keyring\"\n";
        let report = doctor_with_config(&bus.env(), &state, Some(config));
        assert!(
            report.contains("\nsecrets: the Secret Service is unavailable: ")
                && report.contains("org.freedesktop.secrets was not provided")
                && report.contains("unlock your keyring"),
            "{report}"
        );
        let config = "[mcp]\nsecret_store = \"file\"\n";
        let report = doctor_with_config(&bus.env(), &state, Some(config));
        assert!(
            report.contains(&format!(
                "\nsecrets: file {} (0600) (secret_store = \"file\")\n",
                state.join("calyx/mcp-secrets.json").display()
            )),
            "{report}"
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let refused = keyring_refused(dir.path());
    assert!(refused.contains("org.freedesktop.secrets"), "{refused}");
    auto_takes_the_file(dir.path());
}

#[test]
fn a_locked_gnome_keyring_refuses_writes_and_auto_takes_the_file() {
    if !is_child() {
        let Some(bus) = Bus::start(Provider::Locked) else {
            return;
        };
        let out = in_child(
            "a_locked_gnome_keyring_refuses_writes_and_auto_takes_the_file",
            &bus.env(),
        );
        assert!(out.contains("CHOSEN: secrets: file "), "{out}");
        let report = doctor(&bus.env(), &bus.dir.path().join("state"));
        assert!(report.contains("\nsecrets: file "), "{report}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    // The store opens (D-Bus answers), but a write cannot reach a locked collection.
    let store = KeyringStore::secret_service().expect("the service answers");
    let started = Instant::now();
    let write = store.set("ev/env/API_KEY", "s3cret");
    println!("WRITE after {:?}: {write:?}", started.elapsed());
    assert!(write.is_err(), "a locked keyring takes no write");
    keyring_refused(dir.path());
    auto_takes_the_file(dir.path());
}

#[test]
fn an_unlocked_gnome_keyring_holds_the_secrets_and_the_file_stays_absent() {
    if !is_child() {
        let Some(bus) = Bus::start(Provider::Unlocked) else {
            return;
        };
        in_child(
            "an_unlocked_gnome_keyring_holds_the_secrets_and_the_file_stays_absent",
            &bus.env(),
        );
        let state = bus.dir.path().join("state");
        let report = doctor(&bus.env(), &state);
        assert!(report.contains("\nsecrets: Secret Service\n"), "{report}");
        assert!(!state.join("calyx/mcp-secrets.json").exists());
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    secret_service_holds_secrets(dir.path());
}

#[test]
fn the_session_bus_of_this_run_holds_the_secrets_under_the_harness() {
    if std::env::var_os(UNLOCKED_SESSION).is_none() {
        eprintln!(
            "SKIPPED here: scripts/test-secret-service.sh runs this inside dbus-run-session with gnome-keyring unlocked"
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    secret_service_holds_secrets(dir.path());
    let state = dir.path().join("state");
    let bus: Vec<(String, String)> = ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.to_string(), v)))
        .collect();
    let report = doctor(&bus, &state);
    assert!(report.contains("\nsecrets: Secret Service\n"), "{report}");
    assert!(!state.join("calyx/mcp-secrets.json").exists());
}

#[test]
fn keyring_with_a_provider_that_never_answers_gives_up_after_3_s() {
    if !is_child() {
        let Some(bus) = Bus::start(Provider::Stuck) else {
            return;
        };
        let out = in_child(
            "keyring_with_a_provider_that_never_answers_gives_up_after_3_s",
            &bus.env(),
        );
        assert!(out.contains("did not answer within 3 s"), "{out}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let refused = keyring_refused(dir.path());
    assert!(refused.contains("did not answer within 3 s"), "{refused}");
    let summary = auto_takes_the_file(dir.path());
    assert!(summary.contains("did not answer within 3 s"), "{summary}");
}

/// Where the writer children of the next test write, and which of them each one is.
const WRITERS_FILE: &str = "CALYX_TEST_SECRETS_FILE";
const WRITER: &str = "CALYX_TEST_SECRETS_WRITER";
const WRITERS: usize = 4;
const WRITES_EACH: usize = 15;

#[test]
fn separate_processes_writing_the_secrets_file_lose_nothing() {
    if is_child() {
        let path = std::env::var(WRITERS_FILE).expect("file");
        let writer = std::env::var(WRITER).expect("writer");
        let store = FileStore::new(path.into());
        for i in 0..WRITES_EACH {
            store
                .set(&format!("w{writer}/env/K{i}"), &"v".repeat(4096))
                .expect("set");
        }
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("calyx/mcp-secrets.json");
    let exe = std::env::current_exe().expect("test binary");
    let module = module_path!()
        .split_once("::")
        .map_or(module_path!(), |(_, m)| m);
    let name = format!("{module}::separate_processes_writing_the_secrets_file_lose_nothing");
    let children: Vec<_> = (0..WRITERS)
        .map(|w| {
            Command::new(&exe)
                .args([name.as_str(), "--exact", "--test-threads=1"])
                .env(CHILD, "1")
                .env(WRITERS_FILE, &path)
                .env(WRITER, w.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("writer starts")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().expect("writer ends").success());
    }
    let store = FileStore::new(path.clone());
    for w in 0..WRITERS {
        for i in 0..WRITES_EACH {
            assert!(
                store.get(&format!("w{w}/env/K{i}")).expect("get").is_some(),
                "w{w}/env/K{i} lost"
            );
        }
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o7777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().expect("dir")), 0o700);
    let leftovers = std::fs::read_dir(path.parent().expect("dir"))
        .expect("list")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp."))
        .count();
    assert_eq!(leftovers, 0, "no temporary file is left behind");
}
