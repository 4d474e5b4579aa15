//! One saved machine's link, run as a task of the server: connect without ever prompting
//! (`probe::connect`, starting no server there), send `Watch`, hand each pushed snapshot to
//! the owner, carry the owner's requests (answers to approvals) and their responses, and when
//! the connection drops or cannot be made, say why and try again with backoff.
//!
//! Requests the remote server answers on its loop go in order and their answers come back in
//! order; an agent's tool call ([`Request::RemoteTool`]) is answered off that loop, whenever
//! it is done, so it goes tagged ([`ClientMessage::Tagged`]) and its answer is matched by tag:
//! a slow call holds up neither the other requests nor the snapshots.
//!
//! The frames are read on a task of their own: a frame read cut short by `select!` would lose
//! bytes, so the reader owns the read half and hands whole frames over a channel.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

use super::{Ask, LinkEvent, LinkState, Sink};
use crate::machines::{probe, Machine};
use crate::protocol::{
    encode_message, read_frame, ClientMessage, Frame, Request, Response, ServerMessage,
};
use crate::remote::handshake::printable_line;

/// First wait before connecting again; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A machine that wants the user is tried again less often (each try is a failed login).
const NEEDS_YOU_BACKOFF: Duration = Duration::from_secs(60);

/// Runs until the owner drops the link (its `asks` sender).
pub async fn run(machine: Machine, sink: Sink, mut asks: mpsc::UnboundedReceiver<Ask>) {
    let name = machine.name.clone();
    let state = |state| {
        sink(LinkEvent::State {
            name: name.clone(),
            state,
        })
    };
    let mut backoff = FIRST_BACKOFF;
    loop {
        state(LinkState::Connecting);
        let wait = match probe::connect(&machine, false).await {
            Ok((link, _)) => {
                let (why, was_live) = serve(link, &name, &sink, &mut asks).await;
                let Some(why) = why else { return };
                if was_live {
                    backoff = FIRST_BACKOFF;
                }
                state(LinkState::Unreachable(why));
                backoff
            }
            Err(failure) => {
                let (failed, wait) = after_failure(failure, backoff);
                state(failed);
                if wait == MAX_BACKOFF {
                    backoff = MAX_BACKOFF;
                }
                wait
            }
        };
        backoff = (backoff * 2).min(MAX_BACKOFF);
        if !refuse_while_waiting(wait, &name, &mut asks).await {
            return;
        }
    }
}

/// The state a failed connection puts the link in, and how long it waits before trying again
/// (`backoff`: the current wait for a machine that could not be reached).
fn after_failure(failure: probe::Failure, backoff: Duration) -> (LinkState, Duration) {
    match failure {
        // Each try is a failed login there.
        probe::Failure::NeedsYou { reason, .. } => (LinkState::NeedsYou(reason), NEEDS_YOU_BACKOFF),
        probe::Failure::Unreachable(reason) => (LinkState::Unreachable(reason), backoff),
        // Nothing changes there until someone installs: the longest wait at once, no storm of
        // ssh logins meanwhile.
        probe::Failure::WrongVersion(reason) => (LinkState::WrongVersion(reason), MAX_BACKOFF),
    }
}

/// Waits `wait`, answering every request meanwhile with "unreachable"; false once the owner
/// dropped the link.
async fn refuse_while_waiting(
    wait: Duration,
    name: &str,
    asks: &mut mpsc::UnboundedReceiver<Ask>,
) -> bool {
    let until = tokio::time::Instant::now() + wait;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(until) => return true,
            ask = asks.recv() => match ask {
                Some(ask) => {
                    let _ = ask.reply.send(Err(format!("{name} is not connected")));
                }
                None => return false,
            },
        }
    }
}

