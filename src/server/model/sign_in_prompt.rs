//! The sign-in prompts every attached client shows (issue 16: "an agent calls a tool of a
//! server that needs sign-in"): one per hosted server that agents' calls wait on, in alias
//! order; the first one is drawn, floating over the panes, titled `<name> requires sign-in`.
//! The calls themselves wait in [`crate::hosted::sign_in_prompt`]; this is what the screen
//! shows of them and how far the user got (`s` pressed, the page opened or its URL shown).

use tokio::time::Instant;

use super::ids::ClientId;
use super::typing::READ_GRACE;

/// One prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInPrompt {
    pub alias: String,
    /// The server's display name (drawn sanitised).
    pub name: String,
    /// How many agents' calls wait on it.
    pub calls: usize,
    /// When it appeared.
    pub since: Instant,
    /// The clients that were typing then: their keys sleep a moment ([`READ_GRACE`]).
    pub typing: Vec<ClientId>,
    pub step: SignInStep,
}

impl SignInPrompt {
    /// Whether `s` and `Esc` do nothing yet for `client`: it was typing when the prompt
    /// appeared (see [`super::typing::typing`]) and that was less than [`READ_GRACE`] ago, so an `s` meant for
    /// a pane does not open a browser. The keys are still taken, so none leaks into the pane.
    pub fn keys_asleep(&self, client: ClientId, now: Instant) -> bool {
        self.typing.contains(&client) && now.saturating_duration_since(self.since) < READ_GRACE
    }
}

/// How far the sign-in of a prompt got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignInStep {
    /// `s` Sign In, `Esc` Cancel.
    Asking,
    /// `s` was pressed: the sign-in is starting.
    Starting,
    /// The browser was started on the sign-in page.
    Opened,
    /// No local browser: the page's address to open, and the `ssh -L` line over SSH.
    Url {
        url: String,
        forward: Option<String>,
    },
    /// The sign-in could not start (the sentence says why); `s` tries again.
    Failed(String),
}

/// The prompts after the waiting servers became `waiting` (alias, name, calls) at `now`, when
/// the clients `typing` were typing: the ones still waited on keep their step, new ones ask,
/// the others go.
pub fn merged(
    shown: &[SignInPrompt],
    waiting: &[(String, String, usize)],
    now: Instant,
    typing: &[ClientId],
) -> Vec<SignInPrompt> {
    waiting
        .iter()
        .map(|(alias, name, calls)| {
            let kept = shown.iter().find(|p| &p.alias == alias);
            SignInPrompt {
                alias: alias.clone(),
                name: name.clone(),
                calls: *calls,
                since: kept.map_or(now, |p| p.since),
                typing: kept.map_or_else(|| typing.to_vec(), |p| p.typing.clone()),
                step: kept.map_or(SignInStep::Asking, |p| p.step.clone()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::typing::typing;
    use super::*;
    use tokio::time::Duration;

    #[test]
    fn a_prompt_keeps_its_step_while_waited_on_and_goes_when_not() {
        let waiting = |aliases: &[&str]| -> Vec<(String, String, usize)> {
            aliases
                .iter()
                .map(|a| (a.to_string(), a.to_uppercase(), 1))
                .collect()
        };
        let now = Instant::now();
        let shown = merged(&[], &waiting(&["lin"]), now, &[]);
        assert_eq!(shown[0].step, SignInStep::Asking);
        assert_eq!(shown[0].name, "LIN");
        let mut shown = shown;
        shown[0].step = SignInStep::Opened;
        let later = now + Duration::from_secs(3);
        let shown = merged(&shown, &waiting(&["gh", "lin"]), later, &[7]);
        assert_eq!(
            shown.iter().map(|p| &p.step).collect::<Vec<_>>(),
            [&SignInStep::Asking, &SignInStep::Opened]
        );
        assert_eq!((shown[0].since, shown[1].since), (later, now));
        assert_eq!(
            (&shown[0].typing[..], &shown[1].typing[..]),
            (&[7][..], &[][..])
        );
        assert!(merged(&shown, &[], later, &[]).is_empty());
    }

    #[test]
    fn keys_sleep_a_moment_only_for_a_client_that_was_typing() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        assert!(typing(now.checked_sub(ms(200)), now));
        assert!(!typing(now.checked_sub(ms(3000)), now));
        assert!(!typing(None, now));
        let prompt = merged(&[], &[("lin".into(), "Linear".into(), 1)], now, &[1]).remove(0);
        assert!(prompt.keys_asleep(1, now + ms(100)), "was typing");
        assert!(!prompt.keys_asleep(2, now), "was not typing: awake at once");
        assert!(!prompt.keys_asleep(1, now + READ_GRACE));
    }
}
