//! The hand-over itself: this process becomes the new server with `execve`, keeping the
//! descriptors the new server adopts. Same pid, so the panes' programs stay its children
//! (nothing is reparented or signalled), and the listening sockets never close (no connect
//! fails while the new binary starts; the kernel queues them).

use std::fs::File;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::Path;

use nix::fcntl::{fcntl, FcntlArg, FdFlag};

/// Replaces this process with `binary server --adopt N`, where N is `state`'s descriptor,
/// keeping `keep` and `state` open in it. Returns only when the exec failed: then every
/// descriptor is close-on-exec again (programs started later must not inherit them) and this
/// server goes on serving.
pub fn exec_in_place(binary: &Path, state: &File, keep: &[RawFd]) -> std::io::Error {
    let state_fd = state.as_raw_fd();
    let all: Vec<RawFd> = keep.iter().copied().chain([state_fd]).collect();
    for fd in &all {
        if let Err(e) = fcntl(*fd, FcntlArg::F_SETFD(FdFlag::empty())) {
            close_on_exec(&all);
            return e.into();
        }
    }
    let error = std::process::Command::new(binary)
        .arg("server")
        .arg("--adopt")
        .arg(state_fd.to_string())
        .exec();
    close_on_exec(&all);
    ignore_sigpipe_again();
    error
}

/// `Command::exec` sets SIGPIPE back to its default (killing) action in this very process
/// before it calls `execve`, so the new program starts as programs expect; when the exec
/// fails that stays behind, and the next write to a closed socket or pipe would kill the
/// server instead of failing that write. Rust programs ignore SIGPIPE: this puts that back.
fn ignore_sigpipe_again() {
    use nix::sys::signal::{signal, SigHandler, Signal};
    // SAFETY: SIG_IGN installs no handler code, so nothing runs in signal context; this is
    // the disposition the Rust runtime set at start.
    if let Err(e) = unsafe { signal(Signal::SIGPIPE, SigHandler::SigIgn) } {
        tracing::warn!("could not ignore SIGPIPE again after a failed exec: {e}");
    }
}

/// Sets close-on-exec again on descriptors an exec that failed would have kept.
fn close_on_exec(fds: &[RawFd]) {
    for fd in fds {
        let _ = fcntl(*fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_exec_returns_and_leaves_the_descriptors_close_on_exec() {
        let kept = File::open("/dev/null").expect("open");
        let state = File::open("/dev/null").expect("open");
        let error = exec_in_place(Path::new("/nonexistent/calyx"), &state, &[kept.as_raw_fd()]);
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        for fd in [kept.as_raw_fd(), state.as_raw_fd()] {
            let flags = fcntl(fd, FcntlArg::F_GETFD).expect("getfd");
            assert!(FdFlag::from_bits_retain(flags).contains(FdFlag::FD_CLOEXEC));
        }
        // SIGPIPE is ignored again (a write to a closed pipe fails instead of killing the
        // server): bit 13 of SigIgn.
        let status = std::fs::read_to_string("/proc/self/status").expect("status");
        let ignored = status
            .lines()
            .find_map(|l| l.strip_prefix("SigIgn:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .expect("SigIgn line");
        assert_ne!(ignored & (1 << (13 - 1)), 0, "SIGPIPE ignored: {ignored:x}");
    }
}
