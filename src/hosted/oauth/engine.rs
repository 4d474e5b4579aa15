//! One hosted server's OAuth state: rmcp's `AuthorizationManager` (shared with every
//! connection through [`OAuthEngine::bearer`], so a sign-in or refresh is seen by the next
//! request), the tokens in the secret store, and the sign-in steps: [`OAuthEngine::begin`]
//! (discovery, PKCE check, client identity, scopes, the authorization URL and a bound
//! redirect listener), [`OAuthEngine::step_up`] after a 403 `insufficient_scope`, and
//! [`OAuthEngine::finish`] with the redirect. At most three authorization requests are made
//! per sign-in, the first included (the conformance suite's `auth/scope-retry-limit`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    OAuthClientConfig, ScopeUpgradeConfig, WWWAuthenticateParams,
};
use url::Url;

use super::callback::{CallbackListener, FIXED_REDIRECT_PORT};
use super::credentials::SecretCredentialStore;
use super::identity::{
    advertises_pkce, force_client_auth, issuer_key, supports_client_metadata_documents,
    StoredRegistration,
};
use super::OAuthError;
use crate::hosted::entry::ClientAuth;
use crate::hosted::secrets::{registration_account, tokens_account, SecretStore};

/// Authorization requests per sign-in, the first included.
pub const MAX_AUTHORIZATION_REQUESTS: u32 = 3;
/// The `client_name` of calyx's RFC 7591 registrations.
const CLIENT_NAME: &str = "calyx";

/// The OAuth settings of one entry, with the client secret read from the secret store.
#[derive(Debug, Clone, Default)]
pub struct OAuthSettings {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub client_auth: ClientAuth,
    pub fixed_redirect_port: bool,
    /// `[mcp] client_metadata_url` (empty means unset).
    pub client_metadata_url: Option<String>,
}

/// A sign-in waiting for the browser (or a pasted redirect address).
pub struct PendingSignIn {
    /// The page the user approves on.
    pub auth_url: String,
    /// The `state` calyx sent.
    pub state: String,
    /// The issuer the answer must name when it names one.
    pub issuer: Option<String>,
    /// Bound already, so the redirect URI in `auth_url` is live.
    pub listener: CallbackListener,
}

/// The OAuth side of one HTTP server.
pub struct OAuthEngine {
    alias: String,
    url: Url,
    settings: OAuthSettings,
    secrets: Arc<dyn SecretStore>,
    manager: Arc<tokio::sync::Mutex<AuthorizationManager>>,
    requests: AtomicU32,
    /// The redirect URI the configured client uses (a step-up binds the same port).
    redirect_uri: Mutex<Option<String>>,
    issuer: Mutex<Option<String>>,
}

impl std::fmt::Debug for OAuthEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthEngine")
            .field("alias", &self.alias)
            .field("url", &self.url.as_str())
            .finish_non_exhaustive()
    }
}

fn other(error: impl std::fmt::Display) -> OAuthError {
    OAuthError::Other(format!("sign-in failed: {error}"))
}

impl OAuthEngine {
    /// The engine of server `alias` at `url`; stored tokens are picked up at once (which
    /// discovers the metadata rmcp needs to refresh them).
    pub async fn new(
        alias: &str,
        url: &str,
        settings: OAuthSettings,
        secrets: Arc<dyn SecretStore>,
    ) -> Result<Arc<Self>, OAuthError> {
        crate::hosted::connection::http_client::install_tls_provider();
        let url = Url::parse(url).map_err(other)?;
        let mut manager = AuthorizationManager::new(url.clone())
            .await
            .map_err(other)?;
        manager.set_credential_store(SecretCredentialStore::new(alias, secrets.clone()));
        let mut upgrades = ScopeUpgradeConfig::default();
        // Three authorization requests in all: the first sign-in and two step-ups.
        upgrades.max_upgrade_attempts = MAX_AUTHORIZATION_REQUESTS - 1;
        manager.set_scope_upgrade_config(upgrades);
        let engine = Arc::new(OAuthEngine {
            alias: alias.to_string(),
            url,
            settings,
            secrets,
            manager: Arc::new(tokio::sync::Mutex::new(manager)),
            requests: AtomicU32::new(0),
            redirect_uri: Mutex::new(None),
            issuer: Mutex::new(None),
        });
        if engine.signed_in().await {
            if let Err(e) = engine.restore().await {
                tracing::warn!("hosted MCP: `{alias}`: stored tokens not usable: {e}");
            }
        }
        Ok(engine)
    }

    /// The current access token (refreshed when due), for every request of both HTTP
    /// transports; `None` when not signed in or the refresh was refused.
    pub async fn bearer(&self) -> Option<String> {
        let manager = self.manager.lock().await;
        manager.get_access_token().await.ok()
    }

    /// A new access token after the server refused `sent` with a 401 (what rmcp's
    /// `AuthClient` does once per request): `None` when the refresh gave the same token, failed,
    /// or needs a new sign-in, so the 401's challenge goes to the sign-in.
    pub async fn refreshed(&self, sent: &str) -> Option<String> {
        let manager = self.manager.lock().await;
        manager.refresh_token().await.ok()?;
        let fresh = manager.get_access_token().await.ok()?;
        (fresh != sent).then_some(fresh)
    }

