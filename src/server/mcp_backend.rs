//! The real MCP backend: each tool call becomes an [`McpOp`] for the owner loop, which answers
//! from the live state. Acting tools (`pane_run`, `pane_send_keys`) wait in the approval queue
//! like an agent's own permission request.

use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::{mpsc, oneshot};

use crate::mcp::{
    AgentSummary, McpBackend, PaneRef, PaneSummary, RunOutcome, RunRequest, SplitRequest,
    WindowRequest,
};

use super::Msg;

/// One request from the MCP layer to the owner loop.
#[derive(Debug)]
pub enum McpOp {
    Identity {
        surface: Option<String>,
        session: Option<String>,
        reply: oneshot::Sender<Option<PaneRef>>,
    },
    PaneList {
        reply: oneshot::Sender<Vec<PaneSummary>>,
    },
    PaneRead {
        pane: String,
        lines: Option<u32>,
        scrollback: bool,
        reply: oneshot::Sender<Result<String, String>>,
    },
    AgentList {
        reply: oneshot::Sender<Vec<AgentSummary>>,
    },
    AgentWait {
        pane: String,
        until: Vec<String>,
        reply: oneshot::Sender<Result<String, String>>,
    },
    Split {
        caller: Option<PaneRef>,
        request: SplitRequest,
        reply: oneshot::Sender<Result<PaneSummary, String>>,
    },
    Window {
        caller: Option<PaneRef>,
        request: WindowRequest,
        reply: oneshot::Sender<Result<PaneSummary, String>>,
    },
    /// Type into a pane once the human allows it.
    Act {
        caller: Option<PaneRef>,
        pane: String,
        bytes: Vec<u8>,
        what: String,
        reply: oneshot::Sender<Result<RunOutcome, String>>,
    },
}

/// The backend the server hands to the MCP layer.
pub struct OwnerBackend {
    pub tx: mpsc::UnboundedSender<Msg>,
}

const GONE: &str = "calyx is shutting down; try again when it is back";

impl OwnerBackend {
    /// Queues typing into a pane behind the human's approval, bounded by `timeout`.
    async fn act(
        &self,
        caller: Option<&PaneRef>,
        pane: String,
        bytes: Vec<u8>,
        what: String,
        timeout: Duration,
    ) -> Result<RunOutcome, String> {
        let caller = caller.cloned();
        let asked = self.ask(|reply| McpOp::Act {
            caller,
            pane,
            bytes,
            what,
            reply,
        });
        match tokio::time::timeout(timeout, asked).await {
            Ok(Some(answer)) => answer,
            Ok(None) => Err(GONE.into()),
            Err(_) => Ok(RunOutcome::TimedOut),
        }
    }

    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> McpOp) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        self.tx.send(Msg::Mcp(make(tx))).ok()?;
        rx.await.ok()
    }
}

#[async_trait]
impl McpBackend for OwnerBackend {
    async fn identity(
        &self,
        surface_id: Option<&str>,
        session_id: Option<&str>,
    ) -> Option<PaneRef> {
        let (surface, session) = (
            surface_id.map(str::to_string),
            session_id.map(str::to_string),
        );
        self.ask(|reply| McpOp::Identity {
            surface,
            session,
            reply,
        })
        .await
        .flatten()
    }

    async fn agent_seen(&self, _pane: &PaneRef, _kind: &str) {}

    async fn pane_list(&self) -> Vec<PaneSummary> {
        self.ask(|reply| McpOp::PaneList { reply })
            .await
            .unwrap_or_default()
    }

    async fn pane_read(
        &self,
        _caller: Option<&PaneRef>,
        pane: &str,
        lines: Option<u32>,
        scrollback: bool,
    ) -> Result<String, String> {
        let pane = pane.to_string();
        self.ask(|reply| McpOp::PaneRead {
            pane,
            lines,
            scrollback,
            reply,
        })
        .await
        .unwrap_or_else(|| Err(GONE.into()))
    }

    async fn agent_list(&self) -> Vec<AgentSummary> {
        self.ask(|reply| McpOp::AgentList { reply })
            .await
            .unwrap_or_default()
    }

    async fn agent_wait(
        &self,
        pane: &str,
        until: Vec<String>,
        timeout: Duration,
    ) -> Result<String, String> {
        let pane = pane.to_string();
        match tokio::time::timeout(
            timeout,
            self.ask(|reply| McpOp::AgentWait { pane, until, reply }),
        )
        .await
        {
            Ok(Some(answer)) => answer,
            Ok(None) => Err(GONE.into()),
            Err(_) => Ok("timeout".into()),
        }
    }

    async fn pane_split(
        &self,
        caller: Option<&PaneRef>,
        request: SplitRequest,
    ) -> Result<PaneSummary, String> {
        let caller = caller.cloned();
        self.ask(|reply| McpOp::Split {
            caller,
            request,
            reply,
        })
        .await
        .unwrap_or_else(|| Err(GONE.into()))
    }

    async fn window_create(
        &self,
        caller: Option<&PaneRef>,
        request: WindowRequest,
    ) -> Result<PaneSummary, String> {
        let caller = caller.cloned();
        self.ask(|reply| McpOp::Window {
            caller,
            request,
            reply,
        })
        .await
        .unwrap_or_else(|| Err(GONE.into()))
    }

    async fn pane_run(
        &self,
        caller: Option<&PaneRef>,
        request: RunRequest,
    ) -> Result<RunOutcome, String> {
        let mut bytes = request.command.clone().into_bytes();
        bytes.push(b'\r');
        self.act(
            caller,
            request.pane,
            bytes,
            request.command,
            request.timeout,
        )
        .await
    }

    async fn pane_send_keys(
        &self,
        caller: Option<&PaneRef>,
        pane: &str,
        keys: Vec<String>,
        timeout: Duration,
    ) -> Result<RunOutcome, String> {
        let bytes = crate::keys::send_keys_bytes(&keys, false, false);
        let what = format!("send keys: {}", keys.join(" "));
        self.act(caller, pane.to_string(), bytes, what, timeout)
            .await
    }
}
