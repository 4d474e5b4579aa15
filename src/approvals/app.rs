//! App requests: what an MCP App view asks the user through the approval panel (issue 17,
//! "App requests through the approval panel"). They share the queue, the panel, `calyx
//! approve/deny` and `approvals.jsonl` with the agents' gates, but they block no agent row and
//! no "always" rule is ever made from them: their `a` is "Always Allow for This View", kept by
//! `views::app_requests` for the view's life, never a rule in the queue.

use std::time::Duration;

use tokio::sync::oneshot;

use super::answer::Outcome;

use crate::layout::PaneId;
use crate::views::registry::ViewId;

/// How long an app request waits for the human before it counts as the refusal.
pub const APP_EXPIRY: Duration = Duration::from_secs(3600);

/// The pane a standalone view's request is filed under: no real pane has it, so no pane's
/// closing withdraws it and the panel names the view instead.
pub const NO_PANE: PaneId = PaneId::MAX;

/// What an app asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppKind {
    /// `ui/open-link`: the page opens the URL itself once allowed.
    OpenLink,
    /// `ui/message` from a view in a pane: the text is typed into that pane.
    SendMessage,
    /// `ui/message` from a standalone view: the text goes to the answering client's clipboard.
    CopyMessage,
}

impl AppKind {
    /// The panel's title after the server's name (`Everything: Open Link`).
    pub fn title(self) -> &'static str {
        match self {
            AppKind::OpenLink => "Open Link",
            AppKind::SendMessage => "Send Message",
            AppKind::CopyMessage => "Copy Message",
        }
    }

    /// What the view is answered when the user says no, the request expires or is replaced.
    pub fn refusal(self) -> &'static str {
        match self {
            AppKind::OpenLink => "Link opening denied by user",
            AppKind::SendMessage | AppKind::CopyMessage => "Message sending denied",
        }
    }

    /// What `y` and `n` do, as the panel's footer says it.
    pub fn answers(self) -> (&'static str, &'static str) {
        match self {
            AppKind::OpenLink => ("Open", "Cancel"),
            AppKind::SendMessage => ("Send", "Don't Send"),
            AppKind::CopyMessage => ("Copy", "Dismiss"),
        }
    }

    /// The panel's row of keys, in the words of the spec's buttons.
    pub fn keys_line(self) -> &'static str {
        match self {
            AppKind::OpenLink => "y Open   n Cancel   a Always Allow for This View",
            AppKind::SendMessage => "y Send   n Don't Send   a Always Allow for This View",
            AppKind::CopyMessage => "y Copy   n Dismiss   a Always Allow for This View",
        }
    }
}

/// The keys of an Open Link whose page has closed while it waited: `y` opens it in the
/// answering client's browser (or copies it when none is local), `c` copies it.
pub const PAGE_GONE_KEYS: &str = "the page has closed · y Open here   c Copy link   n Cancel";

/// The part of a queued request that makes it an app request: what to do on an allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppTarget {
    pub view: ViewId,
    pub kind: AppKind,
    /// The calling pane (None: a standalone view).
    pub pane: Option<PaneId>,
    /// The URL to open, or the message to send or copy (already assembled).
    pub text: String,
    /// Tells this request apart from a newer one of the same view and kind (so the one the
    /// page gave up on is the one withdrawn).
    pub token: u64,
}

/// The reason an allowed Send Message could not be carried out (the view gets it as is).
pub const PANE_GONE: &str = "the calling pane is gone";

/// What the owner loop hears about app requests (as `Msg::App`).
#[derive(Debug)]
pub enum AppMsg {
    /// Queue this request (replacing a pending one of the same view and kind), or carry it out
    /// at once when `always` (the user chose "Always Allow for This View" before).
    Ask(Box<AppAsk>),
    /// The page stopped waiting for request `token` (it closed): withdraw it.
    Gone { token: u64 },
}

/// One request for the owner loop.
#[derive(Debug)]
pub struct AppAsk {
    pub target: AppTarget,
    /// The server's name for the panel's title (`Everything: Open Link`).
    pub server: String,
    /// Allowed for this view already: carry it out without asking.
    pub always: bool,
    pub answer: oneshot::Sender<Outcome>,
}
