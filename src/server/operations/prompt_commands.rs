//! What a line typed at `prefix :` does. The line is read by the CLI's own parser
//! (`input::prompt::parse_command`), so the prompt takes the same commands, flags and targets
//! as `calyx <verb>`; a command the CLI sends as a request runs as that same request here, with
//! the client's pane as the default target (as a command run inside the pane defaults to it).

use crate::cli::Command;
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

    /// A CLI command typed at the prompt: the request it is, answered on the status line.
    fn prompt_cli_command(&mut self, client: ClientId, session: SessionId, command: Command) {
        let pane = self
            .state
            .sessions
            .get(&session)
            .and_then(|s| s.active_pane());
        let here = pane.map(|p| format!("%{p}"));
        let or_here = |target: Option<String>| target.or_else(|| here.clone());
        // `-c DIR` relative to the focused pane's directory (the server's has no meaning).
        let base = pane.and_then(|p| self.state.panes.get(&p)).map(|p| p.cwd());
        let dir = |d: Option<String>| {
            d.map(|d| match (&base, std::path::Path::new(&d).is_absolute()) {
                (Some(base), false) => std::path::Path::new(base).join(&d).display().to_string(),
                _ => d,
            })
        };
        let request = match command {
            Command::New(args) => {
                let cwd = dir(args.cwd.clone()).or_else(|| base.clone());
                return self.prompt_new_session(client, session, args, cwd);
            }
            Command::Kill(t) => Request::KillSession {
                target: or_here(t.target),
            },
            Command::KillPane(t) => Request::KillPane {
                target: or_here(t.target),
            },
            Command::KillWindow(t) => Request::KillWindow {
                target: or_here(t.target),
            },
            Command::KillServer => Request::KillServer,
            Command::Split(a) => Request::Split {
                target: or_here(a.target),
                horizontal: a.horizontal,
                detached: a.detached,
                cwd: dir(a.cwd),
                command: a.command,
            },
            Command::NewWindow(a) => Request::NewWindow {
                target: or_here(a.target),
                name: a.name,
                cwd: dir(a.cwd).or_else(|| base.clone()),
                detached: a.detached,
                command: a.command,
            },
            Command::SendKeys(a) => Request::SendKeys {
                target: or_here(a.target),
                keys: a.keys,
                literal: a.literal,
            },
            Command::Select(t) => Request::Select {
                target: or_here(t.target),
            },
            Command::Rename(a) => Request::Rename {
                target: or_here(a.target),
                window: a.window,
                name: a.name,
            },
            Command::RenameWindow(a) => Request::Rename {
                target: or_here(a.target),
                window: true,
                name: a.name,
            },
            Command::ReloadConfig => Request::ReloadConfig,
            Command::SetWindowOption(a) => Request::SetWindowOption {
                target: or_here(a.target),
                option: a.option,
                value: a.value,
            },
            Command::SelectLayout(a) => Request::SelectLayout {
                target: or_here(a.target),
                layout: a.layout,
                next: a.next,
                even: a.even,
            },
            Command::DisplayMessage(a) => Request::DisplayMessage {
                target: or_here(a.target),
                message: a
                    .message
                    .unwrap_or_else(|| crate::format::DISPLAY_MESSAGE.to_string()),
                // The prompt has no stdout: -p shows it here too.
                print: a.print,
            },
            Command::Approve(a) => Request::Decide {
                id: a.id,
                allow: true,
                message: None,
            },
            Command::Deny(a) => Request::Decide {
                id: a.id,
                allow: false,
                message: a.message,
            },
            Command::Ls => Request::ListSessions,
            Command::ListPanes(a) => Request::ListPanes { target: a.target },
            other => {
                let name = command_name(&other);
                return self.message(
                    client,
                    format!("{name} prints to a shell: run `calyx {name}` there"),
                );
            }
        };
        let answer = self.request(request);
        self.show_answer(client, answer);
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
