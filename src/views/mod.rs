//! MCP App views (issue 17): the pure foundations, not wired into the server yet.
//!
//! What exists: the sandbox page's Content-Security-Policy from a resource's `_meta.ui.csp`
//! ([`csp`]), validation of a view's `resources/read` result and a tool's `ui://` resource URI
//! ([`resource`]), the view records with their limits and lifetimes ([`registry`]) and their
//! URL tokens ([`token`]). Nothing calls them yet: the view server, the host page, the TUI card
//! and the `/mcp-hosted` hook-up are left for a later change, which is why these modules take
//! and return plain values.

pub mod csp;
pub mod hub;
pub mod protocol;
pub mod registry;
pub mod resource;
pub mod token;
