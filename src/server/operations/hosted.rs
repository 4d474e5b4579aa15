//! `calyx mcp ...` requests: answered by the server's [`crate::hosted::host::Hosting`] on a
//! blocking thread (file locks, the secret store), the answer sent back through the loop.

use crate::hosted::wire::McpRequest;
use crate::protocol::Response;
use crate::server::messages::Msg;
use crate::server::model::ids::ClientId;
use crate::server::owner::Server;

impl Server {
    pub(crate) fn hosted_request(&mut self, id: ClientId, request: McpRequest) {
        if request == McpRequest::Views {
            return self.views_request(id);
        }
        let Some(hosting) = self.hosting.clone() else {
            let why = self
                .hosting_unavailable
                .clone()
                .unwrap_or_else(|| "this calyx server does not host MCP servers".into());
            let response = match request {
                // The list still shows what is saved, each row saying why nothing runs.
                McpRequest::List => unavailable_rows(&why),
                _ => Response::Error(why),
            };
            self.reply(id, response);
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

/// `calyx mcp list` when hosting could not start: the saved servers, each with the reason.
fn unavailable_rows(why: &str) -> Response {
    use crate::hosted::connection::state::ServerState;
    use crate::hosted::host::{render_rows, row, McpAnswer};
    let list = match crate::hosted::server_list::load(&crate::hosted::server_list::servers_file()) {
        Ok(list) => list,
        Err(e) => return Response::Error(e.to_string()),
    };
    let state = ServerState::Failed {
        sentence: why.to_string(),
    };
    let rows: Vec<serde_json::Value> = list.servers.iter().map(|e| row(e, &state)).collect();
    let answer = McpAnswer {
        exit: 0,
        text: render_rows(&rows),
        json: Some(serde_json::Value::Array(rows)),
    };
    match serde_json::to_value(&answer) {
        Ok(json) => Response::Json(json),
        Err(e) => Response::Error(format!("cannot encode the answer: {e}")),
    }
}
