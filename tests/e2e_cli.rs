//! End to end: the command line and the socket. The private socket directory and the refusal of
//! other users, `CALYX` in panes and nested calyx commands, `calyx rename`, `-c DIR` for new
//! sessions, splits and windows, and complete `--help` for every command.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{calyx_bin, wait_until, Env};

fn socket(env: &Env) -> PathBuf {
    env.path().join("run/calyx/server.sock")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("stat").mode() & 0o777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// Sends `calyx ls` as a raw protocol frame from a python3 process (as `uid`, when given) and
/// prints ANSWERED or REFUSED.
fn probe_socket(socket: &Path, uid: Option<u32>) -> String {
    let script = r#"
import json, socket, struct, sys
body = json.dumps({"Request": "ListSessions"}).encode()
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
    s.sendall(struct.pack(">I", len(body) + 1) + b"\x01" + body)
    data = s.recv(65536)
except OSError as e:
    data = b""
print("ANSWERED" if data else "REFUSED")
"#;
    // The system python: a per-user one (pyenv) is not reachable by another user.
    let python = ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("python3");
    let mut cmd = Command::new(python);
    cmd.args(["-c", script]).arg(socket).env_clear();
    if let Some(uid) = uid {
        use std::os::unix::process::CommandExt;
        cmd.uid(uid).gid(uid).current_dir("/");
    }
    let out = cmd.output().expect("python3");
    String::from_utf8_lossy(&out.stdout).trim().to_string() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn the_socket_directory_is_private_and_other_users_are_refused() {
    let env = Env::new();
    // A directory someone made readable for everyone is made private when the server starts.
    let dir = env.path().join("run/calyx");
    std::fs::create_dir(&dir).expect("mkdir");
    chmod(&dir, 0o755);
    env.ok(&["new", "-d", "-s", "private", "--", "sh"]);
    assert_eq!(mode(&dir), 0o700, "socket directory mode");
    let sock = socket(&env);
    assert_eq!(mode(&sock), 0o600, "socket mode");
    let meta = std::fs::metadata(&sock).expect("stat socket");
    assert_eq!(meta.uid(), nix::unistd::getuid().as_raw());
    assert_eq!(probe_socket(&sock, None), "ANSWERED");

    // Another user: only possible to try as root. Open the path up so that the only thing left
    // between that user and the server is the server's own peer-credential check (a unit test
    // in src/server/socket.rs covers it without root).
    if !nix::unistd::geteuid().is_root() {
        eprintln!("not root: the other-uid connection is covered by the socket unit test only");
        return;
    }
    for p in [env.path(), &env.path().join("run"), &dir] {
        chmod(p, 0o711);
    }
    chmod(&sock, 0o666);
    let nobody = 65534;
    assert_eq!(probe_socket(&sock, Some(nobody)), "REFUSED");
    // The server is unharmed and still answers its own user.
    assert_eq!(probe_socket(&sock, None), "ANSWERED");
    assert!(env.ok(&["ls"]).starts_with("private:"));
}

#[test]
fn panes_know_the_server_socket_and_nested_commands_target_their_own_pane() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "nest", "--", "sh"]);
    let sock = socket(&env).display().to_string();
    env.ok(&["send-keys", "-t", "nest", "echo \"S=$CALYX\"", "Enter"]);
    env.wait_capture("nest", &format!("S={sock}\n"));
    // A second pane takes the focus; calyx run inside the first still means the first.
    env.ok(&["split", "-t", "nest", "--", "sh"]);
    let panes = env.panes();
    let (first, second) = (
        panes[0]["id"].as_str().unwrap_or_default().to_string(),
        panes[1]["id"].as_str().unwrap_or_default().to_string(),
    );
    assert_eq!(panes[1]["focused"], true);
    let bin = calyx_bin().display().to_string();
    env.ok(&[
        "send-keys",
        "-t",
        &first,
        &format!("{bin} send-keys 'echo in-$((6*7))' Enter"),
        "Enter",
    ]);
    env.wait_capture(&first, "in-42");
    let other = env.ok(&["capture", "-t", &second]);
    assert!(!other.contains("in-42"), "{other}");

    // calyx attach (or plain calyx) inside a pane would draw the session inside itself: refused,
    // saying how to switch instead, and the session stays unattached.
    env.ok(&[
        "send-keys",
        "-t",
        &first,
        &format!("{bin} attach -t nest; echo attach-exit-$?"),
        "Enter",
    ]);
    let screen = env.wait_capture(&first, "attach-exit-1");
    assert!(screen.contains("inside calyx already"), "{screen}");
    assert!(!env.ok(&["ls"]).contains("attached"));
}

