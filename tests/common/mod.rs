//! Test harness: a private calyx server per test (its own runtime, state and config dirs) and
//! real clients running inside PTYs the test owns, whose screens are parsed by vt100 the way a
//! user's terminal would show them. Everything polls with deadlines; nothing sleeps and hopes.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{native_pty_system, CommandBuilder, PtySize};

pub mod gates;
pub mod keylog;
pub mod mcp;

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n.max(1)).unwrap_or(std::num::NonZeroU16::MIN)
}

/// How long any single wait may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// The calyx binary under test.
pub fn calyx_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_calyx"))
}

/// Resizes the client's terminal and waits for its session (and so its panes) to take the
/// size.
pub fn resize_session(env: &Env, c: &mut Client, rows: u16, cols: u16) {
    c.resize(rows, cols);
    wait_until(&format!("session at {cols}x{rows}"), || {
        env.ok(&["ls"])
            .contains(&format!("[{cols}x{rows}]"))
            .then_some(())
    });
}

/// Polls `check` until it returns Some or the deadline passes.
pub fn wait_until<T>(what: &str, check: impl FnMut() -> Option<T>) -> T {
    wait_until_within(what, DEADLINE, check)
}

/// Polls `check` until it returns Some or `limit` passes (for work that is slow by design).
pub fn wait_until_within<T>(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let start = Instant::now();
    let mut delay = Duration::from_millis(5);
    loop {
        if let Some(v) = check() {
            return v;
        }
        if start.elapsed() > limit {
            panic!("timed out waiting for {what}");
        }
        std::thread::sleep(delay);
        delay = (delay * 2).min(Duration::from_millis(100));
    }
}

