//! calyx's own Streamable HTTP client transport (MCP 2025-03-26 and later), in place of rmcp's
//! reqwest worker: each message is one POST from the task rmcp already spawns to send it, and
//! its answer (a JSON body or an SSE stream of several messages) is read in that same task,
//! each message typed straight from the bytes that arrived and handed to rmcp through one
//! channel. rmcp's worker added a hop per message (a session worker task, per-request tasks,
//! two channels) and held each SSE event as text while typing it; on two cores those hops
//! halved the forwarded call rate, and the text copy was a third payload in memory for large
//! results (docs/performance.md, "Session 13").
//!
//! What the session keeps: the `Mcp-Session-Id` the server gave `initialize`, and after it the
//! negotiated `MCP-Protocol-Version`, both on every later request with the configured headers
//! and, with OAuth, the current bearer. A 404 to a request carrying the session id means the
//! server forgot the session: the transport ends (the error says so) and the supervisor
//! reconnects with a new `initialize`. Closing DELETEs the session.

mod answer;
mod get_stream;
mod post;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::future::Future;
use std::sync::{Arc, RwLock};

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, WWW_AUTHENTICATE};
use reqwest::{Method, RequestBuilder, Response, StatusCode};
use rmcp::model::{ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, StreamableHttpError,
};
use rmcp::transport::Transport;
use rmcp::RoleClient;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use url::Url;

use super::raw_tap::TaskRequired;
use super::MAX_MESSAGE;
use crate::hosted::oauth::OAuthEngine;

/// The transport's error: rmcp's own type, so the challenge search (`find_challenge`) and the
/// unreachable-host sentences find what they found on rmcp's transport.
pub type HttpError = StreamableHttpError<reqwest::Error>;

/// Messages read ahead of rmcp.
const INCOMING_BUFFER: usize = 256;

/// How long closing waits for the DELETE of the session.
const DELETE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

const SESSION_ID: &str = "mcp-session-id";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// What the POST tasks and the GET stream share.
pub(crate) struct Shared {
    client: reqwest::Client,
    url: Url,
    /// The configured headers (values marked sensitive).
    headers: HeaderMap,
    oauth: Option<Arc<OAuthEngine>>,
    task_required: TaskRequired,
    /// The largest message taken: [`MAX_MESSAGE`] (smaller in tests).
    max_message: usize,
    session: RwLock<Option<HeaderValue>>,
    version: RwLock<Option<HeaderValue>>,
    incoming: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    /// Cancelled when the session is over (expired, or closed): `receive` ends.
    ended: CancellationToken,
}

/// A Streamable HTTP session, as rmcp's client transport.
pub struct StreamableHttp {
    shared: Arc<Shared>,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    get_stream: Arc<std::sync::Mutex<Option<JoinHandle<()>>>>,
}

impl StreamableHttp {
    /// A transport to `url`; nothing is sent until rmcp sends `initialize`. Incoming messages
    /// pass the raw tap (`task_required`) before they are typed.
    pub fn new(
        client: reqwest::Client,
        url: Url,
        headers: HeaderMap,
        oauth: Option<Arc<OAuthEngine>>,
        task_required: TaskRequired,
    ) -> Self {
        let (sender, incoming) = mpsc::channel(INCOMING_BUFFER);
        StreamableHttp {
            shared: Arc::new(Shared {
                client,
                url,
                headers,
                oauth,
                task_required,
                max_message: MAX_MESSAGE,
                session: RwLock::new(None),
                version: RwLock::new(None),
                incoming: sender,
                ended: CancellationToken::new(),
            }),
            incoming,
            get_stream: Arc::default(),
        }
    }
}

#[cfg(test)]
impl StreamableHttp {
    /// The same transport taking messages of at most `limit` bytes.
    fn with_limit(mut self, limit: usize) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.max_message = limit;
        }
        self
    }
}

