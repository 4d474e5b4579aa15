//! The kernel's socket diagnostics (netlink `NETLINK_SOCK_DIAG`, `inet_diag`), asked for the
//! TCP sockets listening on one port, with their owners' uids: what `ss -ltn` reads. Written
//! by hand (a request of 72 bytes, answers of fixed layout) rather than pulling in a netlink
//! crate for one query on the hook's path.

use std::os::fd::AsRawFd;

use nix::sys::socket::{
    recv, sendto, socket, AddressFamily, MsgFlags, NetlinkAddr, SockFlag, SockProtocol, SockType,
};

/// One listening socket on the port: whether it is bound to exactly 127.0.0.1, and its uid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Bound {
    pub exact: bool,
    pub uid: u32,
}

const SOCK_DIAG_BY_FAMILY: u16 = 20;
const NLM_F_REQUEST: u16 = 0x01;
const NLM_F_DUMP: u16 = 0x300;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const TCP_LISTEN: u32 = 10;
const AF_INET: u8 = 2;
const AF_INET6: u8 = 10;
const IPPROTO_TCP: u8 = 6;
/// `struct nlmsghdr`.
const HEADER: usize = 16;
/// `struct inet_diag_msg` up to `idiag_uid` included.
const MSG_UID_END: usize = 68;

/// The listening TCP sockets on `port` that a connection to 127.0.0.1 could reach (bound to
/// exactly 127.0.0.1, `::ffff:127.0.0.1`, or a wildcard), both families; None when the kernel
/// cannot be asked (no netlink, a sandbox): the caller falls back to /proc.
pub(super) fn listeners(port: u16) -> Option<Vec<Bound>> {
    let mut found = Vec::new();
    for family in [AF_INET, AF_INET6] {
        found.extend(dump(family, port)?);
    }
    Some(found)
}

/// The request: a dump of `family`'s TCP sockets in state LISTEN.
const REQUEST_LEN: usize = HEADER + 56;

fn request(family: u8) -> [u8; REQUEST_LEN] {
    let mut r = [0u8; REQUEST_LEN];
    r[0..4].copy_from_slice(&(REQUEST_LEN as u32).to_ne_bytes());
    r[4..6].copy_from_slice(&SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    r[6..8].copy_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    r[8..12].copy_from_slice(&1u32.to_ne_bytes());
    // struct inet_diag_req_v2: family, protocol, ext, pad, states; the socket id stays zero.
    r[HEADER] = family;
    r[HEADER + 1] = IPPROTO_TCP;
    r[HEADER + 4..HEADER + 8].copy_from_slice(&(1u32 << TCP_LISTEN).to_ne_bytes());
    r
}

fn dump(family: u8, port: u16) -> Option<Vec<Bound>> {
    let fd = socket(
        AddressFamily::Netlink,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        SockProtocol::NetlinkSockDiag,
    )
    .ok()?;
    let kernel = NetlinkAddr::new(0, 0);
    sendto(fd.as_raw_fd(), &request(family), &kernel, MsgFlags::empty()).ok()?;
    let mut found = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        let n = recv(fd.as_raw_fd(), &mut buf, MsgFlags::empty()).ok()?;
        if n == 0 {
            return None;
        }
        match parse(&buf[..n], family, port, &mut found) {
            Parsed::More => continue,
            Parsed::Done => return Some(found),
            Parsed::Failed => return None,
        }
    }
}

enum Parsed {
    More,
    Done,
    Failed,
}

/// Reads the netlink messages in one datagram, adding the listeners on `port` to `found`.
fn parse(mut data: &[u8], family: u8, port: u16, found: &mut Vec<Bound>) -> Parsed {
    while data.len() >= HEADER {
        let len = u32::from_ne_bytes([data[0], data[1], data[2], data[3]]) as usize;
        let kind = u16::from_ne_bytes([data[4], data[5]]);
        if len < HEADER || len > data.len() {
            return Parsed::Failed;
        }
        match kind {
            NLMSG_DONE => return Parsed::Done,
            NLMSG_ERROR => return Parsed::Failed,
            _ => {
                if let Some(bound) = listener(&data[HEADER..len], family, port) {
                    found.push(bound);
                }
            }
        }
        // Messages are aligned to 4 bytes.
        let step = (len + 3) & !3;
        data = data.get(step..).unwrap_or(&[]);
    }
    Parsed::More
}

/// One `struct inet_diag_msg`, if it is a listener on `port` reachable at 127.0.0.1.
fn listener(msg: &[u8], family: u8, port: u16) -> Option<Bound> {
    if msg.len() < MSG_UID_END {
        return None;
    }
    // id: sport (big-endian) at 4, dport at 6, src address (16 bytes) at 8.
    let sport = u16::from_be_bytes([msg[4], msg[5]]);
    if sport != port {
        return None;
    }
    let src = &msg[8..24];
    let (exact, wildcard) = if family == AF_INET {
        (src[..4] == [127, 0, 0, 1], src[..4] == [0, 0, 0, 0])
    } else {
        let mapped = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1];
        (src == mapped, src.iter().all(|b| *b == 0))
    };
    let uid = u32::from_ne_bytes([msg[64], msg[65], msg[66], msg[67]]);
    (exact || wildcard).then_some(Bound { exact, uid })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_real_listener_with_its_uid() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let Some(found) = listeners(port) else {
            eprintln!("skipped: no sock_diag netlink here");
            return;
        };
        assert_eq!(
            found,
            vec![Bound {
                exact: true,
                uid: crate::paths::current_uid()
            }]
        );
        drop(listener);
        assert_eq!(listeners(port), Some(Vec::new()));
    }

    #[test]
    fn a_wildcard_listener_counts_and_another_address_does_not() {
        let wildcard = std::net::TcpListener::bind("0.0.0.0:0").expect("bind");
        let port = wildcard.local_addr().expect("addr").port();
        let Some(found) = listeners(port) else {
            return;
        };
        assert_eq!(found.len(), 1);
        assert!(!found[0].exact);
        let other = std::net::TcpListener::bind("127.0.0.2:0").expect("bind");
        let port = other.local_addr().expect("addr").port();
        assert_eq!(listeners(port), Some(Vec::new()));
    }

    #[test]
    fn garbage_is_no_answer() {
        let mut found = Vec::new();
        assert!(matches!(
            parse(&[0xff; 20], AF_INET, 1, &mut found),
            Parsed::Failed
        ));
        assert!(matches!(parse(&[], AF_INET, 1, &mut found), Parsed::More));
    }
}
