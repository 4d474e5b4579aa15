//! The real Secret Service client where none can be reached: `auto` must pick the secrets file
//! and say why, `keyring` must fail with the reason instead of hanging. Each case runs in a
//! child process of this test binary whose `DBUS_SESSION_BUS_ADDRESS` points at nothing, so
//! the environment of the other tests is never touched.

use std::process::Command;

use calyx::hosted::secrets::{choose, FileStore, KeyringStore, SecretStoreSetting};

const CHILD: &str = "CALYX_TEST_SECRETS_CHILD";

/// Runs the test `name` of this binary again in a child without a session bus; returns its
/// combined output after asserting it passed.
fn in_child_without_bus(name: &str) -> String {
    let exe = std::env::current_exe().expect("test binary");
    // The test's full name in this binary: this file's module path without the crate's.
    let module = module_path!()
        .split_once("::")
        .map_or(module_path!(), |(_, m)| m);
    let full = format!("{module}::{name}");
    let out = Command::new(exe)
        .args([full.as_str(), "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .env(
            "DBUS_SESSION_BUS_ADDRESS",
            "unix:path=/nonexistent/calyx-test/bus",
        )
        .env("XDG_RUNTIME_DIR", "/nonexistent/calyx-test")
        .output()
        .expect("child runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "child failed:\n{text}");
    assert!(text.contains("1 passed"), "the child ran the test:\n{text}");
    text
}

#[test]
fn auto_without_a_session_bus_picks_the_file_and_says_why() {
    if std::env::var_os(CHILD).is_none() {
        let out = in_child_without_bus("auto_without_a_session_bus_picks_the_file_and_says_why");
        assert!(out.contains("CHOSEN: secrets: file "), "{out}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = FileStore::new(dir.path().join("mcp-secrets.json"));
    let chosen = choose(SecretStoreSetting::Auto, KeyringStore::secret_service, file)
        .expect("auto never fails");
    println!("CHOSEN: {}", chosen.summary);
    assert!(
        chosen.summary.contains("(no usable Secret Service: "),
        "{}",
        chosen.summary
    );
    chosen.store.set("ev/env/K", "v").expect("the file works");
    assert_eq!(
        chosen.store.get("ev/env/K").expect("get").as_deref(),
        Some("v")
    );
}

#[test]
fn keyring_without_a_session_bus_fails_with_the_reason() {
    if std::env::var_os(CHILD).is_none() {
        let out = in_child_without_bus("keyring_without_a_session_bus_fails_with_the_reason");
        assert!(out.contains("REFUSED: the Secret Service "), "{out}");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-secrets.json");
    let err = choose(
        SecretStoreSetting::Keyring,
        KeyringStore::secret_service,
        FileStore::new(path.clone()),
    )
    .err()
    .expect("no fallback");
    println!("REFUSED: {err}");
    assert!(
        err.to_string().contains("set secret_store = \"file\""),
        "{err}"
    );
    assert!(!path.exists(), "keyring never writes the file");
}
