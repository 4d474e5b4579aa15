//! MCP App requests through the owner loop (issue 17, "App requests through the approval
//! panel"): [`AppRequests::ask`] as the view server calls it, its message carried by the
//! owner's real channel into a server on fake panes, answered from the panel's keys or `calyx
//! approve/deny`, with the record in `approvals.jsonl`. The fakes record what the pane was
//! typed; the client's channel gets the clipboard's OSC 52.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::io::fake_processes::{Call, FakeProcesses};
use super::io::terminal::Outgoing;
use super::messages::Msg;
use super::model::ids::ClientId;
use super::owner::Server;
use crate::approvals::app::{AppKind, APP_EXPIRY};
use crate::approvals::ApprovalQueue;
use crate::config::Config;
use crate::keys::{Key, KeyCode};
use crate::layout::PaneId;
use crate::protocol::{ClientMessage, NewSession, Response};
use crate::views::app_requests::AppRequests;
use crate::views::hub::{HubEvent, ViewHub, ViewSnapshot};
use crate::views::protocol::{HostAction, JsonRpcError};
use crate::views::registry::NewView;

const CLIENT: ClientId = 7;

type Answer = JoinHandle<Result<Value, JsonRpcError>>;

struct Fixture {
    server: Server,
    fakes: FakeProcesses,
    client_rx: mpsc::Receiver<Outgoing>,
    owner_rx: mpsc::UnboundedReceiver<Msg>,
    apps: AppRequests,
    hub: ViewHub,
    pane: PaneId,
    dir: tempfile::TempDir,
}

impl Fixture {
    /// The pane a fake process.
    fn new() -> Self {
        Self::with_pane(None)
    }

    /// The pane running `command` in a real PTY (None: a fake process).
    fn with_pane(command: Option<&str>) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let config = Config {
            shell_integration: false,
            confirm_kill: false,
            ..Config::default()
        };
        let (tx, owner_rx) = mpsc::unbounded_channel();
        let socket = dir.path().join("server.sock").display().to_string();
        let mut server = Server::new(config, Vec::new(), socket, tx.clone(), Default::default());
        server.prompt_history = Default::default();
        server.approvals = ApprovalQueue::new(Some(dir.path().join("approvals.jsonl")));
        let fakes = FakeProcesses::default();
        if command.is_none() {
            server.state.processes = Arc::new(fakes.clone());
        }
        let (client_tx, client_rx) = mpsc::channel(256);
        server.dispatch(Msg::Connected {
            id: CLIENT,
            tx: client_tx,
        });
        server.client_message(
            CLIENT,
            ClientMessage::Attach {
                target: None,
                create: Some(NewSession {
                    name: Some("fake".into()),
                    cwd: Some(dir.path().display().to_string()),
                    command: match command {
                        Some(c) => vec!["sh".into(), "-c".into(), c.into()],
                        None => vec!["agent".into()],
                    },
                    env: vec![(
                        "PATH".to_string(),
                        std::env::var("PATH").unwrap_or_default(),
                    )],
                }),
                create_if_missing: true,
                rows: 30,
                cols: 100,
                term: None,
                terminal: None,
                opener_env: Vec::new(),
                back_to: None,
            },
        );
        let pane = *server.state.panes.keys().next().expect("a pane");
        let apps = AppRequests::new(tx).with_image_root(dir.path().join("images"));
        Fixture {
            server,
            fakes,
            client_rx,
            owner_rx,
            apps,
            hub: ViewHub::new(),
            pane,
            dir,
        }
    }

    /// A view of server `Everything`, in the fixture's pane or standalone.
    fn view(&self, in_pane: bool) -> ViewSnapshot {
        let created = self
            .hub
            .create(
                NewView {
                    pane: in_pane.then_some(self.pane),
                    alias: "Everything".into(),
                    published_tool: "Everything-show".into(),
                    original_tool: "show".into(),
                    agent: None,
                    conversation: None,
                },
                json!({"name": "show"}),
                json!({}),
            )
            .expect("view created");
        self.hub.get(created.id).expect("view record")
    }

    /// The view server's call, running as it does (a task of its own).
    fn ask(&self, view: &ViewSnapshot, action: HostAction) -> Answer {
        let apps = self.apps.clone();
        let view = view.clone();
        tokio::spawn(async move { apps.ask(view, action).await })
    }

    /// Hands the owner what arrived on its channel until an app message did.
    async fn pump(&mut self) {
        let deadline = Duration::from_secs(5);
        loop {
            let msg = tokio::time::timeout(deadline, self.owner_rx.recv())
                .await
                .expect("a message for the owner in time")
                .expect("owner channel open");
            let app = matches!(msg, Msg::App(_));
            self.server.dispatch(msg);
            if app {
                return;
            }
        }
    }

    fn pending_ids(&self) -> Vec<u64> {
        self.server
            .approvals
            .pending()
            .iter()
            .map(|p| p.id)
            .collect()
    }

    /// Presses `key` in the client's panel, as shown on its screen.
    fn press(&mut self, key: char) {
        let id = self.server.panel_request(CLIENT);
        self.server.panel_drawn(CLIENT, id);
        assert!(
            self.server
                .panel_key(CLIENT, Key::plain(KeyCode::Char(key))),
            "the panel took {key}"
        );
    }

    fn record(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("approvals.jsonl")).unwrap_or_default()
    }

    fn typed(&self) -> Vec<u8> {
        self.fakes
            .calls(self.pane)
            .into_iter()
            .filter_map(|c| match c {
                Call::Wrote(bytes) => Some(bytes),
                _ => None,
            })
            .flatten()
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for p in self.server.state.panes.values_mut() {
            p.process.hangup();
        }
    }
}