#[test]
fn rename_sessions_and_windows() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "one", "--", "sh"]);
    env.ok(&["new", "-d", "-s", "two", "--", "sh"]);
    env.ok(&["rename", "-t", "one", "first"]);
    let ls = env.ok(&["ls"]);
    assert!(ls.contains("first:") && !ls.contains("one:"), "{ls}");
    // Without -t: the most recent session.
    env.ok(&["rename", "second"]);
    let ls = env.ok(&["ls"]);
    assert!(ls.contains("second:") && !ls.contains("two:"), "{ls}");
    // Windows, with -w and SESSION:WINDOW.
    env.ok(&["new-window", "-d", "-t", "first", "--", "sh"]);
    env.ok(&["rename", "-w", "-t", "first:1", "logs"]);
    // An unrenamed window is named after its program, even a moment after it was started
    // (when the process may still carry the server's name).
    let names: Vec<String> = env
        .panes()
        .iter()
        .filter(|p| p["session"] == "first")
        .map(|p| p["window_name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(names, ["sh", "logs"]);
    // Clear errors: unknown target, a taken name, a name targets could not address.
    for (args, error) in [
        (vec!["rename", "-t", "one", "x"], "can't find session: one"),
        (
            vec!["rename", "-t", "first", "second"],
            "duplicate session: second",
        ),
        (vec!["rename", "-t", "first", "a:b"], "bad session name"),
        (vec!["rename", "-w", "-t", "first:7", "x"], "window"),
    ] {
        let out = env.run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(error), "{args:?}: {stderr}");
    }
}

