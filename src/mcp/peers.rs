//! Peers and their inboxes: in-process state, no owner loop involved, so messaging keeps working
//! while the owner is busy and the limits are enforced in one place.
//!
//! One pane is one peer (a second `register_peer` from the same pane renames it); its peer id is
//! its pane id, so identities survive an MCP reconnect. Inboxes are bounded: at most
//! [`MAX_QUEUED`] messages of at most [`MAX_MESSAGE_BYTES`] each; the oldest is dropped and
//! counted when a new one arrives at a full inbox. Reading deletes.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::backend::PaneRef;

/// Messages kept per peer before the oldest is dropped.
pub const MAX_QUEUED: usize = 100;
/// Largest message content in bytes.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// Longest peer name or role in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// A registered peer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PeerInfo {
    /// The id other peers address it by (its pane id).
    pub peer_id: String,
    pub name: String,
    pub role: Option<String>,
    /// The pane it runs in.
    pub pane: String,
    /// Messages waiting in its inbox.
    pub unread: usize,
}

/// One message in an inbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Message {
    /// Sender's peer id.
    pub from: String,
    /// Sender's name at the time of sending.
    pub from_name: String,
    pub content: String,
    /// Whether it was a broadcast.
    pub broadcast: bool,
    /// Unix time in milliseconds.
    pub sent_at_ms: u64,
}

/// What reading an inbox returns.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Inbox {
    pub messages: Vec<Message>,
    /// Messages dropped (inbox full) since the last read.
    pub dropped: u64,
}

/// Why a peer operation failed, phrased for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PeerError {
    #[error("this MCP client is not in a calyx pane (no X-Calyx-Surface-ID/X-Calyx-Session-ID that calyx knows), so it cannot be a peer; it can still use pane_list, pane_read and agent_list")]
    NoIdentity,
    #[error("register first: call register_peer {{name}} before sending or receiving messages")]
    NotRegistered,
    #[error("no peer {0:?}; call list_peers for the current ids")]
    UnknownPeer(String),
    #[error("message is {0} bytes; the limit is 64 KiB ({MAX_MESSAGE_BYTES} bytes), so split it or send a file path instead")]
    TooLarge(usize),
    #[error("{0} must be 1 to {MAX_NAME_CHARS} characters")]
    BadName(&'static str),
    #[error("message content is empty")]
    Empty,
    #[error("a peer cannot send a message to itself")]
    ToSelf,
}

#[derive(Debug, Default)]
struct Peer {
    name: String,
    role: Option<String>,
    inbox: VecDeque<Message>,
    dropped: u64,
}

/// All peers, keyed by pane id.
#[derive(Debug, Default)]
pub struct PeerRegistry {
    peers: Mutex<BTreeMap<String, Peer>>,
}

/// What a delivery did to the recipient's inbox (so the caller can report and redraw).
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub to: PaneRef,
    pub unread: usize,
    pub dropped_now: bool,
}

/// A peer and its unread messages, as an in-place upgrade (`calyx server-upgrade`) hands
/// them to the new server (pane ids stay, so the keys do too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CarriedPeer {
    /// Its pane id (what other peers address it by).
    pub pane: String,
    pub name: String,
    pub role: Option<String>,
    pub inbox: Vec<Message>,
    pub dropped: u64,
}

