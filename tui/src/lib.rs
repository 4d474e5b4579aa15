//! stub

pub mod sidebar;
