//! One connection to a server at a URL: Streamable HTTP on calyx's own client transport (with
//! the raw `tools/list` tap and 64 MiB messages), or the legacy HTTP+SSE transport when the entry's
//! switch is on. The configured headers go on every request, never in the URL. A failure
//! says what the user can do: the host and reason when it cannot be reached, and "turn on
//! Legacy HTTP+SSE" when the URL turns out to be a legacy server.

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::{RoleClient, ServiceExt};
use url::Url;

use super::client::{ready, ElicitationPolicy, HostedClient};
use super::http_client::{header_map, http_client, unreachable_reason};
use super::legacy::{offers_endpoint, LegacyError, LegacySse};
use super::raw_tap::TaskRequired;
use super::streamable::StreamableHttp;
use super::{ConnectError, Connected};
use crate::hosted::oauth::{find_challenge, Challenge, OAuthEngine};

/// How long the one GET that checks for a legacy server may take.
const LEGACY_PROBE: Duration = Duration::from_secs(10);

/// What to connect to.
#[derive(Debug, Clone, Default)]
pub struct HttpLaunch {
    pub url: String,
    pub legacy_sse: bool,
    /// Configured headers (values from the secret store).
    pub headers: Vec<(String, String)>,
}

/// How a connection authorizes and answers the server's requests: the server's OAuth side
/// (`None` without OAuth, e.g. when an Authorization header is configured) and the
/// elicitation policy.
#[derive(Debug, Clone, Default)]
pub struct HttpAuth {
    pub oauth: Option<Arc<OAuthEngine>>,
    pub elicitation: ElicitationPolicy,
}

/// Connects to server `alias` at `launch.url` without OAuth.
pub async fn connect_http(
    alias: &str,
    launch: &HttpLaunch,
    init_timeout: Duration,
) -> Result<Connected, ConnectError> {
    connect_http_with(alias, launch, &HttpAuth::default(), init_timeout).await
}

/// Connects to server `alias` at `launch.url`; with OAuth the bearer goes on every request
/// of either transport, and a 401 or 403 `insufficient_scope` comes back as
/// [`ConnectError::NeedsSignIn`] / [`ConnectError::NeedsScope`] with the server's challenge.
pub async fn connect_http_with(
    alias: &str,
    launch: &HttpLaunch,
    auth: &HttpAuth,
    init_timeout: Duration,
) -> Result<Connected, ConnectError> {
    let url = Url::parse(&launch.url).map_err(|e| ConnectError::Http {
        reason: format!("`{}` is not a URL ({e}): fix it in Edit", launch.url),
    })?;
    let host = url.host_str().unwrap_or_default().to_string();
    let client = http_client().map_err(|reason| ConnectError::Http { reason })?;
    let headers = header_map(&launch.headers).map_err(|reason| ConnectError::Http { reason })?;
    let task_required = TaskRequired::default();
    let session = Session {
        client,
        url: &url,
        host: &host,
        headers,
        task_required: task_required.clone(),
        init_timeout,
        handler: HostedClient::with_elicitation(auth.elicitation.clone()),
        oauth: auth.oauth.clone(),
    };
    let service = if launch.legacy_sse {
        session.legacy().await?
    } else {
        session.streamable().await?
    };
    ready(alias, service, None, &task_required, init_timeout)
        .await
        .map_err(|error| without_oauth(error, auth.oauth.is_some()))
}

/// Without OAuth a challenge cannot be answered: the sentence says to add a header.
fn without_oauth(error: ConnectError, oauth: bool) -> ConnectError {
    match error {
        ConnectError::NeedsSignIn { .. } | ConnectError::NeedsScope { .. } if !oauth => {
            ConnectError::SignInRequired
        }
        other => other,
    }
}

/// What both transports start a session with.
struct Session<'a> {
    client: reqwest::Client,
    url: &'a Url,
    host: &'a str,
    headers: HeaderMap,
    task_required: TaskRequired,
    init_timeout: Duration,
    handler: HostedClient,
    oauth: Option<Arc<OAuthEngine>>,
}

type Service = RunningService<RoleClient, HostedClient>;

