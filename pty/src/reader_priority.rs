//! The priority of a pane's reader thread: normal while the pane is focused, lower while it is
//! in the background. Parsing a flooding pane that nobody types into must not starve the
//! threads that carry keystrokes and frames; with spare CPU this changes nothing, and the
//! focused pane's reader keeps its priority, so its throughput is untouched.
//!
//! Both levels are relative to the priority the thread started with (the server may itself run
//! under `nice`), and the reader drops only when it can come back: raising a thread's priority
//! again needs `CAP_SYS_NICE` or a `RLIMIT_NICE` that allows it, which an ordinary user rarely
//! has. Without that, a pane that was once in the background would keep the low priority after
//! it is focused, so readers then keep one priority, as a thread of tmux does.

use std::sync::OnceLock;

/// How much lower a background pane's reader runs (nice steps).
const BACKGROUND_STEP: i32 = 10;

/// The weakest nice value Linux has.
const LOWEST_PRIORITY: i32 = 19;

/// The two priorities of one reader thread, or none when it must keep its own.
pub(crate) struct ReaderPriorities {
    levels: Option<(i32, i32)>,
}

impl ReaderPriorities {
    /// For the calling thread: its current nice value is the normal one.
    pub(crate) fn for_this_thread() -> Self {
        let levels = if renice_is_reversible() {
            own_nice().map(|normal| (normal, (normal + BACKGROUND_STEP).min(LOWEST_PRIORITY)))
        } else {
            None
        };
        Self { levels }
    }

    /// Moves the calling thread to its background (`true`) or normal priority.
    pub(crate) fn apply(&self, background: bool) {
        if let Some((normal, low)) = self.levels {
            set_own_nice(if background { low } else { normal });
        }
    }
}

/// Whether a thread of this process can lower its priority and raise it back, found once by a
/// probe thread that tries exactly that (capabilities and limits differ between machines,
/// containers and users; trying is the one answer that is always right).
fn renice_is_reversible() -> bool {
    static REVERSIBLE: OnceLock<bool> = OnceLock::new();
    *REVERSIBLE.get_or_init(|| {
        std::thread::Builder::new()
            .name("calyx-nice-probe".into())
            .spawn(|| {
                let Some(normal) = own_nice() else {
                    return false;
                };
                if normal >= LOWEST_PRIORITY {
                    return false;
                }
                set_own_nice(normal + 1) && set_own_nice(normal) && own_nice() == Some(normal)
            })
            .ok()
            .and_then(|probe| probe.join().ok())
            .unwrap_or(false)
    })
}

/// The calling thread's nice value.
fn own_nice() -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        let tid = libc::id_t::try_from(nix::unistd::gettid().as_raw()).ok()?;
        nix::errno::Errno::clear();
        // SAFETY: getpriority(2) takes only integers and touches no memory of ours. -1 is also
        // a valid nice value, hence errno, cleared first, tells a failure apart.
        let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, tid) };
        (nice != -1 || nix::errno::Errno::last_raw() == 0).then_some(nice)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Sets the calling thread's nice value; false when refused.
fn set_own_nice(nice: i32) -> bool {
    #[cfg(target_os = "linux")]
    {
        let Ok(tid) = libc::id_t::try_from(nix::unistd::gettid().as_raw()) else {
            return false;
        };
        // SAFETY: setpriority(2) takes only integers and touches no memory of ours; on Linux
        // PRIO_PROCESS with a thread id renices just that thread, the calling one. nix 0.28
        // has no wrapper for it.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = nice;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_goes_down_and_back_to_the_priority_it_started_with() {
        let seen = std::thread::spawn(|| {
            let start = own_nice();
            let priorities = ReaderPriorities::for_this_thread();
            priorities.apply(true);
            let low = own_nice();
            priorities.apply(false);
            (start, low, own_nice(), priorities.levels.is_some())
        })
        .join()
        .expect("thread");
        let (start, low, back, reversible) = seen;
        assert_eq!(back, start, "the reader ends where it started");
        if reversible {
            let start = start.expect("a nice value");
            assert_eq!(low, Some((start + BACKGROUND_STEP).min(LOWEST_PRIORITY)));
        } else {
            assert_eq!(low, start, "no renice that could not be undone");
        }
    }
}
