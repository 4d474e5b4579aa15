//! One pane's command history, learned from the shell integration marks in its output: each
//! command's text, working directory, start and end, exit code and output.
//!
//! The output of a command is exactly the bytes between its `133;C` and `133;D` marks, so it is
//! recorded on the pane's reader thread as the bytes go by (no re-parsing, no extra process).
//! Secrets are redacted when a command is recorded, so the history never holds them.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::plain::plain_text;
use crate::redact::redact;
use crate::shell_marks::{Hit, Mark, Scanner};

/// Commands kept per pane; the oldest is forgotten first.
pub const MAX_COMMANDS: usize = 200;
/// Most output text kept per command: the end of the output (the start is cut first, as the
/// end is where results and errors are).
pub const MAX_OUTPUT: usize = 256 * 1024;
/// Raw bytes kept of a running command: twice the text cap, so output heavy with escape
/// sequences still fills the cap once they are stripped.
const RAW_KEEP: usize = 2 * MAX_OUTPUT;

/// Whether a command is still running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandState {
    Running,
    Finished,
}

/// One command as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRecord {
    /// 1, 2, 3... within the pane; never reused.
    pub seq: u64,
    /// The command line, redacted (empty when the shell did not send it).
    pub command: String,
    /// The working directory it ran in, when the shell reported one (OSC 7).
    pub cwd: Option<String>,
    pub started_ms: u64,
    pub finished_ms: Option<u64>,
    /// The exit code; `None` while running, or when the shell never reported it (the next
    /// prompt came without an end mark, e.g. the shell was replaced).
    pub exit_code: Option<i32>,
    pub state: CommandState,
    /// Plain text output, redacted, at most [`MAX_OUTPUT`] bytes; empty while running (see
    /// [`CommandLog::output`]).
    pub output: String,
    /// Raw bytes the command printed.
    pub output_bytes: u64,
    /// Whether the start of the output was cut.
    pub truncated: bool,
}

/// The history of one pane.
#[derive(Debug, Default)]
pub struct CommandLog {
    scanner: Scanner,
    hits: Vec<Hit>,
    records: VecDeque<CommandRecord>,
    last_seq: u64,
    cwd: Option<String>,
    /// The raw output tail of the running command (the last record), when one runs.
    running: Option<Vec<u8>>,
    raw_dropped: bool,
    marks_seen: bool,
    changes: u64,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Keeps the last `max` bytes of `text` on a char boundary; says whether it cut.
pub fn keep_tail(text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    (text[start..].to_owned(), true)
}

impl CommandLog {
    /// Feeds a chunk of pane output (after charset translation, before vt100).
    pub fn feed(&mut self, chunk: &[u8]) {
        let mut hits = std::mem::take(&mut self.hits);
        hits.clear();
        self.scanner.scan(chunk, &mut hits);
        let mut from = 0;
        for hit in &hits {
            if self.running.is_some() {
                self.capture(&chunk[from.min(hit.start)..hit.start]);
                self.uncapture(hit.carried);
            }
            from = hit.end;
            self.apply(hit.mark.clone());
        }
        if self.running.is_some() {
            self.capture(&chunk[from.min(chunk.len())..]);
        }
        self.hits = hits;
    }

    fn capture(&mut self, bytes: &[u8]) {
        let Some(raw) = self.running.as_mut() else {
            return;
        };
        raw.extend_from_slice(bytes);
        if raw.len() > 2 * RAW_KEEP {
            raw.drain(..raw.len() - RAW_KEEP);
            self.raw_dropped = true;
        }
        if let Some(r) = self.records.back_mut() {
            r.output_bytes += bytes.len() as u64;
        }
    }

    /// Takes back the first bytes of a mark that were captured as output in an earlier chunk.
    fn uncapture(&mut self, n: usize) {
        if let Some(raw) = self.running.as_mut() {
            let n = n.min(raw.len());
            raw.truncate(raw.len() - n);
            if let Some(r) = self.records.back_mut() {
                r.output_bytes = r.output_bytes.saturating_sub(n as u64);
            }
        }
    }

