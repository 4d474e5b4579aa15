//! The secret store chosen at first need (issue 16, "Secrets"): the server starts without
//! waiting for a keyring probe (up to 3 s when a Secret Service hangs, even with no hosted
//! servers). The first secret read, write or delete chooses, once per server run, on the
//! blocking thread that makes it (every caller is on one: hosting's requests and the
//! supervisor's secret reads), each keyring call bounded by its 3 s timeout. Callers that need
//! the store meanwhile wait for that one choice.
//!
//! `secret_store = "keyring"` is different on purpose: the user asked for the keyring only, so
//! hosting does nothing without it. Hosting asks [`LazyChoice::required`] before every command
//! and (on the blocking thread that starts the servers) before starting them; a failed probe is
//! kept for the run like any choice (unlock the keyring, then `calyx kill-server` or restart).
//! [`LazyChoice::known_failure`] tells the server's own thread, without waiting, whether the
//! choice already failed.

use std::sync::{Arc, Mutex};

use super::{choose_here, Backend, Chosen, SecretError, SecretStore, SecretStoreSetting};

/// How a choice is made (the machine's Secret Service and secrets file, or a test's stores).
type Choose = dyn Fn(SecretStoreSetting) -> Result<Chosen, SecretError> + Send + Sync;

/// The store for a `secret_store` setting, chosen when first used.
pub struct LazyChoice {
    setting: SecretStoreSetting,
    choose: Box<Choose>,
    /// The choice, once made (a failure only with `keyring`).
    chosen: Mutex<Option<Result<Chosen, SecretError>>>,
}

impl From<Chosen> for LazyChoice {
    /// A store already chosen (tests, and callers that chose themselves).
    fn from(chosen: Chosen) -> Self {
        LazyChoice {
            setting: SecretStoreSetting::Auto,
            choose: Box::new(|_| unreachable_choice()),
            chosen: Mutex::new(Some(Ok(chosen))),
        }
    }
}

fn unreachable_choice() -> Result<Chosen, SecretError> {
    Err(SecretError::KeyringUnavailable {
        reason: "no store to choose from".into(),
    })
}

impl LazyChoice {
    /// `setting` on this machine ([`choose_here`]: what `calyx doctor` reports too).
    pub fn here(setting: SecretStoreSetting) -> Self {
        LazyChoice::new(setting, choose_here)
    }

    /// `setting`, chosen by `choose` at first need.
    pub fn new(
        setting: SecretStoreSetting,
        choose: impl Fn(SecretStoreSetting) -> Result<Chosen, SecretError> + Send + Sync + 'static,
    ) -> Self {
        LazyChoice {
            setting,
            choose: Box::new(choose),
            chosen: Mutex::new(None),
        }
    }

    /// The store, choosing it now if nothing chose it yet (blocking: up to 3 s per keyring
    /// call), once per run: `auto` and `file` always succeed; with `keyring` a failed probe is
    /// the answer for the rest of the run.
    pub fn chosen(&self) -> Result<Chosen, SecretError> {
        let mut chosen = self.chosen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(made) = chosen.as_ref() {
            return made.clone();
        }
        let made = (self.choose)(self.setting);
        match &made {
            Ok(made) => tracing::info!("hosted MCP {}", made.summary),
            Err(e) => tracing::error!("hosted MCP servers are off: {e}"),
        }
        *chosen = Some(made.clone());
        made
    }

    /// Why hosting is off, when the choice was made and failed (`keyring` without a usable
    /// Secret Service). Never waits and never probes: for the server's own thread.
    pub fn known_failure(&self) -> Option<String> {
        let chosen = self.chosen.try_lock().ok()?;
        match chosen.as_ref()? {
            Err(e) => Some(format!("hosted MCP servers are off: {e}")),
            Ok(_) => None,
        }
    }

    /// With `secret_store = "keyring"`, hosting runs only with a usable Secret Service: the
    /// store chosen now, or why hosting is off. Other settings need nothing yet.
    pub fn required(&self) -> Result<(), String> {
        if self.setting != SecretStoreSetting::Keyring {
            return Ok(());
        }
        self.chosen()
            .map(|_| ())
            .map_err(|e| format!("hosted MCP servers are off: {e}"))
    }

    /// The `secrets:` line of `calyx mcp list`: the choice made, or that none is made yet
    /// (this never probes).
    pub fn summary(&self) -> String {
        let chosen = self.chosen.lock().unwrap_or_else(|e| e.into_inner());
        match chosen.as_ref() {
            Some(Ok(chosen)) => chosen.summary.clone(),
            Some(Err(e)) => format!("secrets: {e}"),
            None => format!(
                "secrets: not chosen yet (secret_store = \"{}\" decides at the first secret read or write)",
                setting_name(self.setting)
            ),
        }
    }

