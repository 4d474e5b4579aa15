//! The elicitation panels every attached client shows (issue 17, "Elicitation"): one per
//! hosted server with a question waiting (the head of its queue in
//! [`crate::hosted::elicit::Elicitations`]), in alias order; the first is drawn, floating over
//! the panes, titled `<name> request`. The questions wait in the queue; this is what the
//! screen shows of them and how far the user got: the form being filled (shared by every
//! client: any of them may type), the focused URL button, how an opened URL was opened.

use tokio::time::Instant;

use super::ids::ClientId;
use crate::hosted::elicit::form::Form;
use crate::hosted::elicit::{Pending, Request};

/// One panel.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitPanel {
    pub pending: Pending,
    /// The form of a form-mode question.
    pub form: Option<Form>,
    /// The focused button of a URL question.
    pub url_focus: UrlButton,
    /// How the URL was opened (after Open).
    pub opened_via: Option<OpenedVia>,
    /// The calling pane, as the approval panel names it (`%3 (main:1)`), when known.
    pub pane: Option<String>,
    /// When it appeared.
    pub since: Instant,
    /// The clients that were typing then: their keys sleep a moment (as the sign-in
    /// prompt's, see [`super::typing::READ_GRACE`]).
    pub typing: Vec<ClientId>,
}

/// The buttons of a URL question, left to right.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlButton {
    Cancel,
    Decline,
    Open,
}

impl UrlButton {
    pub const ALL: [UrlButton; 3] = [UrlButton::Cancel, UrlButton::Decline, UrlButton::Open];

    /// The next button (`back`: the previous one), wrapping.
    pub fn step(self, back: bool) -> UrlButton {
        let i = Self::ALL.iter().position(|&b| b == self).unwrap_or(0);
        let n = Self::ALL.len();
        Self::ALL[if back { (i + n - 1) % n } else { (i + 1) % n }]
    }
}

/// How Open opened the page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenedVia {
    /// The client's browser was started.
    Browser,
    /// No local browser (over SSH, no display): the panel shows the address to open.
    Shown,
}

impl ElicitPanel {
    /// Whether the keys do nothing yet for `client` (see `SignInPrompt::keys_asleep`): an
    /// Enter meant for a pane must not answer a question that just appeared.
    pub fn keys_asleep(&self, client: ClientId, now: Instant) -> bool {
        self.typing.contains(&client)
            && now.saturating_duration_since(self.since) < super::typing::READ_GRACE
    }
}

/// The panels after the queues' heads became `pending` at `now`, when the clients `typing`
/// were typing: a question still shown keeps its form and focus, a new one starts at its
/// defaults (Open focused for a URL), the others go. The one drawn (the first) counts as
/// appearing when it became the first: answering one question must not answer the next
/// with the same key.
pub fn merged(
    shown: &[ElicitPanel],
    pending: &[Pending],
    now: Instant,
    typing: &[ClientId],
) -> Vec<ElicitPanel> {
    let drawn = shown.first().map(|p| p.pending.id);
    let mut next: Vec<ElicitPanel> = pending
        .iter()
        .map(|p| match shown.iter().find(|s| s.pending.id == p.id) {
            Some(kept) => ElicitPanel {
                pending: p.clone(),
                ..kept.clone()
            },
            None => ElicitPanel {
                form: match &p.request {
                    Request::Form { schema, order, .. } => Some(Form::new(schema, order)),
                    Request::Url { .. } => None,
                },
                pending: p.clone(),
                url_focus: UrlButton::Open,
                opened_via: None,
                pane: None,
                since: now,
                typing: typing.to_vec(),
            },
        })
        .collect();
    if let Some(first) = next.first_mut().filter(|p| Some(p.pending.id) != drawn) {
        first.since = now;
        first.typing = typing.to_vec();
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosted::elicit::form::FormKey;
    use tokio::time::Duration;

    fn pending(id: u64, alias: &str, request: Request) -> Pending {
        Pending {
            id,
            alias: alias.into(),
            name: alias.to_uppercase(),
            request,
            opened: false,
            surface: None,
        }
    }

    fn form() -> Request {
        Request::Form {
            message: "m".into(),
            schema: serde_json::json!({"type": "object", "properties": {"t": {"type": "string"}}}),
            order: Vec::new(),
        }
    }

    #[test]
    fn a_panel_keeps_what_was_typed_while_shown_and_goes_when_answered() {
        let now = Instant::now();
        let url = Request::Url {
            message: "m".into(),
            url: "https://example.com".into(),
            elicitation_id: "e".into(),
        };
        let mut shown = merged(&[], &[pending(1, "ev", form())], now, &[4]);
        assert_eq!(shown[0].typing, [4]);
        let typed = shown[0].form.as_mut().map(|f| f.key(FormKey::Char('x')));
        assert_eq!(typed, Some(None));
        let later = now + Duration::from_secs(2);
        let next = merged(
            &shown,
            &[pending(1, "ev", form()), pending(2, "gh", url)],
            later,
            &[],
        );
        assert_eq!(
            next[0].form.as_ref().map(|f| f.fields[0].text.as_str()),
            Some("x")
        );
        assert_eq!((next[0].since, next[1].since), (now, later));
        assert!(next[1].form.is_none());
        assert_eq!(next[1].url_focus, UrlButton::Open);
        assert!(merged(&next, &[], later, &[]).is_empty());
    }

    #[test]
    fn the_next_question_counts_as_appearing_when_it_is_drawn() {
        let now = Instant::now();
        let shown = merged(
            &[],
            &[pending(1, "a", form()), pending(2, "b", form())],
            now,
            &[],
        );
        let later = now + Duration::from_secs(5);
        let next = merged(&shown, &[pending(2, "b", form())], later, &[9]);
        assert_eq!(next[0].since, later, "drawn from now on");
        assert_eq!(next[0].typing, [9], "client 9 was typing then");
        let again = merged(
            &next,
            &[pending(2, "b", form())],
            later + Duration::from_secs(1),
            &[],
        );
        assert_eq!(again[0].since, later, "still the same one drawn");
    }

    #[test]
    fn url_buttons_step_both_ways_and_wrap() {
        assert_eq!(UrlButton::Open.step(false), UrlButton::Cancel);
        assert_eq!(UrlButton::Cancel.step(true), UrlButton::Open);
        assert_eq!(UrlButton::Cancel.step(false), UrlButton::Decline);
    }

    #[test]
    fn keys_sleep_a_moment_only_for_a_client_that_was_typing() {
        let now = Instant::now();
        let panel = merged(&[], &[pending(1, "ev", form())], now, &[1]).remove(0);
        assert!(panel.keys_asleep(1, now + Duration::from_millis(100)));
        assert!(!panel.keys_asleep(2, now));
        assert!(!panel.keys_asleep(1, now + Duration::from_secs(1)));
    }
}
