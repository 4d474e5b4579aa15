//! The status-line messages of this server run (`prefix ~` shows them whole): a message is on
//! screen for a few seconds and cut at the terminal's width, the log keeps its full text.

use std::collections::VecDeque;
use std::time::SystemTime;

/// How many messages are kept: the oldest go first.
const KEPT: usize = 200;

/// Messages, oldest first, each with when it was shown.
#[derive(Debug, Default)]
pub struct MessageLog {
    entries: VecDeque<(SystemTime, String)>,
}

impl MessageLog {
    /// Records a message; the same text shown again at once (to each attached client) is kept
    /// once.
    pub fn push(&mut self, text: &str) {
        if self.entries.back().is_some_and(|(_, last)| last == text) {
            return;
        }
        if self.entries.len() == KEPT {
            self.entries.pop_front();
        }
        self.entries
            .push_back((SystemTime::now(), text.to_string()));
    }

    /// (time as `HH:MM:SS` UTC, text), oldest first.
    pub fn shown(&self) -> Vec<(String, String)> {
        self.entries
            .iter()
            .map(|(at, text)| {
                let secs = at
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let day = secs % 86_400;
                let time = format!("{:02}:{:02}:{:02}", day / 3600, day / 60 % 60, day % 60);
                (time, text.clone())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_and_each_repeat_once() {
        let mut log = MessageLog::default();
        log.push("a");
        log.push("a");
        log.push("b");
        assert_eq!(log.shown().len(), 2);
        for i in 0..KEPT + 5 {
            log.push(&format!("m{i}"));
        }
        assert_eq!(log.shown().len(), KEPT);
        let shown = log.shown();
        assert_eq!(shown.last().map(|(_, t)| t.as_str()), Some("m204"));
        assert_eq!(shown[0].0.len(), 8, "HH:MM:SS");
    }
}
