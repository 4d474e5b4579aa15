//! A hosted server's connection state and the reconnect schedule.
//!
//! `disabled` → `connecting` → `ready` | `sign-in required` → `signing in` → `connecting`; a ready server that drops goes `reconnecting` with
//! backoff 1, 2, 4 ... 60 s (reset after 60 s connected); five failed attempts in a row, or a
//! failure before the first successful `initialize`, go to `failed` and wait for the user.

use std::time::Duration;

/// Reconnect attempts in a row before giving up.
pub const MAX_ATTEMPTS: u32 = 5;
/// The longest wait between attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Connected this long, a server's next drop starts the schedule from 1 s again.
pub const STABLE_AFTER: Duration = Duration::from_secs(60);

/// Where a server is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    Disabled,
    Connecting,
    Ready {
        tools: usize,
        with_ui: usize,
    },
    /// `attempt` counts from 1.
    Reconnecting {
        attempt: u32,
    },
    Failed {
        sentence: String,
    },
    /// An HTTP server answered 401 (or 403 `insufficient_scope`): it waits for a sign-in.
    SignInRequired,
    /// A sign-in is waiting for the browser or a pasted redirect address.
    SigningIn,
}

impl ServerState {
    /// The status line of the server's row.
    pub fn status_line(&self) -> String {
        match self {
            ServerState::Disabled => "Disabled".into(),
            ServerState::Connecting => "Connecting".into(),
            ServerState::Ready { tools, with_ui } => format!(
                "{tools} tool{}, {with_ui} with UI",
                if *tools == 1 { "" } else { "s" }
            ),
            ServerState::Reconnecting { .. } => "Disconnected (reconnecting)".into(),
            ServerState::Failed { sentence } => sentence.clone(),
            ServerState::SignInRequired => "Sign-in required".into(),
            ServerState::SigningIn => "Signing in".into(),
        }
    }
}

/// The wait before reconnect attempt `attempt` (1-based): 1, 2, 4, 8, 16, 32, 60, 60 ... s.
pub fn backoff(attempt: u32) -> Duration {
    let secs = 1u64
        .checked_shl(attempt.saturating_sub(1))
        .unwrap_or(u64::MAX);
    Duration::from_secs(secs).min(MAX_BACKOFF)
}

/// Counts reconnect attempts of one server.
#[derive(Debug, Clone, Default)]
pub struct Reconnects {
    failed_in_a_row: u32,
}

impl Reconnects {
    /// After a drop or a failed attempt: the next state and how long to wait before trying,
    /// or `None` (failed) after [`MAX_ATTEMPTS`] failures in a row.
    pub fn after_failure(&mut self) -> Option<(ServerState, Duration)> {
        if self.failed_in_a_row >= MAX_ATTEMPTS {
            return None;
        }
        self.failed_in_a_row += 1;
        let attempt = self.failed_in_a_row;
        Some((ServerState::Reconnecting { attempt }, backoff(attempt)))
    }

    /// After a connection that stayed up `connected_for`: a stable one resets the schedule.
    pub fn connected(&mut self, connected_for: Duration) {
        if connected_for >= STABLE_AFTER {
            self.failed_in_a_row = 0;
        }
    }

    /// After an attempt that reached `ready` (the count of failures in a row ends).
    pub fn succeeded(&mut self) {
        self.failed_in_a_row = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_60_seconds() {
        let secs: Vec<u64> = (1..=9).map(|a| backoff(a).as_secs()).collect();
        assert_eq!(secs, [1, 2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff(200), MAX_BACKOFF);
    }

    #[test]
    fn five_failures_in_a_row_give_up() {
        let mut r = Reconnects::default();
        let waits: Vec<u64> =
            std::iter::from_fn(|| r.after_failure().map(|(_, d)| d.as_secs())).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16]);
        assert_eq!(r.after_failure(), None);
        r.succeeded();
        assert_eq!(
            r.after_failure(),
            Some((
                ServerState::Reconnecting { attempt: 1 },
                Duration::from_secs(1)
            ))
        );
    }

    #[test]
    fn a_stable_connection_resets_the_schedule() {
        let mut r = Reconnects::default();
        r.after_failure();
        r.after_failure();
        r.connected(Duration::from_secs(59));
        assert_eq!(r.after_failure().map(|(_, d)| d.as_secs()), Some(4));
        r.connected(STABLE_AFTER);
        assert_eq!(r.after_failure().map(|(_, d)| d.as_secs()), Some(1));
    }

    #[test]
    fn status_lines() {
        assert_eq!(ServerState::Disabled.status_line(), "Disabled");
        assert_eq!(ServerState::Connecting.status_line(), "Connecting");
        assert_eq!(
            ServerState::Ready {
                tools: 12,
                with_ui: 1
            }
            .status_line(),
            "12 tools, 1 with UI"
        );
        assert_eq!(
            ServerState::Ready {
                tools: 1,
                with_ui: 0
            }
            .status_line(),
            "1 tool, 0 with UI"
        );
        assert_eq!(
            ServerState::Reconnecting { attempt: 2 }.status_line(),
            "Disconnected (reconnecting)"
        );
        assert_eq!(
            ServerState::SignInRequired.status_line(),
            "Sign-in required"
        );
        assert_eq!(ServerState::SigningIn.status_line(), "Signing in");
    }
}
