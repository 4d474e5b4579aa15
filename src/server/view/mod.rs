//! The view: what each piece of a client's screen shows, gathered as data from the model (the
//! chrome around the panes, the agents sidebar, the approval panel, the session chooser).
//! Drawing that data into frames is `render`'s job.

pub mod approval_panel;
pub mod chrome;
pub mod sidebar;
pub mod tree;
