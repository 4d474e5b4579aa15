//! Input: a client's terminal bytes turned into what they ask for. Keys go through the prefix
//! state machine (`key_route`), the `:` prompt's line editor and grammar (`prompt`), or to the
//! focused pane; mouse reports focus, resize, scroll and select (`mouse`). What an action then
//! does to the model is in `operations`.

pub mod bind_key;
pub mod key_route;
pub mod mouse;
pub mod prompt;
pub mod prompt_complete;
pub mod prompt_tab;
pub mod route;
