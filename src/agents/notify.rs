//! When to ring the bell and send a desktop notification.
//!
//! Pure policy over [`Transition`]s: a human is told when an agent becomes blocked, or
//! finishes (working → idle/done), while its pane is not focused (if it is focused, they are
//! already looking). Subagent transitions never notify; the same pane and state do not notify
//! again within [`NotifyConfig::repeat_quiet`]; at most [`NotifyConfig::max_per_minute`]
//! notifications go out per minute overall, so a swarm of agents cannot flood the desktop.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::time::Instant;

use super::state::{AgentState, Transition};

/// User settings for notifications (from the config file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// Ring the terminal bell (BEL), which most terminals turn into a dock bounce or tab mark.
    pub bell: bool,
    /// Send OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty, ghostty desktop notifications).
    pub osc9: bool,
    /// Send OSC 777 `notify` (rxvt-unicode, foot, ghostty, WezTerm).
    pub osc777: bool,
    /// The same pane and state do not notify again within this window.
    pub repeat_quiet: Duration,
    /// Overall cap per rolling minute.
    pub max_per_minute: usize,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            bell: true,
            osc9: true,
            osc777: false,
            repeat_quiet: Duration::from_secs(30),
            max_per_minute: 6,
        }
    }
}

/// One notification to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The pane it is about, so a click or a jump key can focus it.
    pub pane: u64,
    /// Short title ("Claude Code needs approval").
    pub title: String,
    /// Detail line ("pane 3: Bash").
    pub body: String,
    /// Whether this one should also ring the bell.
    pub bell: bool,
}

/// The notification policy with its memory (dedup and rate limit).
#[derive(Debug, Default)]
pub struct Notifier {
    config: NotifyConfig,
    last: HashMap<(u64, AgentState), Instant>,
    recent: VecDeque<Instant>,
}

const MINUTE: Duration = Duration::from_secs(60);

impl Notifier {
    /// A notifier with the given settings.
    pub fn new(config: NotifyConfig) -> Self {
        Notifier {
            config,
            last: HashMap::new(),
            recent: VecDeque::new(),
        }
    }

    /// New settings (a config reload); the rate limits keep their history.
    pub fn set_config(&mut self, config: NotifyConfig) {
        self.config = config;
    }

    /// The settings in use.
    pub fn config(&self) -> &NotifyConfig {
        &self.config
    }

    /// Decides which of `transitions` become notifications. `is_focused(pane)` tells whether a
    /// client is looking at that pane right now.
    pub fn decide(
        &mut self,
        transitions: &[Transition],
        is_focused: &dyn Fn(u64) -> bool,
        now: Instant,
    ) -> Vec<Notification> {
        while self
            .recent
            .front()
            .is_some_and(|t| now.duration_since(*t) >= MINUTE)
        {
            self.recent.pop_front();
        }
        let mut out = Vec::new();
        for t in transitions {
            let Some((title, verb)) = worth_telling(t) else {
                continue;
            };
            if is_focused(t.pane) {
                continue;
            }
            let key = (t.pane, t.to);
            if self
                .last
                .get(&key)
                .is_some_and(|at| now.duration_since(*at) < self.config.repeat_quiet)
            {
                continue;
            }
            if self.recent.len() >= self.config.max_per_minute {
                continue;
            }
            self.last.insert(key, now);
            self.recent.push_back(now);
            let body = match &t.tool {
                Some(tool) if t.to == AgentState::Blocked => {
                    format!("pane {}: {verb} {tool}", t.pane)
                }
                _ => format!("pane {}: {verb}", t.pane),
            };
            out.push(Notification {
                pane: t.pane,
                title: format!("{} {title}", t.kind.display_name()),
                body,
                bell: self.config.bell,
            });
        }
        out
    }
}

/// `(title suffix, body verb)` for transitions a human wants to hear about.
fn worth_telling(t: &Transition) -> Option<(&'static str, &'static str)> {
    if t.subagent.is_some() || t.from == t.to {
        return None;
    }
    match (t.from, t.to) {
        (_, AgentState::Blocked) => Some(("needs approval", "wants to run")),
        (AgentState::Working, AgentState::Idle) => Some(("finished", "waiting for a prompt")),
        (AgentState::Working, AgentState::Done) => Some(("finished", "session ended")),
        _ => None,
    }
}

/// The bytes to write to a client terminal for `n`: BEL, `ESC ] 9 ; text BEL` and
/// `ESC ] 777 ; notify ; title ; body BEL`, as enabled in `cfg`. The text comes from agents and
/// tool inputs, so it is sanitised: control characters (including ESC and C1) are dropped and
/// `;` is replaced, so nothing can end the sequence early or inject another one.
pub fn osc_sequences(n: &Notification, cfg: &NotifyConfig) -> Vec<u8> {
    let mut out = Vec::new();
    if n.bell && cfg.bell {
        out.push(0x07);
    }
    let title = sanitize(&n.title);
    let body = sanitize(&n.body);
    if cfg.osc9 {
        out.extend_from_slice(b"\x1b]9;");
        out.extend_from_slice(format!("{title}: {body}").as_bytes());
        out.push(0x07);
    }
    if cfg.osc777 {
        out.extend_from_slice(b"\x1b]777;notify;");
        out.extend_from_slice(title.as_bytes());
        out.push(b';');
        out.extend_from_slice(body.as_bytes());
        out.push(0x07);
    }
    out
}

