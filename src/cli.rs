//! The command line: every verb calyx understands, with complete `--help` texts.

use clap::{Args, Parser, Subcommand};

/// calyx: a terminal multiplexer for running and supervising coding agents.
///
/// With no command, attaches to the default session (creating it with one pane running $SHELL).
/// Panes live in a per-user server started on demand; detach with the prefix (Ctrl-b) then d.
#[derive(Debug, Parser)]
#[command(name = "calyx", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `--remote TARGET` on plain `calyx`, `attach` and every scripting verb (docs/remote.md).
#[derive(Debug, Args, Default)]
pub struct RemoteArgs {
    /// Talk to the calyx server on another machine through your own ssh: an SSH config alias,
    /// user@host, or ssh://user@host:port. `CALYX_SSH` replaces the ssh command (e.g.
    /// CALYX_SSH='ssh -F ~/.ssh/work_config').
    #[arg(long, global = true, value_name = "TARGET")]
    pub remote: Option<String>,
    /// With --remote: first copy this calyx to the remote's ~/.local/bin when it has none or
    /// another version (same platform only; checksum verified; the version replaced is named).
    #[arg(long, global = true, requires = "remote")]
    pub install: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new session and attach to it (or leave it running in the background with -d).
    #[command(visible_alias = "new-session")]
    New(NewArgs),
    /// Attach this terminal to a session (the most recent one, or the one named by -t).
    #[command(visible_alias = "a")]
    Attach(AttachArgs),
    /// List sessions.
    #[command(visible_alias = "list-sessions")]
    Ls {
        /// This machine's sessions and every saved machine's (`calyx machine add`), each line
        /// with its machine.
        #[arg(long)]
        all: bool,
    },
    /// Kill a session and every pane in it.
    #[command(visible_alias = "kill-session")]
    Kill(TargetArgs),
    /// Close a pane (its program gets SIGHUP, then SIGKILL if it ignores that); the layout heals.
    KillPane(TargetArgs),
    /// Close a window and every pane in it.
    KillWindow(TargetArgs),
    /// Stop the server, killing every session; they stay saved (`calyx ls` lists them) unless
    /// `--forget`.
    KillServer {
        /// Forget the saved sessions too.
        #[arg(long)]
        forget: bool,
    },
    /// Split a pane, starting a new one beside (-h) or below (-v, the default) it.
    #[command(visible_alias = "split-window", disable_help_flag = true)]
    Split(SplitArgs),
    /// Type keys into a pane: tmux key names (Enter, Escape, C-c, Up, F1, M-x) or literal text.
    SendKeys(SendKeysArgs),
    /// Print a pane's text: the visible screen, or with --scrollback its whole history.
    #[command(visible_alias = "capture-pane")]
    Capture(CaptureArgs),
    /// List panes with id, session, window, size, command, pid, title and cwd.
    ListPanes(ListPanesArgs),
    /// Expand a format for a pane (tmux's display-message): -p prints it, else it is shown
    /// in the status line of the clients on that pane's session.
    DisplayMessage(DisplayMessageArgs),
    /// Arrange a window's panes: a preset (even-horizontal, even-vertical, main-horizontal,
    /// main-vertical, tiled), -n the next one, -E every pane equal.
    SelectLayout(SelectLayoutArgs),
    /// Resize a pane: -L/-R/-U/-D move its border N cells (default 1), -x/-y set its width or
    /// height (cells, or N% of the window), -Z zooms it to fill the window or unzooms.
    ResizePane(crate::cli_panes::ResizePaneArgs),
    /// Swap two panes (-s and -t, in any windows), or the target with the previous (-U) or
    /// next (-D) pane of its window; -d keeps the focus where it was.
    SwapPane(crate::cli_panes::SwapPaneArgs),
    /// Move a pane (-s; its program keeps running) beside another (-t), in any window or
    /// session: below, or side by side with -h, before it with -b, -l SIZE big. A window left
    /// empty closes.
    #[command(visible_alias = "move-pane", disable_help_flag = true)]
    JoinPane(crate::cli_panes::JoinPaneArgs),
    /// Move a pane (-s) into a new window of its own (-n NAME), shown unless -d.
    BreakPane(crate::cli_panes::BreakPaneArgs),
    /// Set a window option: synchronize-panes on|off (without a value: toggle), typing into
    /// every pane of the window at once.
    #[command(visible_alias = "setw")]
    SetWindowOption(SetWindowOptionArgs),
    /// Focus a pane (and its window).
    #[command(visible_alias = "select-pane")]
    Select(TargetArgs),
    /// Rename a session (-t SESSION NAME) or, with -w, a window (-t SESSION:WINDOW NAME).
    #[command(visible_alias = "rename-session")]
    Rename(RenameArgs),
    /// Rename a window (-t SESSION:WINDOW NAME; default: the current one).
    RenameWindow(RenameWindowArgs),
    /// Re-read the config file (~/.config/calyx/config.toml) into the running server: keys,
    /// approvals, MCP tools (agents hear the change). Every problem is printed (file, line, key,
    /// what was expected) and everything valid is applied.
    ReloadConfig,
    /// Create a new window (tab) in a session.
    NewWindow(NewWindowArgs),
    /// List agent rows: what the agent in each pane is doing.
    Agents(AgentsArgs),
    /// List approval requests: pending ones with their ids, and recent decisions.
    Approvals(ApprovalsArgs),
    /// Allow a pending approval request (by the id `calyx approvals` shows).
    Approve(ApproveArgs),
    /// Deny a pending approval request, optionally with a message for the agent.
    Deny(DenyArgs),
    /// Forward an agent CLI hook payload (stdin) to the calyx server. Installed by `calyx setup`.
    Hook(HookArgs),
    /// Run the server in the foreground (normally started on demand by the first client).
    Server(ServerArgs),
    /// Wire calyx into the agent CLIs' own configs (MCP entry, hooks, plugin): shows a diff, asks.
    Setup(SetupArgs),
    /// Check each agent CLI's calyx wiring and the endpoint; exits non-zero when something is wrong.
    Doctor(DoctorArgs),
    /// Change a setting of the running server (tmux's set-option): any top-level key of the
    /// config file (tmux's dashes allowed: base-index), checked as the file is and applied at
    /// once as reload-config applies it. Settings are global: -t names a session and sets the
    /// global value. Lasts until the server stops or the config is read again.
    #[command(visible_alias = "set")]
    SetOption(SetOptionArgs),
    /// Show the settings in force, or the one named, as the config file writes them.
    #[command(visible_alias = "show")]
    ShowOptions(ShowOptionsArgs),
    /// Apply a config file as reload-config applies ~/.config/calyx/config.toml (without a path,
    /// that file): every problem reported at once, everything valid applied.
    SourceFile(SourceFileArgs),
    /// List the key bindings in force (bindings made with bind-key included), one
    /// `bind-key [-n] [-r] KEY COMMAND` line each.
    #[command(visible_alias = "lsk")]
    ListKeys,
    /// Bind a key until the server stops: after the prefix, or with -n without it. COMMAND is
    /// any : prompt command (checked now), e.g. `bind-key S split-window -h -c ~`. A key the
    /// config file's [keys] binds gets the file's binding back at reload-config.
    #[command(visible_alias = "bind")]
    BindKey(BindKeyArgs),
    /// Remove a key's binding until the server stops (-n: a key bound without the prefix).
    #[command(visible_alias = "unbind")]
    UnbindKey(UnbindKeyArgs),
    /// Host your own MCP servers: calyx connects to them and republishes their tools to every
    /// agent as `<alias>-<tool>` through the `calyx-mcp` entry. Exit 0, 1 (failure), 2 (bad input).
    Mcp(McpArgs),
    /// Replace the running server with the installed calyx binary (or --binary PATH) while every
    /// pane keeps running: same processes, screens, scrollback, endpoint port and token; attached
    /// clients reconnect by themselves. The new binary is checked first; if it cannot take over,
    /// the running server stays as it was and this says why.
    ServerUpgrade(ServerUpgradeArgs),
    /// Saved machines (~/.config/calyx/machines.toml): add, list, remove, test. `calyx agents
    /// --all` asks each of them too.
    Machine(MachineArgs),
    /// The far side of `calyx --remote`, run by ssh: relays the client protocol between
    /// stdin/stdout and this machine's server socket; with --tty, attaches the terminal ssh
    /// allocated to this machine's server as a local attach does.
    #[command(hide = true)]
    RemoteBridge(RemoteBridgeArgs),
}

