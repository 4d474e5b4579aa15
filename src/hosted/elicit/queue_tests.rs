use super::*;

fn form(message: &str) -> Request {
    Request::Form {
        message: message.into(),
        schema: serde_json::json!({"type": "object", "properties": {}}),
        order: Vec::new(),
    }
}

fn url(id: &str) -> Request {
    Request::Url {
        message: "open it".into(),
        url: "https://example.com/x".into(),
        elicitation_id: id.into(),
    }
}

/// Starts `ask` on a task and waits until the queue shows it.
async fn asking(
    queue: &Arc<Elicitations>,
    alias: &str,
    request: Request,
    wait: Duration,
) -> tokio::task::JoinHandle<Answer> {
    let before = queue.lock().values().map(VecDeque::len).sum::<usize>();
    let q = queue.clone();
    let alias = alias.to_string();
    let task = tokio::spawn(async move { q.ask_within(&alias, "Name", request, wait).await });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while queue.lock().values().map(VecDeque::len).sum::<usize>() == before {
        assert!(tokio::time::Instant::now() < deadline, "never queued");
        tokio::task::yield_now().await;
    }
    task
}

#[tokio::test]
async fn one_at_a_time_per_server_first_in_first_out() {
    let queue = Arc::new(Elicitations::default());
    let changes = queue.watch();
    let wait = ANSWER_WAIT;
    let first = asking(&queue, "ev", form("first"), wait).await;
    let second = asking(&queue, "ev", form("second"), wait).await;
    let other = asking(&queue, "gh", form("other"), wait).await;
    let shown = queue.shown();
    assert_eq!(shown.len(), 2, "one per server: {shown:?}");
    assert_eq!(shown[0].request, form("first"));
    assert_eq!(shown[1].alias, "gh");
    assert!(changes.has_changed().unwrap_or(false));

    let content = serde_json::Map::from_iter([("a".to_string(), serde_json::json!(1))]);
    assert!(queue.answer(shown[0].id, Answer::Accept(Some(content.clone()))));
    assert_eq!(first.await.ok(), Some(Answer::Accept(Some(content))));
    assert_eq!(
        queue.shown()[0].request,
        form("second"),
        "the next one shows"
    );
    assert!(!queue.answer(shown[0].id, Answer::Decline), "answered once");

    let next = queue.shown()[0].id;
    assert!(queue.answer(next, Answer::Decline));
    assert_eq!(second.await.ok(), Some(Answer::Decline));
    queue.forget("gh");
    assert_eq!(other.await.ok(), Some(Answer::Cancel), "its server stopped");
    assert!(queue.shown().is_empty());
}

#[tokio::test(start_paused = true)]
async fn unanswered_ones_cancel_after_the_wait_and_go() {
    let queue = Arc::new(Elicitations::default());
    let task = asking(&queue, "ev", form("slow"), ANSWER_WAIT).await;
    tokio::time::advance(ANSWER_WAIT - Duration::from_secs(1)).await;
    assert_eq!(queue.shown().len(), 1, "still waiting at 599 s");
    tokio::time::advance(Duration::from_secs(2)).await;
    assert_eq!(task.await.ok(), Some(Answer::Cancel));
    assert!(queue.shown().is_empty(), "withdrawn");
}

#[tokio::test]
async fn a_request_the_server_cancels_is_withdrawn() {
    let queue = Arc::new(Elicitations::default());
    let task = asking(&queue, "ev", form("x"), ANSWER_WAIT).await;
    task.abort();
    let _ = task.await;
    assert!(queue.shown().is_empty());
}

#[tokio::test]
async fn an_opened_url_waits_for_its_completion_or_done() {
    let queue = Arc::new(Elicitations::default());
    let task = asking(&queue, "ev", url("e-1"), ANSWER_WAIT).await;
    let id = queue.shown()[0].id;
    assert!(!queue.complete("ev", "e-1"), "not opened yet: ignored");
    assert!(queue.answer(id, Answer::Accept(None)));
    assert_eq!(
        task.await.ok(),
        Some(Answer::Accept(None)),
        "Open answers accept at once"
    );
    assert!(queue.shown()[0].opened, "Done shows until it completes");
    assert!(!queue.complete("ev", "e-2"), "an unknown id is ignored");
    assert!(!queue.complete("gh", "e-1"), "another server's is ignored");
    assert!(queue.complete("ev", "e-1"));
    assert!(queue.shown().is_empty());
    assert!(!queue.complete("ev", "e-1"), "repeated: ignored");

    let task = asking(&queue, "ev", url("e-3"), ANSWER_WAIT).await;
    let id = queue.shown()[0].id;
    assert!(!queue.done(id), "Done only after Open");
    queue.answer(id, Answer::Accept(None));
    let _ = task.await;
    assert!(queue.done(id));
    assert!(queue.shown().is_empty());

    let task = asking(&queue, "ev", url("e-4"), ANSWER_WAIT).await;
    queue.answer(queue.shown()[0].id, Answer::Decline);
    assert_eq!(task.await.ok(), Some(Answer::Decline));
    assert!(queue.shown().is_empty(), "a declined URL goes at once");
}

#[tokio::test]
async fn a_question_names_the_pane_only_when_one_call_to_its_server_is_in_flight() {
    let queue = Arc::new(Elicitations::default());
    let one = queue.call_started("ev", Some("surface-a".into()));
    let _other_server = queue.call_started("gh", Some("surface-b".into()));
    let first = asking(&queue, "ev", form("a"), ANSWER_WAIT).await;
    assert_eq!(queue.shown()[0].surface.as_deref(), Some("surface-a"));
    queue.answer(queue.shown()[0].id, Answer::Cancel);
    let _ = first.await;

    let two = queue.call_started("ev", Some("surface-c".into()));
    let second = asking(&queue, "ev", form("b"), ANSWER_WAIT).await;
    assert_eq!(
        queue.shown()[0].surface,
        None,
        "two calls: which one is unknown"
    );
    queue.answer(queue.shown()[0].id, Answer::Cancel);
    let _ = second.await;

    drop(one);
    drop(two);
    let _outside = queue.call_started("ev", None);
    let third = asking(&queue, "ev", form("c"), ANSWER_WAIT).await;
    assert_eq!(queue.shown()[0].surface, None, "a caller outside calyx");
    queue.answer(queue.shown()[0].id, Answer::Cancel);
    let _ = third.await;
}
