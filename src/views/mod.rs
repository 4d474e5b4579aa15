//! MCP App views (issue 17).
//!
//! What exists: the sandbox page's Content-Security-Policy from a resource's `_meta.ui.csp`
//! ([`csp`]), validation of a view's `resources/read` result and a tool's `ui://` resource URI
//! ([`resource`]), the view records with their limits and lifetimes ([`registry`]), their
//! URL tokens ([`token`]), the shared records ([`hub`]), the host side of the protocol for one
//! page as a pure state machine ([`protocol`]) and the view server that serves the host page,
//! the sandbox page and each page's event stream and drives the protocol ([`server`]; its
//! pages' HTML and script are built in from `assets/`), and what a view asks the user through
//! the approval panel ([`app_requests`]).

pub mod app_requests;
pub mod csp;
pub mod hub;
pub mod protocol;
pub mod registry;
pub mod resource;
pub mod server;
pub mod token;