/// `calyx remote-bridge`'s options (run by `calyx --remote` through ssh, never by hand).
/// Values other than plain words come as `hex:HEX` (`remote::words`), so no remote shell
/// reads them.
#[derive(Debug, Args)]
pub struct RemoteBridgeArgs {
    /// Do not start the server when none runs.
    #[arg(long)]
    pub no_start: bool,
    /// Attach this terminal (the pty sshd allocated for `ssh -t`) to this machine's server.
    #[arg(long)]
    pub tty: bool,
    /// With --tty: the session to attach to.
    #[arg(short = 't', long = "target", requires = "tty")]
    pub target: Option<String>,
    /// With --tty: create the default session when there is none (plain `calyx --remote`).
    #[arg(long, requires = "tty")]
    pub create: bool,
    /// With --tty: the session of the machine this attach came from (its chooser); the key
    /// bound to last-session detaches back there.
    #[arg(long, requires = "tty")]
    pub back_to: Option<String>,
    /// With --tty: NAME=VALUE of the user's terminal (COLORTERM, TERM_PROGRAM, LANG, LC_*)
    /// for new sessions.
    #[arg(long = "env", requires = "tty")]
    pub env: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MachineArgs {
    #[command(subcommand)]
    pub command: MachineCommand,
}

#[derive(Debug, Subcommand)]
pub enum MachineCommand {
    /// Save a machine: NAME (letters, digits, - and _) for TARGET (an SSH alias, user@host or
    /// ssh://user@host:port, as for --remote).
    Add { name: String, target: String },
    /// List the saved machines.
    #[command(visible_alias = "ls")]
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Forget a saved machine.
    #[command(visible_alias = "rm")]
    Remove { name: String },
    /// Connect to a saved machine without ever prompting (ssh BatchMode): the remote calyx
    /// version and a request's round trip. Exits non-zero when it cannot connect.
    Test { name: String },
}

#[derive(Debug, Args)]
pub struct ServerUpgradeArgs {
    /// The calyx binary to switch to (default: the installed one, by the path the server was
    /// started from).
    #[arg(long, value_name = "PATH")]
    pub binary: Option<String>,
}

#[derive(Debug, Args)]
pub struct SetOptionArgs {
    /// Global (the only scope calyx has; accepted as tmux scripts write it).
    #[arg(short = 'g', long)]
    pub global: bool,
    /// A session: accepted, but the setting is global and the answer says so.
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Back to the default value.
    #[arg(short = 'u', long)]
    pub unset: bool,
    /// The setting: mouse, base-index, prefix, renumber-windows, ... (show-options lists them).
    pub name: String,
    /// The value: on|off for switches (without one, a switch flips), a number, or a word.
    #[arg(allow_hyphen_values = true)]
    pub value: Option<String>,
}

#[derive(Debug, Args)]
pub struct ShowOptionsArgs {
    /// Global (the only scope calyx has).
    #[arg(short = 'g', long)]
    pub global: bool,
    /// A session: accepted; its settings are the global ones.
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Only the value, without the name.
    #[arg(short = 'v', long)]
    pub value_only: bool,
    /// One setting (default: all).
    pub name: Option<String>,
}

#[derive(Debug, Args)]
pub struct SourceFileArgs {
    /// The file (default: the config file).
    pub path: Option<String>,
}

#[derive(Debug, Args)]
pub struct BindKeyArgs {
    /// Without the prefix (tmux's root table): the key no longer reaches the pane.
    #[arg(short = 'n')]
    pub root: bool,
    /// Repeatable: within 500 ms, the key works again without the prefix (as the resize keys).
    #[arg(short = 'r')]
    pub repeat: bool,
    /// The key: tmux's names (C-a, M-x, F5, Up, %).
    pub key: String,
    /// The command and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct UnbindKeyArgs {
    /// A key bound without the prefix.
    #[arg(short = 'n')]
    pub root: bool,
    /// The key.
    pub key: String,
}

#[derive(Debug, Args)]
pub struct NewArgs {
    /// Session name (default: the next free number).
    #[arg(short = 's', long = "session-name")]
    pub name: Option<String>,
    /// Do not attach: leave the session running in the background.
    #[arg(short = 'd', long)]
    pub detached: bool,
    /// Working directory of the first pane (default: the current directory).
    #[arg(short = 'c', long = "cwd")]
    pub cwd: Option<String>,
    /// Width of a detached session (default: this terminal's, else 80).
    #[arg(short = 'x', long = "width")]
    pub width: Option<u16>,
    /// Height of a detached session (default: this terminal's, else 24).
    #[arg(short = 'y', long = "height")]
    pub height: Option<u16>,
    /// Print the new session (tmux's -P): by default `#{session_name}:`, or as -F says.
    #[arg(short = 'P', long = "print")]
    pub print: bool,
    /// Format for -P (implies -P): tmux's variables, e.g. '#{pane_id}', '#{session_name}',
    /// '#{window_index}', '#{pane_pid}', '#{pane_current_path}', '#{calyx_surface_id}'.
    #[arg(short = 'F', long = "format")]
    pub format: Option<String>,
    /// Command and arguments for the first pane (default: $SHELL).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AttachArgs {
    /// Session to attach to (name or id; default: the most recently used).
    #[arg(short = 't', long)]
    pub target: Option<String>,
}

#[derive(Debug, Args)]
pub struct TargetArgs {
    /// Target: a pane id (%3 or 3), a session name, or session:window.pane.
    #[arg(short = 't', long)]
    pub target: Option<String>,
}

#[derive(Debug, Args)]
pub struct SplitArgs {
    /// Print help (-h means horizontal here, as in tmux).
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// Pane to split (default: the focused pane of the most recent session).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Split left/right: the new pane goes to the right.
    #[arg(short = 'h', long = "horizontal", conflicts_with = "vertical")]
    pub horizontal: bool,
    /// Split top/bottom: the new pane goes below (the default).
    #[arg(short = 'v', long = "vertical")]
    pub vertical: bool,
    /// Keep focus on the current pane instead of moving it to the new one.
    #[arg(short = 'd', long)]
    pub detached: bool,
    /// Working directory of the new pane (default: the split pane's).
    #[arg(short = 'c', long = "cwd")]
    pub cwd: Option<String>,
    /// Print the new pane (tmux's -P): by default `#{session_name}:#{window_index}.#{pane_index}`, or as -F says.
    #[arg(short = 'P', long = "print")]
    pub print: bool,
    /// Format for -P (implies -P): tmux's variables, e.g. '#{pane_id}', '#{session_name}',
    /// '#{window_index}', '#{pane_pid}', '#{pane_current_path}', '#{calyx_surface_id}'.
    #[arg(short = 'F', long = "format")]
    pub format: Option<String>,
    /// Command and arguments for the new pane (default: $SHELL).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SendKeysArgs {
    /// Pane to type into.
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Send every argument as literal text, with no key-name lookup.
    #[arg(short = 'l', long)]
    pub literal: bool,
    /// Keys: names like Enter, Escape, Tab, C-c, M-x, Up, F1, PageUp, or literal text.
    #[arg(required = true, allow_hyphen_values = true)]
    pub keys: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// Pane to read.
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Include the whole retained history above the screen.
    #[arg(short = 'S', long)]
    pub scrollback: bool,
    /// Keep colors and attributes as ANSI escape sequences.
    #[arg(short = 'e', long)]
    pub ansi: bool,
}

#[derive(Debug, Args)]
pub struct ListPanesArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Only panes of this session.
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// One line per pane in this format instead of the table (tmux's variables, e.g.
    /// '#{pane_id} #{pane_current_path}').
    #[arg(short = 'F', long = "format", conflicts_with = "json")]
    pub format: Option<String>,
}

