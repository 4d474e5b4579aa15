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

/// The calls running for each connection.
#[derive(Default)]
pub(crate) struct RemoteCalls {
    running: HashMap<ClientId, Vec<AbortHandle>>,
}

impl RemoteCalls {
    /// Connection `id` closed: its calls stop.
    pub(crate) fn end(&mut self, id: ClientId) {
        for call in self.running.remove(&id).unwrap_or_default() {
            call.abort();
        }
    }

    fn add(&mut self, id: ClientId, call: AbortHandle) {
        let calls = self.running.entry(id).or_default();
        calls.retain(|c| !c.is_finished());
        calls.push(call);
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
        self.remote_calls.add(id, call.abort_handle());
    }
}
