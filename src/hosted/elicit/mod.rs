//! Hosted servers' elicitations (issue 17, "Elicitation"): the per-server queue the
//! connections' `elicitation/create` requests wait in ([`queue`]) and the form model of a
//! form-mode request ([`form`]). The panel that shows them is `server::view::elicit_panel`.

pub mod form;
mod formats;
pub mod queue;
pub mod required;

pub use queue::{Answer, Elicitations, Pending, Request, ANSWER_WAIT};
