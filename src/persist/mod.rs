//! Sessions that outlive the server (issue 18 §1-2): what is saved about each session, window
//! and pane (`record`), the state file and how it is written and read without ever being
//! half-written or stopping a start (`file`), the thread that writes it off the owner's hot path
//! (`writer`), what /proc says about a pane's program (`proc_info`), and how a saved session
//! reads in `calyx ls` (`summary`). A pane's lines of text kept at a graceful stop and shown
//! again on restore are in `history`. What a restore starts in each pane is in `relaunch`.

pub mod file;
pub mod history;
pub mod proc_info;
pub mod record;
pub mod relaunch;
pub mod summary;
pub mod writer;

pub use record::{
    SavedAgent, SavedHistory, SavedPane, SavedSession, SavedState, SavedWindow, VERSION,
};