/// Watches over a connected link until it ends. Returns why it ended (None: the owner
/// dropped the link) and whether a snapshot came (it was live).
async fn serve(
    link: crate::remote::link::Link,
    name: &str,
    sink: &Sink,
    asks: &mut mpsc::UnboundedReceiver<Ask>,
) -> (Option<String>, bool) {
    let version = link.peer.version.clone();
    let (mut reader, mut writer) = link.stream.into_split();
    if writer
        .write_all(&encode_message(&ClientMessage::Watch))
        .await
        .is_err()
    {
        return (Some("the connection closed at once".into()), false);
    }
    let (frames_tx, mut frames) = mpsc::unbounded_channel();
    let reader_task = tokio::spawn(async move {
        loop {
            let frame = read_frame::<_, ServerMessage>(&mut reader).await;
            let end = frame.is_err();
            if frames_tx.send(frame).is_err() || end {
                return;
            }
        }
    });
    let _stop_reader = AbortOnDrop(reader_task);
    let mut waiting: VecDeque<Ask> = VecDeque::new();
    let mut tagged: HashMap<u64, Answer> = HashMap::new();
    let (gave_up_tx, mut gave_up) = mpsc::unbounded_channel();
    let mut next_tag: u64 = 0;
    let mut live = false;
    let why = loop {
        tokio::select! {
            // A caller that gave up (its tool call timed out here): the call there stops and
            // is forgotten, so nothing acts for it (an approval it queued is withdrawn). A tag
            // no longer out was answered first: nothing to stop.
            Some(tag) = gave_up.recv() => {
                if tagged.remove(&tag).is_some() {
                    let cancel = encode_message(&ClientMessage::CancelTagged { tag });
                    // A write that fails is the link dropping: the reader says so next.
                    let _ = writer.write_all(&cancel).await;
                }
            }
            frame = frames.recv() => match frame {
                Some(Ok(Frame::Message(ServerMessage::Snapshot(snapshot)))) => {
                    live = true;
                    sink(LinkEvent::Snapshot { name: name.to_string(), snapshot });
                }
                Some(Ok(Frame::Message(ServerMessage::Response(response)))) => {
                    if let Some(ask) = waiting.pop_front() {
                        let _ = ask.reply.send(Ok(response));
                    }
                }
                Some(Ok(Frame::Message(ServerMessage::Tagged { tag, response }))) => {
                    if let Some(answer) = tagged.remove(&tag) {
                        let _ = answer.send(Ok(response));
                    }
                }
                // Nothing else is sent to a watcher; ignore what a newer server may add.
                Some(Ok(_)) => {}
                Some(Err(e)) if !live => break Some(format!(
                    "the calyx there (version {}) closed the link before its first snapshot \
                     ({}): it may be older than live links; install this version there",
                    printable_line(&version),
                    printable_line(&e.to_string())
                )),
                Some(Err(e)) => break Some(format!("the link dropped ({})", printable_line(&e.to_string()))),
                None => break Some("the link dropped".into()),
            },
            ask = asks.recv() => match ask {
                Some(ask) => {
                    let tag = matches!(ask.request, Request::RemoteTool { .. }).then(|| {
                        next_tag += 1;
                        next_tag
                    });
                    let request = ask.request.clone();
                    let frame = encode_message(&match tag {
                        Some(tag) => ClientMessage::Tagged { tag, request },
                        None => ClientMessage::Request(request),
                    });
                    if writer.write_all(&frame).await.is_err() {
                        let _ = ask.reply.send(Err(format!("the link to {name} dropped")));
                        break Some("the link dropped".into());
                    }
                    match tag {
                        Some(tag) => {
                            tagged.insert(tag, watch_caller(tag, ask.reply, gave_up_tx.clone()));
                        }
                        None => waiting.push_back(ask),
                    }
                }
                None => break None,
            },
        }
    };
    let dropped = || Err(format!("the link to {name} dropped before the answer"));
    for ask in waiting {
        let _ = ask.reply.send(dropped());
    }
    for answer in tagged.into_values() {
        let _ = answer.send(dropped());
    }
    (why, live)
}

