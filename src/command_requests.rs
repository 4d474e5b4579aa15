//! A parsed command turned into the request the server answers, for both places commands come
//! from: `calyx <verb>` in a shell (the client) and the `:` prompt (the server). One table, so
//! the prompt takes the same flags and targets as the CLI; each side says what a missing target
//! or a relative directory means for it ([`Defaults`]).

use crate::cli::Command;
use crate::format;
use crate::protocol::Request;

/// What the place a command was typed in supplies.
pub trait Defaults {
    /// The target of a pane or window command without `-t` (None: the server's own default,
    /// the most recent session's focused pane).
    fn target(&self, given: Option<String>) -> Option<String>;
    /// The target of a whole-session command without `-t` (`kill`, `rename`); the pane's
    /// target unless the place says otherwise.
    fn session_target(&self, given: Option<String>) -> Option<String> {
        self.target(given)
    }
    /// A `-c DIR` made absolute against the place's own directory.
    fn dir(&self, given: Option<String>) -> Option<String>;
    /// Where a new window starts without `-c`.
    fn new_window_dir(&self) -> Option<String>;
}

/// The request `command` is, or the command back when it is not one plain request (attaching,
/// a new session, setup, the agents' and approvals' listings...), for the caller to handle.
pub fn request_for(command: Command, d: &impl Defaults) -> Result<Request, Box<Command>> {
    Ok(match command {
        Command::Ls { .. } => Request::ListSessions,
        Command::ServerUpgrade(args) => Request::ServerUpgrade {
            binary: args.binary,
        },
        Command::ReloadConfig => Request::ReloadConfig,
        Command::KillServer { forget: false } => Request::KillServer,
        Command::KillServer { forget: true } => Request::KillServerForget,
        Command::Kill(t) => Request::KillSession {
            target: d.session_target(t.target),
        },
        Command::KillPane(t) => Request::KillPane {
            target: d.target(t.target),
        },
        Command::KillWindow(t) => Request::KillWindow {
            target: d.target(t.target),
        },
        Command::Select(t) => Request::Select {
            target: d.target(t.target),
        },
        Command::Split(a) => split(a, d),
        Command::NewWindow(a) => new_window(a, d),
        Command::SendKeys(a) => Request::SendKeys {
            target: d.target(a.target),
            keys: a.keys,
            literal: a.literal,
        },
        Command::Capture(a) => Request::Capture {
            target: d.target(a.target),
            scrollback: a.scrollback,
            ansi: a.ansi,
        },
        Command::ListPanes(a) => Request::ListPanes { target: a.target },
        Command::Rename(a) => Request::Rename {
            target: d.session_target(a.target),
            window: a.window,
            name: a.name,
        },
        Command::RenameWindow(a) => Request::Rename {
            target: d.target(a.target),
            window: true,
            name: a.name,
        },
        Command::SetWindowOption(a) => Request::SetWindowOption {
            target: d.target(a.target),
            option: a.option,
            value: a.value,
        },
        Command::SelectLayout(a) => Request::SelectLayout {
            target: d.target(a.target),
            layout: a.layout,
            next: a.next,
            even: a.even,
        },
        Command::ResizePane(a) => Request::ResizePane {
            direction: a.direction(),
            target: d.target(a.target),
            cells: a.adjustment.unwrap_or(1),
            width: a.width,
            height: a.height,
            zoom: a.zoom,
        },
        Command::SwapPane(a) => Request::SwapPane {
            source: d.target(a.source),
            target: d.target(a.target),
            neighbour: match (a.next, a.previous) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            detached: a.detached,
        },
        Command::JoinPane(a) => Request::JoinPane {
            source: d.target(a.source),
            target: d.target(a.target),
            horizontal: a.horizontal,
            before: a.before,
            size: a.size,
            detached: a.detached,
        },
        Command::BreakPane(a) => break_pane(a, d),
        Command::DisplayMessage(a) => Request::DisplayMessage {
            target: d.target(a.target),
            message: a
                .message
                .unwrap_or_else(|| format::DISPLAY_MESSAGE.to_string()),
            print: a.print,
        },
        Command::Approve(a) => Request::Decide {
            id: a.id.id,
            allow: true,
            message: None,
            machine: a.id.machine,
            answered_from: None,
            always: None,
        },
        Command::Deny(a) => Request::Decide {
            id: a.id.id,
            allow: false,
            message: a.message,
            machine: a.id.machine,
            answered_from: None,
            always: None,
        },
        Command::SetOption(a) => Request::SetOption {
            target: a.target,
            name: a.name,
            value: a.value,
            unset: a.unset,
        },
        Command::ShowOptions(a) => Request::ShowOptions {
            name: a.name,
            value_only: a.value_only,
        },
        Command::SourceFile(a) => match d.dir(a.path.map(|p| expand_home(&p))) {
            Some(path) => Request::SourceFile { path },
            None => Request::ReloadConfig,
        },
        Command::ListKeys => Request::ListKeys,
        Command::BindKey(a) => Request::BindKey {
            key: a.key,
            root: a.root,
            repeat: a.repeat,
            command: a.command,
        },
        Command::UnbindKey(a) => Request::UnbindKey {
            key: a.key,
            root: a.root,
        },
        other => return Err(Box::new(other)),
    })
}

/// `split-window`.
pub fn split(a: crate::cli::SplitArgs, d: &impl Defaults) -> Request {
    Request::Split {
        target: d.target(a.target),
        horizontal: a.horizontal,
        detached: a.detached,
        cwd: d.dir(a.cwd),
        command: a.command,
    }
}

/// `new-window`.
pub fn new_window(a: crate::cli::NewWindowArgs, d: &impl Defaults) -> Request {
    Request::NewWindow {
        target: d.target(a.target),
        name: a.name,
        cwd: d.dir(a.cwd).or_else(|| d.new_window_dir()),
        detached: a.detached,
        command: a.command,
    }
}

/// `~/x` as `$HOME/x` (the prompt has no shell to expand it; a shell already has).
fn expand_home(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => crate::paths::home_dir().join(rest).display().to_string(),
        None if path == "~" => crate::paths::home_dir().display().to_string(),
        None => path.to_string(),
    }
}

/// `break-pane`.
pub fn break_pane(a: crate::cli_panes::BreakPaneArgs, d: &impl Defaults) -> Request {
    Request::BreakPane {
        source: d.target(a.source),
        name: a.name,
        detached: a.detached,
    }
}
