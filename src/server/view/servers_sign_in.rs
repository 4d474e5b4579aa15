//! Sign-in from the servers overlay: `s` starts it (as `calyx mcp login` does) and shows the
//! sign-in page; `c` cancels it; `S` signs out. How the page opens follows the client's own
//! environment, sent when it attached: a local client's browser is run (with the client's
//! `DISPLAY`, which the server may not have); a client over SSH gets the `ssh -L` line and the
//! redirect listens on 41890 for it; any client that cannot open a browser gets a field for the
//! address the browser fails to load, finished with the same checks as `calyx mcp login
//! --paste`. `Ctrl-Y` (and `y` where there is no field to type into) copies the URL with
//! OSC 52, since over SSH the link may not open where the browser is.

use calyx_tui::{ServersOverlay, ServersPage, SignInPage};

use crate::hosted::host::McpAnswer;
use crate::hosted::oauth::open::{launch_with, opener, Opener};
use crate::hosted::wire::McpRequest;
use crate::keys::{Key, KeyCode};
use crate::server::messages::ServersDone;
use crate::server::model::state::{ClientId, ClientMode};
use crate::server::operations::clipboard::osc52;
use crate::server::owner::Server;

impl Server {
    /// How `client` opens a sign-in page, from the variables it sent when it attached.
    fn client_opener(&self, client: ClientId) -> (Opener, Vec<(String, String)>) {
        let env = self
            .state
            .clients
            .get(&client)
            .map(|c| c.opener_env.clone())
            .unwrap_or_default();
        let lookup = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        (opener(lookup), env)
    }

    /// `s` on a server: starts its sign-in; the page comes back as [`ServersDone::SignIn`].
    pub(crate) fn servers_sign_in(&mut self, client: ClientId, alias: String, name: String) {
        let forwarded = matches!(
            self.client_opener(client).0,
            Opener::Print { forward: Some(_) }
        );
        self.with_hosting(client, move |hosting| ServersDone::SignIn {
            client,
            alias: alias.clone(),
            name,
            answer: hosting.handle(McpRequest::SignIn { alias, forwarded }),
        });
    }

    /// `c` on a server: cancels its sign-in in progress.
    pub(crate) fn servers_cancel_sign_in(&mut self, client: ClientId, alias: String) {
        self.with_hosting(client, move |hosting| {
            match hosting.cancel_sign_in(&alias) {
                Ok(()) => ServersDone::Answer {
                    client,
                    answer: McpAnswer::default(),
                },
                Err(why) => ServersDone::Failed { client, why },
            }
        });
    }

    /// The sign-in `client` started: its page (the browser run for a local client), or why
    /// it could not start.
    pub(crate) fn servers_signing_in(
        &mut self,
        client: ClientId,
        alias: String,
        name: String,
        answer: McpAnswer,
    ) {
        let url = answer
            .json
            .as_ref()
            .and_then(|j| j["auth_url"].as_str())
            .map(str::to_string);
        let Some(url) = url.filter(|_| answer.exit == 0) else {
            let why = match answer.text.trim_end() {
                "" => "the server did not send a sign-in address".to_string(),
                text => text.to_string(),
            };
            self.message(client, why);
            self.servers_done(ServersDone::StatesChanged);
            return;
        };
        let (opened, env) = self.client_opener(client);
        let mut page = SignInPage {
            alias,
            name,
            url: url.clone(),
            ..SignInPage::default()
        };
        match opened {
            Opener::Browser(program) => match launch_with(&program, &url, &env) {
                Ok(()) => page.opened = Some(program),
                Err(e) => {
                    self.message(client, format!("cannot run {program} ({e})"));
                    page.paste = Some(String::new());
                }
            },
            Opener::Print { forward } => {
                page.forward = forward;
                page.paste = Some(String::new());
            }
        }
        if let Some(c) = self.state.clients.get_mut(&client) {
            if let ClientMode::Servers(overlay) = &mut c.mode {
                overlay.page = ServersPage::SignIn(Box::new(page));
                c.dirty = true;
            }
        }
        self.servers_done(ServersDone::StatesChanged);
    }

