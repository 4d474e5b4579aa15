//! Tools kept published while their server is not ready (issue 16, "States and reconnect").
//!
//! A ready server that drops goes `reconnecting`; agents should not see its tools vanish and
//! come back for a blip, so they stay published for [`RETAIN_FOR`] as a [`HeldServer`]. A call
//! to one of them waits up to [`HeldServer::wait`] for the server to be ready again (then it
//! runs) and otherwise answers `isError` with [`HeldServer::unavailable`], e.g. "server `ev` is
//! reconnecting: the server's connection ended". After [`RETAIN_FOR`] the supervisor withdraws
//! them ([`withdraw_after`]).
//!
//! The same holding serves a server that needs sign-in: the supervisor publishes its last known
//! tools (from this run or the tools cache, [`super::tools_cache`]) as a `HeldServer` with the
//! sign-in sentence and a longer wait, so that a call can raise the sign-in prompt.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::connection::filter::Classified;

/// How long a reconnecting server's tools stay published.
pub const RETAIN_FOR: Duration = Duration::from_secs(60);
/// How long a call to a reconnecting server's tool waits for it to be ready again.
pub const RECONNECT_WAIT: Duration = Duration::from_secs(10);

/// A server whose tools are published although it cannot take calls now.
#[derive(Debug, Clone)]
pub struct HeldServer {
    pub alias: String,
    pub name: String,
    pub tools: Classified,
    pub instructions: Option<String>,
    /// The `isError` text a call gets when the server is still not ready after [`Self::wait`].
    pub unavailable: String,
    /// How long a call waits for the server to be ready.
    pub wait: Duration,
    /// The server needs sign-in: a call raises the sign-in prompt while it waits
    /// ([`super::sign_in_prompt`]), and `Esc` there ends the wait at once.
    pub sign_in: bool,
}

/// "server `ev` is reconnecting: the server's connection ended".
pub fn reconnecting_sentence(alias: &str, what_happened: &str) -> String {
    format!("server `{alias}` is reconnecting: {what_happened}")
}

/// Why a call to a published name cannot be forwarded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unavailable {
    /// No server publishes that name (JSON-RPC `-32602`).
    Unknown,
    /// Its server was not ready within the wait: the sentence for the agent's `isError`.
    NotReady(String),
}

/// A task that runs `withdraw` after `after`, unless it is dropped first (the server came
/// back, failed, or was stopped). The registry's `withdraw_held_after` gives it the withdrawal
/// of one server's held tools (this module does not know the registry: the registry uses it).
pub fn withdraw_after(after: Duration, withdraw: impl FnOnce() + Send + 'static) -> WithdrawTimer {
    WithdrawTimer(tokio::spawn(async move {
        tokio::time::sleep(after).await;
        withdraw();
    }))
}

/// The timer of [`withdraw_after`]; dropping it cancels the withdrawal.
pub struct WithdrawTimer(JoinHandle<()>);

impl Drop for WithdrawTimer {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A held server shared by the registry.
pub type Held = Arc<HeldServer>;

#[cfg(test)]
mod tests;