/// Polls `check` for up to 15 s.
fn wait<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

async fn answer_of(answer: Answer) -> Result<Value, JsonRpcError> {
    tokio::time::timeout(Duration::from_secs(5), answer)
        .await
        .expect("answered in time")
        .expect("ask task ran")
}

fn link(url: &str) -> HostAction {
    HostAction::OpenLink { url: url.into() }
}

fn message(text: &str) -> HostAction {
    HostAction::SendMessage {
        params: json!({"role": "user", "content": [{"type": "text", "text": text}]}),
    }
}

fn refusal(message: &str) -> Result<Value, JsonRpcError> {
    Err(JsonRpcError::new(-32000, message))
}

#[tokio::test]
async fn open_link_shows_in_the_panel_titled_by_the_server_and_y_opens() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let answer = f.ask(&view, link("https://example.com/a?b=\u{1b}[2J"));
    f.pump().await;
    let data = f
        .server
        .panel_data(CLIENT)
        .expect("the panel shows the request");
    assert_eq!(data.tool, "Everything: Open Link");
    assert!(
        data.pane.contains(&format!("view {}", view.view.id)),
        "{}",
        data.pane
    );
    let body = data.lines.join("\n");
    assert!(body.contains("https://example.com/a?b=\\x1b[2J"), "{body}");
    assert!(!body.contains('\u{1b}'), "{body}");
    assert!(data.choices.contains("Always Allow for This View"));
    assert_eq!(data.app_keys, Some(("Open", "Cancel")));
    f.press('y');
    assert_eq!(answer_of(answer).await, Ok(json!({})));
    assert!(f.server.approvals.pending().is_empty());
    // It blocked no agent row and made no rule.
    assert!(f.server.approvals.rules().is_empty());
    let record = f.record();
    assert!(record.contains("\"cli\":\"app\""), "{record}");
    assert!(record.contains("Everything: Open Link"), "{record}");
    assert!(record.contains("\"event\":\"allow\""), "{record}");
}

