//! The client side: start the server on demand, send one-shot requests, and attach a terminal.
//!
//! An attached client owns nothing but its terminal: raw mode, the alternate screen, mouse and
//! paste modes; it forwards input bytes and draws what the server sends. Losing the terminal
//! (SIGHUP from a dropped SSH connection, a killed terminal) only detaches.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context};
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

use crate::paths;
use crate::protocol::{
    encode_message, encode_raw, read_frame, ClientMessage, Frame, Request, Response, ServerMessage,
    TerminalDevice,
};

/// Connects to the server, starting it when none runs. With `--remote`, that is the server on
/// the remote machine, through ssh (`remote::link`).
pub async fn connect_or_start() -> anyhow::Result<UnixStream> {
    if let Some(target) = crate::remote::target() {
        return connect_remote(target, true, false).await;
    }
    let socket = paths::socket_path();
    if let Ok(stream) = UnixStream::connect(&socket).await {
        return Ok(stream);
    }
    start_server(&socket)?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut delay = Duration::from_millis(2);
    loop {
        match UnixStream::connect(&socket).await {
            Ok(stream) => return Ok(stream),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(e).with_context(|| {
                    format!("the calyx server did not start on {}", socket.display())
                })
            }
            Err(_) => {
                tokio::time::sleep(delay).await;
                delay = (delay * 2).min(Duration::from_millis(50));
            }
        }
    }
}

/// Connects to a running server only (for commands that make no sense without one).
pub async fn connect_existing() -> anyhow::Result<UnixStream> {
    if let Some(target) = crate::remote::target() {
        return connect_remote(target, false, false).await;
    }
    let socket = paths::socket_path();
    UnixStream::connect(&socket)
        .await
        .with_context(|| format!("no calyx server running on {}", socket.display()))
}

async fn connect_remote(
    target: &crate::remote::Target,
    start: bool,
    batch: bool,
) -> anyhow::Result<UnixStream> {
    let options = crate::remote::link::Options { start, batch };
    Ok(crate::remote::link::connect(target, options).await?.stream)
}

/// Starts `calyx server` in the background, in its own session, detached from this terminal.
fn start_server(socket: &Path) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("failed to find the calyx binary")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("server")
        .env("CALYX_SOCKET", socket)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: the closure runs in the forked child before exec, where only async-signal-safe
    // calls are allowed: nix's setsid is the bare setsid(2) call (no allocation, no lock). It
    // cannot fail in a fresh child (not a group leader); if it did, the server would merely
    // share this terminal's session. std has no safe way to start a new session (`process_group`
    // is setpgid, which keeps the controlling terminal), so `pre_exec` stays.
    unsafe {
        cmd.pre_exec(|| {
            let _ = nix::unistd::setsid();
            Ok(())
        });
    }
    cmd.spawn().context("failed to start the calyx server")?;
    Ok(())
}

/// Sends one request and waits for its response.
pub async fn request(stream: &mut UnixStream, request: Request) -> anyhow::Result<Response> {
    stream
        .write_all(&encode_message(&ClientMessage::Request(request)))
        .await?;
    loop {
        match read_frame::<_, ServerMessage>(stream)
            .await
            .with_context(|| {
                format!(
                    "the server closed the connection without answering (if it runs an older \
                     calyx than this {}, `calyx server-upgrade` switches it to this binary)",
                    env!("CARGO_PKG_VERSION")
                )
            })? {
            Frame::Message(ServerMessage::Response(r)) => return Ok(r),
            Frame::Message(ServerMessage::Exit { message }) => bail!("{message}"),
            Frame::Raw(_)
            | Frame::Message(
                ServerMessage::Attached { .. }
                | ServerMessage::Upgrading { .. }
                | ServerMessage::SwitchRemote { .. }
                | ServerMessage::Snapshot(_)
                | ServerMessage::Tagged { .. }
                | ServerMessage::Adopted,
            ) => continue,
        }
    }
}

/// The terminal size of stdin/stdout, if it is a terminal.
pub fn terminal_size() -> Option<(u16, u16)> {
    crossterm::terminal::size().ok().map(|(c, r)| (r, c))
}