#[derive(Debug, Args)]
pub struct DisplayMessageArgs {
    /// Print to stdout instead of the status line.
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// Pane the variables describe (default: this pane inside calyx, else the focused one).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// The text, with tmux's variables such as '#{pane_id}' or '#{session_name}' (default:
    /// tmux's '[#{session_name}] #{window_index}:#{window_name}, current pane #{pane_index}').
    pub message: Option<String>,
}

#[derive(Debug, Args)]
pub struct SetWindowOptionArgs {
    /// Window (or a pane in it; default: this pane's window inside calyx).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// The option: synchronize-panes.
    pub option: String,
    /// on or off (without it, a switch toggles).
    pub value: Option<String>,
}

#[derive(Debug, Args)]
pub struct SelectLayoutArgs {
    /// Window (or a pane in it; default: this pane's window inside calyx, else the most
    /// recent session's).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// The next preset after the window's last one (prefix Space).
    #[arg(short = 'n', long = "next", conflicts_with_all = ["even", "layout"])]
    pub next: bool,
    /// Every pane the same size, keeping the arrangement (prefix E).
    #[arg(short = 'E', long = "even", conflicts_with = "layout")]
    pub even: bool,
    /// even-horizontal, even-vertical, main-horizontal, main-vertical or tiled (a unique
    /// start of a name is enough).
    pub layout: Option<String>,
}

