//! `calyx hook <kind> [--approval]`: forward an agent CLI's hook payload (stdin) to the running
//! calyx server and, for a permission gate, print its decision.
//!
//! The contract with the CLI: always exit 0, never print an "allow" of our own, and never let a
//! failure run a tool unasked. When calyx cannot answer a gate (no server, stale endpoint file,
//! a port another user holds, timeout, an error status), CLIs that ask in their own prompt on
//! silence get silence, and the others get a deny saying why ([`refused_answer`]; the table in
//! docs/integrations.md). The hook is installed in the user's global config, so it must stand
//! down quickly outside calyx (no pane identity in its environment).

pub mod client;
pub mod listener;
mod sock_diag;

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::Duration;

use crate::http::endpoint_file;
use calyx_integrations::{hook_rules, AgentKind};
use listener::Listener;

/// Lifecycle pings are fire-and-forget state updates; they must never stall the agent's turn.
pub const EVENT_TIMEOUT: Duration = Duration::from_secs(2);

pub use calyx_integrations::hook_rules::{
    approval_timeout, APPROVAL_TIMEOUT, HERMES_APPROVAL_TIMEOUT,
};

/// Largest payload forwarded; the server refuses more than 1 MiB anyway.
const MAX_PAYLOAD_BYTES: u64 = 1024 * 1024 + 1;

/// Runs the hook and always exits 0.
pub fn run(kind: &str, approval: bool) -> ExitCode {
    let env = |name: &str| std::env::var(name).ok();
    // The kind is parsed once, here, and first: a hook installed with a kind calyx does not
    // know is a mistake worth telling inside calyx or not (it is in the user's global config).
    let kind = match kind.parse::<AgentKind>() {
        Ok(kind) => kind,
        Err(unknown) => {
            // Never break the agent over it (exit 0, nothing on stdout), but say what went
            // wrong where the user running the hook by hand, or the CLI's hook log, shows it.
            eprintln!("calyx hook: {unknown}; nothing was sent to calyx");
            return ExitCode::SUCCESS;
        }
    };
    if outside_calyx(env) {
        return ExitCode::SUCCESS;
    }
    if hook_rules::fired_for_another_cli(kind, env) {
        return ExitCode::SUCCESS;
    }
    if let Some(decision) = forward(kind, approval) {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(&decision);
        let _ = stdout.flush();
    }
    ExitCode::SUCCESS
}

/// Whether the hook must do nothing, whatever the CLI: no calyx pane identity (the agent runs
/// outside calyx), or a nested herdr pane (its shells inherit a calyx id that is not theirs).
pub fn outside_calyx(env: impl Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    (!set("CALYX_SURFACE_ID") && !set("CALYX_SESSION_ID")) || set("HERDR_PANE_ID")
}

/// Posts stdin to the endpoint; the body to print, if the server gave a decision.
fn forward(kind: AgentKind, approval: bool) -> Option<Vec<u8>> {
    let mut payload = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(MAX_PAYLOAD_BYTES)
        .read_to_end(&mut payload);
    let Some(endpoint) = endpoint_file::read(&crate::paths::endpoint_file()) else {
        // Inside a calyx pane with no calyx to ask: the CLIs that would run the call on silence
        // get a deny instead.
        return approval
            .then(|| refused_answer(kind, "calyx is not running"))
            .flatten();
    };
    if let Listener::Foreign { uid } = listener::check(endpoint.port, crate::paths::current_uid()) {
        // Not calyx: a server that died left its port, and another user holds it now. Nothing
        // is sent (the token stays ours) and nothing it could answer is obeyed.
        eprintln!(
            "calyx hook: port {} is held by another user (uid {uid}), not by calyx; nothing was sent",
            endpoint.port
        );
        return approval
            .then(|| refused_answer(kind, "its port is held by another user"))
            .flatten();
    }
    if let Err(e) = read {
        // Inside calyx a gate whose payload cannot be read is refused, never silent: silence
        // would run the call for the CLIs without a prompt of their own.
        return approval
            .then(|| refused_answer(kind, &format!("calyx could not read the hook's input: {e}")))
            .flatten();
    }
    let authorization = format!("Bearer {}", endpoint.token);
    let mut headers = vec![("Authorization", authorization.as_str())];
    let session = std::env::var("CALYX_SESSION_ID").ok();
    let surface = std::env::var("CALYX_SURFACE_ID").ok();
    for (name, value) in [
        ("X-Calyx-Session-ID", session.as_deref()),
        ("X-Calyx-Surface-ID", surface.as_deref()),
        ("X-Calyx-Agent-Kind", Some(kind.as_str())),
    ] {
        if let Some(value) = value.filter(|v| !v.is_empty() && client::header_safe(v)) {
            headers.push((name, value));
        }
    }
    let (path, timeout) = if approval {
        ("/approval-request", approval_timeout(kind))
    } else {
        ("/agent-event", EVENT_TIMEOUT)
    };
    let response = match post_gate(endpoint.port, path, &headers, &payload, timeout, approval) {
        Ok(response) => response,
        // calyx went away while the request waited (it crashed, or was killed).
        Err(_) if approval => return refused_answer(kind, "calyx stopped answering"),
        Err(_) => return None,
    };
    if approval && !(200..300).contains(&response.status) {
        let why = format!("calyx refused it (HTTP {})", response.status);
        return refused_answer(kind, &why);
    }
    let decided = approval && !response.body.is_empty();
    decided.then_some(response.body)
}