    /// Whether tokens are stored for this server.
    pub async fn signed_in(&self) -> bool {
        let secrets = self.secrets.clone();
        let account = tokens_account(&self.alias);
        tokio::task::spawn_blocking(move || matches!(secrets.get(&account), Ok(Some(_))))
            .await
            .unwrap_or(false)
    }

    /// Deletes the tokens (the client secret and registration stay); no revocation is sent.
    pub async fn sign_out(&self) -> Result<(), OAuthError> {
        let secrets = self.secrets.clone();
        let account = tokens_account(&self.alias);
        tokio::task::spawn_blocking(move || secrets.delete(&account))
            .await
            .map_err(other)?
            .map_err(other)
    }

    /// A new sign-in from the user (login): the limit on authorization requests starts over.
    pub fn reset_requests(&self) {
        self.requests.store(0, Ordering::SeqCst);
    }

    fn count_request(&self) -> Result<(), OAuthError> {
        let made = self.requests.fetch_add(1, Ordering::SeqCst);
        if made >= MAX_AUTHORIZATION_REQUESTS {
            return Err(OAuthError::TooManyRequests(made));
        }
        Ok(())
    }

    /// Configures the client of stored tokens so they can be refreshed.
    async fn restore(&self) -> Result<(), OAuthError> {
        let mut manager = self.manager.lock().await;
        if !manager.initialize_from_store().await.map_err(other)? {
            return Ok(());
        }
        if let Some(client_id) = &self.settings.client_id {
            let mut metadata = manager.resolve_metadata().await.map_err(other)?.metadata;
            force_client_auth(&mut metadata, self.settings.client_auth);
            manager.set_metadata(metadata);
            let mut config = OAuthClientConfig::new(client_id.clone(), self.url.to_string());
            if let Some(secret) = &self.settings.client_secret {
                config = config.with_client_secret(secret.clone());
            }
            manager.configure_client(config).map_err(other)?;
        }
        Ok(())
    }

    /// Starts a sign-in: discovery (from the 401's `challenge` when there is one), the PKCE
    /// check, the client identity, the scopes, a bound redirect listener and the URL to open.
    /// `forwarded` asks for port 41890 (an SSH port forward).
    pub async fn begin(
        &self,
        challenge: Option<&str>,
        forwarded: bool,
    ) -> Result<PendingSignIn, OAuthError> {
        self.count_request()?;
        let mut manager = self.manager.lock().await;
        let (mut metadata, discovered) =
            match manager.resolve_metadata_from_challenge(challenge).await {
                Ok(resolution) => (resolution.metadata, resolution.source.is_discovered()),
                Err(AuthError::NoAuthorizationSupport) => return Err(OAuthError::NoMetadata),
                Err(error @ AuthError::AuthorizationServerMismatch { .. }) => {
                    match super::root_metadata::root_metadata(&self.url).await {
                        Some(metadata) => (metadata, true),
                        None => return Err(other(error)),
                    }
                }
                Err(error) => return Err(other(error)),
            };
        // The 2025-03-26 endpoint fallback has no metadata to check.
        if discovered && !advertises_pkce(&metadata) {
            return Err(OAuthError::NoPkce {
                issuer: issuer_key(&metadata),
            });
        }
        if self.settings.client_id.is_some() {
            force_client_auth(&mut metadata, self.settings.client_auth);
        }
        let issuer = issuer_key(&metadata);
        manager.set_metadata(metadata.clone());
        let scopes = manager.select_initial_scopes(&[]).await;
        let port = (self.settings.fixed_redirect_port || forwarded).then_some(FIXED_REDIRECT_PORT);
        let listener = self
            .identify(&mut manager, &metadata, &issuer, &scopes, port, discovered)
            .await?;
        let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let auth_url = manager
            .get_authorization_url(&refs)
            .await
            .map_err(|e| match e {
                AuthError::PkceUnsupported => OAuthError::NoPkce {
                    issuer: issuer.clone(),
                },
                other_error => other(other_error),
            })?;
        drop(manager);
        self.pending(auth_url, listener, metadata.issuer.clone())
    }

    /// Starts a step-up after a 403 `insufficient_scope` with challenge `www_authenticate`:
    /// the scopes granted so far plus the challenged ones, on the same client and redirect.
    pub async fn step_up(&self, www_authenticate: &str) -> Result<PendingSignIn, OAuthError> {
        self.count_request()?;
        let manager = self.manager.lock().await;
        let params = WWWAuthenticateParams::parse(www_authenticate, &self.url);
        let scopes = manager.select_scopes(params.scope.as_deref(), &[]);
        let redirect = self
            .redirect_uri
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let port = redirect
            .as_deref()
            .and_then(|r| Url::parse(r).ok())
            .and_then(|u| u.port());
        let Some(port) = port else {
            return Err(OAuthError::Other(
                "a step-up needs a sign-in first: sign in again".into(),
            ));
        };
        let listener = CallbackListener::bind(Some(port)).await?;
        let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let auth_url = manager.get_authorization_url(&refs).await.map_err(other)?;
        drop(manager);
        let issuer = self
            .issuer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        self.pending(auth_url, listener, issuer)
    }

