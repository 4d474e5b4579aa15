//! The calyx server: one per user, started on demand, owning every session, window and pane.
//!
//! One owner task holds the model; client connections, pane reader threads and timers send it
//! [`Msg`]s. Rendering is coalesced: a change marks clients dirty and a frame is drawn at most
//! every [`FRAME_INTERVAL`], only for dirty clients, sending only changed cells. With nothing
//! changing, nothing runs.
//!
//! Where things are (docs/design.md has the longer map):
//!
//! - `main_loop`: the server's main: sets everything up, then the owner loop (messages,
//!   terminals, echoes, timers, frames).
//! - `owner`: what the owner holds ([`Server`]); `messages`: what it hears ([`Msg`]).
//! - `model/`: sessions, windows, panes, clients, targets; the plain rules over them.
//! - `input/`: a client's terminal bytes turned into keys, actions, prompt edits, mouse moves.
//! - `operations/`: what keys, the `:` prompt, CLI requests, hook events and MCP calls do to
//!   the model.
//! - `view/`: what each overlay and piece of chrome shows, as data.
//! - `render/`: frames drawn from the view and the panes, and the bytes sent for them.
//! - `io/`: the outside world: the socket, client terminals, the pane processes, shell
//!   integration, the MCP endpoint's door in.
//!
//! Modules never import each other in a circle: scripts/check-module-cycles.py checks it.

#[cfg(test)]
mod anywhere_tests;
#[cfg(test)]
mod app_requests_tests;
#[cfg(test)]
mod back_to_tests;
#[cfg(test)]
mod busy_read_tests;
#[cfg(test)]
mod early_frame_tests;
#[cfg(test)]
mod echo_kept_tests;
#[cfg(test)]
mod flood_count_tests;
mod input;
mod io;
#[cfg(test)]
mod locked_pane_tests;
pub mod main_loop;
mod messages;
mod model;
#[cfg(test)]
mod on_fakes;
mod operations;
mod owner;
#[cfg(test)]
mod reducer_tests;
#[cfg(test)]
mod remote_cancel_tests;
mod render;
#[cfg(test)]
mod render_bench_tests;
#[cfg(test)]
mod restore_on_fakes_tests;
#[cfg(test)]
mod state_on_fakes_tests;
mod view;
#[cfg(test)]
mod watch_tests;

pub use main_loop::{serve, serve_adopted};
pub use messages::Msg;
pub use model::ids::ClientId;
pub use owner::{Server, FRAME_INTERVAL};
