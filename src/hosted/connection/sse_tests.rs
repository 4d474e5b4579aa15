use super::*;
use proptest::prelude::*;

fn parse_all(bytes: &[u8]) -> Vec<SseEvent> {
    SseParser::new(1 << 20)
        .push(bytes)
        .expect("within the limit")
}

fn event(event: &str, data: &str, id: Option<&str>) -> SseEvent {
    SseEvent {
        event: event.into(),
        data: data.into(),
        id: id.map(String::from),
    }
}

#[test]
fn the_legacy_handshake_stream() {
    let stream = b"event: endpoint\ndata: /message?sessionId=abc\n\n: keep-alive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n";
    assert_eq!(
        parse_all(stream),
        [
            event("endpoint", "/message?sessionId=abc", None),
            event("message", r#"{"jsonrpc":"2.0","id":0,"result":{}}"#, None),
        ]
    );
}

#[test]
fn fields_follow_the_whatwg_rules() {
    // Multi-line data, no space after the colon, CR and CRLF endings, an id carried over,
    // an unnamed event, a field without a colon, unknown fields and an event with no data.
    let stream =
        b"id: 7\r\ndata:a\r\ndata:  b\rdata\n\nevent: x\nretry: 10\nfoo: bar\n\ndata: z\n\n";
    assert_eq!(
        parse_all(stream),
        [
            event("message", "a\n b\n", Some("7")),
            event("message", "z", Some("7"))
        ]
    );
}

#[test]
fn retry_takes_only_digits_and_the_last_valid_one_wins() {
    let mut parser = SseParser::new(1 << 10);
    assert_eq!(parser.retry(), None);
    parser.push(b"retry: 250\n\n").expect("ok");
    assert_eq!(parser.retry(), Some(std::time::Duration::from_millis(250)));
    // Not all digits, or empty: ignored, the earlier value stays.
    parser
        .push(b"retry: 1x\nretry:\nretry: -5\n\n")
        .expect("ok");
    assert_eq!(parser.retry(), Some(std::time::Duration::from_millis(250)));
    parser.push(b"retry:900\n\n").expect("ok");
    assert_eq!(parser.retry(), Some(std::time::Duration::from_millis(900)));
}

#[test]
fn a_leading_bom_is_skipped_even_when_split() {
    let mut parser = SseParser::new(1 << 10);
    assert!(parser.push(b"\xEF").expect("ok").is_empty());
    assert!(parser.push(b"\xBB").expect("ok").is_empty());
    let events = parser.push(b"\xBFdata: x\n\n").expect("ok");
    assert_eq!(events, [event("message", "x", None)]);
}

#[test]
fn an_event_over_the_limit_is_an_error() {
    let mut parser = SseParser::new(16);
    assert_eq!(parser.push(b"data: 0123456789\n").map(|e| e.len()), Ok(0));
    assert_eq!(
        parser.push(b"data: 0123456789\n"),
        Err(EventTooLarge { limit: 16 })
    );
    // One line without a terminator counts too.
    let mut parser = SseParser::new(16);
    assert!(parser.push(&[b'a'; 17]).is_err());
    assert_eq!(
        EventTooLarge { limit: 64 << 20 }.to_string(),
        "the server sent an event over 64 MiB"
    );
}

fn line_ending() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("\n"), Just("\r\n"), Just("\r")]
}

/// Field values: no CR, LF or NUL, any other text (JSON with colons included).
fn value() -> impl Strategy<Value = String> {
    "[^\r\n\0]{0,40}"
}

prop_compose! {
    fn generated_event()(
        name in prop::option::of("[a-z]{1,10}"),
        data in prop::collection::vec(value(), 1..4),
        id in prop::option::of("[a-z0-9]{1,8}"),
        comment in prop::option::of(value()),
        eol in line_ending(),
    ) -> (String, SseEvent) {
        let mut text = String::new();
        if let Some(c) = &comment {
            text.push_str(&format!(":{c}{eol}"));
        }
        if let Some(n) = &name {
            text.push_str(&format!("event: {n}{eol}"));
        }
        if let Some(i) = &id {
            text.push_str(&format!("id: {i}{eol}"));
        }
        for d in &data {
            text.push_str(&format!("data: {d}{eol}"));
        }
        text.push_str(eol);
        let expected = SseEvent {
            event: name.unwrap_or_else(|| "message".into()),
            data: data.join("\n"),
            id,
        };
        (text, expected)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// Whatever the chunking, the events are the ones written, in order.
    #[test]
    fn split_chunks_give_the_same_events(
        events in prop::collection::vec(generated_event(), 0..6),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..12),
    ) {
        let stream: String = events.iter().map(|(text, _)| text.as_str()).collect();
        let bytes = stream.as_bytes();
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut parser = SseParser::new(1 << 20);
        let mut parsed = Vec::new();
        let mut from = 0;
        for at in points.into_iter().chain([bytes.len()]) {
            parsed.extend(parser.push(&bytes[from..at]).expect("within the limit"));
            from = at;
        }
        // An id is sticky across events, as the spec says.
        let mut last_id = None;
        let expected: Vec<SseEvent> = events
            .into_iter()
            .map(|(_, mut e)| {
                if e.id.is_some() {
                    last_id = e.id.clone();
                }
                e.id = last_id.clone();
                e
            })
            .collect();
        prop_assert_eq!(parsed, expected);
    }
}

#[test]
fn raw_events_keep_the_bytes_and_join_data_lines() {
    let mut parser = SseParser::new(1 << 20);
    let events = parser
        .push_raw(b"id: 3\ndata: {\"a\":\ndata: 1}\n\nevent: ping\ndata: \xff\n\n")
        .expect("within the limit");
    assert_eq!(events.len(), 2);
    assert_eq!(events[0].data, b"{\"a\":\n1}");
    assert_eq!(events[0].event, "message");
    assert_eq!(events[0].id.as_deref(), Some("3"));
    // Bytes are handed over as they came (not made valid UTF-8 first).
    assert_eq!(events[1].data, b"\xff");
    assert_eq!(events[1].event, "ping");
}

#[test]
fn a_first_data_line_over_the_limit_is_refused() {
    let mut parser = SseParser::new(8);
    assert!(parser.push(b"data: 0123456789\n\n").is_err());
}