impl Session<'_> {
    fn timed_out(&self) -> ConnectError {
        ConnectError::InitTimeout {
            after: self.init_timeout,
            stderr: Vec::new(),
        }
    }

    /// Legacy HTTP+SSE: the event stream and its endpoint, then `initialize`.
    async fn legacy(self) -> Result<Service, ConnectError> {
        let mut headers = self.headers.clone();
        if let Some(engine) = &self.oauth {
            if let Some(token) = engine.bearer().await {
                let mut value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
                    .map_err(|_| ConnectError::Http {
                        reason: "the stored OAuth token cannot be sent: sign in again".into(),
                    })?;
                value.set_sensitive(true);
                headers.insert(reqwest::header::AUTHORIZATION, value);
            }
        }
        let oauth = self.oauth.is_some();
        let opened = LegacySse::connect(
            self.client.clone(),
            self.url,
            headers,
            self.task_required.clone(),
        );
        let transport = tokio::time::timeout(self.init_timeout, opened)
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|error| match error {
                LegacyError::Unreachable { host, reason } => {
                    ConnectError::Unreachable { host, reason }
                }
                LegacyError::Status { status: 401, .. } if oauth => {
                    ConnectError::NeedsSignIn { challenge: None }
                }
                LegacyError::Status { status: 401, .. } => ConnectError::SignInRequired,
                other => ConnectError::Http {
                    reason: other.to_string(),
                },
            })?;
        tokio::time::timeout(self.init_timeout, self.handler.clone().serve(transport))
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|error| initialize_failed(self.host, &error, oauth))
    }

    /// Streamable HTTP on calyx's own transport ([`StreamableHttp`]); a 400/404/405 to
    /// `initialize` is followed by one GET to tell a legacy server.
    async fn streamable(self) -> Result<Service, ConnectError> {
        let transport = StreamableHttp::new(
            self.client.clone(),
            self.url.clone(),
            self.headers.clone(),
            self.oauth.clone(),
            self.task_required.clone(),
        );
        let served = tokio::time::timeout(self.init_timeout, self.handler.clone().serve(transport))
            .await
            .map_err(|_| self.timed_out())?;
        let error = match served {
            Ok(service) => return Ok(service),
            Err(error) => initialize_failed(self.host, &error, self.oauth.is_some()),
        };
        let not_streamable = matches!(&error, ConnectError::Initialize { reason, .. }
            if matches!(rejected_status(reason), Some(400 | 404 | 405)));
        let probe = offers_endpoint(&self.client, self.url, &self.headers);
        if not_streamable && tokio::time::timeout(LEGACY_PROBE, probe).await == Ok(true) {
            return Err(ConnectError::LegacyServer);
        }
        Err(error)
    }
}

/// The sentence for an `initialize` that failed on an HTTP transport; with `oauth` a 401 or
/// 403 `insufficient_scope` carries its challenge to the sign-in.
fn initialize_failed(host: &str, error: &ClientInitializeError, oauth: bool) -> ConnectError {
    let inner: &(dyn StdError + 'static) = match error {
        ClientInitializeError::TransportError { error, .. } => error,
        other => other,
    };
    match find_challenge(inner) {
        Some(Challenge::Unauthorized(challenge)) if oauth => {
            return ConnectError::NeedsSignIn {
                challenge: Some(challenge),
            }
        }
        Some(Challenge::InsufficientScope(challenge)) if oauth => {
            return ConnectError::NeedsScope { challenge }
        }
        Some(_) => return ConnectError::SignInRequired,
        None => {}
    }
    if let Some(reason) = chain_unreachable(inner) {
        return ConnectError::Unreachable {
            host: host.to_string(),
            reason,
        };
    }
    let reason = chain_text(inner);
    if reason.contains("Auth required") || rejected_status(&reason) == Some(401) {
        return without_oauth(ConnectError::NeedsSignIn { challenge: None }, oauth);
    }
    ConnectError::Initialize {
        reason,
        stderr: Vec::new(),
    }
}

/// [`unreachable_reason`] through rmcp's wrappers, whose `Client(reqwest::Error)` variant
/// does not report its cause as a source.
fn chain_unreachable(error: &(dyn StdError + 'static)) -> Option<String> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(StreamableHttpError::Client(inner)) =
            e.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return unreachable_reason(inner);
        }
        if let Some(reason) = unreachable_reason(e) {
            return Some(reason);
        }
        current = e.source();
    }
    None
}

/// Every message of an error chain, joined (rmcp's outer messages are generic).
fn chain_text(error: &(dyn StdError + 'static)) -> String {
    let mut parts = vec![error.to_string()];
    let mut current = error.source();
    while let Some(e) = current {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    parts.join(": ")
}

/// The HTTP status a server answered `initialize` with, when rmcp's message carries one of
/// those that mean "not a Streamable HTTP endpoint" (400, 404, 405) or 401.
fn rejected_status(reason: &str) -> Option<u16> {
    reason.match_indices("HTTP ").find_map(|(at, _)| {
        let rest = &reason[at + 5..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let status: u16 = rest.get(..digits).filter(|_| digits == 3)?.parse().ok()?;
        [400, 401, 404, 405].contains(&status).then_some(status)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_that_suggest_a_legacy_server() {
        assert_eq!(
            rejected_status("unexpected server response: HTTP 404 Not Found: Cannot POST /sse"),
            Some(404)
        );
        assert_eq!(rejected_status("HTTP 405 Method Not Allowed"), Some(405));
        assert_eq!(rejected_status("HTTP 500 Internal Server Error"), None);
        assert_eq!(rejected_status("HTTP 4040"), None);
        assert_eq!(rejected_status("HTTP 401 Unauthorized"), Some(401));
    }
}
