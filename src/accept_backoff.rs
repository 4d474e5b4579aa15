//! What an accept loop does when `accept` fails, and the descriptor limit that makes it rare.
//!
//! A full descriptor table (`EMFILE`/`ENFILE`) makes every `accept` fail at once while the
//! connection stays queued, so a loop that retries at once spins a core and starves the rest
//! of the server (an attacker needs only idle connections to get there). Each loop sleeps
//! instead, longer while the failures go on, as tokio's own examples do.

use std::time::Duration;

const FIRST: Duration = Duration::from_millis(10);
const MOST: Duration = Duration::from_secs(1);

/// The growing pause between failed accepts of one loop.
#[derive(Debug, Default)]
pub struct AcceptBackoff {
    next: Option<Duration>,
}

impl AcceptBackoff {
    /// After a successful accept: the next failure waits the shortest time again.
    pub fn reset(&mut self) {
        self.next = None;
    }

    /// The pause before the next try, doubling up to a second.
    pub fn step(&mut self) -> Duration {
        let now = self.next.unwrap_or(FIRST);
        self.next = Some((now * 2).min(MOST));
        now
    }

    /// Logs the failure (the first of a run only, so a long one does not fill the log) and
    /// sleeps before the next try.
    pub async fn wait(&mut self, error: &std::io::Error, what: &str) {
        if self.next.is_none() {
            tracing::warn!(%error, "{what}: accept failed; backing off until it works again");
        }
        tokio::time::sleep(self.step()).await;
    }
}

/// Raises this process's soft limit on open files to its hard limit, so a server with many
/// panes and connections reaches the limit the system really allows rather than the usual
/// soft 1024. Returns the new soft limit.
pub fn raise_open_files_limit() -> std::io::Result<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard)?;
    }
    Ok(hard.max(soft))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_up_to_a_second_and_a_success_resets_it() {
        let mut b = AcceptBackoff::default();
        let steps: Vec<_> = (0..10).map(|_| b.step()).collect();
        assert_eq!(steps[0], FIRST);
        assert_eq!(steps[1], FIRST * 2);
        assert!(steps.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(steps[9], MOST);
        b.reset();
        assert_eq!(b.step(), FIRST);
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        use nix::sys::resource::{getrlimit, Resource};
        let raised = raise_open_files_limit().expect("raise");
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
        assert_eq!(soft, hard);
        assert_eq!(raised, soft);
    }
}