#[tokio::test]
async fn n_refuses_with_each_kinds_words() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let answer = f.ask(&view, link("https://example.com"));
    f.pump().await;
    f.press('n');
    assert_eq!(
        answer_of(answer).await,
        refusal("Link opening denied by user")
    );
    let answer = f.ask(&view, message("hello"));
    f.pump().await;
    f.press('n');
    assert_eq!(answer_of(answer).await, refusal("Message sending denied"));
    assert!(f.typed().is_empty(), "nothing typed after a refusal");
}

#[tokio::test]
async fn calyx_approve_sends_the_message_into_the_pane_and_submits_it() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let answer = f.ask(&view, message("run the tests"));
    f.pump().await;
    let id = *f.pending_ids().first().expect("pending");
    assert!(matches!(
        f.server.approve_response(id, true, None),
        Response::Ok
    ));
    assert_eq!(answer_of(answer).await, Ok(json!({})));
    let typed = String::from_utf8_lossy(&f.typed()).to_string();
    assert!(typed.contains("run the tests"), "{typed:?}");
    assert!(typed.ends_with('\r'), "submitted with Enter: {typed:?}");
    assert!(f.record().contains("Everything: Send Message"));
}

#[tokio::test]
async fn calyx_deny_refuses() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let answer = f.ask(&view, message("x"));
    f.pump().await;
    let id = *f.pending_ids().first().expect("pending");
    assert!(matches!(
        f.server.approve_response(id, false, None),
        Response::Ok
    ));
    assert_eq!(answer_of(answer).await, refusal("Message sending denied"));
}

#[tokio::test]
async fn a_message_for_a_pane_that_is_gone_says_so() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let answer = f.ask(&view, message("hello"));
    f.pump().await;
    // The pane goes without its close withdrawing the request (as when it dies mid-answer).
    f.server.state.panes.remove(&f.pane);
    let id = *f.pending_ids().first().expect("pending");
    f.server.approve_response(id, true, None);
    assert_eq!(answer_of(answer).await, refusal("the calling pane is gone"));
}

#[tokio::test]
async fn a_standalone_views_message_is_copied_to_the_answering_clients_clipboard() {
    let mut f = Fixture::new();
    let view = f.view(false);
    let answer = f.ask(&view, message("copy me"));
    f.pump().await;
    let data = f.server.panel_data(CLIENT).expect("shown");
    assert_eq!(data.tool, "Everything: Copy Message");
    assert!(data.pane.contains("standalone"), "{}", data.pane);
    let Response::Json(listed) = f.server.approvals_response(true) else {
        panic!("calyx approvals answers JSON");
    };
    assert_eq!(
        listed["pending"][0]["pane"],
        json!(format!("view {}", view.view.id))
    );
    assert_eq!(listed["pending"][0]["cli"], json!("app"));
    while f.client_rx.try_recv().is_ok() {}
    f.press('y');
    assert_eq!(answer_of(answer).await, Ok(json!({})));
    let mut sent = Vec::new();
    while let Ok(out) = f.client_rx.try_recv() {
        if let Outgoing::Terminal(bytes) = out {
            sent.extend(bytes);
        }
    }
    let osc = super::operations::clipboard::osc52(b"copy me");
    assert!(
        sent.windows(osc.len()).any(|w| w == osc.as_slice()),
        "OSC 52 with the message sent to the client"
    );
    assert!(f.typed().is_empty());
}

#[tokio::test]
async fn a_newer_request_of_the_same_kind_replaces_the_pending_one() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let first = f.ask(&view, link("https://one.example"));
    f.pump().await;
    let other_kind = f.ask(&view, message("hi"));
    f.pump().await;
    let second = f.ask(&view, link("https://two.example"));
    f.pump().await;
    assert_eq!(
        answer_of(first).await,
        refusal("Link opening denied by user")
    );
    let pending = f.server.approvals.pending();
    assert_eq!(pending.len(), 2, "the message stays, the second link waits");
    assert!(pending
        .iter()
        .any(|p| p.summary.lines.join("").contains("two.example")));
    assert!(f.record().contains("replaced by a newer request"));
    for id in f.pending_ids() {
        f.server.approve_response(id, true, None);
    }
    assert_eq!(answer_of(second).await, Ok(json!({})));
    assert_eq!(answer_of(other_kind).await, Ok(json!({})));
}