    /// Exchanges the redirect's code for tokens (stored in the secret store).
    pub async fn finish(&self, callback: &AuthorizationCallback) -> Result<(), OAuthError> {
        let manager = self.manager.lock().await;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map(|_| ())
            .map_err(OAuthError::from)
    }

    fn pending(
        &self,
        auth_url: String,
        listener: CallbackListener,
        issuer: Option<String>,
    ) -> Result<PendingSignIn, OAuthError> {
        let state = Url::parse(&auth_url)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            })
            .ok_or_else(|| OAuthError::Other("the authorization URL has no state".into()))?;
        *self.issuer.lock().unwrap_or_else(|e| e.into_inner()) = issuer.clone();
        Ok(PendingSignIn {
            auth_url,
            state,
            issuer,
            listener,
        })
    }

    /// Configures the client identity (see `identity.rs`) and binds the redirect listener its
    /// redirect URI names.
    async fn identify(
        &self,
        manager: &mut AuthorizationManager,
        metadata: &AuthorizationMetadata,
        issuer: &str,
        scopes: &[String],
        port: Option<u16>,
        discovered: bool,
    ) -> Result<CallbackListener, OAuthError> {
        if let Some(client_id) = &self.settings.client_id {
            let listener = CallbackListener::bind(port).await?;
            let mut config = OAuthClientConfig::new(client_id.clone(), listener.redirect_uri());
            if let Some(secret) = &self.settings.client_secret {
                config = config.with_client_secret(secret.clone());
            }
            return self.configure(manager, config, listener);
        }
        if let Some(document) = &self.settings.client_metadata_url {
            if supports_client_metadata_documents(metadata) {
                let listener = CallbackListener::bind(port).await?;
                let config = OAuthClientConfig::new(document.clone(), listener.redirect_uri());
                return self.configure(manager, config, listener);
            }
        }
        if let Some(known) = self.remembered(issuer).await {
            let wanted = known.redirect_port();
            // A forwarded sign-in needs 41890; a registration for another port cannot be used.
            let usable = port.is_none() || port == wanted;
            if let (true, Some(wanted)) = (usable, wanted) {
                if let Ok(listener) = CallbackListener::bind(Some(wanted)).await {
                    let mut config =
                        OAuthClientConfig::new(known.client_id.clone(), listener.redirect_uri());
                    if let Some(secret) = &known.client_secret {
                        config = config.with_client_secret(secret.clone());
                    }
                    return self.configure(manager, config, listener);
                }
            }
        }
        if metadata.registration_endpoint.is_none() {
            return Err(OAuthError::NoRegistration);
        }
        let listener = CallbackListener::bind(port).await?;
        let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let config = manager
            .register_client(CLIENT_NAME, &listener.redirect_uri(), &refs)
            .await
            .map_err(|e| match e {
                AuthError::RegistrationFailed(reason) if !discovered && reason.contains("404") => {
                    OAuthError::NoMetadata
                }
                AuthError::RegistrationFailed(reason) if reason.contains("404") => {
                    OAuthError::NoRegistration
                }
                AuthError::PkceUnsupported => OAuthError::NoPkce {
                    issuer: issuer.to_string(),
                },
                other_error => other(other_error),
            })?;
        self.remember(
            issuer,
            StoredRegistration {
                client_id: config.client_id.clone(),
                client_secret: config.client_secret.clone(),
                redirect_uri: listener.redirect_uri(),
            },
        )
        .await;
        *self.redirect_uri.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(listener.redirect_uri());
        Ok(listener)
    }

    fn configure(
        &self,
        manager: &mut AuthorizationManager,
        config: OAuthClientConfig,
        listener: CallbackListener,
    ) -> Result<CallbackListener, OAuthError> {
        manager.configure_client(config).map_err(other)?;
        *self.redirect_uri.lock().unwrap_or_else(|e| e.into_inner()) =
            Some(listener.redirect_uri());
        Ok(listener)
    }

    async fn remembered(&self, issuer: &str) -> Option<StoredRegistration> {
        let secrets = self.secrets.clone();
        let account = registration_account(issuer);
        let json = tokio::task::spawn_blocking(move || secrets.get(&account))
            .await
            .ok()?
            .ok()??;
        serde_json::from_str(&json).ok()
    }

    async fn remember(&self, issuer: &str, registration: StoredRegistration) {
        let Ok(json) = serde_json::to_string(&registration) else {
            return;
        };
        let secrets = self.secrets.clone();
        let account = registration_account(issuer);
        let saved = tokio::task::spawn_blocking(move || secrets.set(&account, &json)).await;
        if !matches!(saved, Ok(Ok(()))) {
            tracing::warn!("hosted MCP: could not remember the client registration with {issuer}");
        }
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
