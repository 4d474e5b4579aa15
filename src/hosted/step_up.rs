//! A call to a ready hosted server that meets an authorization challenge (issue 16, OAuth: "a
//! `403 insufficient_scope` during calls triggers step-up"; a 401 mid-session is handled the
//! same way): the supervisor is told ([`SignInPrompts::challenged`]: the row says `sign-in
//! required`, and the next sign-in steps up to the challenged scopes), the call raises the same
//! floating prompt as a call to a server waiting for sign-in, and waits up to 120 s for the
//! sign-in to finish. The connection stays up (its requests carry the engine's current
//! bearer), so once signed in the caller sends the call again, once.

use tokio_util::sync::CancellationToken;

use super::oauth::Challenge;
use super::sign_in_prompt::{sign_in_sentence, SignInPrompts, SIGN_IN_WAIT};

/// Waits for `alias` (display name `name`) to be signed in after `challenge`. Err: the
/// sentence for the agent's `isError` (cancelled in the prompt, or 120 s passed); also when the
/// agent cancels (`ct`), whose answer reaches nobody.
pub async fn wait_for_step_up(
    prompts: &std::sync::Arc<SignInPrompts>,
    alias: &str,
    name: &str,
    challenge: Challenge,
    ct: &CancellationToken,
) -> Result<(), String> {
    let mut signed = prompts.signed_in_events();
    prompts.challenged(alias, challenge);
    let ask = prompts.ask(alias, name);
    let signed_in = async {
        loop {
            match signed.recv().await {
                Ok(done) if done == alias => return true,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return false,
            }
        }
    };
    let signed = tokio::select! {
        signed = tokio::time::timeout(SIGN_IN_WAIT, signed_in) => signed.unwrap_or(false),
        _ = ask.cancelled() => false,
        _ = ct.cancelled() => false,
    };
    if signed {
        Ok(())
    } else {
        Err(sign_in_sentence(name, alias))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[tokio::test(start_paused = true)]
    async fn a_challenged_call_tells_the_supervisor_and_waits_for_the_sign_in() {
        let prompts = Arc::new(SignInPrompts::default());
        let told = Arc::new(Mutex::new(Vec::new()));
        let heard = told.clone();
        prompts.set_challenge_hook(Arc::new(move |alias, challenge| {
            heard
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((alias.to_string(), challenge));
        }));
        let scope = Challenge::InsufficientScope("Bearer error=\"insufficient_scope\"".into());
        let waiting = prompts.clone();
        let (c, s) = (scope.clone(), CancellationToken::new());
        let call =
            tokio::spawn(async move { wait_for_step_up(&waiting, "lin", "Linear", c, &s).await });
        while prompts.waiting().is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            *told.lock().unwrap_or_else(|e| e.into_inner()),
            [("lin".to_string(), scope.clone())]
        );
        prompts.signed_in("other");
        prompts.signed_in("lin");
        assert_eq!(call.await.expect("ends"), Ok(()));
        assert!(prompts.waiting().is_empty(), "the prompt went");

        // Nobody signs in: after 120 s, the sentence.
        let waiting = prompts.clone();
        let s = CancellationToken::new();
        let call =
            tokio::spawn(
                async move { wait_for_step_up(&waiting, "lin", "Linear", scope, &s).await },
            );
        let started = tokio::time::Instant::now();
        let answer = call.await.expect("ends");
        assert_eq!(started.elapsed(), SIGN_IN_WAIT);
        assert_eq!(
            answer,
            Err(
                "`Linear` requires sign-in: run `calyx mcp login lin` or sign in from prefix M"
                    .into()
            )
        );
    }
}
