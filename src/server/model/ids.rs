//! The ids the model hands out, in a module of their own: messages, terminals and the model all
//! name clients and sessions, and none of them need the rest of the model for it.

/// A client connection's id.
pub type ClientId = u64;
/// A session's id.
pub type SessionId = u32;