    fn apply(&mut self, mark: Mark) {
        self.marks_seen = true;
        match mark {
            Mark::PromptStart => self.finish(None),
            Mark::InputStart => {}
            Mark::OutputStart { cmdline } => {
                // A shell that marks C itself (fish 4) next to our mark: one command, not two.
                let text = cmdline.as_deref().map(|t| redact(t.trim_end_matches('\n')));
                let same = self.running.as_ref().is_some_and(|raw| raw.len() < 64)
                    && self
                        .records
                        .back()
                        .is_some_and(|r| r.command.is_empty() || Some(&r.command) == text.as_ref());
                match (same, text) {
                    (true, Some(text)) => {
                        if let Some(r) = self.records.back_mut() {
                            r.command = text;
                        }
                    }
                    (_, text) => {
                        self.finish(None);
                        self.start(text.unwrap_or_default());
                    }
                }
            }
            Mark::Finished { exit_code } => self.finish(exit_code),
            Mark::Cwd(path) => self.cwd = Some(path),
        }
    }

    fn start(&mut self, command: String) {
        self.last_seq += 1;
        self.records.push_back(CommandRecord {
            seq: self.last_seq,
            command: redact(command.trim_end_matches('\n')),
            cwd: self.cwd.clone(),
            started_ms: now_ms(),
            finished_ms: None,
            exit_code: None,
            state: CommandState::Running,
            output: String::new(),
            output_bytes: 0,
            truncated: false,
        });
        while self.records.len() > MAX_COMMANDS {
            self.records.pop_front();
        }
        self.running = Some(Vec::new());
        self.raw_dropped = false;
        self.changes += 1;
    }

    fn finish(&mut self, exit_code: Option<i32>) {
        let Some(raw) = self.running.take() else {
            return;
        };
        let (output, cut) = Self::render(&raw);
        let dropped = std::mem::take(&mut self.raw_dropped);
        if let Some(r) = self.records.back_mut() {
            r.exit_code = exit_code;
            r.finished_ms = Some(now_ms());
            r.state = CommandState::Finished;
            r.output = output;
            r.truncated = cut || dropped;
        }
        self.changes += 1;
    }

    fn render(raw: &[u8]) -> (String, bool) {
        keep_tail(redact(&plain_text(raw)), MAX_OUTPUT)
    }

    /// The recorded commands, oldest first (the last may be running).
    pub fn records(&self) -> impl DoubleEndedIterator<Item = &CommandRecord> {
        self.records.iter()
    }

    /// One command by its sequence number, if still kept.
    pub fn get(&self, seq: u64) -> Option<&CommandRecord> {
        let first = self.records.front()?.seq;
        self.records
            .get(usize::try_from(seq.checked_sub(first)?).ok()?)
    }

    /// A command's output text: the recorded output once finished, the output so far (rendered
    /// now, redacted) while running. With whether its start was cut.
    pub fn output(&self, seq: u64) -> Option<(String, bool)> {
        let r = self.get(seq)?;
        match (&self.running, r.state) {
            (Some(raw), CommandState::Running) => {
                let (text, cut) = Self::render(raw);
                Some((text, cut || self.raw_dropped))
            }
            _ => Some((r.output.clone(), r.truncated)),
        }
    }

    /// The sequence number the next command will get.
    pub fn next_seq(&self) -> u64 {
        self.last_seq + 1
    }

    /// The running command's sequence number.
    pub fn running_seq(&self) -> Option<u64> {
        self.running
            .as_ref()
            .and_then(|_| self.records.back().map(|r| r.seq))
    }

    /// Whether the shell ever sent a mark (its integration is active).
    pub fn marks_seen(&self) -> bool {
        self.marks_seen
    }

    /// Bumped whenever a command starts or finishes, so a waiter can tell cheaply.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The last working directory the shell reported.
    pub fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(log: &mut CommandLog, text: &str, output: &[u8], exit: i32) {
        log.feed(b"\x1b]133;A\x07$ \x1b]133;B\x07");
        log.feed(format!("\x1b]133;C;cmdline={text}\x07").as_bytes());
        log.feed(output);
        log.feed(format!("\x1b]133;D;{exit}\x07").as_bytes());
    }

