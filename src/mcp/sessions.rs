//! A cap on live MCP sessions, around rmcp's [`LocalSessionManager`].
//!
//! rmcp keeps every session until it has been idle for its keep-alive, so a client holding
//! the token could open sessions faster than they expire (13,000 `initialize` calls took the
//! server from 25 MB to 716 MB). Here at most `max` sessions live: a new `initialize` first
//! closes the least recently used idle session (no request in flight, no GET stream open), and
//! when every session is busy it is refused (the caller answers 503). Closing a session, by
//! DELETE, expiry or eviction, also forgets what calyx kept for it (its entry in the
//! [`ToolSet`]'s list) and soon gives freed memory back to the system ([`super::memory`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId};
use rmcp::transport::streamable_http_server::SessionManager;

use super::tool_set::ToolSet;
use crate::memory::Trimmer;

/// Live MCP sessions at most. Each agent CLI in a pane holds one or two (some reconnect and
/// leave the old one to expire), so 256 is far above what a user's panes need, while 256 idle
/// sessions cost a few MB at most.
pub const MAX_SESSIONS: usize = 256;

/// How long an idle session lives (rmcp's default keep-alive): a client that went away
/// without DELETE is forgotten after this.
pub const SESSION_IDLE: Duration = Duration::from_secs(300);

/// What the table knows of one session.
#[derive(Debug)]
struct Activity {
    /// When it was last used, in ticks of [`Table::clock`] (an order, not a time).
    last_used: u64,
    /// Requests in flight and open GET streams: while any, it may not be closed for room.
    busy: usize,
}

#[derive(Debug, Default)]
struct Table {
    sessions: HashMap<SessionId, Activity>,
    /// Slots promised to `initialize` calls that have not created their session yet.
    reserved: usize,
    clock: u64,
    /// Whether the last `initialize` was refused (to warn once per run of refusals).
    refusing: bool,
}

impl Table {
    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn touch(&mut self, id: &SessionId) {
        let now = self.tick();
        if let Some(a) = self.sessions.get_mut(id) {
            a.last_used = now;
        }
    }

    /// The least recently used session with nothing in flight.
    fn oldest_idle(&self) -> Option<SessionId> {
        self.sessions
            .iter()
            .filter(|(_, a)| a.busy == 0)
            .min_by_key(|(_, a)| a.last_used)
            .map(|(id, _)| id.clone())
    }
}

/// Why a session could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SessionsError {
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    #[error("too many MCP sessions ({0} open, none idle)")]
    Full(usize),
}

/// rmcp's local session manager with a cap and activity tracking (see the module docs).
#[derive(Debug)]
pub struct BoundedSessions {
    inner: LocalSessionManager,
    table: Arc<Mutex<Table>>,
    max: usize,
    tools: Arc<ToolSet>,
    trimmer: Trimmer,
}

/// A slot for one `initialize`, taken by [`BoundedSessions::reserve`]; given back on drop
/// (by then the session it was for has been created, or failed).
#[derive(Debug)]
pub struct Reservation {
    table: Arc<Mutex<Table>>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        let mut table = lock(&self.table);
        table.reserved = table.reserved.saturating_sub(1);
    }
}

/// Marks a session busy while it lives (a request in flight, an open stream).
#[derive(Debug)]
struct Busy {
    table: Arc<Mutex<Table>>,
    id: SessionId,
}

impl Busy {
    fn new(table: &Arc<Mutex<Table>>, id: &SessionId) -> Self {
        let mut t = lock(table);
        t.touch(id);
        if let Some(a) = t.sessions.get_mut(id) {
            a.busy += 1;
        }
        Self {
            table: table.clone(),
            id: id.clone(),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut t = lock(&self.table);
        t.touch(&self.id);
        if let Some(a) = t.sessions.get_mut(&self.id) {
            a.busy = a.busy.saturating_sub(1);
        }
    }
}

fn lock(table: &Mutex<Table>) -> MutexGuard<'_, Table> {
    // A panic while holding the lock leaves plain counters behind; keep using them.
    table.lock().unwrap_or_else(|e| e.into_inner())
}

/// Keeps `guard` alive as long as `stream` is.
fn holding<S>(stream: S, guard: Busy) -> impl Stream<Item = ServerSseMessage> + Send + Sync
where
    S: Stream<Item = ServerSseMessage> + Send + Sync,
{
    stream.map(move |message| {
        let _alive = &guard;
        message
    })
}