#[tokio::test]
async fn always_allow_for_this_view_answers_its_next_requests_and_makes_no_rule() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let other = f.view(true);
    let answer = f.ask(&view, link("https://one.example"));
    f.pump().await;
    f.press('a');
    assert_eq!(answer_of(answer).await, Ok(json!({})));
    assert!(f.apps.always_allowed(view.view.id, AppKind::OpenLink));
    assert!(
        f.server.approvals.rules().is_empty(),
        "no auto-approve rule"
    );
    // The same view's next link: allowed without a panel.
    let answer = f.ask(&view, link("https://two.example"));
    f.pump().await;
    assert_eq!(answer_of(answer).await, Ok(json!({})));
    assert!(f.server.approvals.pending().is_empty());
    // Not its messages, nor another view's links.
    let message_answer = f.ask(&view, message("hi"));
    f.pump().await;
    let other_answer = f.ask(&other, link("https://two.example"));
    f.pump().await;
    assert_eq!(f.server.approvals.pending().len(), 2);
    assert!(f
        .server
        .approvals
        .app_pending(other.view.id, AppKind::OpenLink));
    for id in f.pending_ids() {
        f.server.approve_response(id, false, None);
    }
    assert!(answer_of(message_answer).await.is_err());
    assert!(answer_of(other_answer).await.is_err());
}

#[tokio::test]
async fn an_unanswered_request_is_refused_after_an_hour_not_at_the_gates_expiry() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let answer = f.ask(&view, link("https://example.com"));
    f.pump().await;
    let now = tokio::time::Instant::now();
    f.server
        .approvals_expire(now + crate::approvals::EXPIRY + Duration::from_secs(1));
    assert_eq!(f.server.approvals.pending().len(), 1, "still waiting");
    f.server
        .approvals_expire(now + APP_EXPIRY + Duration::from_secs(1));
    assert!(f.server.approvals.pending().is_empty());
    assert_eq!(
        answer_of(answer).await,
        refusal("Link opening denied by user")
    );
}

#[tokio::test]
async fn removing_the_view_or_the_page_giving_up_refuses_and_clears_the_panel() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let answer = f.ask(&view, link("https://example.com"));
    f.pump().await;
    f.server.views_event(HubEvent::Removed(view.view.id));
    assert!(f.server.approvals.pending().is_empty());
    assert_eq!(
        answer_of(answer).await,
        refusal("Link opening denied by user")
    );
    let answer = f.ask(&view, message("hello"));
    f.pump().await;
    assert_eq!(f.server.approvals.pending().len(), 1);
    answer.abort();
    let _ = answer.await;
    f.pump().await;
    assert!(f.server.approvals.pending().is_empty(), "withdrawn");
    assert!(f.record().contains("the page went away"));
}

/// The page asked to open a link and closed before the answer: the request stays, says so,
/// and is carried out without the page.
async fn open_link_whose_page_closed(f: &mut Fixture) -> u64 {
    let view = f.view(true);
    let answer = f.ask(&view, link("https://example.com/after"));
    f.pump().await;
    answer.abort();
    let _ = answer.await;
    f.pump().await;
    let ids = f.pending_ids();
    assert_eq!(ids.len(), 1, "an Open Link outlives its page");
    let data = f.server.panel_data(CLIENT).expect("still shown");
    assert!(
        data.choices.contains("the page has closed"),
        "{}",
        data.choices
    );
    ids[0]
}