impl PeerRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Every peer with its inbox, to hand over.
    pub fn carry_out(&self) -> Vec<CarriedPeer> {
        self.lock()
            .iter()
            .map(|(pane, p)| CarriedPeer {
                pane: pane.clone(),
                name: p.name.clone(),
                role: p.role.clone(),
                inbox: p.inbox.iter().cloned().collect(),
                dropped: p.dropped,
            })
            .collect()
    }

    /// Takes in handed-over peers with their inboxes.
    pub fn carry_in(&self, carried: Vec<CarriedPeer>) {
        let mut peers = self.lock();
        for c in carried {
            peers.insert(
                c.pane,
                Peer {
                    name: c.name,
                    role: c.role,
                    inbox: c.inbox.into_iter().take(MAX_QUEUED).collect(),
                    dropped: c.dropped,
                },
            );
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Peer>> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.peers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `pane` as a peer, or renames it when it already is one (the inbox stays).
    pub fn register(
        &self,
        pane: &PaneRef,
        name: &str,
        role: Option<&str>,
    ) -> Result<PeerInfo, PeerError> {
        let name = checked_name(name, "name")?;
        let role = role
            .map(|r| checked_name(r, "role"))
            .transpose()?
            .filter(|r| !r.is_empty());
        let mut peers = self.lock();
        let peer = peers.entry(pane.pane.clone()).or_default();
        peer.name = name;
        peer.role = role;
        Ok(info(&pane.pane, peer))
    }

    /// Every peer, ordered by pane id.
    pub fn list(&self) -> Vec<PeerInfo> {
        self.lock().iter().map(|(id, p)| info(id, p)).collect()
    }

    /// One peer.
    pub fn get(&self, peer_id: &str) -> Result<PeerInfo, PeerError> {
        let peers = self.lock();
        let peer = peers
            .get(peer_id)
            .ok_or_else(|| PeerError::UnknownPeer(peer_id.to_owned()))?;
        Ok(info(peer_id, peer))
    }

    /// Whether `pane` is a registered peer.
    pub fn is_peer(&self, pane: &PaneRef) -> bool {
        self.lock().contains_key(&pane.pane)
    }

    /// Messages waiting for `pane` (0 when it is not a peer): for the border and sidebar.
    pub fn unread(&self, pane: &PaneRef) -> usize {
        self.lock().get(&pane.pane).map_or(0, |p| p.inbox.len())
    }

    /// Queues a message from `from` to peer `to`.
    pub fn send(&self, from: &PaneRef, to: &str, content: &str) -> Result<Delivery, PeerError> {
        check_content(content)?;
        if from.pane == to {
            return Err(PeerError::ToSelf);
        }
        let mut peers = self.lock();
        let message = message_from(&peers, from, content, false)?;
        let peer = peers
            .get_mut(to)
            .ok_or_else(|| PeerError::UnknownPeer(to.to_owned()))?;
        Ok(push(to, peer, message))
    }

    /// Queues a message from a peer on another machine, `from` being its machine-qualified
    /// id (`laptop/%3`, what the recipient answers to) and `from_name` its name there.
    pub fn send_from_afar(
        &self,
        from: &str,
        from_name: &str,
        to: &str,
        content: &str,
    ) -> Result<Delivery, PeerError> {
        check_content(content)?;
        let from_name = checked_name(from_name, "name")?;
        let mut peers = self.lock();
        let peer = peers
            .get_mut(to)
            .ok_or_else(|| PeerError::UnknownPeer(to.to_owned()))?;
        let message = Message {
            from: from.to_owned(),
            from_name,
            content: content.to_owned(),
            broadcast: false,
            sent_at_ms: now_ms(),
        };
        Ok(push(to, peer, message))
    }

    /// Queues a message for every peer but the sender.
    pub fn broadcast(&self, from: &PaneRef, content: &str) -> Result<Vec<Delivery>, PeerError> {
        check_content(content)?;
        let mut peers = self.lock();
        let message = message_from(&peers, from, content, true)?;
        Ok(peers
            .iter_mut()
            .filter(|(id, _)| **id != from.pane)
            .map(|(id, peer)| push(id, peer, message.clone()))
            .collect())
    }

    /// Takes everything in `pane`'s inbox (delete on read) and resets its dropped count.
    pub fn receive(&self, pane: &PaneRef) -> Result<Inbox, PeerError> {
        let mut peers = self.lock();
        let peer = peers.get_mut(&pane.pane).ok_or(PeerError::NotRegistered)?;
        Ok(Inbox {
            messages: peer.inbox.drain(..).collect(),
            dropped: std::mem::take(&mut peer.dropped),
        })
    }

    /// Forgets a peer (its pane closed).
    pub fn remove(&self, pane: &PaneRef) {
        self.lock().remove(&pane.pane);
    }
}

fn info(id: &str, peer: &Peer) -> PeerInfo {
    PeerInfo {
        peer_id: id.to_owned(),
        name: peer.name.clone(),
        role: peer.role.clone(),
        pane: id.to_owned(),
        unread: peer.inbox.len(),
    }
}

fn checked_name(value: &str, what: &'static str) -> Result<String, PeerError> {
    let value = value.trim();
    let chars = value.chars().count();
    if (what == "name" && chars == 0)
        || chars > MAX_NAME_CHARS
        || value.chars().any(char::is_control)
    {
        return Err(PeerError::BadName(what));
    }
    Ok(value.to_owned())
}

fn check_content(content: &str) -> Result<(), PeerError> {
    if content.is_empty() {
        return Err(PeerError::Empty);
    }
    if content.len() > MAX_MESSAGE_BYTES {
        return Err(PeerError::TooLarge(content.len()));
    }
    Ok(())
}

fn message_from(
    peers: &BTreeMap<String, Peer>,
    from: &PaneRef,
    content: &str,
    broadcast: bool,
) -> Result<Message, PeerError> {
    let sender = peers.get(&from.pane).ok_or(PeerError::NotRegistered)?;
    Ok(Message {
        from: from.pane.clone(),
        from_name: sender.name.clone(),
        content: content.to_owned(),
        broadcast,
        sent_at_ms: now_ms(),
    })
}

/// Unix time in milliseconds.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn push(id: &str, peer: &mut Peer, message: Message) -> Delivery {
    let mut dropped_now = false;
    while peer.inbox.len() >= MAX_QUEUED {
        peer.inbox.pop_front();
        peer.dropped += 1;
        dropped_now = true;
    }
    peer.inbox.push_back(message);
    Delivery {
        to: PaneRef {
            pane: id.to_owned(),
        },
        unread: peer.inbox.len(),
        dropped_now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(id: &str) -> PaneRef {
        PaneRef { pane: id.into() }
    }

    #[test]
    fn peers_carried_out_come_back_with_their_unread_messages() {
        let old = PeerRegistry::new();
        old.register(&pane("%1"), "alice", Some("lead"))
            .expect("register");
        old.register(&pane("%2"), "bob", None).expect("register");
        old.send(&pane("%1"), "%2", "hello bob").expect("send");
        let new = PeerRegistry::new();
        new.carry_in(old.carry_out());
        assert_eq!(new.list(), old.list());
        let inbox = new.receive(&pane("%2")).expect("inbox");
        assert_eq!(inbox.messages.len(), 1);
        assert_eq!(inbox.messages[0].content, "hello bob");
        assert_eq!(inbox.messages[0].from_name, "alice");
    }

    #[test]
    fn one_pane_is_one_peer_and_reregistering_renames() {
        let reg = PeerRegistry::new();
        reg.register(&pane("%1"), "alice", None).unwrap();
        let renamed = reg.register(&pane("%1"), "bob", Some("reviewer")).unwrap();
        assert_eq!(renamed.name, "bob");
        assert_eq!(reg.list().len(), 1);
        assert_eq!(reg.get("%1").unwrap().role.as_deref(), Some("reviewer"));
        assert_eq!(
            reg.register(&pane("%1"), "  ", None),
            Err(PeerError::BadName("name"))
        );
    }

    #[test]
    fn inbox_is_bounded_and_read_deletes() {
        let reg = PeerRegistry::new();
        reg.register(&pane("%1"), "a", None).unwrap();
        reg.register(&pane("%2"), "b", None).unwrap();
        for i in 0..105 {
            reg.send(&pane("%1"), "%2", &format!("m{i}")).unwrap();
        }
        assert_eq!(reg.unread(&pane("%2")), MAX_QUEUED);
        let inbox = reg.receive(&pane("%2")).unwrap();
        assert_eq!(inbox.dropped, 5);
        assert_eq!(inbox.messages.len(), MAX_QUEUED);
        assert_eq!(inbox.messages[0].content, "m5");
        assert_eq!(inbox.messages[0].from_name, "a");
        let again = reg.receive(&pane("%2")).unwrap();
        assert_eq!(again, Inbox::default());
    }

    #[test]
    fn a_message_from_another_machine_names_its_sender_there() {
        let reg = PeerRegistry::new();
        reg.register(&pane("%2"), "b", None).unwrap();
        let sent = reg
            .send_from_afar("laptop/%5", "nearbot", "%2", "run the tests")
            .unwrap();
        assert_eq!(sent.unread, 1);
        let inbox = reg.receive(&pane("%2")).unwrap();
        assert_eq!(inbox.messages[0].from, "laptop/%5");
        assert_eq!(inbox.messages[0].from_name, "nearbot");
        assert_eq!(
            reg.send_from_afar("laptop/%5", "nearbot", "%9", "x"),
            Err(PeerError::UnknownPeer("%9".into()))
        );
        assert_eq!(
            reg.send_from_afar("laptop/%5", "a\u{1b}[2J", "%2", "x"),
            Err(PeerError::BadName("name"))
        );
        assert_eq!(
            reg.send_from_afar("laptop/%5", "nearbot", "%2", ""),
            Err(PeerError::Empty)
        );
    }

    #[test]
    fn limits_and_errors() {
        let reg = PeerRegistry::new();
        let big = "x".repeat(MAX_MESSAGE_BYTES + 1);
        assert_eq!(
            reg.send(&pane("%1"), "%2", "hi"),
            Err(PeerError::NotRegistered)
        );
        reg.register(&pane("%1"), "a", None).unwrap();
        assert_eq!(
            reg.send(&pane("%1"), "%2", "hi"),
            Err(PeerError::UnknownPeer("%2".into()))
        );
        assert_eq!(
            reg.send(&pane("%1"), "%2", &big),
            Err(PeerError::TooLarge(big.len()))
        );
        assert_eq!(reg.send(&pane("%1"), "%1", "hi"), Err(PeerError::ToSelf));
        assert!(reg
            .send(&pane("%1"), "%1", &"x".repeat(MAX_MESSAGE_BYTES))
            .is_err());
        reg.register(&pane("%2"), "b", None).unwrap();
        reg.register(&pane("%3"), "c", None).unwrap();
        let sent = reg.broadcast(&pane("%1"), "all").unwrap();
        assert_eq!(sent.len(), 2);
        assert_eq!(reg.unread(&pane("%1")), 0);
        assert!(reg.receive(&pane("%3")).unwrap().messages[0].broadcast);
    }
}
