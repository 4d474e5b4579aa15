//! An attached `--remote` client whose connection dropped (network, sleep, a killed ssh)
//! connects again with backoff, saying so on the bottom line of the screen, as a local client
//! survives a server upgrade. The remote panes never noticed: only this client's connection
//! went away, as when a local terminal is closed.

use std::io::Write;
use std::time::Duration;

use tokio::net::UnixStream;
use tokio::signal::unix::Signal;

use super::link::{connect, Options};
use super::Target;

/// How long a client tries before it gives up and exits (the remote panes keep running).
pub const GIVE_UP: Duration = Duration::from_secs(120);

const FIRST_DELAY: Duration = Duration::from_millis(200);
const MAX_DELAY: Duration = Duration::from_secs(10);

/// Connects again; Err is the message to print on leaving (given up, or a signal).
pub async fn again(
    target: &Target,
    hup: &mut Signal,
    term: &mut Signal,
) -> Result<UnixStream, String> {
    let started = tokio::time::Instant::now();
    let mut delay = FIRST_DELAY;
    let mut attempt = 1u32;
    loop {
        show_status(&format!(
            "reconnecting to {}… (attempt {attempt})",
            target.display()
        ));
        // Never prompt: a password prompt would land on the raw-mode screen.
        let options = Options {
            start: true,
            batch: true,
        };
        let tried = tokio::select! {
            tried = connect(target, options) => tried,
            _ = hup.recv() => return Err("detached (hangup)".to_string()),
            _ = term.recv() => return Err("detached (terminated)".to_string()),
        };
        match tried {
            Ok(link) => return Ok(link.stream),
            Err(e) if started.elapsed() >= GIVE_UP => {
                return Err(format!(
                    "lost the connection to {} (its panes keep running): {e:#}",
                    target.display()
                ))
            }
            Err(_) => {}
        }
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            _ = hup.recv() => return Err("detached (hangup)".to_string()),
            _ = term.recv() => return Err("detached (terminated)".to_string()),
        }
        delay = (delay * 2).min(MAX_DELAY);
        attempt += 1;
    }
}

/// Writes `text` in reverse video on the terminal's last line, over the stale status line
/// (the next frame from the server redraws it). The host name comes from the command line and
/// holds no control characters (`Target::parse`).
fn show_status(text: &str) {
    let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    let text: String = text
        .chars()
        .filter(|c| !c.is_control())
        .take(usize::from(cols))
        .collect();
    let mut out = std::io::stdout();
    let _ = write!(out, "\x1b7\x1b[{rows};1H\x1b[0;7m{text}\x1b[K\x1b[0m\x1b8");
    let _ = out.flush();
}
