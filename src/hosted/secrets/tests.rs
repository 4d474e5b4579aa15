use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use super::*;
use crate::hosted::entry::{ServerEntry, StdioTarget, Transport};

fn mock_keyring() -> KeyringStore {
    KeyringStore::over(keyring_core::mock::Store::new().expect("mock store"))
}

fn roundtrip(store: &dyn SecretStore) {
    assert_eq!(store.get("ev/env/API_KEY"), Ok(None));
    store.set("ev/env/API_KEY", "s3cret").expect("set");
    store.set("ev/header/X-Team", "core").expect("set");
    assert_eq!(store.get("ev/env/API_KEY"), Ok(Some("s3cret".into())));
    store.set("ev/env/API_KEY", "rotated").expect("set");
    assert_eq!(store.get("ev/env/API_KEY"), Ok(Some("rotated".into())));
    store.delete("ev/env/API_KEY").expect("delete");
    store
        .delete("ev/env/API_KEY")
        .expect("deleting a missing one succeeds");
    assert_eq!(store.get("ev/env/API_KEY"), Ok(None));
    assert_eq!(store.get("ev/header/X-Team"), Ok(Some("core".into())));
}

#[test]
fn the_file_backend_round_trips() {
    let dir = tempfile::tempdir().expect("tempdir");
    roundtrip(&FileStore::new(dir.path().join("calyx/mcp-secrets.json")));
}

#[test]
fn the_keyring_backend_round_trips_over_the_mock_store() {
    roundtrip(&mock_keyring());
}

#[test]
fn the_file_is_0600_in_a_0700_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let state = dir.path().join("state/calyx");
    std::fs::create_dir_all(&state).expect("mkdir");
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = state.join("mcp-secrets.json");
    let store = FileStore::new(path.clone());
    store.set("ev/tokens", "{}").expect("set");
    let mode =
        |p: &std::path::Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o7777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&state), 0o700, "an existing directory is tightened");
    let text = std::fs::read_to_string(&path).expect("read");
    let json: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(json["version"], 1);
    assert_eq!(json["secrets"]["ev/tokens"], "{}");
}

#[test]
fn concurrent_writers_lose_nothing_and_readers_see_whole_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-secrets.json");
    let writers: Vec<_> = (0..6)
        .map(|t| {
            let store = FileStore::new(path.clone());
            std::thread::spawn(move || {
                for i in 0..10 {
                    store
                        .set(&format!("s{t}/env/K{i}"), &"v".repeat(1000))
                        .expect("set");
                }
            })
        })
        .collect();
    let reader = {
        let store = FileStore::new(path.clone());
        std::thread::spawn(move || {
            for _ in 0..50 {
                // A torn file would not parse.
                store.get("s0/env/K0").expect("a whole file");
            }
        })
    };
    for w in writers {
        w.join().expect("writer");
    }
    reader.join().expect("reader");
    let store = FileStore::new(path);
    for t in 0..6 {
        for i in 0..10 {
            assert!(store.get(&format!("s{t}/env/K{i}")).expect("get").is_some());
        }
    }
}

#[test]
fn removing_a_server_deletes_its_secrets_but_not_registrations() {
    let store = mock_keyring();
    let entry = ServerEntry {
        alias: "ev".into(),
        name: "Everything".into(),
        enabled: true,
        transport: Transport::Stdio(StdioTarget {
            command: "node".into(),
            args: vec![],
            cwd: None,
            env: vec!["API_KEY".into()],
        }),
        note: None,
    };
    store.set(&env_account("ev", "API_KEY"), "k").expect("set");
    store.set(&tokens_account("ev"), "{}").expect("set");
    store
        .set("issuer/https://as.example/registration", "{}")
        .expect("set");
    store
        .set(&env_account("other", "API_KEY"), "o")
        .expect("set");
    delete_server_secrets(&store, &entry).expect("deleted");
    assert_eq!(store.get(&env_account("ev", "API_KEY")), Ok(None));
    assert_eq!(store.get(&tokens_account("ev")), Ok(None));
    assert!(store
        .get("issuer/https://as.example/registration")
        .expect("get")
        .is_some());
    assert!(store
        .get(&env_account("other", "API_KEY"))
        .expect("get")
        .is_some());
}

#[test]
fn auto_takes_a_working_keyring() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = FileStore::new(dir.path().join("mcp-secrets.json"));
    let chosen = choose(
        SecretStoreSetting::Auto,
        || Ok(mock_keyring()),
        file.clone(),
    )
    .expect("chosen");
    assert_eq!(chosen.store.backend(), Backend::Keyring);
    assert_eq!(chosen.summary, "secrets: Secret Service");
    chosen.store.set("ev/env/K", "v").expect("set");
    assert!(!file.path().exists(), "the file stays absent");
}

#[test]
fn auto_falls_back_to_the_file_and_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = FileStore::new(dir.path().join("mcp-secrets.json"));
    let broken = || {
        Err(SecretError::KeyringUnavailable {
            reason: "zbus error: Failed to connect".into(),
        })
    };
    let chosen = choose(SecretStoreSetting::Auto, broken, file.clone()).expect("chosen");
    assert_eq!(chosen.store.backend(), Backend::File);
    assert_eq!(
        chosen.summary,
        format!(
            "secrets: file {} (0600) (no usable Secret Service: zbus error: Failed to connect)",
            file.path().display()
        )
    );
    let err = choose(SecretStoreSetting::Keyring, broken, file.clone())
        .err()
        .expect("keyring never falls back");
    assert!(err
        .to_string()
        .starts_with("the Secret Service is unavailable: zbus error"));
    let chosen = choose(
        SecretStoreSetting::File,
        || -> Result<KeyringStore, SecretError> { panic!("file never touches the keyring") },
        file,
    )
    .expect("file");
    assert_eq!(chosen.store.backend(), Backend::File);
}

