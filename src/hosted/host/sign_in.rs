//! `calyx mcp login` / `logout` on the server side: start a sign-in (the URL comes back to the
//! client, which opens it or prints it), finish it with a pasted redirect address, wait for the
//! browser's redirect, sign out. Blocking, like the rest of [`Hosting`]: the server calls these
//! on a blocking thread inside its runtime, which runs the async steps.

use std::time::Duration;

use serde_json::json;

use super::super::connection::state::ServerState;
use super::super::oauth::{PendingSignIn, SIGN_IN_LIMIT};
use super::super::server_list::ListError;
use super::super::sign_in::listener_outcome;
use super::{Hosting, McpAnswer};

/// How much longer than the listener's 10 minutes `login` waits for the outcome.
const WAIT_SLACK: Duration = Duration::from_secs(30);

impl Hosting {
    /// The name of a running entry, or the answer for an unknown alias.
    fn running_name(&self, alias: &str) -> Result<String, McpAnswer> {
        let applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        applied
            .get(alias)
            .map(|e| e.name.clone())
            .ok_or_else(|| McpAnswer::of_list_error(&ListError::Unknown(alias.to_string())))
    }

    /// Starts a sign-in; the answer's JSON carries `auth_url` and `redirect_port`.
    pub(super) fn sign_in(&self, alias: &str, forwarded: bool) -> McpAnswer {
        let name = match self.running_name(alias) {
            Ok(name) => name,
            Err(answer) => return answer,
        };
        let state = self.supervisor.state(alias);
        if !matches!(
            state,
            Some(ServerState::SignInRequired | ServerState::SigningIn)
        ) {
            let now = state.map(|s| s.status_line()).unwrap_or_default();
            return McpAnswer::failed(format!(
                "`{alias}` is not waiting for a sign-in (it is: {now}); sign out first with `calyx mcp logout {alias}` to sign in again"
            ));
        }
        let sign_ins = self.supervisor.sign_ins().clone();
        let runtime = tokio::runtime::Handle::current();
        let (pending, cancel) = match runtime.block_on(sign_ins.begin(alias, forwarded)) {
            Ok(began) => began,
            Err(sentence) => return McpAnswer::failed(sentence),
        };
        self.supervisor.set_state(alias, ServerState::SigningIn);
        let PendingSignIn {
            auth_url,
            state,
            issuer,
            listener,
        } = pending;
        let port = listener.port();
        let set_state = self.supervisor.state_setter();
        let settle = self.supervisor.settler();
        let alias_owned = alias.to_string();
        runtime.spawn(async move {
            let waited = listener
                .wait(&state, issuer.as_deref(), &name, SIGN_IN_LIMIT, cancel)
                .await;
            let outcome = match waited {
                Ok(callback) => Ok(sign_ins.finish(&alias_owned, &callback).await),
                Err(e) => Err(e),
            };
            let outcome = match outcome {
                Ok(finished) => Some(finished),
                Err(e) => listener_outcome(Err(e)),
            };
            match outcome {
                // `ready` again after a step-up on a live connection.
                Some(Ok(())) => settle(&alias_owned, true),
                Some(Err(sentence)) => {
                    sign_ins.ended(&alias_owned, &Err(sentence));
                    set_state(&alias_owned, ServerState::SignInRequired);
                }
                None => {}
            }
        });
        McpAnswer {
            exit: 0,
            text: format!("{auth_url}\n"),
            json: Some(json!({"auth_url": auth_url, "redirect_port": port})),
        }
    }

    /// Finishes the sign-in of `alias` with the redirect address the user pasted.
    pub(super) fn sign_in_paste(&self, alias: &str, redirect: &str) -> McpAnswer {
        if let Err(answer) = self.running_name(alias) {
            return answer;
        }
        let sign_ins = self.supervisor.sign_ins().clone();
        let runtime = tokio::runtime::Handle::current();
        match runtime.block_on(sign_ins.paste(alias, redirect)) {
            Ok(()) => {
                self.supervisor.settle_after_sign_in(alias, true);
                McpAnswer::done(alias, "signed-in", &[], format!("signed in to `{alias}`\n"))
            }
            Err(sentence) => {
                self.supervisor
                    .set_state(alias, ServerState::SignInRequired);
                McpAnswer::failed(sentence)
            }
        }
    }

    /// Waits until the sign-in of `alias` started by [`Hosting::sign_in`] ends.
    pub(super) fn sign_in_wait(&self, alias: &str) -> McpAnswer {
        if let Err(answer) = self.running_name(alias) {
            return answer;
        }
        let mut changes = self.supervisor.subscribe();
        let runtime = tokio::runtime::Handle::current();
        let ended = runtime.block_on(async {
            tokio::time::timeout(SIGN_IN_LIMIT + WAIT_SLACK, async {
                loop {
                    if self.supervisor.state(alias) != Some(ServerState::SigningIn) {
                        return;
                    }
                    if changes.recv().await.is_err() {
                        changes = self.supervisor.subscribe();
                    }
                }
            })
            .await
        });
        let state = self.supervisor.state(alias);
        match (ended, state) {
            (Ok(()), Some(ServerState::SignInRequired)) => McpAnswer::failed(
                self.supervisor
                    .sign_ins()
                    .last_error(alias)
                    .unwrap_or_else(|| "the sign-in did not finish: start it again".into()),
            ),
            (Ok(()), _) => {
                McpAnswer::done(alias, "signed-in", &[], format!("signed in to `{alias}`\n"))
            }
            (Err(_), _) => {
                McpAnswer::failed("the sign-in did not finish within 10 minutes: start it again")
            }
        }
    }

    /// Deletes the tokens of `alias` (the client secret stays; no revocation is sent) and
    /// reconnects it, which then asks for sign-in again.
    pub(super) fn sign_out(&self, alias: &str) -> McpAnswer {
        let entry = {
            let applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
            applied.get(alias).cloned()
        };
        let Some(entry) = entry else {
            return McpAnswer::of_list_error(&ListError::Unknown(alias.to_string()));
        };
        if let Err(sentence) = self.supervisor.sign_ins().sign_out(alias) {
            return McpAnswer::failed(sentence);
        }
        if entry.enabled {
            self.supervisor.start(entry);
        }
        McpAnswer::done(
            alias,
            "signed-out",
            &[],
            format!("signed out of `{alias}`\n"),
        )
    }

    /// Whether tokens are stored for `alias` (the `signed_in` of rows).
    pub(super) fn signed_in(&self, alias: &str) -> bool {
        self.supervisor.sign_ins().has_tokens(alias)
    }
}
