//! Tool calls from agents on other machines (issue 20 §4, [`Request::RemoteTool`]): answered
//! off the loop by this server's own MCP tools ([`crate::mcp::from_afar`]), which talk to the
//! loop like any MCP call, so a call that waits (an agent's state, a human's approval) holds
//! nothing here. A call whose connection closes (the asking machine went away) is dropped,
//! which withdraws an approval it queued: nothing acts for a caller that no longer waits.
//!
//! [`Request::RemoteTool`]: crate::protocol::Request::RemoteTool

use std::collections::HashMap;

use serde_json::Value;
use tokio::task::AbortHandle;

use crate::protocol::RemoteCaller;
use crate::server::io::mcp_backend::OwnerBackend;
use crate::server::messages::Msg;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;

/// The calls running for each connection, each with its tag (a link's call) or none.
#[derive(Default)]
pub(crate) struct RemoteCalls {
    running: HashMap<ClientId, Vec<(Option<u64>, AbortHandle)>>,
}

impl RemoteCalls {
    /// Connection `id` closed: its calls stop.
    pub(crate) fn end(&mut self, id: ClientId) {
        for (_, call) in self.running.remove(&id).unwrap_or_default() {
            call.abort();
        }
    }

    /// The caller of connection `id`'s tagged call `tag` gave up: it stops (dropping it
    /// withdraws an approval it queued). Returns whether it was running.
    pub(crate) fn cancel(&mut self, id: ClientId, tag: u64) -> bool {
        let Some(calls) = self.running.get_mut(&id) else {
            return false;
        };
        let Some(at) = calls.iter().position(|(t, _)| *t == Some(tag)) else {
            return false;
        };
        let (_, call) = calls.remove(at);
        let running = !call.is_finished();
        call.abort();
        running
    }

    fn add(&mut self, id: ClientId, tag: Option<u64>, call: AbortHandle) {
        let calls = self.running.entry(id).or_default();
        calls.retain(|(_, c)| !c.is_finished());
        calls.push((tag, call));
    }
}

impl Server {
    /// Runs `tool` for connection `id`; the answer is a plain response (a one-shot
    /// connection's only request) or, with `tag`, a tagged one (a link, which carries other
    /// requests meanwhile).
    pub(crate) fn remote_tool(
        &mut self,
        id: ClientId,
        tag: Option<u64>,
        tool: String,
        args: Value,
        from: RemoteCaller,
    ) {
        let backend = std::sync::Arc::new(OwnerBackend {
            tx: self.tx.clone(),
        });
        let peers = self.peers.clone();
        let tools = self.mcp_tools.clone();
        let tx = self.tx.clone();
        let call = tokio::spawn(async move {
            let response =
                crate::mcp::from_afar::serve(backend, peers, tools, &tool, args, from).await;
            let _ = tx.send(match tag {
                Some(tag) => Msg::TaggedReply { id, tag, response },
                None => Msg::Reply { id, response },
            });
        });
        self.remote_calls.add(id, tag, call.abort_handle());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cancelled_tagged_call_stops_and_the_others_go_on() {
        let mut calls = RemoteCalls::default();
        let first = tokio::spawn(std::future::pending::<()>());
        let second = tokio::spawn(std::future::pending::<()>());
        calls.add(7, Some(1), first.abort_handle());
        calls.add(7, Some(2), second.abort_handle());
        assert!(calls.cancel(7, 1));
        assert!(!calls.cancel(7, 1), "forgotten");
        assert!(!calls.cancel(8, 2), "another connection's tag");
        assert!(first.await.is_err_and(|e| e.is_cancelled()));
        assert!(!second.is_finished());
        calls.end(7);
        assert!(second.await.is_err_and(|e| e.is_cancelled()));
    }
}
