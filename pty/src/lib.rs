//! calyx-pty: panes as programs in PTYs, parsed by vt100 into a screen, with a byte-log history
//! and the answers to terminal queries that agent TUIs wait for.

mod answerback;
pub mod charset;
pub mod commands;
pub mod glance;
pub mod history;
mod history_sizes;
pub mod limits;
pub mod master;
pub mod osc_cap;
pub mod plain;
mod pty_fd;
pub mod read_gate;
mod reader_priority;
pub mod redact;
pub mod shell_marks;
pub mod spawn;
pub mod terminal;

pub use answerback::Answerback;
pub use commands::{CommandLog, CommandRecord, CommandState};
pub use spawn::{adopt, spawn, OwnerRead, PaneEvents, PaneProcess, SpawnError, SpawnOptions};
pub use terminal::{
    all_lines, for_each_page, release_freed_memory, Drained, HistoryLimits, HistoryPieces, Replay,
    Terminal,
};