impl Shared {
    /// A request to the server's URL with the configured headers, the session's and `bearer`.
    fn request(&self, method: Method, bearer: Option<&str>) -> RequestBuilder {
        let mut headers = self.headers.clone();
        if let Some(session) = read(&self.session) {
            headers.insert(SESSION_ID, session);
        }
        if let Some(version) = read(&self.version) {
            headers.insert(PROTOCOL_VERSION, version);
        }
        if let Some(value) = bearer.and_then(|t| HeaderValue::from_str(&format!("Bearer {t}")).ok())
        {
            let mut value = value;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        self.client
            .request(method, self.url.clone())
            .headers(headers)
    }

    /// Sends the request `build` makes for a bearer: with OAuth the current token (refreshed
    /// when due), and after a 401 to a token one refresh and one retry, as rmcp's `AuthClient`
    /// did. A 401 or 403 with a challenge comes back as rmcp's `AuthRequired` /
    /// `InsufficientScope`, which the sign-in and step-up code look for.
    async fn send(
        &self,
        build: impl Fn(Option<&str>) -> RequestBuilder,
    ) -> Result<Response, HttpError> {
        let token = match &self.oauth {
            Some(engine) => engine.bearer().await,
            None => None,
        };
        let mut response = build(token.as_deref())
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::UNAUTHORIZED {
            if let (Some(engine), Some(sent)) = (&self.oauth, &token) {
                if let Some(fresh) = engine.refreshed(sent).await {
                    response = build(Some(&fresh))
                        .send()
                        .await
                        .map_err(StreamableHttpError::Client)?;
                }
            }
        }
        challenge(&response)?;
        Ok(response)
    }

    /// The session is over: `receive` ends and rmcp's service closes.
    fn end(&self, why: &str) {
        if !self.ended.is_cancelled() {
            tracing::warn!("{}: {why}", self.url);
            self.ended.cancel();
        }
    }
}

fn read(lock: &RwLock<Option<HeaderValue>>) -> Option<HeaderValue> {
    lock.read().ok().and_then(|v| v.clone())
}

fn write(lock: &RwLock<Option<HeaderValue>>, value: HeaderValue) {
    if let Ok(mut slot) = lock.write() {
        *slot = Some(value);
    }
}

/// A 401 or 403 carrying `WWW-Authenticate` as the error the sign-in code reads.
fn challenge(response: &Response) -> Result<(), HttpError> {
    let status = response.status();
    if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
        return Ok(());
    }
    let Some(header) = response.headers().get(WWW_AUTHENTICATE) else {
        return Ok(());
    };
    let header = header
        .to_str()
        .map_err(|_| {
            StreamableHttpError::UnexpectedServerResponse("invalid www-authenticate header".into())
        })?
        .to_string();
    if status == StatusCode::UNAUTHORIZED {
        return Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(
            header,
        )));
    }
    let scope = scope_of(&header);
    Err(StreamableHttpError::InsufficientScope(
        InsufficientScopeError::new(header, scope),
    ))
}

/// The `scope="..."` parameter of a challenge.
fn scope_of(header: &str) -> Option<String> {
    let at = header.find("scope=")?;
    let rest = header[at + 6..].trim_start();
    match rest.strip_prefix('"') {
        Some(quoted) => quoted.split('"').next().map(str::to_string),
        None => rest
            .split([',', ' '])
            .next()
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    }
}

/// What sending one message needs to know about it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outgoing {
    /// A request's id: its answer is awaited (and made up if the answer is lost).
    request: Option<rmcp::model::RequestId>,
    initialize: bool,
    initialized: bool,
}

impl Outgoing {
    fn of(message: &ClientJsonRpcMessage) -> Self {
        match message {
            JsonRpcMessage::Request(request) => Outgoing {
                request: Some(request.id.clone()),
                initialize: matches!(request.request, ClientRequest::InitializeRequest(_)),
                initialized: false,
            },
            JsonRpcMessage::Notification(notification) => Outgoing {
                initialized: matches!(
                    notification.notification,
                    ClientNotification::InitializedNotification(_)
                ),
                ..Outgoing::default()
            },
            _ => Outgoing::default(),
        }
    }
}

impl Transport<RoleClient> for StreamableHttp {
    type Error = HttpError;

    fn name() -> Cow<'static, str> {
        "streamable HTTP".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let outgoing = Outgoing::of(&item);
        let body = serde_json::to_vec(&item).map(bytes::Bytes::from);
        let shared = self.shared.clone();
        let get_stream = self.get_stream.clone();
        async move {
            let body = body.map_err(StreamableHttpError::Deserialize)?;
            let initialized = outgoing.initialized;
            post::post(&shared, body, outgoing).await?;
            if initialized && read(&shared.session).is_some() {
                // Server-initiated messages outside any request arrive on the GET stream.
                let task = get_stream::spawn(shared.clone());
                if let Ok(mut slot) = get_stream.lock() {
                    if let Some(old) = slot.replace(task) {
                        old.abort();
                    }
                }
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let ended = self.shared.ended.clone();
        let incoming = &mut self.incoming;
        async move {
            tokio::select! {
                biased;
                message = incoming.recv() => message,
                _ = ended.cancelled() => None,
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.abort_get_stream();
        self.incoming.close();
        let shared = self.shared.clone();
        async move {
            let had_session = read(&shared.session).is_some();
            shared.ended.cancel();
            if had_session {
                let delete = shared.send(|bearer| shared.request(Method::DELETE, bearer));
                // 405 (the server keeps sessions until they time out) and failures are fine:
                // the session is over for calyx either way.
                let _ = tokio::time::timeout(DELETE_TIMEOUT, delete).await;
            }
            Ok(())
        }
    }
}

impl StreamableHttp {
    fn abort_get_stream(&self) {
        if let Some(task) = self.get_stream.lock().ok().and_then(|mut t| t.take()) {
            task.abort();
        }
    }
}

impl Drop for StreamableHttp {
    fn drop(&mut self) {
        self.abort_get_stream();
        self.shared.ended.cancel();
    }
}
