//! OAuth sign-in for hosted HTTP servers (issue 16, "OAuth sign-in"), on rmcp's
//! `AuthorizationManager`: discovery (the 401's `resource_metadata`, the well-known URLs,
//! RFC 8414 and OIDC, the 2025-03-26 endpoint fallback), client identity in the order,
//! PKCE (refused when the metadata does not advertise it), scopes and step-up, tokens in the
//! secret store with refreshes serialised per alias, and the loopback redirect listener or a
//! pasted redirect address to finish.

pub mod callback;
pub mod challenge;
pub mod credentials;
pub mod engine;
pub mod identity;
pub mod open;
mod root_metadata;

use thiserror::Error;

pub use callback::{check_callback, CallbackListener, FIXED_REDIRECT_PORT, SIGN_IN_LIMIT};
pub use challenge::{find_challenge, Challenge};
pub use engine::{OAuthEngine, OAuthSettings, PendingSignIn, MAX_AUTHORIZATION_REQUESTS};

/// Why a sign-in could not start or finish, as one sentence the user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum OAuthError {
    #[error("the server wants authorization but publishes no OAuth metadata; add an Authorization header in Edit")]
    NoMetadata,
    #[error("the authorization server does not support automatic client registration: enter the client ID of an OAuth app registered with it in Edit")]
    NoRegistration,
    #[error("the authorization server {issuer} does not advertise PKCE (no code_challenge_methods_supported with S256 in its metadata), which MCP requires: calyx does not sign in without it; ask its operator to enable PKCE")]
    NoPkce { issuer: String },
    #[error("the sign-in answer's state does not match the sign-in calyx started (a stale or forged redirect): start the sign-in again")]
    StateMismatch,
    #[error("the sign-in answer came from issuer {received}, not {expected} which calyx asked: start the sign-in again")]
    IssuerMismatch { expected: String, received: String },
    #[error("the authorization server refused the sign-in: {0}")]
    Refused(String),
    #[error("`{0}` is not a sign-in redirect address (expected http://127.0.0.1:PORT/callback?code=...&state=...): paste the whole address the browser failed to load")]
    BadRedirect(String),
    #[error("the sign-in did not finish within 10 minutes: start it again")]
    TimedOut,
    #[error("the sign-in was cancelled")]
    Cancelled,
    #[error("calyx made {0} authorization requests for this server without getting a token it accepts: stopped (check the server's scopes)")]
    TooManyRequests(u32),
    #[error("cannot listen for the sign-in redirect on 127.0.0.1:{port}: {reason}")]
    Listen { port: u16, reason: String },
    #[error("{0}")]
    Other(String),
}

impl From<rmcp::transport::auth::AuthError> for OAuthError {
    fn from(error: rmcp::transport::auth::AuthError) -> Self {
        use rmcp::transport::auth::AuthError;
        match error {
            AuthError::PkceUnsupported => OAuthError::NoPkce {
                issuer: "of this server".into(),
            },
            AuthError::AuthorizationServerMismatch {
                expected_issuer,
                received_issuer,
            } => OAuthError::IssuerMismatch {
                expected: expected_issuer,
                received: received_issuer,
            },
            other => OAuthError::Other(format!("sign-in failed: {other}")),
        }
    }
}