/// Environment passed to new sessions: this client's, without variables that would confuse a
/// program in a pane about which multiplexer it runs in.
///
/// With `--remote` only what describes the user's terminal travels (TERM, COLORTERM, the
/// locale): this machine's PATH, HOME or SHELL would be wrong there, where the panes inherit
/// the remote server's own environment.
pub fn session_env() -> Vec<(String, String)> {
    let remote = crate::remote::target().is_some();
    std::env::vars()
        .filter(|(k, _)| !remote || is_terminal_var(k))
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "TMUX" | "TMUX_PANE" | "CALYX_SOCKET" | "ZELLIJ" | "ZELLIJ_SESSION_NAME"
            )
        })
        .collect()
}

/// The variables that decide how the server opens a sign-in page for this client. A remote
/// server cannot reach this machine's display or browser: it gets none of them, so it prints
/// the address instead of starting a browser on its own machine.
pub fn opener_env() -> Vec<(String, String)> {
    let mut env = crate::hosted::oauth::open::opener_env();
    if crate::remote::target().is_some() {
        env.retain(|(k, _)| k == "USER");
    }
    env
}

/// The variables that describe the user's terminal rather than their machine.
pub(crate) fn is_terminal_var(name: &str) -> bool {
    matches!(name, "TERM" | "COLORTERM" | "LANG" | "TERM_PROGRAM") || name.starts_with("LC_")
}

/// Restores the terminal even when attach ends by an error.
struct TerminalGuard;

/// Ends with the query of the terminal's default foreground and background (OSC 10, OSC 11):
/// the answers come back as input, and the server gives MCP App pages the terminal's theme.
/// Terminals that do not know the query ignore it.
const ENTER: &str = "\x1b[?1049h\x1b[H\x1b[2J\x1b[?2004h\x1b[?1004h\x1b]10;?\x1b\\\x1b]11;?\x1b\\";
const MOUSE_ON: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1006h";
/// Every mode calyx may have turned on, including any-motion mouse reports (1003), which the
/// server turns on while a pane asks for them.
pub(crate) const LEAVE: &str =
    "\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[0 q\x1b[?25h\x1b[0m\x1b[?1049l";

impl TerminalGuard {
    /// Sets the terminal up again under a guard that already restores it on leaving.
    fn keep(self) {
        std::mem::forget(self);
    }