#[test]
fn new_split_and_new_window_start_in_the_directory_given_with_c() {
    let env = Env::new();
    let (a, b, c) = (
        env.path().join("dir a"),
        env.path().join("b"),
        env.path().join("b/rel"),
    );
    for d in [&a, &b, &c] {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    let (a, b, c) = (
        a.canonicalize().expect("canonical"),
        b.canonicalize().expect("canonical"),
        c.canonicalize().expect("canonical"),
    );
    let cwd_of = |env: &Env, i: usize| {
        env.panes()
            .get(i)
            .and_then(|p| p["cwd"].as_str().map(PathBuf::from))
    };
    env.ok(&[
        "new",
        "-d",
        "-s",
        "dirs",
        "-c",
        &a.display().to_string(),
        "--",
        "sh",
    ]);
    assert_eq!(cwd_of(&env, 0), Some(a.clone()));
    env.ok(&["send-keys", "-t", "dirs", "pwd", "Enter"]);
    env.wait_capture("dirs", &format!("\n{}\n", a.display()));
    env.ok(&[
        "split",
        "-t",
        "dirs",
        "-c",
        &b.display().to_string(),
        "--",
        "sh",
    ]);
    assert_eq!(cwd_of(&env, 1), Some(b.clone()));
    // A relative directory is the client's, not the server's.
    let out = Command::new(calyx_bin())
        .args(["split", "-t", "dirs", "-c", "rel", "--", "sh"])
        .env_clear()
        .envs(env.vars())
        .current_dir(&b)
        .output()
        .expect("run calyx");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(cwd_of(&env, 2), Some(c.clone()));
    env.ok(&[
        "new-window",
        "-t",
        "dirs",
        "-c",
        &b.display().to_string(),
        "--",
        "sh",
    ]);
    assert_eq!(cwd_of(&env, 3), Some(b.clone()));
    // A directory that does not exist is an error, not a pane somewhere else.
    for args in [
        vec!["new", "-d", "-s", "nope", "-c", "/no/such/dir", "--", "sh"],
        vec!["split", "-t", "dirs", "-c", "/no/such/dir", "--", "sh"],
        vec!["new-window", "-t", "dirs", "-c", "/no/such/dir"],
    ] {
        let out = env.run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{args:?} succeeded");
        assert!(
            stderr.contains("no such directory: /no/such/dir"),
            "{args:?}: {stderr}"
        );
    }
    assert_eq!(env.panes().len(), 4, "no pane was started by the failures");
    // An attached `calyx new -c` too.
    let mut client = env.client(
        &[
            "new",
            "-s",
            "att",
            "-c",
            &c.display().to_string(),
            "--",
            "sh",
        ],
        24,
        80,
    );
    client.wait_for("$ ");
    client.send("pwd\r");
    client.wait_for(&c.display().to_string());
    wait_until("the attached session's pane", || {
        env.panes()
            .iter()
            .any(|p| p["session"] == "att" && p["cwd"] == c.display().to_string())
            .then_some(())
    });
}

/// The subcommands `calyx --help` lists.
fn subcommands(help: &str) -> Vec<String> {
    help.split("Commands:")
        .nth(1)
        .unwrap_or_default()
        .split("Options:")
        .next()
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn help_for_calyx_and_every_command_lists_its_flags() {
    let env = Env::new();
    let top = env.ok(&["--help"]);
    assert!(top.contains("Usage: calyx"), "{top}");
    let commands = subcommands(&top);
    for expected in [
        "new",
        "attach",
        "ls",
        "kill",
        "kill-pane",
        "kill-window",
        "kill-server",
        "split",
        "send-keys",
        "capture",
        "list-panes",
        "display-message",
        "select",
        "rename",
        "new-window",
        "resize-pane",
        "swap-pane",
        "join-pane",
        "break-pane",
        "agents",
        "approvals",
        "approve",
        "deny",
        "hook",
        "setup",
        "doctor",
    ] {
        assert!(
            commands.iter().any(|c| c == expected),
            "{expected} missing from calyx --help:\n{top}"
        );
    }
    // Flags each command must document (the README's command table).
    let flags: &[(&str, &[&str])] = &[
        ("new", &["-s", "-d", "-c", "-x", "-y", "-P", "-F"]),
        ("attach", &["-t"]),
        ("kill", &["-t"]),
        ("kill-pane", &["-t"]),
        ("kill-window", &["-t"]),
        (
            "split",
            &["-t", "-h", "-v", "-d", "-c", "-P", "-F", "--help"],
        ),
        ("send-keys", &["-t", "-l"]),
        ("capture", &["-t", "--scrollback", "--ansi"]),
        ("list-panes", &["--json", "-t", "-F"]),
        ("display-message", &["-p", "-t"]),
        ("select-layout", &["-t", "-n", "-E"]),
        ("set-window-option", &["-t"]),
        ("select", &["-t"]),
        ("rename", &["-t", "-w"]),
        ("new-window", &["-t", "-n", "-d", "-c", "-P", "-F"]),
        (
            "resize-pane",
            &["-t", "-L", "-R", "-U", "-D", "-x", "-y", "-Z"],
        ),
        ("swap-pane", &["-s", "-t", "-U", "-D", "-d"]),
        (
            "join-pane",
            &["-s", "-t", "-h", "-v", "-b", "-l", "-d", "--help"],
        ),
        ("break-pane", &["-s", "-d", "-n", "-P", "-F"]),
        ("agents", &["--json"]),
        ("approvals", &["--json", "--pending"]),
        ("deny", &["-m"]),
        ("hook", &["--approval"]),
        (
            "setup",
            &["--dry-run", "--uninstall", "--yes", "--agent", "--status"],
        ),
        ("doctor", &["--agent"]),
    ];
    for name in &commands {
        let help = env.ok(&[name, "--help"]);
        assert!(
            help.contains(&format!("Usage: calyx {name}")),
            "calyx {name} --help:\n{help}"
        );
        // Every option line says what it does.
        let options = help.split("Options:").nth(1).unwrap_or_default();
        for line in options.lines().filter(|l| l.trim_start().starts_with('-')) {
            let described = line
                .trim()
                .split("  ")
                .filter(|part| !part.trim().is_empty())
                .count()
                > 1;
            let next_line_describes = options
                .lines()
                .skip_while(|l| *l != line)
                .nth(1)
                .is_some_and(|l| l.starts_with("          ") && !l.trim().is_empty());
            assert!(
                described || next_line_describes,
                "calyx {name}: undocumented option {line:?}"
            );
        }
        for (_, wanted) in flags.iter().filter(|(n, _)| n == name) {
            for flag in *wanted {
                let listed = options.lines().any(|l| {
                    l.trim_start()
                        .split([',', ' ', '<', '='])
                        .any(|word| word == *flag)
                });
                assert!(listed, "calyx {name} --help does not list {flag}:\n{help}");
            }
        }
    }
    // Nested subcommands too.
    let explain = env.ok(&["agents", "explain", "--help"]);
    assert!(explain.contains("Usage: calyx agents explain"), "{explain}");
    // A wrong flag is a clear error naming it.
    let out = env.run(&["split", "--frobnicate"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--frobnicate"));
}

/// Issue 15 §12: the small things a tmux user notices first in scripting output.
#[test]
fn listings_say_one_window_align_wide_names_and_have_headers() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "作業"]);
    env.ok(&["new", "-d", "-s", "alpha-long-name"]);
    let ls = env.ok(&["ls"]);
    assert!(ls.contains("作業: 1 window, 1 pane ["), "{ls}");
    // list-panes: the WINDOW column starts at the same screen column on every line, whatever
    // the width of the session name before it.
    let listing = env.ok(&["list-panes"]);
    let column_of = |line: &str, needle: &str| {
        let at = line
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} in {line:?}"));
        unicode_width::UnicodeWidthStr::width(&line[..at])
    };
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 3, "{listing}");
    let header = column_of(lines[0], "WINDOW");
    for line in &lines[1..] {
        assert_eq!(column_of(line, "0.0"), header, "{listing}");
    }
    // approvals: a header row once there is something to list, a sentence when there is not.
    let none = env.ok(&["approvals"]);
    assert_eq!(none.trim(), "no approval requests", "{none}");
}

