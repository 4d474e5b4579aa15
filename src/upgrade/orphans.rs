//! Children of the replaced server that the new one does not adopt: a pane closed just before
//! the upgrade (its program had SIGHUP and may still be exiting), the stdio processes of the
//! user's hosted MCP servers (their pipes closed with the exec, so they exit; the new server
//! starts its own). They are still this process's children (the pid stayed), and nothing else
//! would wait for them: each gets a thread that reaps it, so none stays a zombie.

use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;

/// This process's children (every thread's, from /proc).
fn children() -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect();
    pids.sort_unstable();
    pids.dedup();
    pids
}

/// Reaps, each on a thread of its own, the children that are not in `adopted`; how many.
pub fn reap_all_but(adopted: &[u32]) -> usize {
    let orphans: Vec<u32> = children()
        .into_iter()
        .filter(|pid| !adopted.contains(pid))
        .collect();
    let count = orphans.len();
    reap(orphans);
    count
}

/// How long an orphan has to exit by itself before it is killed: the grace a closed pane's
/// program had in the old server (whose killer thread the exec ended).
const GRACE: Duration = Duration::from_millis(1000);

/// Waits for each of `pids` (children of this process) on a thread of its own, killing it
/// after [`GRACE`] (not reaped yet, its pid cannot have been reused).
fn reap(pids: Vec<u32>) {
    for pid in pids {
        let Ok(raw) = i32::try_from(pid) else {
            continue;
        };
        let _ = std::thread::Builder::new()
            .name("calyx-orphan-reaper".into())
            .spawn(move || {
                let pid = Pid::from_raw(raw);
                let deadline = std::time::Instant::now() + GRACE;
                while std::time::Instant::now() < deadline {
                    match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                        Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(20)),
                        _ => return,
                    }
                }
                let _ = kill(pid, Signal::SIGKILL);
                let _ = waitpid(pid, None);
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_nobody_waits_for_is_reaped() {
        // Only this test's own child is handed to `reap`: other tests' children are theirs.
        let child = std::process::Command::new("true").spawn().expect("spawn");
        let pid = child.id();
        wait_for(|| children().contains(&pid));
        std::mem::forget(child);
        reap(vec![pid]);
        // Reaped, the process is gone from /proc (a zombie would stay).
        wait_for(|| !std::path::Path::new(&format!("/proc/{pid}")).exists());
    }

    #[test]
    fn an_orphan_that_does_not_exit_is_killed_after_the_grace() {
        let child = std::process::Command::new("sleep")
            .arg("60")
            .spawn()
            .expect("spawn");
        let pid = child.id();
        std::mem::forget(child);
        reap(vec![pid]);
        wait_for(|| !std::path::Path::new(&format!("/proc/{pid}")).exists());
    }

    fn wait_for(check: impl Fn() -> bool) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !check() {
            assert!(std::time::Instant::now() < deadline, "timed out");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}
