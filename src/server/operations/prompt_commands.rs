//! What a line typed at `prefix :` does. The line is read by the CLI's own parser
//! (`input::prompt::parse_command`), so the prompt takes the same commands, flags and targets
//! as `calyx <verb>`; a command the CLI sends as a request runs as that same request here, with
//! the client's pane as the default target (as a command run inside the pane defaults to it).

use crate::cli::Command;
use crate::command_requests::{self, Defaults};
use crate::protocol::{NewSession, Request, Response};
use crate::server::input::prompt::{self, PromptCommand};
use crate::server::model::state::{ClientId, SessionId};
use crate::server::owner::Server;

impl Server {
    /// Runs a line typed at the `:` prompt.
    pub(crate) fn run_prompt_command(&mut self, client: ClientId, line: &str) {
        let Some(session) = self.client_session(client) else {
            return;
        };
        match prompt::parse_command(line) {
            PromptCommand::Nothing => {}
            PromptCommand::Bound(action) => self.perform(client, action),
            PromptCommand::SelectWindow { index, arg } => {
                if !index.is_some_and(|n| self.select_window_number(session, n)) {
                    self.message(client, format!("no window {arg}"));
                }
            }
            PromptCommand::Refused(why) => self.message(client, why),
            PromptCommand::Cli(command) => self.prompt_cli_command(client, session, *command),
        }
    }

    /// A CLI command typed at the prompt: the request it is (built by the same table as the
    /// CLI's), answered on the status line.
    fn prompt_cli_command(&mut self, client: ClientId, session: SessionId, command: Command) {
        let here = PromptDefaults::of(self, session);
        let command = match command {
            Command::New(args) => {
                let cwd = here.dir(args.cwd.clone()).or_else(|| here.new_window_dir());
                return self.prompt_new_session(client, session, args, cwd);
            }
            // The key help overlay lists the same bindings, scrollable (tmux's list-keys view).
            Command::ListKeys => return self.perform(client, crate::commands::Action::Help),
            // Its whole point is the text it prints: that needs a shell.
            capture @ Command::Capture(_) => capture,
            other => match command_requests::request_for(other, &here) {
                Ok(request) => {
                    let answer = self.request(request);
                    return self.show_answer(client, answer);
                }
                Err(other) => *other,
            },
        };
        let name = command_name(&command);
        self.message(
            client,
            format!("{name} prints to a shell: run `calyx {name}` there"),
        );
    }

    /// `new-session` from the prompt: made at the size of the client's session, and the client
    /// switched to it unless `-d`.
    fn prompt_new_session(
        &mut self,
        client: ClientId,
        session: SessionId,
        args: crate::cli::NewArgs,
        cwd: Option<String>,
    ) {
        let (rows, cols, env) = match self.state.sessions.get(&session) {
            Some(s) => (s.rows, s.cols, s.env.clone()),
            None => return,
        };
        let spec = NewSession {
            name: args.name,
            cwd,
            command: args.command,
            env,
        };
        match self.request(Request::NewSession { spec, rows, cols }) {
            Response::Created { pane, .. } if !args.detached => {
                if let Some((made, _)) = self.state.locate(pane) {
                    self.switch_client(client, made);
                }
            }
            answer => self.show_answer(client, answer),
        }
    }

    /// A request's answer on the client's status line: errors and texts as they are, lists
    /// as a one-line summary; nothing for a plain success.
    fn show_answer(&mut self, client: ClientId, answer: Response) {
        let text = match answer {
            Response::Ok | Response::Created { .. } | Response::Json(_) => return,
            Response::Error(e) => e,
            Response::Text(t) => t.trim_end().replace('\n', "; "),
            Response::Sessions(s) => {
                let names: Vec<String> = s.iter().map(|s| s.name.clone()).collect();
                format!("{} sessions: {}", names.len(), names.join(", "))
            }
            Response::Panes(p) => {
                let ids: Vec<String> = p.iter().map(|p| p.id.clone()).collect();
                format!("{} panes: {}", ids.len(), ids.join(" "))
            }
        };
        self.message(client, text);
    }
}

/// A command's name as typed (for "run it from a shell").
fn command_name(command: &Command) -> String {
    let debug = format!("{command:?}");
    let variant = debug.split(['(', ' ', '{']).next().unwrap_or("");
    let mut name = String::new();
    for (i, c) in variant.chars().enumerate() {
        if c.is_uppercase() && i > 0 {
            name.push('-');
        }
        name.extend(c.to_lowercase());
    }
    name
}

/// What the prompt supplies to a command: the client's focused pane as the default target of
/// every command (tmux's rule for a command typed in a session), directories relative to that
/// pane's own.
struct PromptDefaults {
    here: Option<String>,
    base: Option<String>,
}

impl PromptDefaults {
    fn of(server: &Server, session: SessionId) -> Self {
        let pane = server
            .state
            .sessions
            .get(&session)
            .and_then(|s| s.active_pane());
        PromptDefaults {
            here: pane.map(|p| format!("%{p}")),
            base: pane
                .and_then(|p| server.state.panes.get(&p))
                .map(|p| p.cwd()),
        }
    }
}

impl Defaults for PromptDefaults {
    fn target(&self, given: Option<String>) -> Option<String> {
        given.or_else(|| self.here.clone())
    }

    fn dir(&self, given: Option<String>) -> Option<String> {
        given.map(
            |d| match (&self.base, std::path::Path::new(&d).is_absolute()) {
                (Some(base), false) => std::path::Path::new(base).join(&d).display().to_string(),
                _ => d,
            },
        )
    }

    fn new_window_dir(&self) -> Option<String> {
        self.base.clone()
    }
}
