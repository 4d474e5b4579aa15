//! Records every hook payload the endpoint receives, when `CALYX_CAPTURE_PAYLOADS=FILE` is set
//! in the server's environment (off otherwise: payloads hold prompts and paths).
//!
//! The real-CLI scripts (tests/realcli/suite.sh, approvals.sh) turn it on and save the payloads
//! whose shape `fixtures/payloads/` does not cover yet, so the unit tests grow with every CLI
//! release.
//! One JSON line per payload: `{"cli", "route", "event", "payload"}`, where `event` is the CLI's
//! own event name when calyx recognises the payload, else null.

use calyx_integrations::normalize;
use serde_json::{json, Value};
use std::fs::File;
use std::io::Write;
use std::path::Path;

use crate::http::CallerKind;

/// The environment variable that names the capture file.
pub const CAPTURE_ENV: &str = "CALYX_CAPTURE_PAYLOADS";

/// An open capture file (0600: payloads carry prompts and paths).
pub struct PayloadCapture {
    file: File,
}

impl PayloadCapture {
    /// The capture the environment asks for; None when it asks for none or the file cannot be
    /// opened (logged: a capture is a test aid and never stops the server).
    pub fn from_env() -> Option<Self> {
        let path = std::env::var_os(CAPTURE_ENV)?;
        match Self::open(Path::new(&path)) {
            Ok(capture) => Some(capture),
            Err(e) => {
                tracing::warn!("{CAPTURE_ENV}: cannot open {path:?}: {e}");
                None
            }
        }
    }

    fn open(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        Ok(Self { file })
    }

    /// Appends one payload as it arrived from `calyx hook` (or a plugin) on `route`.
    pub fn record(&mut self, route: &str, kind: Option<&CallerKind>, payload: &Value) {
        let cli = kind.map_or("", CallerKind::name);
        let event = kind
            .and_then(CallerKind::known)
            .and_then(|k| normalize(k, payload).ok().flatten())
            .map(|e| e.raw_event_name);
        let line = json!({ "cli": cli, "route": route, "event": event, "payload": payload });
        if let Err(e) = writeln!(self.file, "{line}") {
            tracing::warn!("{CAPTURE_ENV}: write failed: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_one_line_per_payload_with_the_recognised_event_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("payloads.jsonl");
        let mut capture = PayloadCapture::open(&path).expect("open");
        capture.record(
            "agent-event",
            Some(&CallerKind::parse("claude-code")),
            &json!({"hook_event_name": "Stop", "session_id": "s"}),
        );
        capture.record(
            "agent-event",
            Some(&CallerKind::parse("codex")),
            &json!({"what": "unknown"}),
        );
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["event"], "Stop");
        assert_eq!(lines[0]["cli"], "claude-code");
        assert_eq!(lines[1]["event"], Value::Null);
        assert_eq!(lines[1]["payload"]["what"], "unknown");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
