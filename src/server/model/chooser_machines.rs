//! What the chooser knows of the saved machines (issue 20 §2): each enabled machine's
//! sessions as its server last answered, or why it could not, asked when the chooser opened
//! (`view::tree_machines` asks and draws). Session names and failure reasons come from
//! another machine: control characters are stripped before they reach a row.

use calyx_tui::TreeRow;

use crate::machines::all;

/// The longest session name or reason drawn from another machine.
const MAX_TEXT: usize = 200;

/// What the chooser knows of the saved machines, asked when it last opened.
#[derive(Debug, Default)]
pub(crate) struct ChooserMachines {
    /// Which asking the listings belong to: answers to an older one are dropped.
    pub(crate) asked: u64,
    pub(crate) listings: Vec<Listing>,
}

#[derive(Debug)]
pub(crate) struct Listing {
    pub(crate) machine: String,
    pub(crate) state: Listed,
}

#[derive(Debug)]
pub(crate) enum Listed {
    Asking,
    Sessions(Vec<RemoteSession>),
    /// The line to show: `unreachable: NAME (reason)` or `needs you: ...`.
    Failed(String),
}

#[derive(Debug)]
pub(crate) struct RemoteSession {
    /// As the remote server names it, for the attach.
    pub(crate) name: String,
    pub(crate) windows: usize,
    pub(crate) attached: usize,
}

/// An answer about one machine, brought back to the loop.
#[derive(Debug)]
pub struct MachineAnswer {
    pub(crate) asked: u64,
    pub(crate) machine: String,
    pub(crate) answer: all::Answer,
}

/// `text` without control characters, cut to [`MAX_TEXT`] characters: it is drawn as is.
pub(crate) fn drawable(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .take(MAX_TEXT)
        .collect()
}

impl ChooserMachines {
    /// The chooser's rows after this server's: one per machine, then its sessions.
    pub(crate) fn items(&self) -> Vec<(usize, Option<usize>)> {
        let mut items = Vec::new();
        for (m, listing) in self.listings.iter().enumerate() {
            items.push((m, None));
            if let Listed::Sessions(sessions) = &listing.state {
                items.extend((0..sessions.len()).map(|s| (m, Some(s))));
            }
        }
        items
    }

    /// A machine's row: its name, and how its asking went.
    pub(crate) fn machine_row(&self, m: usize) -> Option<TreeRow> {
        let listing = self.listings.get(m)?;
        let detail = match &listing.state {
            Listed::Asking => "asking…".to_string(),
            Listed::Sessions(s) if s.is_empty() => "no sessions".to_string(),
            Listed::Sessions(s) => {
                format!("{} session{}", s.len(), if s.len() == 1 { "" } else { "s" })
            }
            Listed::Failed(line) => line.clone(),
        };
        Some(TreeRow {
            window: false,
            label: format!("{}:", drawable(&listing.machine)),
            detail,
            current: false,
            attached: 0,
            agents: Vec::new(),
            preview: None,
        })
    }

    /// A remote session's row, indented under its machine.
    pub(crate) fn session_row(&self, m: usize, s: usize) -> Option<TreeRow> {
        let Listed::Sessions(sessions) = &self.listings.get(m)?.state else {
            return None;
        };
        let session = sessions.get(s)?;
        Some(TreeRow {
            window: true,
            label: drawable(&session.name),
            detail: format!(
                "{} window{}",
                session.windows,
                if session.windows == 1 { "" } else { "s" }
            ),
            current: false,
            attached: session.attached,
            agents: Vec::new(),
            preview: None,
        })
    }

    /// The machine and the session's name as its server knows it.
    pub(crate) fn chosen(&self, m: usize, s: usize) -> Option<(String, String)> {
        let listing = self.listings.get(m)?;
        let Listed::Sessions(sessions) = &listing.state else {
            return None;
        };
        Some((listing.machine.clone(), sessions.get(s)?.name.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::SessionInfo;

    #[test]
    fn rows_follow_the_answers_and_draw_no_control_characters() {
        let mut chooser = ChooserMachines {
            asked: 1,
            listings: vec![
                Listing {
                    machine: "build".into(),
                    state: Listed::Asking,
                },
                Listing {
                    machine: "far".into(),
                    state: Listed::Failed("unreachable: far (refused)".into()),
                },
            ],
        };
        assert_eq!(chooser.items(), [(0, None), (1, None)]);
        assert_eq!(
            chooser.machine_row(0).map(|r| r.detail),
            Some("asking…".into())
        );
        let info = SessionInfo {
            id: 1,
            name: "api\u{1b}]2;pwned\u{7}".into(),
            windows: 2,
            panes: 3,
            attached: 1,
            rows: 24,
            cols: 80,
        };
        chooser.listings[0].state = Listed::Sessions(vec![RemoteSession {
            name: info.name.clone(),
            windows: info.windows,
            attached: info.attached,
        }]);
        assert_eq!(chooser.items(), [(0, None), (0, Some(0)), (1, None)]);
        let row = chooser.session_row(0, 0).expect("a session row");
        assert_eq!(row.label, "api]2;pwned");
        assert!(row.window);
        assert_eq!(row.detail, "2 windows");
        assert_eq!(
            chooser.machine_row(1).map(|r| r.detail),
            Some("unreachable: far (refused)".into())
        );
        // The attach uses the name as the remote server knows it.
        assert_eq!(
            chooser.chosen(0, 0),
            Some(("build".to_string(), info.name.clone()))
        );
        assert_eq!(chooser.chosen(1, 0), None);
    }
}
