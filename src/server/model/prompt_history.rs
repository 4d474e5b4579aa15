//! The `:` prompt's history: the commands run from it, oldest first, shared by every client of
//! the server and walked with Up and Down. Kept in `$XDG_STATE_HOME/calyx/prompt-history`
//! (mode 0600: a command line can name private paths) so it outlasts the server, as a shell's
//! history does; a file that cannot be read or written only costs the history, never a command.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;

/// The most commands kept.
pub const MOST: usize = 500;

#[derive(Debug, Default)]
pub struct PromptHistory {
    entries: VecDeque<String>,
    /// Where it is kept (None: in memory only).
    file: Option<PathBuf>,
}

/// Where a client is in the history while its prompt is open.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HistoryWalk {
    /// The entry shown (None: the line being typed, not a history entry).
    at: Option<usize>,
    /// The line being typed when the walk began, given back by Down past the newest entry.
    draft: String,
}

impl PromptHistory {
    /// The history kept in `file`, read now (a missing or unreadable file: empty).
    pub fn load(file: PathBuf) -> Self {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        let mut entries: VecDeque<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string)
            .collect();
        while entries.len() > MOST {
            entries.pop_front();
        }
        Self {
            entries,
            file: Some(file),
        }
    }

    /// Records a command run from the prompt: blank lines and a repeat of the newest entry are
    /// not recorded twice (as bash's `ignoredups`).
    pub fn push(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() || self.entries.back().is_some_and(|last| last == line) {
            return;
        }
        self.entries.push_back(line.to_string());
        while self.entries.len() > MOST {
            self.entries.pop_front();
        }
        if let Err(e) = self.save() {
            tracing::warn!("prompt history not saved: {e}");
        }
    }

    /// The entries, oldest first.
    #[cfg(test)]
    pub fn entries(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(String::as_str)
    }

    /// Up: the entry before the one `walk` shows (the newest from the typed line); None at the
    /// oldest or with no history, where the text stays.
    pub fn older(&self, walk: &mut HistoryWalk, typed: &str) -> Option<String> {
        let at = match walk.at {
            None => {
                let newest = self.entries.len().checked_sub(1)?;
                walk.draft = typed.to_string();
                newest
            }
            Some(at) => at.checked_sub(1)?,
        };
        walk.at = Some(at);
        self.entries.get(at).cloned()
    }

    /// Down: the entry after the one `walk` shows, or past the newest the line that was being
    /// typed; None when the walk is not in the history.
    pub fn newer(&self, walk: &mut HistoryWalk) -> Option<String> {
        let at = walk.at? + 1;
        if at < self.entries.len() {
            walk.at = Some(at);
            return self.entries.get(at).cloned();
        }
        walk.at = None;
        Some(std::mem::take(&mut walk.draft))
    }

    /// Writes the whole history (it is small) to a new file renamed over the old one, so a
    /// crash mid-write never leaves half a history. Not synced to the disk: the server's loop
    /// does not wait on the disk for a history line.
    fn save(&self) -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let Some(file) = &self.file else {
            return Ok(());
        };
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let temp = file.with_extension("new");
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temp)?;
        for line in &self.entries {
            writeln!(out, "{line}")?;
        }
        std::fs::rename(&temp, file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(lines: &[&str]) -> PromptHistory {
        let mut h = PromptHistory::default();
        for l in lines {
            h.push(l);
        }
        h
    }

    #[test]
    fn up_walks_back_and_down_returns_to_the_typed_line() {
        let h = history(&["one", "two", "three"]);
        let mut walk = HistoryWalk::default();
        assert_eq!(h.older(&mut walk, "draft").as_deref(), Some("three"));
        assert_eq!(h.older(&mut walk, "three").as_deref(), Some("two"));
        assert_eq!(h.older(&mut walk, "two").as_deref(), Some("one"));
        // At the oldest, Up changes nothing.
        assert_eq!(h.older(&mut walk, "one"), None);
        assert_eq!(h.newer(&mut walk).as_deref(), Some("two"));
        assert_eq!(h.newer(&mut walk).as_deref(), Some("three"));
        assert_eq!(h.newer(&mut walk).as_deref(), Some("draft"));
        // Out of the history, Down changes nothing.
        assert_eq!(h.newer(&mut walk), None);
    }

    #[test]
    fn blanks_and_repeats_are_not_kept_and_the_oldest_go_first() {
        let mut h = history(&["a", "a", "  ", "b", "a"]);
        assert_eq!(h.entries().collect::<Vec<_>>(), ["a", "b", "a"]);
        for i in 0..MOST + 10 {
            h.push(&format!("cmd {i}"));
        }
        assert_eq!(h.entries().count(), MOST);
        assert_eq!(h.entries().next(), Some("cmd 10"));
        let mut walk = HistoryWalk::default();
        assert_eq!(h.older(&mut walk, ""), Some(format!("cmd {}", MOST + 9)));
    }

    #[test]
    fn an_empty_history_changes_nothing() {
        let h = PromptHistory::default();
        let mut walk = HistoryWalk::default();
        assert_eq!(h.older(&mut walk, "typed"), None);
        assert_eq!(h.newer(&mut walk), None);
    }

    #[test]
    fn kept_in_a_private_file_across_servers() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("calyx/prompt-history");
        let mut h = PromptHistory::load(file.clone());
        h.push("new-window -n logs");
        h.push("kill-pane -t %3");
        let mode = std::fs::metadata(&file)
            .expect("written")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = PromptHistory::load(file);
        assert_eq!(
            again.entries().collect::<Vec<_>>(),
            ["new-window -n logs", "kill-pane -t %3"]
        );
    }
}
