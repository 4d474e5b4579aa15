//! Who listens on the endpoint's port, before the hook sends it the token.
//!
//! The endpoint file outlives a server that died uncleanly, and any local user may then bind
//! its port: a hook that connected blindly would hand that user the bearer token and obey
//! whatever it answered (`{"behavior":"allow"}` included). On Linux the kernel lists every
//! listening socket with its owner's uid in `/proc/net/tcp` and `/proc/net/tcp6`, so the hook
//! checks that the listener a connection to `127.0.0.1:port` would reach is ours.
//!
//! Which listener a connection reaches: one bound to exactly 127.0.0.1 wins over a wildcard
//! (the kernel scores the exact address higher), so that one decides when it exists; else the
//! wildcards (`0.0.0.0`, `::`, `::ffff:127.0.0.1`) do, and every one of them must be ours. (Two
//! sockets can share an address and port only through `SO_REUSEPORT`, which Linux allows only
//! among sockets of one uid.)

/// What the kernel's tables say about the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listener {
    /// The socket a connection would reach belongs to `uid` we asked about.
    Ours,
    /// It belongs to another user: send nothing.
    Foreign { uid: u32 },
    /// Nothing listens there (a connection would be refused).
    None,
    /// The tables cannot be read (not Linux, or /proc hidden): nothing to check against.
    Unknown,
}

use super::sock_diag::Bound;

/// TCP state number of a listening socket in /proc/net/tcp*.
const LISTEN: &str = "0A";
/// 127.0.0.1 as /proc/net/tcp prints it (the address in host byte order, as hex).
fn v4_loopback() -> String {
    format!("{:08X}", u32::from_ne_bytes([127, 0, 0, 1]))
}

/// The listeners on `port` in one table's text that a connection to 127.0.0.1 could reach.
fn listeners(table: &str, port: u16, v6: bool) -> Vec<Bound> {
    let port = format!("{port:04X}");
    let loopback = v4_loopback();
    let mapped_loopback = format!("0000000000000000FFFF0000{loopback}");
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state, uid) = (fields.get(1)?, fields.get(3)?, fields.get(7)?);
            let (address, bound_port) = local.split_once(':')?;
            if *state != LISTEN || bound_port != port {
                return None;
            }
            let wildcard = address.bytes().all(|b| b == b'0');
            let exact = if v6 {
                address == mapped_loopback
            } else {
                address == loopback
            };
            (exact || wildcard).then_some(Bound {
                exact,
                uid: uid.parse().ok()?,
            })
        })
        .collect()
}

/// Decides from the listeners found in both tables.
fn verdict(found: &[Bound], uid: u32) -> Listener {
    let exact: Vec<_> = found.iter().filter(|b| b.exact).collect();
    let deciding: Vec<&Bound> = if exact.is_empty() {
        found.iter().collect()
    } else {
        exact
    };
    match deciding.iter().find(|b| b.uid != uid) {
        Some(other) => Listener::Foreign { uid: other.uid },
        None if deciding.is_empty() => Listener::None,
        None => Listener::Ours,
    }
}

/// Who listens on `127.0.0.1:port`, from the kernel's tables, compared with `uid`. Asks the
/// kernel's socket-diagnostics netlink for listening sockets only (what `ss -l` does): a few
/// entries, answered in microseconds. `/proc/net/tcp` lists every socket, and with a thousand
/// connections in TIME_WAIT (an agent's busy turn) reading it cost the hook several
/// milliseconds; it stays as the fallback where netlink is not there.
pub fn check(port: u16, uid: u32) -> Listener {
    if let Some(found) = super::sock_diag::listeners(port) {
        return verdict(&found, uid);
    }
    check_proc(port, uid)
}

/// [`check`] from `/proc/net/tcp` and `/proc/net/tcp6`.
fn check_proc(port: u16, uid: u32) -> Listener {
    let v4 = std::fs::read_to_string("/proc/net/tcp");
    let v6 = std::fs::read_to_string("/proc/net/tcp6");
    let Ok(v4) = v4 else {
        return Listener::Unknown;
    };
    let mut found = listeners(&v4, port, false);
    // No IPv6 in the kernel: no v6 table, and no v6 wildcard to worry about.
    if let Ok(v6) = v6 {
        found.extend(listeners(&v6, port, true));
    }
    verdict(&found, uid)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";

    fn line(local: &str, state: &str, uid: u32) -> String {
        format!("   0: {local} 00000000:0000 {state} 00000000:00000000 00:00000000 00000000  {uid}        0 1 1 0 100 0 0 10 0\n")
    }

    fn at(port: u16) -> String {
        format!("{}:{port:04X}", v4_loopback())
    }

    #[test]
    fn the_exact_loopback_listener_decides() {
        let table = format!(
            "{HEAD}{}{}",
            line(&at(41830), "0A", 1000),
            line("00000000:A366", "0A", 0)
        );
        let found = listeners(&table, 41830, false);
        assert_eq!(verdict(&found, 1000), Listener::Ours);
        assert_eq!(verdict(&found, 0), Listener::Foreign { uid: 1000 });
    }

    #[test]
    fn a_foreign_wildcard_without_an_exact_listener_is_foreign() {
        let table = format!("{HEAD}{}", line("00000000:A366", "0A", 65534));
        let found = listeners(&table, 41830, false);
        assert_eq!(verdict(&found, 1000), Listener::Foreign { uid: 65534 });
        let v6 = format!(
            "{HEAD}{}",
            line("00000000000000000000000000000000:A366", "0A", 65534)
        );
        assert_eq!(
            verdict(&listeners(&v6, 41830, true), 1000),
            Listener::Foreign { uid: 65534 }
        );
    }

    #[test]
    fn connections_and_other_ports_and_addresses_do_not_count() {
        let table = format!(
            "{HEAD}{}{}{}",
            line(&at(41830), "01", 65534),
            line(&at(41831), "0A", 65534),
            line("0200007F:A366", "0A", 65534)
        );
        assert_eq!(
            verdict(&listeners(&table, 41830, false), 1000),
            Listener::None
        );
    }

    #[test]
    fn a_real_listener_of_ours_is_found() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        assert_eq!(check(port, crate::paths::current_uid()), Listener::Ours);
        assert!(matches!(
            check(port, crate::paths::current_uid().wrapping_add(1)),
            Listener::Foreign { .. }
        ));
        // Both sources agree.
        assert_eq!(
            check_proc(port, crate::paths::current_uid()),
            Listener::Ours
        );
        drop(listener);
        assert_eq!(check(port, crate::paths::current_uid()), Listener::None);
        assert_eq!(
            check_proc(port, crate::paths::current_uid()),
            Listener::None
        );
    }
}
