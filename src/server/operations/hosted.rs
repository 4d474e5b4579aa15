//! `calyx mcp ...` requests: answered by the server's [`crate::hosted::host::Hosting`] on a
//! blocking thread (file locks, the secret store), the answer sent back through the loop.

use crate::hosted::wire::McpRequest;
use crate::protocol::Response;
use crate::server::messages::Msg;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;

impl Server {
    pub(crate) fn hosted_request(&mut self, id: ClientId, request: McpRequest) {
        let Some(hosting) = self.hosting.clone() else {
            let why = self
                .hosting_unavailable
                .clone()
                .unwrap_or_else(|| "this calyx server does not host MCP servers".into());
            self.reply(id, Response::Error(why));
            return;
        };
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let answer = hosting.handle(request);
            let response = match serde_json::to_value(&answer) {
                Ok(json) => Response::Json(json),
                Err(e) => Response::Error(format!("cannot encode the answer: {e}")),
            };
            let _ = tx.send(Msg::Reply { id, response });
        });
    }
}
