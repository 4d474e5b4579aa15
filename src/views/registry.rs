//! The views the server holds, with their limits and lifetimes (issue 17, "Lifetimes"), as
//! plain data: the owner loop will call these on events (a tool call, a pane closing, a hook)
//! and send `ui/resource-teardown` to whatever they return as removed.
//!
//! Limits keep a chatty agent from piling up pages: at most [`PER_PANE`] views in a pane and
//! [`IN_ALL`] in all. Finished views (`Completed`, `Cancelled`, `Rejected`) make room first;
//! running ones are never dropped for a new one, which is rejected instead.

use calyx_integrations::AgentKind;

use crate::layout::PaneId;
use crate::views::token::ViewToken;

/// Views one pane may hold.
pub const PER_PANE: usize = 8;
/// Views the server may hold.
pub const IN_ALL: usize = 64;
/// The reason a view over the limits is rejected with.
pub const TOO_MANY: &str = "too many views";

/// A view's id: small, stable for its life, in its URLs and in `calyx mcp views`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ViewId(pub u64);

impl std::fmt::Display for ViewId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a view is in its life, as the card shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewState {
    /// Reading the resource.
    Loading,
    /// The tool call is in flight.
    Running,
    /// The tool call returned.
    Completed,
    /// The tool call was cancelled or failed at the JSON-RPC level.
    Cancelled,
    /// The view cannot be shown, with the reason.
    Rejected(String),
}

impl ViewState {
    /// Finished views make room for new ones; running ones are kept.
    pub fn is_finished(&self) -> bool {
        matches!(self, Self::Completed | Self::Cancelled | Self::Rejected(_))
    }
}

/// What the caller knows when a view-creating tool call arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewView {
    /// The calling pane; `None` for a standalone view (a caller without pane identity).
    pub pane: Option<PaneId>,
    /// The hosted server's alias.
    pub alias: String,
    /// The tool's name on `/mcp-hosted` (`<alias>-<tool>`).
    pub published_tool: String,
    /// The tool's name on its server.
    pub original_tool: String,
    /// The agent kind of the pane's row, when known.
    pub agent: Option<AgentKind>,
    /// The agent's conversation (hook `session_id`) at creation, when known.
    pub conversation: Option<String>,
}

/// One view record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// Its id.
    pub id: ViewId,
    /// What it was created from.
    pub origin: NewView,
    /// Its state.
    pub state: ViewState,
    /// The host page's token (`/v/<id>/<token>/`).
    pub page_token: ViewToken,
    /// The sandbox page's token (`/s/<id>/<token>/`).
    pub sandbox_token: ViewToken,
}

/// Which of a view's two pages a token is presented for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// The host page.
    Host,
    /// The sandbox page.
    Sandbox,
}

/// The result of [`Registry::create`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The new view (its state is `Rejected: too many views` when the limits left no room).
    pub id: ViewId,
    /// Views removed to make room: the caller tears them down.
    pub removed: Vec<View>,
}

/// Every view, oldest first.
#[derive(Debug, Default)]
pub struct Registry {
    views: Vec<View>,
    next_id: u64,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a view for a tool call, in state `Loading`. In a pane, that pane's finished views
    /// go first; then the oldest finished views anywhere while the server is full. When the
    /// pane still has [`PER_PANE`] views, or the server [`IN_ALL`] running ones, the new view
    /// is recorded as `Rejected: too many views` (the card says why). Fails only when the
    /// random source does, and then changes nothing.
    pub fn create(&mut self, origin: NewView) -> Result<Created, getrandom::Error> {
        let page_token = ViewToken::generate()?;
        let sandbox_token = ViewToken::generate()?;
        let mut removed = match origin.pane {
            Some(pane) => self.take(|v| v.origin.pane == Some(pane) && v.state.is_finished()),
            None => Vec::new(),
        };
        let pane_full = origin.pane.is_some_and(|pane| {
            self.views
                .iter()
                .filter(|v| v.origin.pane == Some(pane))
                .count()
                >= PER_PANE
        });
        while self.views.len() >= IN_ALL {
            let Some(oldest) = self.views.iter().position(|v| v.state.is_finished()) else {
                break;
            };
            removed.push(self.views.remove(oldest));
        }
        let state = if pane_full || self.views.len() >= IN_ALL {
            ViewState::Rejected(TOO_MANY.to_string())
        } else {
            ViewState::Loading
        };
        self.next_id += 1;
        let id = ViewId(self.next_id);
        self.views.push(View {
            id,
            origin,
            state,
            page_token,
            sandbox_token,
        });
        Ok(Created { id, removed })
    }

    /// Sets a view's state (a reload takes a finished view back to `Loading`). False when the
    /// view is gone.
    pub fn set_state(&mut self, id: ViewId, state: ViewState) -> bool {
        match self.views.iter_mut().find(|v| v.id == id) {
            Some(view) => {
                view.state = state;
                true
            }
            None => false,
        }
    }

    /// The view, if it exists and `token` is its token for `page` (constant-time compare).
    /// A removed view's tokens match nothing: the view server answers 410.
    pub fn authorize(&self, id: ViewId, page: Page, token: &str) -> Option<&View> {
        self.get(id).filter(|view| match page {
            Page::Host => view.page_token.matches(token),
            Page::Sandbox => view.sandbox_token.matches(token),
        })
    }

    /// The view with this id.
    pub fn get(&self, id: ViewId) -> Option<&View> {
        self.views.iter().find(|v| v.id == id)
    }

    /// Every view, oldest first (`calyx mcp views`, prefix `V`).
    pub fn all(&self) -> &[View] {
        &self.views
    }

    /// A pane's views, oldest first (its dock's switcher).
    pub fn in_pane(&self, pane: PaneId) -> impl Iterator<Item = &View> {
        self.views
            .iter()
            .filter(move |v| v.origin.pane == Some(pane))
    }

    /// Removes one view: the user closed it, or the app asked for teardown.
    pub fn remove(&mut self, id: ViewId) -> Option<View> {
        let at = self.views.iter().position(|v| v.id == id)?;
        Some(self.views.remove(at))
    }

    /// Removes a closed pane's views.
    pub fn pane_closed(&mut self, pane: PaneId) -> Vec<View> {
        self.take(|v| v.origin.pane == Some(pane))
    }

    /// Removes a server's views when it is disabled or removed. A reconnecting server keeps
    /// its views, so the caller does not call this then.
    pub fn alias_gone(&mut self, alias: &str) -> Vec<View> {
        self.take(|v| v.origin.alias == alias)
    }

    /// Removes a pane's views when its agent's conversation ends (SessionEnd, as Claude Code's
    /// `/clear` sends).
    pub fn conversation_ended(&mut self, pane: PaneId) -> Vec<View> {
        self.pane_closed(pane)
    }

    /// Removes a pane's views from another conversation when its agent starts one (a
    /// SessionStart with a new `session_id`). Views created without a known conversation are
    /// kept: nothing says they belong to the old one, and SessionEnd or the pane's closing
    /// still removes them.
    pub fn conversation_started(&mut self, pane: PaneId, session_id: &str) -> Vec<View> {
        self.take(|v| {
            v.origin.pane == Some(pane)
                && v.origin
                    .conversation
                    .as_deref()
                    .is_some_and(|c| c != session_id)
        })
    }

    /// Removes and returns the views matching `doomed`, keeping the others' order.
    fn take(&mut self, doomed: impl Fn(&View) -> bool) -> Vec<View> {
        let (gone, kept) = std::mem::take(&mut self.views)
            .into_iter()
            .partition(doomed);
        self.views = kept;
        gone
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
