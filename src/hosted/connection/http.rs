//! One connection to a server at a URL: Streamable HTTP on rmcp's client (with the raw
//! `tools/list` tap and 64 MiB messages), or the legacy HTTP+SSE transport when the entry's
//! switch is on. The configured headers go on every request, never in the URL. A failure
//! says what the user can do: the host and reason when it cannot be reached, and "turn on
//! Legacy HTTP+SSE" when the URL turns out to be a legacy server.

use std::error::Error as StdError;
use std::time::Duration;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use url::Url;

use super::client::{ready, HostedClient};
use super::http_client::{header_map, http_client, unreachable_reason};
use super::legacy::{offers_endpoint, LegacyError, LegacySse};
use super::raw_tap::TaskRequired;
use super::tapped::TappedHttp;
use super::{ConnectError, Connected, MAX_MESSAGE};

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

/// Connects to server `alias` at `launch.url`.
pub async fn connect_http(
    alias: &str,
    launch: &HttpLaunch,
    init_timeout: Duration,
) -> Result<Connected, ConnectError> {
    let url = Url::parse(&launch.url).map_err(|e| ConnectError::Http {
        reason: format!("`{}` is not a URL ({e}): fix it in Edit", launch.url),
    })?;
    let host = url.host_str().unwrap_or_default().to_string();
    let client = http_client().map_err(|reason| ConnectError::Http { reason })?;
    let headers = header_map(&launch.headers).map_err(|reason| ConnectError::Http { reason })?;
    let task_required = TaskRequired::default();
    let timeout = |_| ConnectError::InitTimeout {
        after: init_timeout,
        stderr: Vec::new(),
    };
    let service = if launch.legacy_sse {
        let opened = tokio::time::timeout(
            init_timeout,
            LegacySse::connect(client, &url, headers, task_required.clone()),
        )
        .await
        .map_err(timeout)?;
        let transport = opened.map_err(|error| match error {
            LegacyError::Unreachable { host, reason } => ConnectError::Unreachable { host, reason },
            other => ConnectError::Http {
                reason: other.to_string(),
            },
        })?;
        tokio::time::timeout(init_timeout, HostedClient::new().serve(transport))
            .await
            .map_err(timeout)?
            .map_err(|error| initialize_failed(&host, &error))?
    } else {
        let config = StreamableHttpClientTransportConfig::with_uri(launch.url.as_str())
            .custom_headers(
                headers
                    .clone()
                    .into_iter()
                    .filter_map(|(k, v)| Some((k?, v)))
                    .collect(),
            )
            .max_json_response_size(MAX_MESSAGE)
            .max_sse_event_size(MAX_MESSAGE);
        let tapped = TappedHttp {
            client: client.clone(),
            task_required: task_required.clone(),
        };
        let transport = StreamableHttpClientTransport::with_client(tapped, config);
        let served = tokio::time::timeout(init_timeout, HostedClient::new().serve(transport))
            .await
            .map_err(timeout)?;
        match served {
            Ok(service) => service,
            Err(error) => {
                let failure = initialize_failed(&host, &error);
                let rejected = matches!(&failure, ConnectError::Initialize { reason, .. }
                    if rejected_status(reason).is_some());
                let legacy = rejected
                    && tokio::time::timeout(LEGACY_PROBE, offers_endpoint(&client, &url, &headers))
                        .await
                        .unwrap_or(false);
                return Err(if legacy {
                    ConnectError::LegacyServer
                } else {
                    failure
                });
            }
        }
    };
    ready(alias, service, None, &task_required, init_timeout).await
}

/// The sentence for an `initialize` that failed on an HTTP transport.
fn initialize_failed(host: &str, error: &ClientInitializeError) -> ConnectError {
    let inner: &(dyn StdError + 'static) = match error {
        ClientInitializeError::TransportError { error, .. } => error,
        other => other,
    };
    if let Some(reason) = chain_unreachable(inner) {
        return ConnectError::Unreachable {
            host: host.to_string(),
            reason,
        };
    }
    let reason = chain_text(inner);
    if reason.contains("Auth required") || rejected_status(&reason) == Some(401) {
        return ConnectError::SignInRequired;
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