#[derive(Debug, Args)]
pub struct RenameWindowArgs {
    /// Window as SESSION:WINDOW (default: this pane's window inside calyx, else the most recent).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// The new name.
    pub name: String,
}

#[derive(Debug, Args)]
pub struct RenameArgs {
    /// Session (or with -w, window as SESSION:WINDOW) to rename (default: the most recent).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Rename a window instead of a session.
    #[arg(short = 'w', long)]
    pub window: bool,
    /// The new name.
    pub name: String,
}

#[derive(Debug, Args)]
pub struct NewWindowArgs {
    /// Session to add the window to.
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Window name.
    #[arg(short = 'n', long)]
    pub name: Option<String>,
    /// Working directory of the window's pane.
    #[arg(short = 'c', long = "cwd")]
    pub cwd: Option<String>,
    /// Keep the current window selected.
    #[arg(short = 'd', long)]
    pub detached: bool,
    /// Print the new window's pane (tmux's -P): by default `#{session_name}:#{window_index}.#{pane_index}`, or as -F says.
    #[arg(short = 'P', long = "print")]
    pub print: bool,
    /// Format for -P (implies -P): tmux's variables, e.g. '#{pane_id}', '#{session_name}',
    /// '#{window_index}', '#{pane_pid}', '#{pane_current_path}', '#{calyx_surface_id}'.
    #[arg(short = 'F', long = "format")]
    pub format: Option<String>,
    /// Command and arguments (default: $SHELL).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// This machine's rows and every saved machine's (`calyx machine add`), each with its
    /// machine; an unreachable machine is named, never waited for long.
    #[arg(long)]
    pub all: bool,
    #[command(subcommand)]
    pub command: Option<AgentsCommand>,
}

