//! A hosted server answering an agent's `tools/call` with `-32042` (URL elicitation
//! required, `data.elicitations[]`; issue 17, "Elicitation"): the call cannot run until the
//! user opened some pages. calyx shows those URL elicitations in the panel
//! ([`Elicitations::show_needed`]); when every one completes (the server's
//! `notifications/elicitation/complete`, or the user's `Done` after Open) within
//! [`NEEDED_WAIT`] the call is sent again once, else the agent gets `isError` with the URLs
//! ([`needed_sentence`]).

use std::time::Duration;

use rmcp::ErrorData;
use tokio_util::sync::CancellationToken;

use super::Elicitations;

/// The JSON-RPC error code of "URL elicitation required".
pub const URL_ELICITATION_REQUIRED: i32 = -32042;

/// How long the pages a call needs may take before the call gives up.
pub const NEEDED_WAIT: Duration = Duration::from_secs(120);

/// One page a call needs opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Needed {
    pub message: String,
    pub url: String,
    pub elicitation_id: String,
}

/// The URL elicitations of a `-32042` error; None for any other error (or one without a
/// usable URL).
pub fn needed(error: &ErrorData) -> Option<Vec<Needed>> {
    if error.code.0 != URL_ELICITATION_REQUIRED {
        return None;
    }
    let listed = error.data.as_ref()?.get("elicitations")?.as_array()?;
    let needed: Vec<Needed> = listed
        .iter()
        .filter(|e| e.get("mode").and_then(|m| m.as_str()).unwrap_or("url") == "url")
        .filter_map(|e| {
            let text = |key: &str| e.get(key).and_then(|v| v.as_str()).map(String::from);
            Some(Needed {
                url: text("url")?,
                message: text("message").unwrap_or_default(),
                elicitation_id: text("elicitationId").unwrap_or_default(),
            })
        })
        .collect();
    (!needed.is_empty()).then_some(needed)
}

/// Shows `needed` for server `alias` (named `name`) and waits until every one completed
/// (true), or one did not, `wait` ran out, or the agent cancelled (`cancel`): false, the rest
/// withdrawn.
pub async fn wait_for_needed(
    queue: &Elicitations,
    alias: &str,
    name: &str,
    needed: &[Needed],
    wait: Duration,
    cancel: &CancellationToken,
) -> bool {
    let urls: Vec<(String, String, String)> = needed
        .iter()
        .map(|n| (n.message.clone(), n.url.clone(), n.elicitation_id.clone()))
        .collect();
    let shown = queue.show_needed(alias, name, &urls);
    let ids: Vec<u64> = shown.iter().map(|(id, _)| *id).collect();
    let all = async {
        for (_, rx) in shown {
            if rx.await != Ok(true) {
                return false;
            }
        }
        true
    };
    let completed = tokio::select! {
        done = tokio::time::timeout(wait, all) => done.unwrap_or(false),
        () = cancel.cancelled() => false,
    };
    if !completed {
        for id in ids {
            queue.withdraw(id);
        }
    }
    completed
}

/// The agent's `isError` text when the pages were not opened in time.
pub fn needed_sentence(name: &str, needed: &[Needed]) -> String {
    let urls: Vec<&str> = needed.iter().map(|n| n.url.as_str()).collect();
    format!(
        "`{name}` needs these pages opened before the call can run (open them, then call again): {}",
        urls.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosted::elicit::Answer;
    use rmcp::model::ErrorCode;
    use serde_json::json;
    use std::sync::Arc;

    fn error(code: i32, data: serde_json::Value) -> ErrorData {
        ErrorData::new(ErrorCode(code), "needs a page", Some(data))
    }

    fn two() -> Vec<Needed> {
        ["a", "b"]
            .map(|n| Needed {
                message: format!("open {n}"),
                url: format!("https://example.com/{n}"),
                elicitation_id: format!("id-{n}"),
            })
            .to_vec()
    }

    #[test]
    fn only_minus_32042_with_url_elicitations_is_read() {
        let data = json!({"elicitations": [
            {"mode": "url", "url": "https://example.com/a", "message": "open a", "elicitationId": "id-a"},
            {"mode": "form", "message": "not a URL"},
            {"url": "https://example.com/b", "message": "open b", "elicitationId": "id-b"},
        ]});
        assert_eq!(needed(&error(-32042, data.clone())), Some(two()));
        assert_eq!(needed(&error(-32000, data)), None);
        assert_eq!(needed(&error(-32042, json!({"elicitations": []}))), None);
        assert_eq!(needed(&error(-32042, json!("x"))), None);
    }

    /// Waits (on the paused clock) until the queue shows `n` things.
    async fn shown(queue: &Elicitations, n: usize) {
        while queue.shown().len() < n {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn every_page_completed_in_time_lets_the_call_run_again() {
        let queue = Arc::new(Elicitations::default());
        let q = queue.clone();
        let waiting = tokio::spawn(async move {
            let cancel = CancellationToken::new();
            wait_for_needed(&q, "ev", "Everything", &two(), NEEDED_WAIT, &cancel).await
        });
        shown(&queue, 1).await;
        // One completes by the server's notification without Open (opened another way) ...
        assert!(queue.complete("ev", "id-a"));
        shown(&queue, 1).await;
        // ... the other by Open then Done.
        let id = queue.shown()[0].id;
        assert!(queue.answer(id, Answer::Accept(None)));
        assert!(queue.done(id));
        assert_eq!(waiting.await.ok(), Some(true));
        assert!(queue.shown().is_empty());
    }

    #[tokio::test(start_paused = true)]
    async fn a_declined_page_or_the_wait_running_out_fails_the_call() {
        let queue = Arc::new(Elicitations::default());
        let q = queue.clone();
        let waiting = tokio::spawn(async move {
            let cancel = CancellationToken::new();
            wait_for_needed(&q, "ev", "Everything", &two(), NEEDED_WAIT, &cancel).await
        });
        shown(&queue, 1).await;
        assert!(queue.answer(queue.shown()[0].id, Answer::Decline));
        assert_eq!(waiting.await.ok(), Some(false));
        assert!(queue.shown().is_empty(), "the other one withdrawn");

        let q = queue.clone();
        let waiting = tokio::spawn(async move {
            let cancel = CancellationToken::new();
            wait_for_needed(&q, "ev", "Everything", &two(), NEEDED_WAIT, &cancel).await
        });
        shown(&queue, 1).await;
        tokio::time::advance(NEEDED_WAIT + Duration::from_secs(1)).await;
        assert_eq!(waiting.await.ok(), Some(false));
        assert!(queue.shown().is_empty(), "withdrawn at 120 s");
        let sentence = needed_sentence("Everything", &two());
        assert!(
            sentence.contains("https://example.com/a https://example.com/b"),
            "{sentence}"
        );
    }
}
