//! The view: what each piece of a client's screen shows, gathered as data from the model (the
//! chrome around the panes, the agents sidebar, the approval panel, the session chooser).
//! Drawing that data into frames is `render`'s job. The approval panel and the chooser also
//! keep the keys that move within them (answer, scroll, choose), next to what they show: a key
//! there changes what the overlay shows before it changes anything else.

pub mod approval_panel;
pub mod approval_panel_remote;
pub mod chrome;
pub mod elicit_draw;
pub mod elicit_panel;
pub mod separators;
pub mod server_form;
pub mod servers;
pub mod servers_sign_in;
pub mod sidebar;
pub mod sign_in_prompt;
pub mod tree;
pub mod tree_machines;
pub mod view_card;
pub mod view_list;
