//! Requests that read a pane's terminal (`calyx capture`, MCP `pane_read`) without holding up
//! the owner loop.
//!
//! A flooding pane's reader thread holds its terminal's lock while it parses each read, and on
//! a busy machine it can lose its core for tens of milliseconds while holding it. An owner that
//! waited for that lock to answer a `capture` left every keystroke, frame and echo of every
//! other pane waiting too (issue 19: the quiet pane's echo p99 was 78 ms while four panes
//! flooded and a script polled their captures). So such reads try the lock first and, when the
//! reader has it, wait on a thread of their own and send the answer from there; the loop goes
//! on at once. Frames already skip a busy pane the same way (`lock_for_frame`).

use std::sync::{Arc, Mutex};

use calyx_pty::Terminal;

use crate::protocol::{encode_message, Request, Response, ServerMessage};
use crate::server::io::terminal::Outgoing;
use crate::server::model::ids::ClientId;
use crate::server::model::state::{lock_terminal, try_lock_terminal};
use crate::server::owner::Server;

/// Runs `read` on the terminal and hands its result to `answer`: right here if the lock is
/// free, else on a new thread that waits for the lock (the loop goes on at once). Either way
/// the lock is held only for `read`, not for `answer`.
pub(crate) fn read_then_answer<R, F, A>(terminal: &Arc<Mutex<Terminal>>, read: F, answer: A)
where
    R: Send + 'static,
    F: FnOnce(&Terminal) -> R + Send + 'static,
    A: FnOnce(R) + Send + 'static,
{
    if let Some(term) = try_lock_terminal(terminal) {
        let result = read(&term);
        drop(term);
        return answer(result);
    }
    let terminal = Arc::clone(terminal);
    let spawned = std::thread::Builder::new()
        .name("calyx-busy-read".into())
        .spawn(move || {
            let asked = std::time::Instant::now();
            let term = lock_terminal(&terminal);
            // How long the owner loop would have stood still (CALYX_LOG=debug): the evidence
            // for this module, kept for the next time the echo's tail under a flood is looked at.
            tracing::debug!(
                waited_us = asked.elapsed().as_micros() as u64,
                "read of a busy pane waited for its reader"
            );
            let result = read(&term);
            drop(term);
            answer(result);
        });
    if let Err(e) = spawned {
        // Out of threads: the request goes unanswered (its asker sees the connection or the
        // reply channel close) rather than stalling the loop.
        tracing::warn!("cannot start a thread to read a busy pane: {e}");
    }
}

impl Server {
    /// A client's `calyx capture`: answered at once when the pane's reader is not parsing,
    /// else from a thread once it is done (the owner loop goes on meanwhile).
    pub(crate) fn capture_for_client(&mut self, id: ClientId, request: Request) {
        let Request::Capture {
            target,
            scrollback,
            ansi,
        } = request
        else {
            let response = self.request(request);
            return self.reply(id, response);
        };
        let t = match self.state.resolve(target.as_deref()) {
            Ok(t) => t,
            Err(e) => return self.reply(id, Response::Error(e)),
        };
        let Some(p) = self.state.panes.get(&t.pane) else {
            return self.reply(id, Response::Error("pane is gone".into()));
        };
        let (rows, cols) = (p.rows, p.cols);
        let connection = self.connections.get(&id).cloned();
        read_then_answer(
            &p.terminal,
            move |term| super::requests::capture(term, rows, cols, scrollback, ansi),
            move |text| {
                let message = ServerMessage::Response(Response::Text(text));
                if let Some(tx) = connection {
                    let _ = tx.try_send(Outgoing::Message(encode_message(&message)));
                }
            },
        );
    }
}
