//! Sign-ins of hosted HTTP servers, as the supervisor runs them: one [`OAuthEngine`] per HTTP
//! server that has no configured `Authorization` header (a configured one disables OAuth), the
//! challenge a server's connection stopped at (`sign-in required`), the sign-in in progress
//! (its state, issuer and cancel switch, the redirect listener waiting on its own task), and
//! the wake-up of the connection task once tokens are stored.
//!
//! [`SignIns::set_prompt_hook`] is called with the alias and name each time a server enters
//! `sign-in required`. The floating prompt of "an agent calls a tool of a server that needs
//! sign-in" does not use it: it is raised by the calls themselves
//! ([`super::sign_in_prompt`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::connection::{ConnectError, ElicitationPolicy, HttpAuth};
use super::entry::{ServerEntry, Transport};
use super::oauth::callback::parse_and_check;
use super::oauth::{Challenge, OAuthEngine, OAuthError, OAuthSettings, PendingSignIn};
use super::secrets::{client_secret_account, tokens_account, SecretStore};
use super::sign_in_prompt::SignInPrompts;

/// Called with (alias, name) when a server needs sign-in.
pub type SignInHook = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// Why a connection stopped for sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stopped {
    /// A 401, with its `WWW-Authenticate` when it had one.
    Unauthorized(Option<String>),
    /// A 403 `insufficient_scope`.
    Scope(String),
}

/// A sign-in waiting for the browser or a paste.
struct Active {
    state: String,
    issuer: Option<String>,
    cancel: CancellationToken,
}