/// Longest text put in a notification field; terminals truncate anyway.
const MAX_FIELD_CHARS: usize = 200;

/// Drops control characters (C0, DEL, C1), replaces `;` (the OSC field separator; OSC 9 also
/// treats `9;4;` as a progress report), and caps the length.
fn sanitize(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .map(|c| if c == ';' { ',' } else { c })
        .take(MAX_FIELD_CHARS)
        .collect()
}

#[cfg(test)]
mod tests {
    use calyx_integrations::AgentKind;

    use super::*;

    fn tr(pane: u64, from: AgentState, to: AgentState) -> Transition {
        Transition {
            pane,
            kind: AgentKind::ClaudeCode,
            subagent: None,
            from,
            to,
            tool: Some("Bash".into()),
        }
    }

    fn unfocused(_: u64) -> bool {
        false
    }

    #[test]
    fn blocked_and_finished_notify_when_unfocused() {
        let t0 = Instant::now();
        let mut n = Notifier::default();
        let out = n.decide(
            &[
                tr(1, AgentState::Working, AgentState::Blocked),
                tr(2, AgentState::Working, AgentState::Idle),
                tr(3, AgentState::Working, AgentState::Done),
                tr(4, AgentState::Idle, AgentState::Working),
                tr(5, AgentState::Unknown, AgentState::Idle),
            ],
            &unfocused,
            t0,
        );
        let panes: Vec<u64> = out.iter().map(|n| n.pane).collect();
        assert_eq!(panes, vec![1, 2, 3]);
        assert_eq!(out[0].title, "Claude Code needs approval");
        assert_eq!(out[0].body, "pane 1: wants to run Bash");
        assert!(out[0].bell);
    }

    #[test]
    fn focused_panes_and_subagents_do_not_notify() {
        let t0 = Instant::now();
        let mut n = Notifier::default();
        let mut child = tr(2, AgentState::Working, AgentState::Done);
        child.subagent = Some("a1".into());
        let out = n.decide(
            &[tr(1, AgentState::Working, AgentState::Blocked), child],
            &|p| p == 1,
            t0,
        );
        assert!(out.is_empty());
    }

    #[test]
    fn same_pane_and_state_is_deduplicated() {
        let t0 = Instant::now();
        let mut n = Notifier::default();
        let idle = [tr(1, AgentState::Working, AgentState::Idle)];
        assert_eq!(n.decide(&idle, &unfocused, t0).len(), 1);
        assert!(n
            .decide(&idle, &unfocused, t0 + Duration::from_secs(10))
            .is_empty());
        assert_eq!(
            n.decide(&idle, &unfocused, t0 + Duration::from_secs(31))
                .len(),
            1
        );
    }

    #[test]
    fn overall_rate_is_capped_per_minute() {
        let t0 = Instant::now();
        let mut n = Notifier::new(NotifyConfig {
            max_per_minute: 3,
            ..NotifyConfig::default()
        });
        let many: Vec<Transition> = (0..10)
            .map(|p| tr(p, AgentState::Working, AgentState::Idle))
            .collect();
        assert_eq!(n.decide(&many, &unfocused, t0).len(), 3);
        assert!(n
            .decide(&many, &unfocused, t0 + Duration::from_secs(30))
            .is_empty());
        assert_eq!(n.decide(&many, &unfocused, t0 + MINUTE).len(), 3);
    }

    #[test]
    fn sequences_follow_the_config() {
        let note = Notification {
            pane: 1,
            title: "T".into(),
            body: "B".into(),
            bell: true,
        };
        let all = NotifyConfig {
            bell: true,
            osc9: true,
            osc777: true,
            ..NotifyConfig::default()
        };
        assert_eq!(
            osc_sequences(&note, &all),
            b"\x07\x1b]9;T: B\x07\x1b]777;notify;T;B\x07".to_vec()
        );
        let none = NotifyConfig {
            bell: false,
            osc9: false,
            osc777: false,
            ..NotifyConfig::default()
        };
        assert!(osc_sequences(&note, &none).is_empty());
    }

    #[test]
    fn hostile_text_cannot_inject_escapes() {
        let note = Notification {
            pane: 1,
            title: "a;b\x1b]0;pwned\x07".into(),
            body: "rm -rf /\x1b[2J\u{9b}31m\r\nx;y".into(),
            bell: false,
        };
        let cfg = NotifyConfig {
            osc777: true,
            ..NotifyConfig::default()
        };
        let bytes = osc_sequences(&note, &cfg);
        let text = String::from_utf8_lossy(&bytes);
        assert_eq!(text, "\x1b]9;a,b]0,pwned: rm -rf /[2J31mx,y\x07\x1b]777;notify;a,b]0,pwned;rm -rf /[2J31mx,y\x07");
        assert_eq!(bytes.iter().filter(|b| **b == 0x1b).count(), 2);
        assert_eq!(bytes.iter().filter(|b| **b == 0x07).count(), 2);
    }
}
