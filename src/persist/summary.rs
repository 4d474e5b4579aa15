//! How a saved session reads in `calyx ls`:
//! `work: 3 windows, 5 panes, 2 agents (saved 14:02, not running)`.

use super::record::SavedSession;

/// `1 window`, `3 windows`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// One `calyx ls` line for a saved session that is not running; `clock` is its save time as
/// the user's clock shows it (see [`local_clock`]).
pub fn line(session: &SavedSession, clock: &str) -> String {
    format!(
        "{}: {}, {}, {} (saved {clock}, not running)",
        calyx_tui::escape::visible(&session.name),
        counted(session.windows.len(), "window"),
        counted(session.pane_count(), "pane"),
        counted(session.agent_count(), "agent"),
    )
}

/// `HH:MM` in local time for a Unix time (with the date when it is not today).
pub fn local_clock(secs: u64, now: u64) -> String {
    let (Some(then), Some(today)) = (local(secs), local(now)) else {
        return secs.to_string();
    };
    let same_day = then.tm_year == today.tm_year && then.tm_yday == today.tm_yday;
    if same_day {
        format!("{:02}:{:02}", then.tm_hour, then.tm_min)
    } else {
        format!(
            "{}-{:02}-{:02} {:02}:{:02}",
            then.tm_year + 1900,
            then.tm_mon + 1,
            then.tm_mday,
            then.tm_hour,
            then.tm_min
        )
    }
}

/// `YYYY-MM-DD HH:MM` in local time for a Unix time.
pub fn local_date_time(secs: u64) -> String {
    let Some(t) = local(secs) else {
        return secs.to_string();
    };
    format!(
        "{}-{:02}-{:02} {:02}:{:02}",
        t.tm_year + 1900,
        t.tm_mon + 1,
        t.tm_mday,
        t.tm_hour,
        t.tm_min
    )
}

/// The broken-down local time of a Unix time.
fn local(secs: u64) -> Option<libc::tm> {
    let t = libc::time_t::try_from(secs).ok()?;
    // SAFETY: localtime_r writes only into `out`, which lives on this stack frame.
    unsafe {
        let mut out: libc::tm = std::mem::zeroed();
        (!libc::localtime_r(&t, &mut out).is_null()).then_some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::persist::record::{SavedAgent, SavedPane, SavedWindow};

    fn pane(id: u32, agent: bool) -> SavedPane {
        SavedPane {
            id,
            record_id: String::new(),
            cwd: "/".into(),
            command: Vec::new(),
            foreground: Vec::new(),
            program: Vec::new(),
            title: String::new(),
            agent: agent.then(|| SavedAgent {
                kind: "codex".into(),
                session_id: Some("s".into()),
                state: "idle".into(),
                transcript_path: None,
            }),
            history: None,
        }
    }

    #[test]
    fn the_line_counts_windows_panes_and_agents() {
        let window = |panes: Vec<SavedPane>| SavedWindow {
            number: 0,
            name: String::new(),
            auto_name: true,
            layout: Layout::Pane(panes[0].id),
            active: panes[0].id,
            zoomed: false,
            synchronized: false,
            panes,
        };
        let s = SavedSession {
            name: "work".into(),
            saved_at: 0,
            active_window: 0,
            windows: vec![
                window(vec![pane(1, true), pane(2, false)]),
                window(vec![pane(3, true)]),
                window(vec![pane(4, false), pane(5, false)]),
            ],
        };
        assert_eq!(
            line(&s, "14:02"),
            "work: 3 windows, 5 panes, 2 agents (saved 14:02, not running)"
        );
    }

    #[test]
    fn a_time_today_is_hours_and_minutes() {
        let now = crate::persist::record::now_secs();
        let clock = local_clock(now, now);
        assert_eq!(clock.len(), 5, "{clock}");
        assert_eq!(&clock[2..3], ":");
        assert!(local_clock(now - 3 * 86_400, now).contains('-'));
    }
}