/// Every hosted server's OAuth side.
pub struct SignIns {
    secrets: Arc<dyn SecretStore>,
    client_metadata_url: Mutex<Option<String>>,
    engines: Mutex<HashMap<String, Arc<OAuthEngine>>>,
    stopped: Mutex<HashMap<String, Stopped>>,
    signed_in: Mutex<HashMap<String, Arc<Notify>>>,
    active: Mutex<HashMap<String, Active>>,
    last_error: Mutex<HashMap<String, String>>,
    hook: Mutex<Option<SignInHook>>,
    /// Told when a sign-in finishes, so that calls waiting for a step-up send again.
    prompts: Arc<SignInPrompts>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SignIns {
    pub fn new(secrets: Arc<dyn SecretStore>) -> Self {
        SignIns {
            secrets,
            client_metadata_url: Mutex::new(None),
            engines: Mutex::default(),
            stopped: Mutex::default(),
            signed_in: Mutex::default(),
            active: Mutex::default(),
            last_error: Mutex::default(),
            hook: Mutex::new(None),
            prompts: Arc::default(),
        }
    }

    /// These sign-ins telling `prompts` (the registry's) when one finishes.
    pub fn with_prompts(mut self, prompts: Arc<SignInPrompts>) -> Self {
        self.prompts = prompts;
        self
    }

    /// A call to the ready server `alias` met `challenge`: the next sign-in answers it (a 403
    /// `insufficient_scope` steps up to the scopes it names).
    pub fn note_challenge(&self, alias: &str, challenge: Challenge) {
        let stopped = match challenge {
            Challenge::InsufficientScope(header) => Stopped::Scope(header),
            Challenge::Unauthorized(header) => Stopped::Unauthorized(Some(header)),
        };
        lock(&self.stopped).insert(alias.to_string(), stopped);
    }

    /// `[mcp] client_metadata_url` (empty: none); used by connections started from now on.
    pub fn set_client_metadata_url(&self, url: &str) {
        *lock(&self.client_metadata_url) = (!url.trim().is_empty()).then(|| url.trim().into());
    }

    /// A hook told whenever a server enters `sign-in required` (the prompt for agents' calls
    /// is raised by the calls, see [`super::sign_in_prompt`]).
    pub fn set_prompt_hook(&self, hook: SignInHook) {
        *lock(&self.hook) = Some(hook);
    }

    /// How `entry` authorizes: a fresh engine for an HTTP server without a configured
    /// `Authorization` header, nothing otherwise.
    pub async fn auth_for(&self, entry: &ServerEntry) -> HttpAuth {
        let Transport::Http(http) = &entry.transport else {
            return HttpAuth::default();
        };
        lock(&self.engines).remove(&entry.alias);
        if http
            .headers
            .iter()
            .any(|h| h.eq_ignore_ascii_case("authorization"))
        {
            return HttpAuth::default();
        }
        let secrets = self.secrets.clone();
        let account = client_secret_account(&entry.alias);
        let client_secret = tokio::task::spawn_blocking(move || secrets.get(&account))
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
        let settings = OAuthSettings {
            client_id: http.oauth.client_id.clone(),
            client_secret,
            client_auth: http.oauth.client_auth,
            fixed_redirect_port: http.oauth.fixed_redirect_port,
            client_metadata_url: lock(&self.client_metadata_url).clone(),
        };
        match OAuthEngine::new(&entry.alias, &http.url, settings, self.secrets.clone()).await {
            Ok(engine) => {
                lock(&self.engines).insert(entry.alias.clone(), engine.clone());
                HttpAuth {
                    oauth: Some(engine),
                    elicitation: ElicitationPolicy::Decline,
                }
            }
            Err(e) => {
                tracing::warn!("hosted MCP: `{}`: no OAuth: {e}", entry.alias);
                HttpAuth::default()
            }
        }
    }

    /// Records why `entry`'s connection stopped, tells the hook, and waits until a sign-in
    /// stores tokens.
    pub async fn wait_for_sign_in(&self, entry: &ServerEntry, error: &ConnectError) {
        let stopped = match error {
            ConnectError::NeedsScope { challenge } => Stopped::Scope(challenge.clone()),
            ConnectError::NeedsSignIn { challenge } => Stopped::Unauthorized(challenge.clone()),
            _ => Stopped::Unauthorized(None),
        };
        lock(&self.stopped).insert(entry.alias.clone(), stopped);
        let hook = lock(&self.hook).clone();
        if let Some(hook) = hook {
            hook(&entry.alias, &entry.name);
        }
        let done = lock(&self.signed_in)
            .entry(entry.alias.clone())
            .or_default()
            .clone();
        done.notified().await;
    }

    fn engine(&self, alias: &str) -> Result<Arc<OAuthEngine>, String> {
        lock(&self.engines).get(alias).cloned().ok_or_else(|| {
            format!("`{alias}` does not sign in with OAuth: it is not a connected HTTP server, or it has an Authorization header")
        })
    }

    /// Starts a sign-in of `alias` (`forwarded`: redirect on port 41890 for an SSH forward):
    /// the authorization URL, and the listener to wait on.
    pub async fn begin(
        &self,
        alias: &str,
        forwarded: bool,
    ) -> Result<(PendingSignIn, CancellationToken), String> {
        let engine = self.engine(alias)?;
        engine.reset_requests();
        self.cancel(alias);
        let stopped = lock(&self.stopped).get(alias).cloned();
        let pending = match stopped {
            Some(Stopped::Scope(challenge)) => match engine.step_up(&challenge).await {
                Ok(pending) => Ok(pending),
                Err(_) => engine.begin(None, forwarded).await,
            },
            Some(Stopped::Unauthorized(challenge)) => {
                engine.begin(challenge.as_deref(), forwarded).await
            }
            None => engine.begin(None, forwarded).await,
        }
        .map_err(|e| e.to_string())?;
        let cancel = CancellationToken::new();
        lock(&self.active).insert(
            alias.to_string(),
            Active {
                state: pending.state.clone(),
                issuer: pending.issuer.clone(),
                cancel: cancel.clone(),
            },
        );
        lock(&self.last_error).remove(alias);
        Ok((pending, cancel))
    }

    /// Finishes the sign-in of `alias` with the code the listener or a paste brought.
    pub async fn finish(
        &self,
        alias: &str,
        callback: &rmcp::transport::auth::AuthorizationCallback,
    ) -> Result<(), String> {
        let engine = self.engine(alias)?;
        let outcome = engine.finish(callback).await.map_err(|e| e.to_string());
        self.ended(alias, &outcome);
        outcome
    }

    /// Finishes with a pasted redirect address (same checks as the listener's).
    pub async fn paste(&self, alias: &str, redirect: &str) -> Result<(), String> {
        let (state, issuer) = {
            let active = lock(&self.active);
            let Some(a) = active.get(alias) else {
                return Err(format!(
                    "no sign-in of `{alias}` is in progress: start one with `calyx mcp login {alias}`"
                ));
            };
            a.cancel.cancel();
            (a.state.clone(), a.issuer.clone())
        };
        let callback = match parse_and_check(redirect, &state, issuer.as_deref()) {
            Ok(callback) => callback,
            Err(e) => {
                let outcome = Err(e.to_string());
                self.ended(alias, &outcome);
                return outcome;
            }
        };
        self.finish(alias, &callback).await
    }

    /// The end of a sign-in: success wakes the connection; a failure is kept for `login`.
    pub fn ended(&self, alias: &str, outcome: &Result<(), String>) {
        lock(&self.active).remove(alias);
        match outcome {
            Ok(()) => {
                lock(&self.stopped).remove(alias);
                let done = lock(&self.signed_in)
                    .entry(alias.to_string())
                    .or_default()
                    .clone();
                done.notify_one();
                self.prompts.signed_in(alias);
            }
            Err(sentence) => {
                lock(&self.last_error).insert(alias.to_string(), sentence.clone());
            }
        }
    }

    /// Why the last sign-in of `alias` failed.
    pub fn last_error(&self, alias: &str) -> Option<String> {
        lock(&self.last_error).get(alias).cloned()
    }

    /// Cancels a sign-in in progress (its listener closes).
    pub fn cancel(&self, alias: &str) -> bool {
        match lock(&self.active).remove(alias) {
            Some(active) => {
                active.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// Deletes the tokens of `alias` (the client secret and registration stay).
    pub fn sign_out(&self, alias: &str) -> Result<(), String> {
        self.cancel(alias);
        self.secrets
            .delete(&tokens_account(alias))
            .map_err(|e| e.to_string())
    }

    /// Whether tokens are stored for `alias` (blocks on the secret store).
    pub fn has_tokens(&self, alias: &str) -> bool {
        matches!(self.secrets.get(&tokens_account(alias)), Ok(Some(_)))
    }

    /// Forgets `alias` (removed or stopped).
    pub fn forget(&self, alias: &str) {
        self.cancel(alias);
        lock(&self.engines).remove(alias);
        lock(&self.stopped).remove(alias);
    }
}

/// What a sign-in's listener task does with its outcome.
pub fn listener_outcome(outcome: Result<(), OAuthError>) -> Option<Result<(), String>> {
    match outcome {
        // A paste or a new sign-in took over; they report.
        Err(OAuthError::Cancelled) => None,
        other => Some(other.map_err(|e| e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosted::entry::{HttpTarget, StdioTarget};
    use crate::hosted::secrets::MemoryStore;

    fn http(headers: &[&str]) -> ServerEntry {
        ServerEntry {
            alias: "linear".into(),
            name: "Linear".into(),
            enabled: true,
            transport: Transport::Http(HttpTarget {
                url: "http://127.0.0.1:9/mcp".into(),
                legacy_sse: false,
                headers: headers.iter().map(|h| h.to_string()).collect(),
                oauth: Default::default(),
            }),
            note: None,
        }
    }

    #[tokio::test]
    async fn a_configured_authorization_header_turns_oauth_off() {
        let sign_ins = SignIns::new(Arc::new(MemoryStore::default()));
        assert!(sign_ins.auth_for(&http(&["X-Team"])).await.oauth.is_some());
        assert!(sign_ins
            .auth_for(&http(&["authorization"]))
            .await
            .oauth
            .is_none());
        let stdio = ServerEntry {
            transport: Transport::Stdio(StdioTarget {
                command: "node".into(),
                args: Vec::new(),
                cwd: None,
                env: Vec::new(),
            }),
            ..http(&[])
        };
        assert!(sign_ins.auth_for(&stdio).await.oauth.is_none());
    }

    #[tokio::test]
    async fn a_paste_without_a_sign_in_says_how_to_start_one() {
        let sign_ins = SignIns::new(Arc::new(MemoryStore::default()));
        let error = sign_ins
            .paste("linear", "http://127.0.0.1:1/callback?code=a&state=b")
            .await
            .expect_err("nothing in progress");
        assert!(error.contains("calyx mcp login linear"), "{error}");
        assert!(
            sign_ins.begin("linear", false).await.is_err(),
            "no engine yet"
        );
    }
}
