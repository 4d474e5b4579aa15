//! The standalone GET stream: where a server sends requests and notifications that belong to
//! no request of calyx's (list changes, say). A 405 means the server has none. When the stream
//! ends it is opened again, with `Last-Event-ID` when the server numbered its events, after a
//! growing pause (from the server's `retry` field when it sent one); five attempts in a row that bring no event end it (the session goes on:
//! answers still come on the POSTs). A 404 means the server forgot the session.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::ACCEPT;
use reqwest::{Method, StatusCode};
use tokio::task::JoinHandle;

use super::Shared;

/// Attempts in a row without an event before the stream is given up.
const ATTEMPTS: u32 = 5;

/// The first pause before reopening, unless the stream's `retry` field set another; it
/// doubles with each fruitless attempt.
const FIRST_PAUSE: Duration = Duration::from_millis(500);

/// The longest pause, whatever `retry` asked for.
const LONGEST_PAUSE: Duration = Duration::from_secs(30);

/// Opens the stream in a task of its own, reopening it as the module says.
pub(super) fn spawn(shared: Arc<Shared>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut last_id: Option<String> = None;
        let mut fruitless = 0;
        let mut first_pause = FIRST_PAUSE;
        while fruitless < ATTEMPTS && !shared.ended.is_cancelled() {
            let opened = shared
                .send(|bearer| {
                    let request = shared
                        .request(Method::GET, bearer)
                        .header(ACCEPT, "text/event-stream");
                    match &last_id {
                        Some(id) => request.header("last-event-id", id.as_str()),
                        None => request,
                    }
                })
                .await;
            match opened {
                Ok(response) if response.status() == StatusCode::METHOD_NOT_ALLOWED => return,
                Ok(response) if response.status() == StatusCode::NOT_FOUND => {
                    shared.end(super::post::EXPIRED);
                    return;
                }
                Ok(response) if response.status().is_success() => {
                    let read = shared.read_events(response, None, false).await;
                    if read.last_id.is_some() {
                        last_id = read.last_id;
                    }
                    fruitless = if read.any { 0 } else { fruitless + 1 };
                    if let Some(retry) = read.retry {
                        first_pause = retry.min(LONGEST_PAUSE);
                    }
                }
                Ok(response) => {
                    tracing::debug!("{}: GET stream answered {}", shared.url, response.status());
                    fruitless += 1;
                }
                Err(error) => {
                    tracing::debug!("{}: GET stream failed: {error}", shared.url);
                    fruitless += 1;
                }
            }
            let pause = (first_pause * 2u32.pow(fruitless.min(6))).min(LONGEST_PAUSE);
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = shared.ended.cancelled() => return,
            }
        }
    })
}