    /// A key on the sign-in page.
    pub(crate) fn servers_sign_in_key(
        &mut self,
        client: ClientId,
        mut overlay: ServersOverlay,
        mut page: SignInPage,
        key: Key,
    ) {
        let copy = match key.code {
            KeyCode::Char('y') => key.ctrl || page.paste.is_none(),
            _ => false,
        };
        match key.code {
            _ if copy => {
                if let Some(c) = self.state.clients.get(&client) {
                    let _ = c.send_terminal(osc52(page.url.as_bytes()));
                }
                self.message(client, "copied the sign-in address");
            }
            KeyCode::Escape => {
                self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
                return;
            }
            KeyCode::Enter => {
                if let Some(pasted) = page.paste.as_ref().filter(|p| !p.trim().is_empty()) {
                    let request = McpRequest::SignInPaste {
                        alias: page.alias.clone(),
                        redirect: pasted.trim().to_string(),
                    };
                    self.servers_requests(client, vec![request]);
                    self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
                    return;
                }
            }
            KeyCode::Backspace => {
                if let Some(pasted) = &mut page.paste {
                    pasted.pop();
                }
            }
            KeyCode::Char(ch) if !key.ctrl && !key.alt => {
                if let Some(pasted) = &mut page.paste {
                    pasted.push(ch);
                }
            }
            _ => {}
        }
        overlay.page = ServersPage::SignIn(Box::new(page));
        self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
    }
}

/// Follows the sign-in page's server in fresh rows: the page closes by itself once the
/// sign-in ended (the browser came back to the listener, it failed, or its 10 minutes ran out),
/// which the row shows: signed in, or a status other than `Signing in` after it said so.
pub(crate) fn follow_sign_in(overlay: &mut ServersOverlay) {
    let ServersPage::SignIn(page) = &mut overlay.page else {
        return;
    };
    let Some(row) = overlay.rows.iter().find(|r| r.alias == page.alias) else {
        return;
    };
    let signing_in = row.status == "Signing in";
    page.seen_signing_in |= signing_in;
    if !signing_in && (row.signed_in || page.seen_signing_in) {
        overlay.page = ServersPage::List;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use calyx_tui::ServerRow;

    fn overlay(status: &str, signed_in: bool) -> ServersOverlay {
        let mut overlay = ServersOverlay::new(None);
        overlay.rows = vec![ServerRow {
            alias: "lin".into(),
            name: "Linear".into(),
            enabled: true,
            status: status.into(),
            stderr: Vec::new(),
            transport: "http".into(),
            target: "https://mcp.example/mcp".into(),
            signed_in,
        }];
        overlay.page = ServersPage::SignIn(Box::new(SignInPage {
            alias: "lin".into(),
            ..SignInPage::default()
        }));
        overlay
    }

    #[test]
    fn the_page_closes_when_the_sign_in_ends_and_not_before() {
        // Rows fetched before the sign-in started: the page stays.
        let mut o = overlay("Sign-in required", false);
        follow_sign_in(&mut o);
        assert!(matches!(o.page, ServersPage::SignIn(_)));
        // Signing in, then back to `Sign-in required` (failed or timed out): it closes.
        o.rows[0].status = "Signing in".into();
        follow_sign_in(&mut o);
        assert!(matches!(o.page, ServersPage::SignIn(_)));
        o.rows[0].status = "Sign-in required".into();
        follow_sign_in(&mut o);
        assert_eq!(o.page, ServersPage::List);
        // Signed in (even if `Signing in` was never fetched): it closes.
        let mut o = overlay("Connecting", true);
        follow_sign_in(&mut o);
        assert_eq!(o.page, ServersPage::List);
    }
}