/// Where a tagged call's answer goes.
type Answer = oneshot::Sender<Result<Response, String>>;

/// Stands between a tagged call's caller and the link: the answer sent on the returned sender
/// reaches `reply`, and the moment the caller stops waiting (its receiver dropped) `tag` is
/// reported on `gave_up`, so the call there is cancelled at once rather than at a poll. The
/// task ends with either, or when the link drops the returned sender.
fn watch_caller(tag: u64, mut reply: Answer, gave_up: mpsc::UnboundedSender<u64>) -> Answer {
    let (answer, mut answered) = oneshot::channel();
    tokio::spawn(async move {
        tokio::select! {
            result = &mut answered => {
                if let Ok(result) = result {
                    let _ = reply.send(result);
                }
            }
            () = reply.closed() => {
                let _ = gave_up.send(tag);
            }
        }
    });
    answer
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use tokio::sync::oneshot;

    use crate::protocol::RemoteCaller;
    use crate::remote::handshake::Peer;

    // The clock is paused: it moves only when every task waits on a timer, so a cancel found
    // by a poll would arrive with time gone by, and one sent as the caller goes arrives with none.
    #[tokio::test(start_paused = true)]
    async fn a_tagged_call_whose_caller_gave_up_is_cancelled_there_at_once() {
        let (ours, mut theirs) = tokio::net::UnixStream::pair().expect("pair");
        let link = crate::remote::link::Link {
            stream: ours,
            peer: Peer {
                version: "test".into(),
                protocol: Some(crate::remote::handshake::PROTOCOL_VERSION),
                tty: true,
            },
        };
        let sink: Sink = Arc::new(|_| {});
        let (asks_tx, mut asks) = mpsc::unbounded_channel();
        // The machine there: it sees the link's Watch, then the call, then its cancel.
        let remote = async move {
            let first = read_frame::<_, ClientMessage>(&mut theirs).await;
            assert!(matches!(first, Ok(Frame::Message(ClientMessage::Watch))));
            let (reply, answer) = oneshot::channel();
            let request = Request::RemoteTool {
                tool: "pane_read".into(),
                args: serde_json::json!({}),
                from: RemoteCaller {
                    machine: "laptop".into(),
                    pane: None,
                    name: None,
                },
            };
            asks_tx.send(Ask { request, reply }).expect("ask");
            let Ok(Frame::Message(ClientMessage::Tagged { tag, .. })) =
                read_frame::<_, ClientMessage>(&mut theirs).await
            else {
                panic!("no tagged call");
            };
            // The caller gives up (its wait timed out): the receiver goes.
            let gave_up_at = tokio::time::Instant::now();
            drop(answer);
            let next = read_frame::<_, ClientMessage>(&mut theirs).await;
            assert!(
                matches!(next, Ok(Frame::Message(ClientMessage::CancelTagged { tag: t })) if t == tag),
                "{next:?}"
            );
            assert_eq!(
                gave_up_at.elapsed(),
                Duration::ZERO,
                "the cancel waited for a poll"
            );
            // The owner drops the link: it ends.
            drop(asks_tx);
            theirs
        };
        let ((why, _), _theirs) = tokio::join!(serve(link, "build", &sink, &mut asks), remote);
        assert_eq!(why, None);
    }

    #[test]
    fn a_machine_of_another_protocol_is_its_own_state_and_waits_the_longest() {
        let wrong = probe::Failure::WrongVersion("b runs calyx 0.4.0 (protocol 1)".into());
        let (state, wait) = after_failure(wrong, FIRST_BACKOFF);
        assert_eq!(state.word(), "wrong-version");
        assert_eq!(wait, MAX_BACKOFF);
        let gone = probe::Failure::Unreachable("refused".into());
        assert_eq!(after_failure(gone, FIRST_BACKOFF).1, FIRST_BACKOFF);
    }
}
