//! Descriptors inherited across the exec of an in-place upgrade, taken over by number.

use std::os::fd::{FromRawFd, OwnedFd};

/// Takes ownership of an inherited descriptor after checking it is open and of the expected
/// kind (`mode`: `S_IFCHR` for a PTY master, `S_IFSOCK` for a listener), so a wrong number in
/// the state can never make this process close or use a descriptor it opened itself.
pub fn inherited_fd(fd: i32, mode: nix::sys::stat::SFlag) -> anyhow::Result<OwnedFd> {
    let stat = nix::sys::stat::fstat(fd)
        .map_err(|e| anyhow::anyhow!("descriptor {fd} was not inherited: {e}"))?;
    let kind =
        nix::sys::stat::SFlag::from_bits_truncate(stat.st_mode) & nix::sys::stat::SFlag::S_IFMT;
    if kind != mode {
        anyhow::bail!("descriptor {fd} is not what was handed over");
    }
    // SAFETY: the server this process replaced kept `fd` open across its exec for this
    // process to adopt, and nothing here has taken it: descriptors opened since start got
    // other numbers (this one was taken), and each handed-over number is adopted once.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nix::sys::stat::SFlag;
    use std::os::fd::IntoRawFd;

    #[test]
    fn only_an_open_descriptor_of_the_expected_kind_is_taken() {
        let fd = std::fs::File::open("/dev/null")
            .expect("open")
            .into_raw_fd();
        assert!(
            inherited_fd(fd, SFlag::S_IFSOCK).is_err(),
            "a device is not a socket"
        );
        drop(inherited_fd(fd, SFlag::S_IFCHR).expect("a character device"));
        assert!(
            inherited_fd(-1, SFlag::S_IFCHR).is_err(),
            "not a descriptor"
        );
    }
}
