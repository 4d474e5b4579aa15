//! `calyx hook` as a real process against a real endpoint (or a scripted one), pointed at a temp
//! state dir through `XDG_STATE_HOME`.

use crate::support_endpoint as common;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use calyx::http::endpoint_file::{self, EndpointInfo};
use common::*;
use serde_json::{json, Value};

const PAYLOAD: &str = r#"{"session_id":"5f0c","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"}}"#;

/// Variables that would change the hook's behaviour and must not leak in from the test's env.
const GUARDS: [&str; 4] = [
    "CALYX_SURFACE_ID",
    "CALYX_SESSION_ID",
    "HERDR_PANE_ID",
    "GROK_HOOK_EVENT",
];

/// Runs `calyx hook` with `args`, the given extra env and `stdin`; returns its output and how
/// long it ran.
async fn run_hook(
    state_home: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: &str,
) -> (Output, Duration) {
    let state_home = state_home.to_owned();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_calyx"));
        command
            .arg("hook")
            .args(&args)
            .env("XDG_STATE_HOME", &state_home)
            .env("HOME", &state_home);
        for name in GUARDS {
            command.env_remove(name);
        }
        command.envs(env);
        let started = Instant::now();
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn calyx hook");
        if let Some(mut pipe) = child.stdin.take() {
            // A hook that stands down exits without reading; a broken pipe is fine.
            let _ = pipe.write_all(stdin.as_bytes());
        }
        let output = child.wait_with_output().expect("wait for calyx hook");
        (output, started.elapsed())
    })
    .await
    .expect("hook runner")
}

fn assert_silent_success(output: &Output) {
    assert!(output.status.success(), "exit: {:?}", output.status);
    assert!(
        output.stdout.is_empty(),
        "stdout: {:?}",
        String::from_utf8_lossy(&output.stdout)
    );
}