fn clipboard_got(f: &mut Fixture, text: &str) -> bool {
    let mut sent = Vec::new();
    while let Ok(out) = f.client_rx.try_recv() {
        if let Outgoing::Terminal(bytes) = out {
            sent.extend(bytes);
        }
    }
    let osc = super::operations::clipboard::osc52(text.as_bytes());
    sent.windows(osc.len()).any(|w| w == osc.as_slice())
}

#[tokio::test]
async fn an_open_link_whose_page_closed_opens_in_a_local_clients_browser() {
    let mut f = Fixture::new();
    let opened = f.dir.path().join("opened");
    let browser = format!("sh -c 'printf \"%s\\n\" \"$0\" >> {}'", opened.display());
    if let Some(c) = f.server.state.clients.get_mut(&CLIENT) {
        c.opener_env = vec![("DISPLAY".into(), ":0".into()), ("BROWSER".into(), browser)];
    }
    open_link_whose_page_closed(&mut f).await;
    f.press('y');
    assert!(f.server.approvals.pending().is_empty());
    let text = wait("the browser run with the link", || {
        std::fs::read_to_string(&opened)
            .ok()
            .filter(|t| t.ends_with('\n'))
    });
    assert_eq!(text, "https://example.com/after\n");
    assert!(f.record().contains("\"allow\""), "{}", f.record());
}

#[tokio::test]
async fn an_open_link_whose_page_closed_is_copied_without_a_local_browser() {
    let mut f = Fixture::new();
    // No DISPLAY, as over SSH: `y` copies (OSC 52 reaches the user's own machine).
    let id = open_link_whose_page_closed(&mut f).await;
    while f.client_rx.try_recv().is_ok() {}
    assert!(f
        .server
        .answer_app(id, crate::approvals::Decision::Allow, None));
    assert!(clipboard_got(&mut f, "https://example.com/after"));
    // `c` copies too, and settles it.
    open_link_whose_page_closed(&mut f).await;
    while f.client_rx.try_recv().is_ok() {}
    f.press('c');
    assert!(f.server.approvals.pending().is_empty(), "c settled it");
    assert!(clipboard_got(&mut f, "https://example.com/after"));
}

#[tokio::test]
async fn c_does_nothing_while_the_page_waits() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let _answer = f.ask(&view, link("https://example.com"));
    f.pump().await;
    f.press('c');
    assert_eq!(
        f.server.approvals.pending().len(),
        1,
        "c is not an answer here"
    );
}

#[tokio::test]
async fn allow_all_leaves_app_requests_to_be_answered_one_by_one() {
    let mut f = Fixture::new();
    let view = f.view(true);
    let _answer = f.ask(&view, link("https://example.com"));
    f.pump().await;
    f.press('!');
    f.press('y');
    assert_eq!(f.server.approvals.pending().len(), 1);
    assert!(f
        .server
        .approvals
        .app_pending(view.view.id, AppKind::OpenLink));
}

#[tokio::test]
async fn a_sent_message_reaches_a_real_program_bracketed_and_submitted() {
    // The program asks for bracketed paste, then shows every byte it gets, line by line.
    let mut f = Fixture::with_pane(Some(
        "stty -echo; printf '\\033[?2004hready\\n'; exec cat -v",
    ));
    let pane = f.pane;
    wait("the pane's program ready", || {
        let term = f.server.state.panes[&pane].term();
        let screen = term.screen();
        (screen.contents().contains("ready") && screen.bracketed_paste()).then_some(())
    });
    let view = f.view(true);
    let answer = f.ask(&view, message("run the tests"));
    f.pump().await;
    f.press('y');
    assert_eq!(answer_of(answer).await, Ok(json!({})));
    // `cat -v` prints the line only once Enter ended it.
    wait("the message in the pane", || {
        let text = f.server.state.panes[&pane].term().screen().contents();
        text.contains("^[[200~run the tests^[[201~").then_some(())
    });
}