    #[test]
    fn records_text_output_exit_and_cwd() {
        let mut log = CommandLog::default();
        log.feed(b"\x1b]7;file://host/home/me\x07");
        command(&mut log, "echo hi", b"hi\r\n", 0);
        command(&mut log, "false", b"", 1);
        let r: Vec<_> = log.records().cloned().collect();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].command, "echo hi");
        assert_eq!(r[0].output, "hi\n");
        assert_eq!(r[0].exit_code, Some(0));
        assert_eq!(r[0].cwd.as_deref(), Some("/home/me"));
        assert_eq!(r[1].exit_code, Some(1));
        assert_eq!(r[1].state, CommandState::Finished);
        assert!(log.marks_seen());
    }

    #[test]
    fn output_split_mid_mark_excludes_the_mark() {
        let mut log = CommandLog::default();
        let stream =
            b"\x1b]133;C;cmdline=cat\x07line one\r\nline two\r\n\x1b]133;D;0\x07\x1b]133;A\x07";
        for cut in 0..stream.len() {
            let mut log2 = CommandLog::default();
            log2.feed(&stream[..cut]);
            log2.feed(&stream[cut..]);
            let r = log2.get(1).cloned();
            assert_eq!(
                r.map(|r| (r.output, r.exit_code)),
                Some(("line one\nline two\n".to_string(), Some(0))),
                "cut at {cut}"
            );
        }
        log.feed(stream);
        assert_eq!(log.get(1).map(|r| r.output_bytes), Some(20));
    }

    #[test]
    fn keeps_two_hundred_commands_and_the_end_of_big_output() {
        let mut log = CommandLog::default();
        for i in 0..(MAX_COMMANDS + 5) {
            command(&mut log, &format!("echo {i}"), b"x\r\n", 0);
        }
        assert_eq!(log.records().count(), MAX_COMMANDS);
        assert!(log.get(5).is_none());
        assert_eq!(log.get(6).map(|r| r.command.as_str()), Some("echo 5"));
        let big: Vec<u8> = (0..200_000)
            .flat_map(|i| format!("{i:07}\n").into_bytes())
            .collect();
        command(&mut log, "seq", &big, 0);
        let last = log.records().last().cloned();
        let last = last.expect("a record");
        assert_eq!(last.output.len(), MAX_OUTPUT);
        assert!(last.truncated);
        assert!(last.output.ends_with("0199999\n"));
        assert_eq!(last.output_bytes, big.len() as u64);
    }

    #[test]
    fn secrets_are_redacted_when_recorded() {
        let mut log = CommandLog::default();
        command(&mut log, "mysql --password x", b"TOKEN=abc123\r\n", 0);
        let r = log.get(1).cloned().expect("a record");
        assert_eq!(r.command, "mysql --password [REDACTED]");
        assert_eq!(r.output, "TOKEN=[REDACTED]\n");
    }

    #[test]
    fn a_key_block_and_prefixed_tokens_are_redacted_in_the_history() {
        let mut log = CommandLog::default();
        let output = b"-----BEGIN OPENSSH PRIVATE KEY-----\r\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\r\nQyNTUxOQAAACDfakeFAKEfake\r\n-----END OPENSSH PRIVATE KEY-----\r\n";
        command(&mut log, "cat ~/.ssh/id_ed25519", output, 0);
        command(&mut log, "mysql -uroot -phunter2 app", b"", 0);
        command(&mut log, "psql postgres://app:s3cr3t@db/app", b"", 0);
        let key = log.get(1).cloned().expect("a record");
        assert_eq!(
            key.output,
            "-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]-----END OPENSSH PRIVATE KEY-----\n"
        );
        let mysql = log.get(2).cloned().expect("a record");
        assert_eq!(mysql.command, "mysql -uroot -p[REDACTED] app");
        let psql = log.get(3).cloned().expect("a record");
        assert_eq!(psql.command, "psql postgres://app:[REDACTED]@db/app");
    }

    #[test]
    fn running_output_is_readable_and_a_prompt_without_end_closes_it() {
        let mut log = CommandLog::default();
        log.feed(b"\x1b]133;C;cmdline=sleep 9\x07partial");
        assert_eq!(log.running_seq(), Some(1));
        assert_eq!(log.output(1), Some(("partial".to_string(), false)));
        log.feed(b"\x1b]133;A\x07");
        assert_eq!(log.running_seq(), None);
        assert_eq!(log.get(1).map(|r| r.exit_code), Some(None));
        assert_eq!(log.next_seq(), 2);
    }
}