    fn enter(mouse: bool) -> anyhow::Result<Self> {
        crossterm::terminal::enable_raw_mode().context("failed to put the terminal in raw mode")?;
        let mut out = std::io::stdout();
        let _ = out.write_all(ENTER.as_bytes());
        if mouse {
            let _ = out.write_all(MOUSE_ON.as_bytes());
        }
        let _ = out.flush();
        Ok(Self)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let mut out = std::io::stdout();
        let _ = out.write_all(LEAVE.as_bytes());
        let _ = out.flush();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

type SharedWriter = std::sync::Arc<std::sync::Mutex<std::os::unix::net::UnixStream>>;

/// Writes one whole frame to the server. The socket is shared with the async reader and so is
/// non-blocking: a full socket buffer is waited out briefly rather than failing.
fn send_frame(writer: &SharedWriter, frame: &[u8]) -> std::io::Result<()> {
    let mut stream = writer
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut rest = frame;
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !rest.is_empty() {
        match stream.write(rest) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => rest = &rest[n..],
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Why the stdin forwarder stopped when the server's socket refused its write.
const SERVER_EXITED: &str = "server exited";

/// Sends a frame; when the socket refuses it, tries again (for [`RECONNECT_TIME`]) in case the
/// server is replacing itself: the attach loop puts the new connection behind `writer`, and
/// the keys typed meanwhile reach the new server instead of being lost.
fn send_surviving_upgrade(writer: &SharedWriter, frame: &[u8]) -> bool {
    let deadline = std::time::Instant::now() + RECONNECT_TIME;
    loop {
        if send_frame(writer, frame).is_ok() {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Whether the stdin forwarder must leave the terminal alone: set while a remote attach the
/// chooser started runs on it (see `remote::switch`).
type Paused = std::sync::Arc<std::sync::atomic::AtomicBool>;

/// Waits until stdin has bytes to read, for at most a tenth of a second, so a paused
/// forwarder never sits in a read that would take the next key from the remote attach.
fn stdin_ready() -> bool {
    use nix::poll::{poll, PollFd, PollFlags};
    use std::os::fd::AsFd;
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(stdin.as_fd(), PollFlags::POLLIN)];
    // An error (a signal) is read as "look again".
    poll(&mut fds, 100u16).is_ok_and(|n| n > 0)
}

/// Reads stdin on its own thread and sends each read to the server as an input frame. The
/// channel says why it stopped. `back`: this is a remote attach the chooser started, and
/// `prefix L` in its keystrokes ends it (`remote::switch::BACK_MESSAGE`).
fn spawn_stdin_forwarder(
    writer: SharedWriter,
    paused: Paused,
    mut back: Option<crate::remote::switch::BackWatch>,
) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let _ = std::thread::Builder::new()
        .name("calyx-stdin".into())
        .spawn(move || {
            use std::io::Read;
            use std::sync::atomic::Ordering;
            let mut stdin = std::io::stdin();
            let mut buf = vec![0u8; 64 * 1024];
            let why = loop {
                if paused.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(50));
                    continue;
                }
                if !stdin_ready() {
                    continue;
                }
                match stdin.read(&mut buf) {
                    Ok(0) => break "detached (lost the terminal)",
                    Ok(n) => {
                        let stop = back.as_mut().and_then(|w| w.feed(&buf[..n]));
                        let send = stop.unwrap_or(n);
                        if send > 0 && !send_surviving_upgrade(&writer, &encode_raw(&buf[..send])) {
                            break SERVER_EXITED;
                        }
                        if stop.is_some() {
                            break crate::remote::switch::BACK_MESSAGE;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break "detached (lost the terminal)",
                }
            };
            let _ = tx.send(why.to_string());
        });
    rx
}

/// This process's terminal, when the server may read and write it directly: stdin and stdout
/// are the same terminal device (output redirected elsewhere keeps frames here). Linux only:
/// elsewhere (macOS) kqueue does not report terminal readiness, as tmux also found, so the
/// client keeps forwarding.
fn own_terminal() -> Option<TerminalDevice> {
    use std::io::IsTerminal;
    if !cfg!(target_os = "linux")
        || !std::io::stdin().is_terminal()
        || !std::io::stdout().is_terminal()
    {
        return None;
    }
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let stat = |fd: std::os::fd::BorrowedFd<'_>| {
        let file = std::fs::File::from(fd.try_clone_to_owned().ok()?);
        file.metadata().ok()
    };
    let input = stat(std::io::stdin().as_fd())?;
    let output = stat(std::io::stdout().as_fd())?;
    if input.rdev() != output.rdev() {
        return None;
    }
    let name = nix::unistd::ttyname(std::io::stdin()).ok()?;
    Some(TerminalDevice {
        path: name.to_str()?.to_string(),
        dev: input.dev(),
        ino: input.ino(),
    })
}

/// How long a client leaving on SIGTERM waits for the server to finish drawing on its terminal
/// before restoring it anyway.
const DETACH_WAIT: Duration = Duration::from_secs(1);

/// How long a client whose server is upgrading (`calyx server-upgrade`) tries to reconnect.
const RECONNECT_TIME: Duration = Duration::from_secs(10);

/// How one connection of an attached client ended.
enum Ended {
    /// Detached, the session ended, the server went away: the message to print.
    Done(String),
    /// The server replaced itself: attach to this session again on a new connection.
    Upgrading(String),
    /// The connection to a remote server dropped (`--remote`): connect again over ssh.
    Lost,
    /// The chooser switched this client to a saved machine's session (`remote::switch`).
    Switch {
        machine: String,
        session: String,
        back: String,
    },
}

/// Connects again to the socket of a server that is replacing itself in place: the listener
/// stays open through the exec, so this succeeds at once or within the new server's start.
async fn reconnect() -> anyhow::Result<UnixStream> {
    let socket = paths::socket_path();
    let deadline = tokio::time::Instant::now() + RECONNECT_TIME;
    loop {
        // A remote server upgrading itself: a new bridge over a new ssh, never prompting.
        let connected = match crate::remote::target() {
            Some(target) => connect_remote(target, false, true).await,
            None => UnixStream::connect(&socket).await.map_err(Into::into),
        };
        match connected {
            Ok(stream) => return Ok(stream),
            Err(e) if tokio::time::Instant::now() >= deadline => {
                return Err(e).context("the upgraded calyx server did not come back")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// Attaches this terminal; returns the message to print after detaching.
///
/// Normally the server reads and writes the terminal itself (see `server::terminal`) and this
/// process only keeps raw mode, reports resizes and waits; when the server cannot (or the
/// `direct_terminal` setting is off) keystrokes and frames go through here. When the server
/// upgrades itself (`calyx server-upgrade`) it says so before its connection closes, and this
/// client connects again and attaches to the same session, keeping the terminal as it is.
pub async fn attach(mut stream: UnixStream, mut attach: ClientMessage) -> anyhow::Result<String> {
    use tokio::signal::unix::{signal, SignalKind};
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        bail!("calyx needs a terminal to attach (stdin is not a tty); use -d to start detached");
    }
    let config = crate::config::Config::load(&crate::paths::config_file()).0;
    // The terminal is set up before the server can draw on it.
    let _guard = TerminalGuard::enter(config.mouse)?;
    let mut direct_asked = false;
    let mut device = None;
    if let ClientMessage::Attach { terminal, .. } = &mut attach {
        // A remote server cannot open this machine's terminal: every byte goes through here.
        let local = crate::remote::target().is_none();
        *terminal = (config.direct_terminal && local)
            .then(own_terminal)
            .flatten();
        direct_asked = terminal.is_some();
        device = terminal.clone();
    }
    let mut signals = AttachSignals {
        winch: signal(SignalKind::window_change())?,
        hup: signal(SignalKind::hangup())?,
        term: signal(SignalKind::terminate())?,
    };
    // What a remote client attaches to again after a dropped connection: never "create".
    let rejoin = match &attach {
        ClientMessage::Attach {
            target,
            create: None,
            ..
        } => target.clone(),
        _ => None,
    };
    let mut writer: Option<SharedWriter> = None;
    let mut stdin_closed = None;
    let paused = Paused::default();
    // An attach another machine's chooser started: `prefix L` comes back, and the status line
    // says so once attached. With ssh holding the terminal (`remote::tty`) this is the far
    // side's attach and the server binds `prefix L` (`back_to`); on the framed path (a far
    // side older than that) this process watches the keys for it.
    let back_to = match &attach {
        ClientMessage::Attach { back_to, .. } => back_to.clone(),
        _ => None,
    };
    let watch_back = crate::remote::switch::back_to().is_some();
    let back = back_to.clone().or_else(crate::remote::switch::back_to);
    let mut hint = back.as_ref().map(|back| {
        let text = crate::remote::switch::hint(&config.keymap.prefix.name(), back);
        let target = rejoin.clone();
        Box::pin(async move {
            if let Ok(mut stream) = connect_existing().await {
                let shown = Request::DisplayMessage {
                    target,
                    message: text,
                    print: false,
                };
                let _ = request(&mut stream, shown).await;
            }
        }) as std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
    });
    let input = Input {
        paused: paused.clone(),
        prefix: watch_back.then(|| config.keymap.prefix.to_bytes(false)),
    };
    loop {
        stream.write_all(&encode_message(&attach)).await?;
        let std_stream = stream.into_std()?;
        let this_writer = std_stream.try_clone()?;
        let shared = match &writer {
            Some(shared) => {
                // The stdin forwarder keeps writing through the same handle.
                *shared
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = this_writer;
                shared.clone()
            }
            None => {
                let shared = std::sync::Arc::new(std::sync::Mutex::new(this_writer));
                writer = Some(shared.clone());
                shared
            }
        };
        std_stream.set_nonblocking(true)?;
        let reader = UnixStream::from_std(std_stream)?;
        let ended = one_connection(
            reader,
            &shared,
            (direct_asked, &input),
            &mut stdin_closed,
            &mut signals,
            hint.take(),
        )
        .await;
        let session = match ended {
            Ended::Done(message) => return Ok(message),
            Ended::Upgrading(session) => {
                stream = reconnect().await?;
                Some(session)
            }
            Ended::Lost => {
                let Some(target) = crate::remote::target() else {
                    return Ok("server exited".to_string());
                };
                stream = match crate::remote::reconnect::again(
                    target,
                    &mut signals.hup,
                    &mut signals.term,
                )
                .await
                {
                    Ok(stream) => stream,
                    Err(message) => return Ok(message),
                };
                // The session named at the start, else the remote server's most recent one
                // (the one this client was on, unless someone attached elsewhere meanwhile).
                rejoin.clone()
            }
            Ended::Switch {
                machine,
                session,
                back,
            } => {
                // The local server detached this client and keeps running; the remote attach
                // owns the terminal until it ends.
                paused.store(true, std::sync::atomic::Ordering::Release);
                let came_back = crate::remote::switch::run(&machine, &session, &back).await;
                paused.store(false, std::sync::atomic::Ordering::Release);
                match came_back {
                    Ok(true) => {}
                    // It printed why it ended.
                    Ok(false) => return Ok(String::new()),
                    Err(e) => return Ok(format!("cannot attach to {machine}: {e:#}")),
                }
                // The remote attach restored the terminal on leaving: set it up again.
                TerminalGuard::enter(config.mouse)?.keep();
                stream = connect_existing().await?;
                Some(back)
            }
        };
        let (rows, cols) = terminal_size().unwrap_or((24, 80));
        attach = ClientMessage::Attach {
            target: session,
            create: None,
            create_if_missing: false,
            rows,
            cols,
            term: std::env::var("TERM").ok(),
            terminal: device.clone(),
            opener_env: opener_env(),
            back_to: back_to.clone(),
        };
    }
}

/// Prints why an attach ended (the server's words, never played as escape sequences: a
/// remote server's words reach this terminal after the client restored it) and gives the exit
/// status: 1 when the attach failed. An empty text was printed already (a remote attach this
/// client switched to).
pub fn report(text: &str) -> std::process::ExitCode {
    if text.is_empty() {
        return std::process::ExitCode::SUCCESS;
    }
    println!("[{}]", calyx_tui::escape::visible(text));
    let failed = text.starts_with("can't")
        || text.starts_with("no sessions")
        || text.starts_with("duplicate")
        || text.starts_with("bad");
    if failed {
        std::process::ExitCode::FAILURE
    } else {
        std::process::ExitCode::SUCCESS
    }
}

/// The signals an attached client acts on.
struct AttachSignals {
    winch: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

/// What the stdin forwarder of an attached client is started with.
struct Input {
    paused: Paused,
    /// The prefix key's bytes, in a remote attach the chooser started (`prefix L` comes back).
    prefix: Option<Vec<u8>>,
}

impl Input {
    fn forwarder(&self, writer: &SharedWriter) -> tokio::sync::mpsc::UnboundedReceiver<String> {
        let watch = self
            .prefix
            .clone()
            .map(crate::remote::switch::BackWatch::new);
        spawn_stdin_forwarder(writer.clone(), self.paused.clone(), watch)
    }
}

/// Serves one connection of an attached client until it ends. `stdin_closed` is the stdin
/// forwarder's (started here the first time the server does not take the terminal; it lasts
/// across connections). `on_attached` runs once the server says the client is attached.
async fn one_connection(
    mut reader: UnixStream,
    writer: &SharedWriter,
    (direct_asked, input): (bool, &Input),
    stdin_closed: &mut Option<tokio::sync::mpsc::UnboundedReceiver<String>>,
    signals: &mut AttachSignals,
    mut on_attached: Option<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>>,
) -> Ended {
    // Whether the server took the terminal: it says so in `Attached`; a frame arriving first
    // (a server from before direct terminals) means it did not.
    let (direct_tx, mut direct_rx) = tokio::sync::oneshot::channel::<bool>();
    let server_frames = async move {
        let mut direct_tx = Some(direct_tx);
        let mut stdout = std::io::stdout();
        let mut upgrading = None;
        let mut switch = None;
        loop {
            match read_frame::<_, ServerMessage>(&mut reader).await {
                Ok(Frame::Raw(bytes)) => {
                    if let Some(tx) = direct_tx.take() {
                        let _ = tx.send(false);
                    }
                    if stdout
                        .write_all(&bytes)
                        .and_then(|()| stdout.flush())
                        .is_err()
                    {
                        return Ended::Done("lost the terminal".to_string());
                    }
                }
                Ok(Frame::Message(ServerMessage::Attached { direct })) => {
                    if let Some(tx) = direct_tx.take() {
                        let _ = tx.send(direct);
                    }
                    if let Some(task) = on_attached.take() {
                        tokio::spawn(task);
                    }
                }
                Ok(Frame::Message(ServerMessage::Exit { message })) => {
                    return match switch.take() {
                        Some((machine, session, back)) => Ended::Switch {
                            machine,
                            session,
                            back,
                        },
                        None => Ended::Done(message),
                    }
                }
                Ok(Frame::Message(ServerMessage::SwitchRemote {
                    machine,
                    session,
                    back,
                })) => switch = Some((machine, session, back)),
                Ok(Frame::Message(ServerMessage::Response(Response::Error(e)))) => {
                    return Ended::Done(e)
                }
                Ok(Frame::Message(ServerMessage::Upgrading { session })) => {
                    upgrading = Some(session);
                }
                Ok(Frame::Message(_)) => {}
                Err(_) => {
                    return match upgrading {
                        Some(session) => Ended::Upgrading(session),
                        // A server that goes away says so (`Exit`); a remote connection
                        // ending without a word is the network or ssh.
                        None if crate::remote::target().is_some() => Ended::Lost,
                        None => Ended::Done("server exited".to_string()),
                    };
                }
            }
        }
    };
    tokio::pin!(server_frames);
    // Keystrokes are read by a plain thread when this process forwards them (tokio's stdin
    // would hop through its blocking pool on every key).
    if !direct_asked && stdin_closed.is_none() {
        *stdin_closed = Some(input.forwarder(writer));
    }
    let mut told = (direct_asked && stdin_closed.is_none()).then_some(());
    loop {
        tokio::select! {
            ended = &mut server_frames => return ended,
            direct = &mut direct_rx, if told.is_some() => {
                told = None;
                if !direct.unwrap_or(false) {
                    *stdin_closed = Some(input.forwarder(writer));
                }
            }
            why = async {
                match stdin_closed.as_mut() {
                    Some(rx) => rx.recv().await,
                    None => std::future::pending().await,
                }
            } => {
                // A write refused by a server that is going away (or replacing itself): the
                // server's side of the connection says which; a new forwarder writes to the
                // next connection. Anything else means the terminal is gone.
                let why = why.unwrap_or_else(|| "detached (lost the terminal)".to_string());
                if why != SERVER_EXITED {
                    return Ended::Done(why);
                }
                *stdin_closed = Some(input.forwarder(writer));
            }
            _ = signals.winch.recv() => {
                if let Some((rows, cols)) = terminal_size() {
                    let _ = send_frame(writer, &encode_message(&ClientMessage::Resize { rows, cols }));
                }
            }
            _ = signals.hup.recv() => return Ended::Done("detached (hangup)".to_string()),
            _ = signals.term.recv() => {
                // The server may be drawing on this terminal: let it finish before restoring.
                let message = "detached (terminated)".to_string();
                let detach = ClientMessage::Detach { message: message.clone() };
                if send_frame(writer, &encode_message(&detach)).is_ok() {
                    let _ = tokio::time::timeout(DETACH_WAIT, &mut server_frames).await;
                }
                return Ended::Done(message);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server older than this client drops the connection on a request it cannot parse:
    /// the client says so and names the way out.
    #[tokio::test]
    async fn a_request_an_older_server_drops_suggests_server_upgrade() {
        let (mut ours, mut server) = UnixStream::pair().expect("socketpair");
        let older = tokio::spawn(async move {
            let _ = read_frame::<_, serde_json::Value>(&mut server).await;
            drop(server);
        });
        let err = request(&mut ours, Request::ServerVersion)
            .await
            .expect_err("no answer");
        older.await.expect("older server");
        let text = format!("{err:#}");
        assert!(text.contains("calyx server-upgrade"), "{text}");
        assert!(text.contains(env!("CARGO_PKG_VERSION")), "{text}");
    }
}
