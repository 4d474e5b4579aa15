//! Secrets out of what calyx records. The patterns live in the pty crate, which redacts the
//! command history as it records it; the approvals and `pane_read` use the same ones.

pub use calyx_pty::redact::redact;