#[test]
fn a_keyring_call_that_hangs_gives_up_after_the_timeout() {
    let (_keep, rx) = std::sync::mpsc::channel::<()>();
    let rx = Arc::new(std::sync::Mutex::new(rx));
    let result: Result<(), SecretError> = keyring::with_timeout(move || {
        // Blocks until the sender is dropped at the end of the test.
        let _ = rx.lock().map(|r| r.recv());
        Ok(())
    });
    assert_eq!(result, Err(SecretError::KeyringTimeout));
}

#[test]
fn settings_parse() {
    assert_eq!("auto".parse(), Ok(SecretStoreSetting::Auto));
    assert_eq!("keyring".parse(), Ok(SecretStoreSetting::Keyring));
    assert_eq!("file".parse(), Ok(SecretStoreSetting::File));
    assert!("keychain".parse::<SecretStoreSetting>().is_err());
}

fn broken_keyring() -> Result<KeyringStore, SecretError> {
    Err(SecretError::KeyringUnavailable {
        reason: "zbus error: Failed to connect".into(),
    })
}

#[test]
fn a_secret_the_unusable_secret_service_holds_is_reported_not_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-secrets.json");
    // A run with a working Secret Service stores two values there.
    let with_keyring = choose(
        SecretStoreSetting::Auto,
        || Ok(mock_keyring()),
        FileStore::new(path.clone()),
    )
    .expect("chosen");
    with_keyring
        .store
        .set("ev/env/API_KEY", "s3cret-value")
        .expect("set");
    with_keyring.store.set("ev/tokens", "{}").expect("set");
    with_keyring.store.delete("ev/tokens").expect("delete");
    assert!(!path.exists(), "the secrets file stays absent");
    let index = std::fs::read_to_string(keyring_index_path(&path)).expect("index");
    assert!(
        index.contains("ev/env/API_KEY") && !index.contains("k\""),
        "{index}"
    );
    // A later run without one takes the file, and says where the value is.
    let without = choose(
        SecretStoreSetting::Auto,
        broken_keyring,
        FileStore::new(path.clone()),
    )
    .expect("chosen");
    assert_eq!(without.store.backend(), Backend::File);
    let err = without.store.get("ev/env/API_KEY").expect_err("reported");
    assert_eq!(
        err.to_string(),
        "stored in the Secret Service, which is unavailable now (zbus error: Failed to connect)"
    );
    assert_eq!(
        without.store.get("ev/tokens"),
        Ok(None),
        "a deleted one is simply missing"
    );
    assert_eq!(without.store.get("ev/env/OTHER"), Ok(None));
    // A value set while the file is in use is read from it.
    without.store.set("ev/env/API_KEY", "f").expect("set");
    assert_eq!(without.store.get("ev/env/API_KEY"), Ok(Some("f".into())));
    let chosen_file = choose(
        SecretStoreSetting::File,
        || -> Result<KeyringStore, SecretError> { panic!("file never touches the keyring") },
        FileStore::new(dir.path().join("other/mcp-secrets.json")),
    )
    .expect("file");
    assert_eq!(chosen_file.store.get("ev/env/API_KEY"), Ok(None));
}

#[test]
fn a_secret_only_the_file_holds_is_reported_while_the_secret_service_works() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-secrets.json");
    let earlier = FileStore::new(path.clone());
    earlier
        .set("ev/env/API_KEY", "from-a-headless-run")
        .expect("set");
    earlier.set("ev/env/GONE", "x").expect("set");
    let chosen = choose(
        SecretStoreSetting::Auto,
        || Ok(mock_keyring()),
        FileStore::new(path.clone()),
    )
    .expect("chosen");
    assert_eq!(chosen.store.backend(), Backend::Keyring);
    let err = chosen.store.get("ev/env/API_KEY").expect_err("reported");
    assert!(
        err.to_string().starts_with(&format!(
            "stored in the secrets file {}, which calyx does not read while the Secret Service works",
            path.display()
        )),
        "{err}"
    );
    // Removing a server removes what an earlier run left in the file too.
    chosen.store.delete("ev/env/GONE").expect("delete");
    assert_eq!(earlier.get("ev/env/GONE"), Ok(None));
    chosen.store.set("ev/env/API_KEY", "k").expect("set");
    assert_eq!(chosen.store.get("ev/env/API_KEY"), Ok(Some("k".into())));
}

#[test]
fn an_unreadable_other_backend_leaves_a_miss_a_miss() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mcp-secrets.json");
    std::fs::write(&path, "not json").expect("write");
    std::fs::write(keyring_index_path(&path), "not json").expect("write");
    let keyring = choose(
        SecretStoreSetting::Auto,
        || Ok(mock_keyring()),
        FileStore::new(path.clone()),
    )
    .expect("chosen");
    assert_eq!(keyring.store.get("ev/env/K"), Ok(None));
    keyring
        .store
        .set("ev/env/K", "v")
        .expect("the Secret Service works");
    keyring.store.delete("ev/env/K").expect("delete");
    let other = tempfile::tempdir().expect("tempdir");
    let file = other.path().join("mcp-secrets.json");
    std::fs::write(keyring_index_path(&file), "not json").expect("write");
    let chosen = choose(
        SecretStoreSetting::Auto,
        broken_keyring,
        FileStore::new(file),
    )
    .expect("chosen");
    assert_eq!(chosen.store.get("ev/env/K"), Ok(None));
}