#[test]
fn attach_to_a_missing_session_without_a_terminal_names_the_session() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "here"]);
    let out = env.run(&["attach", "-t", "nosuch"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("can't find session: nosuch"), "{err}");
    // An existing session still gets the terminal explanation.
    let out = env.run(&["attach", "-t", "here"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs a terminal"), "{err}");
}

#[test]
fn doctor_with_no_agent_cli_says_what_to_do_and_fails() {
    let env = Env::new();
    let empty = env.path().join("empty-bin");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let mut cmd = Command::new(calyx_bin());
    cmd.arg("doctor").env_clear();
    for (k, v) in env.vars() {
        if k != "PATH" {
            cmd.env(k, v);
        }
    }
    let out = cmd.env("PATH", &empty).output().expect("doctor");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("no agent CLI found") && stdout.contains("calyx setup"),
        "{stdout}"
    );
}

/// Issue 15 §7: reload-config says when there is no file, and reports every problem at once.
#[test]
fn reload_config_reports_every_problem_and_says_when_there_is_no_file() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "cfg"]);
    let path = env.path().join("config/calyx/config.toml");
    let _ = std::fs::remove_file(&path);
    let said = env.run(&["reload-config"]);
    let text =
        String::from_utf8_lossy(&said.stdout).to_string() + &String::from_utf8_lossy(&said.stderr);
    assert!(
        text.contains("no config file") && !text.contains("reloaded"),
        "{text}"
    );
    env.write_config("mouse = \"on\"\nfoo = 1\nbell = false\n");
    let said = env.run(&["reload-config"]);
    let text =
        String::from_utf8_lossy(&said.stdout).to_string() + &String::from_utf8_lossy(&said.stderr);
    assert!(
        text.contains("line 1: key `mouse`: expected true or false")
            && text.contains("line 2: key `foo`: not a setting"),
        "{text}"
    );
}

/// Issue 15 §10: scripts learn the panes they make (tmux's -P and -F).
#[test]
fn new_split_and_new_window_print_formats_for_scripts() {
    let env = Env::new();
    let made = env.ok(&[
        "new",
        "-d",
        "-s",
        "fmt",
        "-P",
        "-F",
        "#{session_name}:#{pane_id}",
    ]);
    let first = made
        .trim()
        .strip_prefix("fmt:")
        .expect("session name")
        .to_string();
    assert!(first.starts_with('%'), "{made}");
    let split = env.ok(&["split", "-t", &first, "-P", "-F", "#{pane_id}"]);
    let second = split.trim().to_string();
    assert!(second.starts_with('%') && second != first, "{split}");
    // -P alone prints tmux's default, session:window.pane.
    let window = env.ok(&["new-window", "-t", "fmt", "-P"]);
    assert_eq!(window.trim(), "fmt:1.0", "{window}");
    // list-panes -F: one line per pane, in the format.
    let listed = env.ok(&[
        "list-panes",
        "-t",
        "fmt",
        "-F",
        "#{pane_id} #{window_index}",
    ]);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(
        lines,
        vec![
            format!("{first} 0").as_str(),
            format!("{second} 0").as_str(),
            lines.get(2).copied().unwrap_or("missing")
        ],
        "{listed}"
    );
    assert!(lines[2].ends_with(" 1"), "{listed}");
    // display-message -p describes the target pane; the surface id is the pane's own.
    let said = env.ok(&[
        "display-message",
        "-p",
        "-t",
        &second,
        "#{pane_id} #{calyx_surface_id}",
    ]);
    let panes = env.panes();
    let surface = panes
        .iter()
        .find(|p| p["id"] == second.as_str())
        .and_then(|p| p["surface_id"].as_str())
        .expect("surface id");
    assert_eq!(said.trim(), format!("{second} {surface}"));
    // A target that names nothing is an error, not an empty line.
    let out = env.run(&["display-message", "-p", "-t", "%999", "#{pane_id}"]);
    assert!(!out.status.success());
}

