//! Tool calls from agents on other machines (issue 20 §4, [`Request::RemoteTool`]): answered
//! off the loop by this server's own MCP tools ([`crate::mcp::from_afar`]), which talk to the
//! loop like any MCP call, so a call that waits (an agent's state, a human's approval) holds
//! nothing here.

use serde_json::Value;

use crate::protocol::{RemoteCaller, Response};
use crate::server::io::mcp_backend::OwnerBackend;
use crate::server::messages::Msg;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;

impl Server {
    pub(crate) fn remote_tool(
        &mut self,
        id: ClientId,
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
        tokio::spawn(async move {
            let response: Response =
                crate::mcp::from_afar::serve(backend, peers, tools, &tool, args, from).await;
            let _ = tx.send(Msg::Reply { id, response });
        });
    }
}