    fn store(&self) -> Result<Arc<dyn SecretStore>, SecretError> {
        self.chosen().map(|chosen| chosen.store)
    }
}

fn setting_name(setting: SecretStoreSetting) -> &'static str {
    match setting {
        SecretStoreSetting::Auto => "auto",
        SecretStoreSetting::Keyring => "keyring",
        SecretStoreSetting::File => "file",
    }
}

impl SecretStore for LazyChoice {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        self.store()?.get(account)
    }

    fn set(&self, account: &str, value: &str) -> Result<(), SecretError> {
        self.store()?.set(account, value)
    }

    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.store()?.delete(account)
    }

    /// The chosen backend; before the choice, the one the setting implies (`auto` guesses
    /// the keyring). Nothing is chosen by asking.
    fn backend(&self) -> Backend {
        let chosen = self.chosen.lock().unwrap_or_else(|e| e.into_inner());
        match (chosen.as_ref(), self.setting) {
            (Some(Ok(chosen)), _) => chosen.store.backend(),
            (_, SecretStoreSetting::File) => Backend::File,
            (_, _) => Backend::Keyring,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::super::{choose, FileStore, KeyringStore};
    use super::*;

    /// A choice over the mock keyring (or a broken one), counting how often it is made.
    fn counted(
        dir: &std::path::Path,
        keyring_works: bool,
        setting: SecretStoreSetting,
    ) -> (LazyChoice, Arc<AtomicUsize>) {
        let made = Arc::new(AtomicUsize::new(0));
        let counter = made.clone();
        let file = dir.join("mcp-secrets.json");
        let lazy = LazyChoice::new(setting, move |setting| {
            counter.fetch_add(1, Ordering::SeqCst);
            choose(
                setting,
                || {
                    if keyring_works {
                        Ok(KeyringStore::over(
                            keyring_core::mock::Store::new().expect("mock store"),
                        ))
                    } else {
                        Err(SecretError::KeyringUnavailable {
                            reason: "no session bus".into(),
                        })
                    }
                },
                FileStore::new(file.clone()),
            )
        });
        (lazy, made)
    }

    #[test]
    fn auto_chooses_at_the_first_secret_and_only_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (lazy, made) = counted(dir.path(), false, SecretStoreSetting::Auto);
        assert_eq!(lazy.required(), Ok(()));
        assert_eq!(lazy.known_failure(), None);
        assert_eq!(
            lazy.summary(),
            "secrets: not chosen yet (secret_store = \"auto\" decides at the first secret read or write)"
        );
        assert_eq!(
            made.load(Ordering::SeqCst),
            0,
            "nothing needed a secret yet"
        );

        let lazy = Arc::new(lazy);
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let lazy = lazy.clone();
                std::thread::spawn(move || lazy.set(&format!("ev/env/K{i}"), "v"))
            })
            .collect();
        for t in threads {
            assert_eq!(t.join().expect("thread"), Ok(()));
        }
        assert_eq!(made.load(Ordering::SeqCst), 1, "one choice for the run");
        assert_eq!(lazy.get("ev/env/K0"), Ok(Some("v".into())));
        assert_eq!(lazy.backend(), Backend::File);
        assert!(
            lazy.summary().starts_with("secrets: file ")
                && lazy
                    .summary()
                    .ends_with("(no usable Secret Service: no session bus)"),
            "{}",
            lazy.summary()
        );
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_unusable_keyring_setting_turns_hosting_off_once_per_run() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (lazy, made) = counted(dir.path(), false, SecretStoreSetting::Keyring);
        assert_eq!(lazy.known_failure(), None, "not probed yet");
        let why = lazy.required().expect_err("no keyring");
        assert!(
            why.starts_with("hosted MCP servers are off: the Secret Service is unavailable: no session bus; unlock your keyring"),
            "{why}"
        );
        assert_eq!(lazy.known_failure(), Some(why.clone()));
        assert!(lazy.get("ev/env/K").is_err());
        assert!(lazy
            .summary()
            .starts_with("secrets: the Secret Service is unavailable"));
        assert_eq!(made.load(Ordering::SeqCst), 1);
        assert!(
            !dir.path().join("mcp-secrets.json").exists(),
            "never falls back"
        );
    }

    #[test]
    fn a_working_keyring_setting_is_required_and_used() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (lazy, made) = counted(dir.path(), true, SecretStoreSetting::Keyring);
        assert_eq!(lazy.required(), Ok(()));
        assert_eq!(
            made.load(Ordering::SeqCst),
            1,
            "keyring is probed when required"
        );
        lazy.set("ev/env/K", "v").expect("set");
        assert_eq!(lazy.backend(), Backend::Keyring);
        assert_eq!(
            lazy.summary(),
            "secrets: Secret Service (secret_store = \"keyring\")"
        );
        assert_eq!(made.load(Ordering::SeqCst), 1);
    }
}