#[test]
fn display_message_without_p_shows_on_the_status_line_of_that_session() {
    let env = Env::new();
    let c = env.client(&["new", "-s", "shown"], 24, 100);
    c.wait_for("$ ");
    env.ok(&[
        "display-message",
        "-t",
        "shown",
        "hello from #{session_name}",
    ]);
    c.wait_screen("the message on the status line", |s| {
        s.contains("hello from shown")
    });
}

/// Issue 15 §8: preset layouts from the CLI, the prompt and the keys.
#[test]
fn select_layout_tiled_makes_four_equal_panes_and_space_cycles() {
    let env = Env::new();
    env.ok(&["new", "-d", "-s", "lay", "-x", "160", "-y", "47"]);
    for _ in 0..3 {
        env.ok(&["split", "-t", "lay"]);
    }
    let sizes = |env: &Env| {
        let out = env.ok(&[
            "list-panes",
            "-t",
            "lay",
            "-F",
            "#{pane_width}x#{pane_height}",
        ]);
        out.lines().map(str::to_string).collect::<Vec<_>>()
    };
    env.ok(&["select-layout", "-t", "lay", "tiled"]);
    let tiled = sizes(&env);
    assert_eq!(tiled.len(), 4, "{tiled:?}");
    assert!(tiled.iter().all(|s| *s == tiled[0]), "{tiled:?}");
    // even-horizontal: four side by side, as tall as the window.
    env.ok(&["select-layout", "-t", "lay", "even-h"]);
    let even = sizes(&env);
    assert!(even.iter().all(|s| *s == even[0]), "{even:?}");
    assert_ne!(even[0], tiled[0]);
    // A name that is no layout is an error naming the choices.
    let out = env.run(&["select-layout", "-t", "lay", "spiral"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("tiled"));
    // prefix Space goes on from even-horizontal to even-vertical: four stacked panes.
    let mut c = env.client(&["attach", "-t", "lay"], 47, 160);
    c.wait_for("$ ");
    c.prefix(" ");
    wait_until("even-vertical after prefix Space", || {
        let now = sizes(&env);
        let widths: Vec<&str> = now.iter().filter_map(|s| s.split('x').next()).collect();
        (now.len() == 4 && widths.iter().all(|w| *w == widths[0]) && now != even).then_some(())
    });
}

/// Issue 15 §8: synchronize-panes types one line into every pane of the window.
#[test]
fn synchronize_panes_types_into_every_pane_of_the_window() {
    let env = Env::new();
    let mut c = env.client(&["new", "-s", "sync"], 30, 120);
    c.wait_for("$ ");
    env.ok(&["split", "-t", "sync", "-h"]);
    let panes: Vec<String> = env
        .panes()
        .iter()
        .filter_map(|p| p["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(panes.len(), 2);
    let on = env.ok(&["setw", "-t", "sync", "synchronize-panes", "on"]);
    assert!(on.contains("synchronize-panes on"), "{on}");
    c.wait_for("SYNC");
    // The shell computes the marker, so the echoed command line cannot match it.
    c.send("echo synced-$((6*7))\r");
    for pane in &panes {
        env.wait_capture(pane, "synced-42");
    }
    // Off (a toggle without a value): only the focused pane gets what is typed.
    env.ok(&["setw", "-t", "sync", "synchronize-panes"]);
    c.wait_screen("SYNC gone", |s| !s.contains("SYNC"));
    c.send("echo solo-$((1+1))\r");
    let focused = env
        .panes()
        .into_iter()
        .find(|p| p["focused"] == true)
        .and_then(|p| p["id"].as_str().map(str::to_string))
        .expect("focused pane");
    env.wait_capture(&focused, "solo-2");
    let other = panes.iter().find(|p| **p != focused).expect("other pane");
    let text = env.ok(&["capture", "-t", other]);
    assert!(!text.contains("solo-2"), "{text}");
    // An option calyx does not have is an error that says which it has.
    let out = env.run(&["setw", "-t", "sync", "mode-keys", "vi"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("synchronize-panes"));
}