#[derive(Debug, Subcommand)]
pub enum AgentsCommand {
    /// Show the last events received for a pane and which rule put its agent in its state.
    Explain {
        /// Pane id.
        pane: String,
    },
}

#[derive(Debug, Args)]
pub struct HookArgs {
    /// Agent CLI kind: claude-code, codex, opencode, hermes, grok, pi, gemini, copilot, kimi,
    /// antigravity, cursor.
    pub kind: String,
    /// This hook is a permission gate: wait for the human's answer and print it for the CLI.
    #[arg(long)]
    pub approval: bool,
}

#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Stay attached to the terminal instead of detaching into the background (for debugging).
    #[arg(long)]
    pub foreground: bool,
    /// Take over from the server this process replaced (`server-upgrade` execs with it): the
    /// state is in this descriptor.
    #[arg(long, value_name = "FD", hide = true)]
    pub adopt: Option<i32>,
    /// `server-upgrade`'s dry run: read a handed-over state on stdin, say whether it can be
    /// taken over, and exit.
    #[arg(long, hide = true)]
    pub check_adopt: bool,
}

#[derive(Debug, Args)]
pub struct SetupArgs {
    /// Only these CLIs (space- or comma-separated), even when not found on PATH: claude-code,
    /// codex, opencode, hermes, grok, pi, gemini, copilot, kimi, antigravity, cursor.
    #[arg(long = "agent", value_name = "NAME", num_args = 1.., value_delimiter = ',')]
    pub agents: Vec<String>,
    /// Apply without asking.
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Only print the diff; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Remove exactly what calyx wrote (same diff and confirmation).
    #[arg(long)]
    pub uninstall: bool,
    /// Report the state of each CLI instead (same as `calyx doctor`).
    #[arg(long)]
    pub status: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Only these CLIs (space- or comma-separated).
    #[arg(long = "agent", value_name = "NAME", num_args = 1.., value_delimiter = ',')]
    pub agents: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ApprovalsArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Only requests still waiting.
    #[arg(long)]
    pub pending: bool,
    /// The "always" rules set in the approval panel instead (revoke one there: `r`, then `d`).
    #[arg(long, conflicts_with = "pending")]
    pub rules: bool,
}