/// A private calyx world: runtime, state, config and home directories of its own.
pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("calyx-test")
            .tempdir()
            .expect("tempdir");
        for sub in ["run", "state", "config/calyx", "home"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("mkdir");
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.path().join("run"),
            std::fs::Permissions::from_mode(0o700),
        )
        .expect("chmod");
        Self { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn vars(&self) -> Vec<(String, String)> {
        let p = self.path();
        vec![
            (
                "XDG_RUNTIME_DIR".into(),
                p.join("run").display().to_string(),
            ),
            (
                "XDG_STATE_HOME".into(),
                p.join("state").display().to_string(),
            ),
            (
                "XDG_CONFIG_HOME".into(),
                p.join("config").display().to_string(),
            ),
            ("HOME".into(), p.join("home").display().to_string()),
            ("SHELL".into(), "/bin/sh".into()),
            ("TERM".into(), "xterm-256color".into()),
            ("PS1".into(), "$ ".into()),
            ("ENV".into(), "".into()),
            ("LANG".into(), "C.UTF-8".into()),
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        ]
    }

    /// Writes the calyx config file.
    pub fn write_config(&self, text: &str) -> PathBuf {
        let path = self.path().join("config/calyx/config.toml");
        std::fs::write(&path, text).expect("write config");
        path
    }

    /// Runs `calyx ARGS` to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(calyx_bin());
        cmd.args(args).env_clear();
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
        cmd.output().expect("run calyx")
    }

    /// Runs `calyx ARGS`, asserting success, and returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "calyx {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    }

    /// The pid of this world's `calyx server` (the one whose environment names its socket).
    pub fn server_pid(&self) -> u32 {
        let sock = self.path().join("run/calyx/server.sock");
        let out = Command::new("pgrep")
            .args(["-f", "calyx server"])
            .output()
            .expect("pgrep");
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .filter_map(|pid| pid.parse::<u32>().ok())
            .find(|pid| {
                let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
                String::from_utf8_lossy(&environ).contains(&*sock.display().to_string())
            })
            .expect("server process not found")
    }

    /// Plays one hook payload of `kind` (as `calyx setup` wires it, without `--approval`)
    /// through a real `calyx hook` process run as the agent in the pane with `surface`;
    /// returns once the server applied it.
    pub fn hook_event(&self, surface: &str, kind: &str, payload: &serde_json::Value) {
        let mut child = self.hook_process(surface, &[kind], payload, std::process::Stdio::null());
        assert!(child.wait().expect("hook exit").success());
    }

    /// Starts a real `calyx hook ARGS...` as the agent in the pane with `surface`, its payload
    /// written to its stdin, its stdout going to `stdout`.
    pub fn hook_process(
        &self,
        surface: &str,
        args: &[&str],
        payload: &serde_json::Value,
        stdout: std::process::Stdio,
    ) -> std::process::Child {
        use std::io::Write as _;
        let mut cmd = Command::new(calyx_bin());
        cmd.arg("hook").args(args).env_clear();
        for (k, v) in self.vars() {
            cmd.env(k, v);
        }
        let mut child = cmd
            .env("CALYX_SURFACE_ID", surface)
            .stdin(std::process::Stdio::piped())
            .stdout(stdout)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("calyx hook");
        if let Some(mut stdin) = child.stdin.take() {
            stdin
                .write_all(payload.to_string().as_bytes())
                .expect("payload");
        }
        child
    }

    /// `calyx list-panes --json`, parsed.
    pub fn panes(&self) -> Vec<serde_json::Value> {
        serde_json::from_str(&self.ok(&["list-panes", "--json"])).expect("list-panes json")
    }

    /// The surface id of the first pane `list-panes` shows: what most tests aim a hook or a
    /// tool call at.
    pub fn first_surface(&self) -> String {
        self.panes()[0]["surface_id"]
            .as_str()
            .expect("surface_id")
            .to_string()
    }

    /// Splits the active window of `session` with a pane running `sh -c script`; returns the
    /// new pane's id.
    pub fn split_running(&self, session: &str, script: &str) -> String {
        let id = self.ok(&[
            "split",
            "-t",
            session,
            "-P",
            "-F",
            "#{pane_id}",
            "--",
            "sh",
            "-c",
            script,
        ]);
        let id = id.trim().to_string();
        assert!(id.starts_with('%'), "{id}");
        id
    }

    /// Waits until `calyx capture -t PANE` contains `needle`.
    pub fn wait_capture(&self, pane: &str, needle: &str) -> String {
        wait_until(&format!("{needle:?} in pane {pane}"), || {
            let out = self.run(&["capture", "-t", pane]);
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            text.contains(needle).then_some(text)
        })
    }

    /// Starts a client in a PTY of the given size.
    pub fn client(&self, args: &[&str], rows: u16, cols: u16) -> Client {
        Client::spawn(self, args, rows, cols)
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// How many descriptors process `pid` has open.
pub fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// What the test's "terminal" has received from a client.
struct Outer {
    parser: vt100::Parser,
    raw: Vec<u8>,
    closed: bool,
}

/// A calyx client running in a PTY owned by the test.
pub struct Client {
    outer: Arc<Mutex<Outer>>,
    writer: Box<dyn Write + Send>,
    master: Box<dyn portable_pty::MasterPty + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Client {
    fn spawn(env: &Env, args: &[&str], rows: u16, cols: u16) -> Self {
        Self::spawn_with(env, args, rows, cols, &env.vars())
    }

    /// Starts a client with exactly these environment variables.
    pub fn spawn_with(
        env: &Env,
        args: &[&str],
        rows: u16,
        cols: u16,
        vars: &[(String, String)],
    ) -> Self {
        Self::spawn_program(env, &calyx_bin(), args, rows, cols, vars)
    }

    /// Starts any program (a shell that will run calyx, say) in a PTY of the given size.
    pub fn spawn_program(
        env: &Env,
        program: &Path,
        args: &[&str],
        rows: u16,
        cols: u16,
        vars: &[(String, String)],
    ) -> Self {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = CommandBuilder::new(program);
        cmd.args(args);
        cmd.env_clear();
        for (k, v) in vars {
            cmd.env(k, v);
        }
        cmd.cwd(env.path());
        let child = pty.slave.spawn_command(cmd).expect("spawn client");
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().expect("reader");
        let writer = pty.master.take_writer().expect("writer");
        let outer = Arc::new(Mutex::new(Outer {
            parser: vt100::Parser::new(nz(rows), nz(cols), 0),
            raw: Vec::new(),
            closed: false,
        }));
        let sink = outer.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let mut o = sink.lock().unwrap_or_else(|e| e.into_inner());
                        o.parser.process(&buf[..n]);
                        o.raw.extend_from_slice(&buf[..n]);
                    }
                }
            }
            sink.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        });
        Self {
            outer,
            writer,
            master: pty.master,
            child,
        }
    }

    /// Types bytes into the client's terminal.
    pub fn send(&mut self, bytes: impl AsRef<[u8]>) {
        self.writer
            .write_all(bytes.as_ref())
            .expect("write to client");
        self.writer.flush().expect("flush");
    }

    /// Presses the prefix (C-b) and then `key`.
    pub fn prefix(&mut self, key: &str) {
        self.send(b"\x02");
        self.send(key.as_bytes());
    }

    /// The screen text as the outer terminal shows it.
    pub fn screen(&self) -> String {
        self.outer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .parser
            .screen()
            .contents()
    }

    /// Every byte the client wrote to its terminal so far.
    pub fn raw(&self) -> Vec<u8> {
        self.outer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .raw
            .clone()
    }

    /// The text of a rectangle of the outer terminal, one string per row, trailing blanks
    /// trimmed.
    pub fn region(&self, top: u16, left: u16, rows: u16, cols: u16) -> Vec<String> {
        let o = self.outer.lock().unwrap_or_else(|e| e.into_inner());
        o.parser
            .screen()
            .rows(left, cols)
            .skip(usize::from(top))
            .take(usize::from(rows))
            .map(|r| r.trim_end().to_string())
            .collect()
    }

    /// Where `needle` first appears on the outer terminal: its (row, column), 0-based. Columns
    /// count cells, so text after wide characters is found where the terminal shows it.
    pub fn find(&self, needle: &str) -> Option<(u16, u16)> {
        let o = self.outer.lock().unwrap_or_else(|e| e.into_inner());
        let screen = o.parser.screen();
        let (rows, cols) = screen.size();
        for row in 0..rows.get() {
            // One string per cell: None for the right half of a wide character.
            let cells: Vec<Option<String>> = (0..cols.get())
                .map(|col| match screen.cell(row, col) {
                    Some(c) if c.is_wide_continuation() => None,
                    Some(c) if c.has_contents() => Some(c.contents().to_string()),
                    _ => Some(" ".to_string()),
                })
                .collect();
            for start in 0..cells.len() {
                if cells[start].is_none() {
                    continue;
                }
                let mut text = String::new();
                for cell in cells[start..].iter().flatten() {
                    text.push_str(cell);
                    if text.len() >= needle.len() {
                        break;
                    }
                }
                if text.starts_with(needle) {
                    return Some((row, start as u16));
                }
            }
        }
        None
    }

    /// Waits until `needle` is on screen and returns its (row, column).
    pub fn wait_find(&self, needle: &str) -> (u16, u16) {
        self.wait_for(needle);
        wait_until(&format!("{needle:?} located"), || self.find(needle))
    }

    /// How many cells of a rectangle of the outer terminal have a background color.
    pub fn colored_cells(&self, top: u16, left: u16, rows: u16, cols: u16) -> usize {
        let o = self.outer.lock().unwrap_or_else(|e| e.into_inner());
        let screen = o.parser.screen();
        (top..top + rows)
            .flat_map(|r| (left..left + cols).map(move |c| (r, c)))
            .filter(|(r, c)| {
                screen
                    .cell(*r, *c)
                    .is_some_and(|cell| cell.bgcolor() != vt100::Color::Default)
            })
            .count()
    }

    /// Waits until the screen satisfies `check`; returns the screen.
    pub fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if check(&s) {
                return s;
            }
            if start.elapsed() > DEADLINE {
                panic!("timed out waiting for {what}; screen:\n{s}");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the screen shows `needle`.
    /// Waits until no approval panel is on screen: the next "wants ..." is a new request's
    /// (answer keys act only on the request drawn, so a key sent at a stale frame is refused).
    pub fn wait_panel_gone(&self) {
        self.wait_screen("the approval panel gone", |s| !s.contains(" wants "));
    }

    /// Presses an approval panel answer key once the panel's keys are on screen and awake (a
    /// request that appears while the user types puts them to sleep for a moment, saying so;
    /// a frame may arrive in more than one read, so the footer itself is waited for).
    pub fn answer(&mut self, key: &str) {
        self.wait_screen("the approval panel's answer keys awake", |s| {
            let footer = ["deny+msg", "any other key: no", "deny with message"]
                .iter()
                .any(|f| s.contains(f));
            footer && !s.contains("keys wake in a moment")
        });
        self.send(key);
    }

    pub fn wait_for(&self, needle: &str) -> String {
        self.wait_screen(&format!("{needle:?} on screen"), |s| s.contains(needle))
    }

    /// Waits until the client process exits; returns what it printed last.
    pub fn wait_exit(&mut self) -> String {
        wait_until("client exit", || {
            self.child.try_wait().ok().flatten().map(|_| ())
        });
        wait_until("client output closed", || {
            self.outer
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .closed
                .then_some(())
        });
        String::from_utf8_lossy(&self.raw()).to_string()
    }

    /// Resizes the client's terminal (SIGWINCH).
    pub fn resize(&mut self, rows: u16, cols: u16) {
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("resize");
        self.outer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .parser
            .screen_mut()
            .set_size(nz(rows), nz(cols));
    }

    /// The client's pid.
    pub fn pid(&self) -> u32 {
        self.child.process_id().expect("pid")
    }

    /// Sends the client process a signal (a hangup, a stop, a kill).
    pub fn signal(&self, sig: nix::sys::signal::Signal) {
        let pid = i32::try_from(self.pid()).expect("pid fits a pid_t");
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig);
    }

    /// Whether the client process has exited.
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_some()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
