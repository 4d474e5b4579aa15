//! rmcp's `CredentialStore` over calyx's secret store: the tokens of server `<alias>` are
//! rmcp's `StoredCredentials` as JSON under `<alias>/tokens`. Every call runs on a blocking
//! thread (the keyring may take up to 3 s). Refreshes of one alias are serialised across every
//! connection and sign-in in the process, so two requests that both find the token expired do
//! not both spend the refresh token (a rotating AS would reject the second).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

use crate::hosted::secrets::{tokens_account, SecretStore};

/// The tokens of one hosted server in the secret store.
#[derive(Clone)]
pub struct SecretCredentialStore {
    alias: String,
    secrets: Arc<dyn SecretStore>,
}

impl SecretCredentialStore {
    pub fn new(alias: &str, secrets: Arc<dyn SecretStore>) -> Self {
        SecretCredentialStore {
            alias: alias.to_string(),
            secrets,
        }
    }

    /// Runs `work` against the secret store on a blocking thread.
    async fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&dyn SecretStore, &str) -> Result<T, String> + Send + 'static,
    ) -> Result<T, AuthError> {
        let secrets = self.secrets.clone();
        let account = tokens_account(&self.alias);
        tokio::task::spawn_blocking(move || work(secrets.as_ref(), &account))
            .await
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?
            .map_err(AuthError::CredentialStoreError)
    }
}

/// The refresh lock of `alias`, shared by every store of that alias in this process.
fn refresh_lock(alias: &str) -> Arc<tokio::sync::Mutex<()>> {
    static LOCKS: OnceLock<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    let mut locks = LOCKS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    locks.entry(alias.to_string()).or_default().clone()
}

#[async_trait]
impl CredentialStore for SecretCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.blocking(|secrets, account| {
            let Some(json) = secrets.get(account).map_err(|e| e.to_string())? else {
                return Ok(None);
            };
            // Unreadable tokens are as good as none: the user signs in again.
            Ok(serde_json::from_str(&json).ok())
        })
        .await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let json = serde_json::to_string(&credentials)
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?;
        self.blocking(move |secrets, account| {
            secrets.set(account, &json).map_err(|e| e.to_string())
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.blocking(|secrets, account| secrets.delete(account).map_err(|e| e.to_string()))
            .await
    }

    /// `invalid_grant`: the tokens are dead, so they go (the row then says sign-in required
    /// rather than "signed in").
    async fn on_refresh_token_rejected(
        &self,
        _credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.clear().await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let guard = refresh_lock(&self.alias).lock_owned().await;
        Ok(Some(CredentialRefreshGuard::new(guard)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosted::secrets::MemoryStore;

    fn credentials(client_id: &str) -> StoredCredentials {
        StoredCredentials::new(client_id.into(), None, vec!["mcp".into()], Some(1))
    }

    #[tokio::test]
    async fn tokens_round_trip_through_the_secret_store_as_json() {
        let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
        let store = SecretCredentialStore::new("linear", secrets.clone());
        assert!(store.load().await.expect("load").is_none());
        store.save(credentials("abc")).await.expect("save");
        let raw = secrets.get("linear/tokens").expect("get").expect("stored");
        assert!(raw.contains("\"client_id\":\"abc\""), "{raw}");
        let loaded = store.load().await.expect("load").expect("some");
        assert_eq!(loaded.client_id, "abc");
        assert_eq!(loaded.granted_scopes, ["mcp"]);
        store.clear().await.expect("clear");
        assert!(secrets.get("linear/tokens").expect("get").is_none());
    }

    #[tokio::test]
    async fn a_rejected_refresh_token_deletes_the_tokens() {
        let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
        let store = SecretCredentialStore::new("gone", secrets.clone());
        store.save(credentials("abc")).await.expect("save");
        store
            .on_refresh_token_rejected(&credentials("abc"))
            .await
            .expect("handled");
        assert!(store.load().await.expect("load").is_none());
    }

    #[tokio::test]
    async fn refreshes_of_one_alias_are_serialised_across_stores() {
        let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::default());
        let first = SecretCredentialStore::new("serial", secrets.clone());
        let second = SecretCredentialStore::new("serial", secrets.clone());
        let other = SecretCredentialStore::new("other", secrets);
        let held = first.acquire_refresh_guard().await.expect("guard");
        // Another alias is not blocked.
        let _other = other.acquire_refresh_guard().await.expect("other alias");
        let waiting = tokio::spawn(async move { second.acquire_refresh_guard().await.is_ok() });
        tokio::task::yield_now().await;
        assert!(
            !waiting.is_finished(),
            "the second refresh waits for the first"
        );
        drop(held);
        assert!(waiting.await.expect("joined"), "then it gets the guard");
    }
}
