//! A server whose panes are fakes (no PTY, no process), for the tests that drive it through
//! its messages: the watch, anywhere-rule and cancelled-call tests build it and connect their
//! clients the same way, so it is built here once.

use std::sync::Arc;

use tokio::sync::mpsc;

use super::io::fake_processes::FakeProcesses;
use super::io::terminal::Outgoing;
use super::messages::Msg;
use super::owner::Server;
use crate::config::Config;
use crate::protocol::{ClientMessage, NewSession};

/// A server with `config` on fake panes, its socket path in `dir`, and the receiver of the
/// messages it sends its own loop (pane events, finished calls).
pub(super) fn server_on_fakes(
    dir: &tempfile::TempDir,
    config: Config,
) -> (Server, mpsc::UnboundedReceiver<Msg>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let socket = dir.path().join("server.sock").display().to_string();
    let mut server = Server::new(config, Vec::new(), socket, tx, Default::default());
    server.prompt_history = Default::default();
    server.state.processes = Arc::new(FakeProcesses::default());
    (server, rx)
}

/// The config these tests use: no shell integration files written for the fake panes.
pub(super) fn quiet_config() -> Config {
    Config {
        shell_integration: false,
        ..Config::default()
    }
}

/// Connects client `id`, with a queue of `capacity`; returns what the server sends it.
pub(super) fn connect(server: &mut Server, id: u64, capacity: usize) -> mpsc::Receiver<Outgoing> {
    let (tx, rx) = mpsc::channel(capacity);
    server.handle(Msg::Connected { id, tx });
    rx
}

/// A new session `name` in `dir` running `command`.
pub(super) fn session(dir: &tempfile::TempDir, name: &str, command: &str) -> NewSession {
    NewSession {
        name: Some(name.into()),
        cwd: Some(dir.path().display().to_string()),
        command: vec![command.into()],
        env: Vec::new(),
    }
}

/// Attaches client `id` at 24x80, creating `spec`'s session.
pub(super) fn attach_creating(server: &mut Server, id: u64, spec: NewSession) {
    server.client_message(
        id,
        ClientMessage::Attach {
            target: None,
            create: Some(spec),
            create_if_missing: true,
            rows: 24,
            cols: 80,
            term: None,
            terminal: None,
            opener_env: Vec::new(),
            back_to: None,
        },
    );
}