const IN_PANE: [(&str, &str); 2] = [
    ("CALYX_SURFACE_ID", KNOWN_SURFACE),
    ("CALYX_SESSION_ID", "session-7"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_reaches_the_server_with_identity_and_payload() {
    let mut server = start_server().await;
    let (output, _) = run_hook(server.state_home.path(), &["codex"], &IN_PANE, PAYLOAD).await;
    assert_silent_success(&output);
    let seen = server
        .seen
        .try_recv()
        .expect("the event arrived before the hook exited");
    assert!(!seen.approval);
    assert_eq!(seen.identity.surface_id.as_deref(), Some(KNOWN_SURFACE));
    assert_eq!(seen.identity.session_id.as_deref(), Some("session-7"));
    assert_eq!(
        seen.identity.agent_kind.as_ref().map(|k| k.name()),
        Some("codex")
    );
    assert_eq!(
        seen.payload,
        serde_json::from_str::<Value>(PAYLOAD).expect("json")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_prints_the_decision() {
    let mut server = start_server().await;
    let (output, _) = run_hook(
        server.state_home.path(),
        &["claude-code", "--approval"],
        &IN_PANE,
        PAYLOAD,
    )
    .await;
    assert!(output.status.success());
    let printed: Value =
        serde_json::from_slice(&output.stdout).expect("stdout is the decision JSON");
    assert_eq!(printed, allow_decision());
    let seen = server.seen.try_recv().expect("the approval arrived");
    assert!(seen.approval);
    assert_eq!(
        seen.identity.agent_kind.as_ref().map(|k| k.name()),
        Some("claude-code")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_without_a_decision_prints_nothing() {
    let server = start_server().await;
    // The owner drops the request: 200 with an empty body.
    let dropped = r#"{"owner":"drop"}"#;
    let (output, _) = run_hook(
        server.state_home.path(),
        &["codex", "--approval"],
        &IN_PANE,
        dropped,
    )
    .await;
    assert_silent_success(&output);
    // An unknown pane: 400 with a JSON error body, which must not reach the CLI.
    let stranger = [("CALYX_SURFACE_ID", "nobody")];
    let (output, _) = run_hook(
        server.state_home.path(),
        &["codex", "--approval"],
        &stranger,
        PAYLOAD,
    )
    .await;
    assert_silent_success(&output);
}

/// Hook arguments and the extra environment of one guard case.
type GuardCase<'a> = (&'a [&'a str], Vec<(&'a str, &'a str)>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guards_stand_down_without_contacting_the_server() {
    let mut server = start_server().await;
    let home = server.state_home.path().to_owned();
    let cases: [GuardCase; 4] = [
        (&["claude-code", "--approval"], vec![]),
        (
            &["codex", "--approval"],
            vec![("CALYX_SURFACE_ID", ""), ("CALYX_SESSION_ID", "")],
        ),
        (
            &["codex", "--approval"],
            vec![IN_PANE[0], ("HERDR_PANE_ID", "w1:p2")],
        ),
        (
            &["claude-code", "--approval"],
            vec![IN_PANE[0], ("GROK_HOOK_EVENT", "pre_tool_use")],
        ),
    ];
    for (args, env) in cases {
        let (output, elapsed) = run_hook(&home, args, &env, PAYLOAD).await;
        assert_silent_success(&output);
        assert!(
            elapsed < Duration::from_secs(2),
            "{args:?} {env:?} took {elapsed:?}"
        );
        assert!(
            server.seen.try_recv().is_err(),
            "{args:?} {env:?} reached the server"
        );
    }
    // GROK_HOOK_EVENT only silences the Claude Code hook: Grok's own hook still reports.
    let env = [IN_PANE[0], ("GROK_HOOK_EVENT", "pre_tool_use")];
    let (output, _) = run_hook(&home, &["grok"], &env, PAYLOAD).await;
    assert_silent_success(&output);
    assert_eq!(
        server
            .seen
            .try_recv()
            .map(|s| s.identity.agent_kind.map(|k| k.name().to_string())),
        Ok(Some("grok".into()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_endpoint_file_is_silent_and_quick() {
    let state_home = tempfile::tempdir().expect("tempdir");
    let (output, elapsed) = run_hook(
        state_home.path(),
        &["claude-code", "--approval"],
        &IN_PANE,
        PAYLOAD,
    )
    .await;
    assert_silent_success(&output);
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_endpoint_file_is_silent_and_quick() {
    let state_home = tempfile::tempdir().expect("tempdir");
    let closed_port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let stale = EndpointInfo {
        port: closed_port,
        token: "cd".repeat(32),
    };
    endpoint_file::write(&endpoint_path(state_home.path()), &stale).expect("write");
    let (output, elapsed) = run_hook(
        state_home.path(),
        &["claude-code", "--approval"],
        &IN_PANE,
        PAYLOAD,
    )
    .await;
    assert_silent_success(&output);
    assert!(elapsed < Duration::from_secs(1), "{elapsed:?}");
}

/// A one-connection scripted server: records the request bytes, answers `reply`.
fn scripted_server(state_home: &Path, reply: &'static [u8]) -> std::thread::JoinHandle<Vec<u8>> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let info = EndpointInfo {
        port,
        token: "ef".repeat(32),
    };
    endpoint_file::write(&endpoint_path(state_home), &info).expect("write");
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let mut got = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(0);
                if got.len() >= end + 4 + len {
                    break;
                }
            }
            match stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&chunk[..n]),
            }
        }
        let _ = stream.write_all(reply);
        got
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_carries_the_payload_verbatim() {
    let state_home = tempfile::tempdir().expect("tempdir");
    let server = scripted_server(state_home.path(), b"HTTP/1.1 204 No Content\r\n\r\n");
    let (output, _) = run_hook(state_home.path(), &["opencode"], &IN_PANE, PAYLOAD).await;
    assert_silent_success(&output);
    let request = String::from_utf8(server.join().expect("server")).expect("utf-8");
    let (head, body) = request.split_once("\r\n\r\n").expect("head and body");
    assert_eq!(body, PAYLOAD);
    assert!(head.starts_with("POST /agent-event HTTP/1.1\r\n"), "{head}");
    for line in [
        format!("Authorization: Bearer {}", "ef".repeat(32)),
        format!("X-Calyx-Surface-ID: {KNOWN_SURFACE}"),
        "X-Calyx-Session-ID: session-7".to_owned(),
        "X-Calyx-Agent-Kind: opencode".to_owned(),
        "Connection: close".to_owned(),
        format!("Content-Length: {}", PAYLOAD.len()),
    ] {
        assert!(
            head.lines().any(|l| l == line),
            "missing {line:?} in {head}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_2xx_answer_prints_nothing() {
    let state_home = tempfile::tempdir().expect("tempdir");
    let body = json!({"hookSpecificOutput": {"decision": {"behavior": "allow"}}}).to_string();
    let reply: &'static [u8] = format!(
        "HTTP/1.1 500 Internal Server Error\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
    .leak();
    let server = scripted_server(state_home.path(), reply);
    let (output, _) = run_hook(
        state_home.path(),
        &["claude-code", "--approval"],
        &IN_PANE,
        PAYLOAD,
    )
    .await;
    assert_silent_success(&output);
    let request = String::from_utf8(server.join().expect("server")).expect("utf-8");
    assert!(
        request.starts_with("POST /approval-request HTTP/1.1\r\n"),
        "{request}"
    );
}

/// What `calyx hook grok --approval` prints when calyx answers its gate with `reply` (raw HTTP;
/// empty: calyx reads the request and hangs up).
async fn grok_gate_prints(reply: &'static [u8]) -> String {
    let state_home = tempfile::tempdir().expect("tempdir");
    let server = scripted_server(state_home.path(), reply);
    let (output, _) = run_hook(
        state_home.path(),
        &["grok", "--approval"],
        &IN_PANE,
        PAYLOAD,
    )
    .await;
    assert!(output.status.success());
    server.join().expect("server");
    String::from_utf8_lossy(&output.stdout).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_grok_gate_prints_a_deny_not_nothing() {
    assert_eq!(
        grok_gate_prints(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\n\r\n").await,
        r#"{"decision":"deny","reason":"calyx could not hold this tool call for approval: calyx refused it (HTTP 413)."}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grok_gate_whose_calyx_goes_away_is_denied() {
    // Reads the request, then closes without an answer: calyx crashed while the gate waited.
    assert_eq!(
        grok_gate_prints(b"").await,
        r#"{"decision":"deny","reason":"calyx could not hold this tool call for approval: calyx stopped answering."}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_an_event_is_abandoned_after_two_seconds() {
    let state_home = tempfile::tempdir().expect("tempdir");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    endpoint_file::write(
        &endpoint_path(state_home.path()),
        &EndpointInfo {
            port,
            token: "ab".repeat(32),
        },
    )
    .expect("write");
    // The kernel accepts the connection into the backlog; nobody ever reads or answers.
    let (output, elapsed) = run_hook(state_home.path(), &["codex"], &IN_PANE, PAYLOAD).await;
    assert_silent_success(&output);
    assert!(
        elapsed >= Duration::from_millis(1900) && elapsed < Duration::from_secs(4),
        "{elapsed:?}"
    );
    drop(listener);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_calyx_behind_the_pane_denies_where_silence_would_run_the_call() {
    let state_home = tempfile::tempdir().expect("tempdir");
    for (kind, expected) in [
        ("claude-code", ""),
        ("codex", ""),
        (
            "grok",
            r#"{"decision":"deny","reason":"calyx could not hold this tool call for approval: calyx is not running."}"#,
        ),
        ("cursor", r#"{"permission":"ask"}"#),
    ] {
        let (output, _) =
            run_hook(state_home.path(), &[kind, "--approval"], &IN_PANE, PAYLOAD).await;
        assert!(output.status.success(), "{kind}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), expected, "{kind}");
    }
}

/// Issue 13: after an unclean exit another user binds the endpoint's old port. The hook must
/// send that user nothing (not the token) and obey nothing it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_held_by_another_user_gets_nothing_from_the_hook() {
    // A listener of another uid needs root to start it (CI runs as root).
    let root = std::fs::read_to_string("/proc/self/status")
        .is_ok_and(|s| s.lines().any(|l| l.starts_with("Uid:\t0\t")));
    let setpriv = Command::new("setpriv").arg("--version").output().is_ok();
    // The system's python, which another user can run (a pyenv one under /root cannot).
    let python = Path::new("/usr/bin/python3").exists();
    if !root || !setpriv || !python {
        eprintln!(
            "skipped: needs root, setpriv and /usr/bin/python3 to listen as another user (CI has them)"
        );
        return;
    }
    let squatter = r#"
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True)
s.settimeout(3)
got = b""
try:
    c, _ = s.accept(); c.settimeout(2)
    try:
        got = c.recv(65536)
    except Exception:
        pass
    body = b'{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
except Exception:
    pass
print("RECEIVED", len(got), flush=True)
"#;
    let mut child = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
            "-c",
            squatter,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("squatter");
    let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut first = String::new();
    std::io::BufRead::read_line(&mut out, &mut first).expect("port");
    let port: u16 = first.trim().parse().expect("port number");

    let state_home = tempfile::tempdir().expect("tempdir");
    let token = "ab".repeat(32);
    let stale = EndpointInfo {
        port,
        token: token.clone(),
    };
    endpoint_file::write(&endpoint_path(state_home.path()), &stale).expect("write");
    for kind in ["claude-code", "grok"] {
        let (output, elapsed) =
            run_hook(state_home.path(), &[kind, "--approval"], &IN_PANE, PAYLOAD).await;
        let printed = String::from_utf8_lossy(&output.stdout);
        assert!(
            !printed.contains("allow"),
            "{kind} obeyed the squatter: {printed}"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("another user"), "{kind}: {stderr}");
        assert!(elapsed < Duration::from_secs(2), "{kind}: {elapsed:?}");
        if kind == "grok" {
            assert!(printed.contains(r#""decision":"deny""#), "{printed}");
        }
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).expect("squatter output");
    let _ = child.wait();
    assert!(
        rest.contains("RECEIVED 0"),
        "the squatter got bytes: {rest}"
    );
}

/// Issue 14: the hook runs on every tool call; it must start no process (crossterm asks `tput`
/// for the terminal size when there is no terminal, as under an agent CLI).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hook_starts_no_process() {
    let state_home = tempfile::tempdir().expect("tempdir");
    let bin = state_home.path().join("bin");
    std::fs::create_dir_all(&bin).expect("mkdir");
    let marker = state_home.path().join("a-process-ran");
    for name in ["tput", "stty", "sh", "curl"] {
        let path = bin.join(name);
        std::fs::write(&path, format!("#!/bin/sh\ntouch {}\n", marker.display())).expect("stub");
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let server = scripted_server(state_home.path(), b"HTTP/1.1 204 No Content\r\n\r\n");
    let mut env = IN_PANE.to_vec();
    env.push(("PATH", &path));
    let (output, _) = run_hook(state_home.path(), &["claude-code"], &env, PAYLOAD).await;
    assert_silent_success(&output);
    server.join().expect("server");
    assert!(!marker.exists(), "calyx hook started a process");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_kind_is_silent_on_stdout_and_says_why_on_stderr() {
    let state_home = tempfile::tempdir().expect("tempdir");
    let (output, _) = run_hook(
        state_home.path(),
        &["claude", "--approval"],
        &IN_PANE,
        PAYLOAD,
    )
    .await;
    assert_silent_success(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("\"claude\"") && stderr.contains("claude-code"),
        "{stderr}"
    );
    // Outside calyx too: the kind is wrong wherever the hook runs.
    let (output, _) = run_hook(state_home.path(), &["claude"], &[], PAYLOAD).await;
    assert_silent_success(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("\"claude\""), "{stderr}");
}
