//! The model: sessions, windows, panes and attached clients, and the plain rules over them
//! (sizes, targets, names, copy mode). No rendering, no sockets, no key handling: what the
//! operations change and the view reads.

pub mod adopt;
pub mod chooser_machines;
pub mod copy_mode;
pub mod dock;
pub mod elicit_panel;
pub mod ids;
pub mod label;
pub mod message_log;
pub mod owner_counts;
pub mod pane_moves;
pub mod pane_text;
pub mod panel;
pub mod panes;
pub mod prompt_history;
pub mod restore;
pub mod sign_in_prompt;
pub mod state;
pub mod target;
pub mod typing;
pub mod window_numbers;
