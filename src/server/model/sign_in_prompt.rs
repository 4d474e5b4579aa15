//! The sign-in prompts every attached client shows (issue 16: "an agent calls a tool of a
//! server that needs sign-in"): one per hosted server that agents' calls wait on, in alias
//! order; the first one is drawn, floating over the panes, titled `<name> requires sign-in`.
//! The calls themselves wait in [`crate::hosted::sign_in_prompt`]; this is what the screen
//! shows of them and how far the user got (`s` pressed, the page opened or its URL shown).

/// One prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInPrompt {
    pub alias: String,
    /// The server's display name (drawn sanitised).
    pub name: String,
    /// How many agents' calls wait on it.
    pub calls: usize,
    pub step: SignInStep,
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

/// The prompts after the waiting servers became `waiting` (alias, name, calls): the ones
/// still waited on keep their step, new ones ask, the others go.
pub fn merged(shown: &[SignInPrompt], waiting: &[(String, String, usize)]) -> Vec<SignInPrompt> {
    waiting
        .iter()
        .map(|(alias, name, calls)| {
            let step = shown
                .iter()
                .find(|p| &p.alias == alias)
                .map_or(SignInStep::Asking, |p| p.step.clone());
            SignInPrompt {
                alias: alias.clone(),
                name: name.clone(),
                calls: *calls,
                step,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_keeps_its_step_while_waited_on_and_goes_when_not() {
        let waiting = |aliases: &[&str]| -> Vec<(String, String, usize)> {
            aliases
                .iter()
                .map(|a| (a.to_string(), a.to_uppercase(), 1))
                .collect()
        };
        let shown = merged(&[], &waiting(&["lin"]));
        assert_eq!(shown[0].step, SignInStep::Asking);
        assert_eq!(shown[0].name, "LIN");
        let mut shown = shown;
        shown[0].step = SignInStep::Opened;
        let shown = merged(&shown, &waiting(&["gh", "lin"]));
        assert_eq!(
            shown.iter().map(|p| &p.step).collect::<Vec<_>>(),
            [&SignInStep::Asking, &SignInStep::Opened]
        );
        assert!(merged(&shown, &[]).is_empty());
    }
}