impl BoundedSessions {
    /// At most `max` sessions (at least 1), each closed after `idle` without use; priming
    /// events off (see [`super::service`]); `tools` forgets closed sessions.
    /// `trimmer`: the server's, so a trim after sessions close keeps an attached client's code
    /// pages (a schedule of its own would not know about clients).
    pub fn new(max: usize, idle: Duration, tools: Arc<ToolSet>, trimmer: Trimmer) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config.sse_retry = None;
        inner.session_config.keep_alive = Some(idle);
        Self {
            inner,
            table: Arc::default(),
            max: max.max(1),
            tools,
            trimmer,
        }
    }

    /// The number of live sessions.
    pub fn len(&self) -> usize {
        lock(&self.table).sessions.len()
    }

    /// Whether no session is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Makes room for one new session: takes a free slot, else closes the least recently
    /// used idle session; fails when every session is busy.
    pub async fn reserve(&self) -> Result<Reservation, SessionsError> {
        let victim = {
            let mut table = lock(&self.table);
            let taken = table.sessions.len() + table.reserved;
            let victim = if taken < self.max {
                None
            } else if let Some(id) = table.oldest_idle() {
                table.sessions.remove(&id);
                Some(id)
            } else {
                if !table.refusing {
                    tracing::warn!(
                        max = self.max,
                        "mcp: every session is busy; refusing new sessions until one is free"
                    );
                }
                table.refusing = true;
                return Err(SessionsError::Full(table.sessions.len()));
            };
            table.refusing = false;
            table.reserved += 1;
            victim
        };
        if let Some(id) = victim {
            tracing::debug!(session = %id, "mcp: closing the least recently used idle session for a new one");
            self.close_inner(&id).await;
        }
        Ok(Reservation {
            table: self.table.clone(),
        })
    }

    async fn close_inner(&self, id: &SessionId) {
        if let Err(e) = self.inner.close_session(id).await {
            tracing::debug!(session = %id, "mcp: closing a session: {e}");
        }
        self.tools.forget_closed();
        self.trimmer.soon();
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        // Every `initialize` reserved its slot first ([`BoundedSessions::reserve`]); this is
        // the backstop that keeps the cap for any path that did not.
        let unreserved_and_full = {
            let table = lock(&self.table);
            table.sessions.len() >= self.max && table.reserved == 0
        };
        if unreserved_and_full {
            let _slot = self.reserve().await?;
        }
        let (id, transport) = self.inner.create_session().await?;
        let mut table = lock(&self.table);
        let now = table.tick();
        table.sessions.insert(
            id.clone(),
            Activity {
                last_used: now,
                busy: 0,
            },
        );
        tracing::debug!(session = %id, open = table.sessions.len(), "mcp: session opened");
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let _busy = Busy::new(&self.table, id);
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    /// Called for DELETE, and by rmcp once a session's service has ended (expiry, eviction):
    /// everything kept for the session goes.
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        if lock(&self.table).sessions.remove(id).is_some() {
            tracing::debug!(session = %id, "mcp: session closed");
        }
        self.close_inner(id).await;
        Ok(())
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = Busy::new(&self.table, id);
        let stream = self.inner.create_stream(id, message).await?;
        Ok(holding(stream, busy))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        lock(&self.table).touch(id);
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = Busy::new(&self.table, id);
        let stream = self.inner.create_standalone_stream(id).await?;
        Ok(holding(stream, busy))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let busy = Busy::new(&self.table, id);
        let stream = self.inner.resume(id, last_event_id).await?;
        Ok(holding(stream, busy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sessions(max: usize) -> BoundedSessions {
        BoundedSessions::new(
            max,
            SESSION_IDLE,
            Arc::new(ToolSet::default()),
            Trimmer::default(),
        )
    }

    async fn open(s: &BoundedSessions) -> Result<SessionId, SessionsError> {
        let _slot = s.reserve().await?;
        let (id, _transport) = s.create_session().await?;
        Ok(id)
    }

    #[tokio::test]
    async fn the_least_recently_used_idle_session_makes_room() {
        let s = sessions(3);
        let a = open(&s).await.expect("a");
        let b = open(&s).await.expect("b");
        let c = open(&s).await.expect("c");
        assert_eq!(s.len(), 3);
        // a is used again, so b is now the oldest.
        lock(&s.table).touch(&a);
        let d = open(&s).await.expect("d");
        assert_eq!(s.len(), 3);
        let live = |id: &SessionId| lock(&s.table).sessions.contains_key(id);
        assert!(live(&a) && !live(&b) && live(&c) && live(&d));
        assert!(!s.has_session(&b).await.expect("has"));
    }

    #[tokio::test]
    async fn busy_sessions_are_never_closed_for_room() {
        let s = sessions(2);
        let a = open(&s).await.expect("a");
        let b = open(&s).await.expect("b");
        let busy_a = Busy::new(&s.table, &a);
        let busy_b = Busy::new(&s.table, &b);
        assert!(matches!(open(&s).await, Err(SessionsError::Full(2))));
        assert_eq!(s.len(), 2);
        drop(busy_b);
        let c = open(&s).await.expect("c once b is idle");
        let live = |id: &SessionId| lock(&s.table).sessions.contains_key(id);
        assert!(live(&a) && !live(&b) && live(&c));
        drop(busy_a);
    }

    #[tokio::test]
    async fn reservations_count_against_the_cap() {
        let s = sessions(2);
        let _a = open(&s).await.expect("a");
        let held = s.reserve().await.expect("a slot");
        // One live, one promised: a third must close the live one.
        let _again = s.reserve().await.expect("room by closing a");
        assert_eq!(s.len(), 0);
        drop(held);
        assert_eq!(lock(&s.table).reserved, 1);
    }

    #[tokio::test]
    async fn closing_forgets_the_session() {
        let s = sessions(4);
        let a = open(&s).await.expect("a");
        s.close_session(&a).await.expect("close");
        assert!(s.is_empty());
        assert!(!s.has_session(&a).await.expect("has"));
        // A second close (rmcp's, after the service ended) is harmless.
        s.close_session(&a).await.expect("close again");
    }
}