/// How many times a gate is asked again after its connection dropped while calyx still
/// listens: the server replaced itself in place (`calyx server-upgrade`), and the new one
/// holds the gate for the human as the old one did.
const REASKS: usize = 3;

/// Posts one request; for a gate (`approval`), asks again when the connection dropped without
/// an answer but the endpoint still accepts connections. A server that is gone (killed, or
/// crashed) refuses the new connection at once, so that case answers as fast as before.
fn post_gate(
    port: u16,
    path: &str,
    headers: &[(&str, &str)],
    payload: &[u8],
    timeout: Duration,
    approval: bool,
) -> std::io::Result<client::Response> {
    let deadline = std::time::Instant::now() + timeout;
    let mut reasks = 0;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match client::post(port, path, headers, payload, left) {
            Err(e) if approval && reasks < REASKS && dropped(&e) => reasks += 1,
            answered => return answered,
        }
    }
}

/// Whether a request failed because its connection dropped (not refused, not out of time).
fn dropped(e: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    !matches!(
        e.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::TimedOut | ErrorKind::WouldBlock
    )
}

/// What a gate prints when no human can answer it: calyx refused the request (a payload over
/// its 1 MiB limit, say) or stopped answering while it waited. CLIs that ask in their own prompt
/// on an empty answer get nothing; those that would run the call on an empty answer (Grok, and
/// the deny gates of Gemini, Hermes and Kimi) get a deny in their own words: never a call run
/// unasked. The same holds when no calyx runs behind the pane at all (no endpoint file) and when
/// another user holds the endpoint's port.
pub fn refused_answer(kind: AgentKind, why: &str) -> Option<Vec<u8>> {
    let reason = format!("calyx could not hold this tool call for approval: {why}.");
    calyx_integrations::gate::refused(kind, &reason).map(|v| v.to_string().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn a_refused_gate_is_denied_where_silence_would_run_the_call() {
        let text = |kind| {
            refused_answer(kind, "calyx refused it (HTTP 413)")
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        assert_eq!(
            text(AgentKind::Grok).as_deref(),
            Some(
                r#"{"decision":"deny","reason":"calyx could not hold this tool call for approval: calyx refused it (HTTP 413)."}"#
            )
        );
        assert!(text(AgentKind::Hermes).is_some_and(|t| t.contains(r#""decision":"block""#)));
        assert!(text(AgentKind::Gemini).is_some_and(|t| t.contains(r#""decision":"deny""#)));
        assert!(text(AgentKind::Kimi).is_some_and(|t| t.contains(r#""permissionDecision":"deny""#)));
        assert_eq!(
            text(AgentKind::Cursor).as_deref(),
            Some(r#"{"permission":"ask"}"#)
        );
        // Their own prompt asks on silence: nothing.
        for kind in [
            AgentKind::ClaudeCode,
            AgentKind::Codex,
            AgentKind::Copilot,
            AgentKind::OpenCode,
            AgentKind::Antigravity,
        ] {
            assert_eq!(text(kind), None, "{kind}");
        }
    }

    #[test]
    fn a_gate_asks_again_only_when_its_connection_dropped() {
        use std::io::{Error, ErrorKind};
        assert!(dropped(&Error::new(
            ErrorKind::InvalidData,
            "closed before the head"
        )));
        assert!(dropped(&Error::from(ErrorKind::ConnectionReset)));
        // A server that is gone refuses; a deadline that passed is the end.
        assert!(!dropped(&Error::from(ErrorKind::ConnectionRefused)));
        assert!(!dropped(&Error::from(ErrorKind::TimedOut)));
        assert!(!dropped(&Error::from(ErrorKind::WouldBlock)));
    }

    #[test]
    fn stands_down_outside_calyx_and_in_herdr() {
        assert!(outside_calyx(env(&[])));
        assert!(outside_calyx(env(&[("CALYX_SURFACE_ID", "")])));
        assert!(!outside_calyx(env(&[("CALYX_SURFACE_ID", "s")])));
        assert!(!outside_calyx(env(&[("CALYX_SESSION_ID", "p")])));
        let herdr = env(&[("CALYX_SURFACE_ID", "s"), ("HERDR_PANE_ID", "3")]);
        assert!(outside_calyx(herdr));
    }
}
