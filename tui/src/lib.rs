//! calyx-tui: ratatui widgets over borrowed view data. The server builds the views from its
//! state; nothing here knows about sessions, sockets or agents.

pub mod approval;
pub mod approval_rules;
pub mod border;
pub mod copied_rows;
pub mod disputed_width;
pub mod escape;
pub mod help;
pub mod links;
pub mod marks;
pub mod messages;
pub mod pane;
pub mod server_form;
pub mod servers;
pub mod sidebar;
pub mod sign_in_page;
pub mod status;
pub mod tree;

pub use approval::ApprovalView;
pub use approval_rules::{RuleChoicesView, RulesListView};
pub use border::BorderView;
pub use copied_rows::CopiedRows;
pub use help::{HelpEntry, HelpView};
pub use links::FrameLinks;
pub use messages::MessagesView;
pub use pane::{Highlight, HighlightKind, PaneView};
pub use server_form::{
    FormField, FormOrigin, SecretEntry, ServerForm, ServerFormView, CLIENT_AUTHS,
};
pub use servers::{ServerRow, ServersOverlay, ServersPage, ServersView};
pub use sign_in_page::SignInPage;
pub use status::{StatusView, WindowTab};
pub use tree::{TreeRow, TreeView};

/// What the widgets' buffer tests share.
#[cfg(test)]
mod test_support {
    use ratatui::buffer::Buffer;

    /// A buffer's cells as text, a line per row.
    pub fn text_of(buf: &Buffer) -> String {
        let area = buf.area;
        (0..area.height)
            .map(|y| {
                (0..area.width)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}