#[derive(Debug, Args)]
pub struct ApproveArgs {
    /// The request id, or MACHINE:ID for a saved machine's request (`calyx approvals` shows
    /// both).
    pub id: ApprovalRef,
}

#[derive(Debug, Args)]
pub struct DenyArgs {
    /// The request id, or MACHINE:ID for a saved machine's request.
    pub id: ApprovalRef,
    /// A message for the agent (CLIs that take one pass it to the model).
    #[arg(short = 'm', long)]
    pub message: Option<String>,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Debug, Subcommand)]
pub enum McpCommand {
    /// One row per server: alias, name, transport, command or URL, enabled, status. Reads the
    /// servers file (and says so) when no calyx server runs.
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Every MCP App view: id, pane, server, tool, agent, state, URL, whether a page is open.
    Views {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Add a server: stdio (`calyx mcp add ev -- node server.js stdio`) or HTTP (`--url URL`).
    Add(McpAddArgs),
    /// Change a server (anything but its alias); flags as for add.
    Edit(McpEditArgs),
    /// Switch a server on.
    Enable(McpAliasArg),
    /// Switch a server off (its tools go away at once).
    Disable(McpAliasArg),
    /// Reconnect a server now (after a failure).
    Retry(McpAliasArg),
    /// Remove a server and its stored secrets, at once, without asking.
    Remove(McpAliasArg),
    /// Import servers from an agent CLI's JSON (`mcpServers`, OpenCode's `mcp`, a bare map or
    /// one server): prints the preview, asks once on a terminal.
    Import(McpImportArgs),
    /// Published names next to original ones, `[UI]` and `[app only]` marks, excluded tools
    /// with the reason, instructions, protocol version, server name and version, last failure
    /// and stderr tail.
    Details {
        /// The server's alias.
        alias: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Sign in to an HTTP server that asks for it (OAuth): opens the page on a local desktop,
    /// otherwise prints it with the `ssh -L` line to forward the redirect port; `--paste` reads
    /// the address the browser failed to load from stdin instead.
    Login(McpLoginArgs),
    /// Sign out of a server: deletes its tokens (the client secret stays), sends no revocation.
    Logout(McpAliasArg),
    /// The MCP conformance suite's client under test (scripts/mcp-conformance-client.sh): runs
    /// calyx's connection, OAuth and call code against URL for MCP_CONFORMANCE_SCENARIO.
    #[command(hide = true)]
    ConformanceClient {
        /// The scenario server's URL (the suite appends it).
        url: String,
    },
}

#[derive(Debug, Args)]
pub struct McpAliasArg {
    /// The server's alias.
    pub alias: String,
    /// Print the outcome as JSON (docs/mcp-hosting.md has the shape).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct McpLoginArgs {
    /// The server's alias.
    pub alias: String,
    /// Print the sign-in address instead of opening a browser.
    #[arg(long)]
    pub no_browser: bool,
    /// After approving, paste the address the browser failed to load (one line on stdin).
    #[arg(long)]
    pub paste: bool,
    /// Print the outcome as JSON (docs/mcp-hosting.md has the shape).
    #[arg(long)]
    pub json: bool,
}

/// Flags shared by `calyx mcp add` and `calyx mcp edit`.
#[derive(Debug, Args, Default)]
pub struct McpServerFlags {
    /// Display name (1-64 characters; default: the alias).
    #[arg(long)]
    pub name: Option<String>,
    /// Working directory of a stdio server (must exist).
    #[arg(long)]
    pub cwd: Option<String>,
    /// Environment variable of a stdio server; without `=VALUE` the value is asked without
    /// echo on a terminal (refused without one). Values are kept in the secret store.
    #[arg(long = "env", value_name = "KEY[=VALUE]")]
    pub env: Vec<String>,
    /// URL of an HTTP server (http:// or https://).
    #[arg(long)]
    pub url: Option<String>,
    /// The server speaks the legacy HTTP+SSE transport (2024-11-05).
    #[arg(long)]
    pub legacy_sse: bool,
    /// Request header of an HTTP server, 'Name: value' (the value is kept in the secret store).
    #[arg(long = "header", value_name = "'Name: value'")]
    pub headers: Vec<String>,
    /// OAuth client ID of an app registered with the server's authorization server.
    #[arg(long)]
    pub client_id: Option<String>,
    /// OAuth client authentication: none, post or basic.
    #[arg(long, value_name = "none|post|basic")]
    pub client_auth: Option<String>,
    /// Read the OAuth client secret from stdin (one line).
    #[arg(long)]
    pub client_secret_stdin: bool,
    /// Use the fixed redirect port 41890 for sign-in.
    #[arg(long)]
    pub fixed_redirect_port: bool,
}

#[derive(Debug, Args)]
pub struct McpAddArgs {
    /// The alias: a lowercase letter and up to 9 lowercase letters or digits; tools are
    /// published as `<alias>-<tool>`.
    pub alias: String,
    #[command(flatten)]
    pub flags: McpServerFlags,
    /// Print the outcome as JSON (docs/mcp-hosting.md has the shape).
    #[arg(long)]
    pub json: bool,
    /// The command and its arguments of a stdio server (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct McpEditArgs {
    /// The server's alias (it cannot change).
    pub alias: String,
    #[command(flatten)]
    pub flags: McpServerFlags,
    /// Stop setting this environment variable (and delete its stored value).
    #[arg(long, value_name = "KEY")]
    pub unset_env: Vec<String>,
    /// Stop sending this header (and delete its stored value).
    #[arg(long, value_name = "NAME")]
    pub unset_header: Vec<String>,
    /// Turn the legacy HTTP+SSE switch off.
    #[arg(long, conflicts_with = "legacy_sse")]
    pub no_legacy_sse: bool,
    /// Print the outcome as JSON (docs/mcp-hosting.md has the shape).
    #[arg(long)]
    pub json: bool,
    /// A new command and arguments of a stdio server (after `--`).
    #[arg(last = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct McpImportArgs {
    /// The JSON file, or `-` (the default) for stdin.
    pub file: Option<String>,
    /// What happens to a server whose alias is taken: rename (append a digit), replace, skip.
    #[arg(long, default_value = "rename", value_name = "rename|replace|skip")]
    pub on_conflict: String,
    /// Print the preview only.
    #[arg(long)]
    pub dry_run: bool,
    /// Import without asking (needed without a terminal).
    #[arg(short = 'y', long)]
    pub yes: bool,
    /// Print the preview and the outcome as one JSON document (the text preview goes to
    /// stderr when asking on a terminal).
    #[arg(long)]
    pub json: bool,
}

/// Which approval request `approve` / `deny` answer: `7` on this machine, `build:7` on the
/// saved machine `build` (answered over its link by the local server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRef {
    pub machine: Option<String>,
    pub id: u64,
}

impl std::str::FromStr for ApprovalRef {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (machine, id) = match text.rsplit_once(':') {
            Some((machine, id)) => (Some(machine), id),
            None => (None, text),
        };
        let id = id
            .parse::<u64>()
            .map_err(|_| format!("{text:?}: an approval id is a number, or MACHINE:NUMBER"))?;
        if let Some(name) = machine {
            crate::machines::store::check_name(name).map_err(|e| format!("{e:#}"))?;
        }
        Ok(Self {
            machine: machine.map(str::to_string),
            id,
        })
    }
}

#[cfg(test)]
mod approval_ref_tests {
    use super::ApprovalRef;

    #[test]
    fn ids_here_and_on_saved_machines_parse_and_bad_ones_are_refused() {
        let here: ApprovalRef = "7".parse().expect("7");
        assert_eq!((here.machine, here.id), (None, 7));
        let there: ApprovalRef = "build:12".parse().expect("build:12");
        assert_eq!((there.machine.as_deref(), there.id), (Some("build"), 12));
        for bad in [
            "",
            "x",
            "build:",
            ":3",
            "a b:3",
            "local:3",
            "build:-1",
            "\u{1b}[2J:1",
        ] {
            assert!(bad.parse::<ApprovalRef>().is_err(), "{bad:?}");
        }
    }
}
