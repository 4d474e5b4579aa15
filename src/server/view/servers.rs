//! The hosted MCP servers overlay (`prefix M`): its keys, and the work they ask of hosting.
//! Hosting blocks (the servers file's lock, the secret store), so every request runs on a
//! blocking thread, as `calyx mcp ...` requests do, and comes back to the loop as a
//! [`ServersDone`] message; the loop is never held up. The rows live in the client's mode and
//! are fetched again after every change and whenever the supervisor says a server's state
//! changed, so the overlay follows a server from `Connecting` to `N tools` by itself.

use calyx_tui::{ServersOverlay, ServersPage};

use crate::hosted::host::McpAnswer;
use crate::hosted::wire::McpRequest;
use crate::keys::{Key, KeyCode};
use crate::server::messages::{Msg, ServersDone};
use crate::server::model::state::{ClientId, ClientMode};
use crate::server::owner::Server;

/// The banner when hosting is switched off in the config.
const HOSTING_OFF: &str =
    " hosting is off: host_servers = false under [mcp] in config.toml; these servers do not run ";

/// Lines a page key scrolls.
const PAGE: u16 = 10;

impl Server {
    /// `prefix M`: opens the overlay on the list and fetches its rows.
    pub(crate) fn open_servers(&mut self, client: ClientId) {
        let banner = (!self.state.config.mcp_host_servers).then(|| HOSTING_OFF.to_string());
        self.set_mode(
            client,
            ClientMode::Servers(Box::new(ServersOverlay::new(banner))),
        );
        self.fetch_server_rows();
    }

    /// Forwards the supervisor's state changes to the loop for as long as it runs.
    pub(crate) fn watch_server_states(&self) {
        let Some(hosting) = &self.hosting else {
            return;
        };
        let mut changes = hosting.supervisor().subscribe();
        let tx = self.tx.clone();
        tokio::spawn(async move {
            use tokio::sync::broadcast::error::RecvError;
            loop {
                match changes.recv().await {
                    // Missed changes only mean the rows are fetched once for several.
                    Ok(_) | Err(RecvError::Lagged(_)) => {
                        if tx.send(Msg::Servers(ServersDone::StatesChanged)).is_err() {
                            return;
                        }
                    }
                    Err(RecvError::Closed) => return,
                }
            }
        });
    }

    fn overlay_open(&self) -> bool {
        self.state
            .clients
            .values()
            .any(|c| matches!(c.mode, ClientMode::Servers(_)))
    }

    /// Fetches the rows off the loop for every open overlay.
    fn fetch_server_rows(&self) {
        let tx = self.tx.clone();
        match self.hosting.clone() {
            Some(hosting) => {
                tokio::task::spawn_blocking(move || {
                    let rows = hosting.overlay_rows();
                    let _ = tx.send(Msg::Servers(ServersDone::Rows(rows)));
                });
            }
            None => {
                let why = self
                    .hosting_unavailable
                    .clone()
                    .unwrap_or_else(|| "this calyx server does not host MCP servers".into());
                let _ = tx.send(Msg::Servers(ServersDone::Rows(Err(why))));
            }
        }
    }

    /// Runs `work` on hosting off the loop; its message comes back to the loop.
    pub(crate) fn with_hosting(
        &mut self,
        client: ClientId,
        work: impl FnOnce(&crate::hosted::host::Hosting) -> ServersDone + Send + 'static,
    ) {
        let Some(hosting) = self.hosting.clone() else {
            let why = self
                .hosting_unavailable
                .clone()
                .unwrap_or_else(|| "this calyx server does not host MCP servers".into());
            self.message(client, why);
            return;
        };
        let tx = self.tx.clone();
        tokio::task::spawn_blocking(move || {
            let _ = tx.send(Msg::Servers(work(&hosting)));
        });
    }

    /// Sends one `calyx mcp` request for `client`; the rows are fetched again after it.
    fn servers_request(&mut self, client: ClientId, request: McpRequest) {
        self.servers_requests(client, vec![request]);
    }

    /// Sends `requests` in order for `client`, stopping at the first refused; the rows are
    /// fetched again after them.
    pub(crate) fn servers_requests(&mut self, client: ClientId, requests: Vec<McpRequest>) {
        self.with_hosting(client, move |hosting| {
            let mut answer = McpAnswer::default();
            for request in requests {
                answer = hosting.handle(request);
                if answer.exit != 0 {
                    break;
                }
            }
            ServersDone::Answer { client, answer }
        });
    }

    /// The overlay's work came back.
    pub(crate) fn servers_done(&mut self, done: ServersDone) {
        match done {
            ServersDone::StatesChanged => {
                if self.overlay_open() {
                    self.fetch_server_rows();
                }
            }
            ServersDone::Rows(rows) => {
                let (rows, why) = match rows {
                    Ok(rows) => (rows, None),
                    Err(why) => (Vec::new(), Some(why)),
                };
                let mut told = Vec::new();
                for c in self.state.clients.values_mut() {
                    if let ClientMode::Servers(overlay) = &mut c.mode {
                        overlay.selected = overlay.selected.min(rows.len().saturating_sub(1));
                        overlay.rows = rows.clone();
                        super::servers_sign_in::follow_sign_in(overlay);
                        c.dirty = true;
                        told.push(c.id);
                    }
                }
                if let Some(why) = why {
                    for client in told {
                        self.message(client, why.clone());
                    }
                }
            }
            ServersDone::Page { client, page } => self.change_overlay(client, |o| o.page = page),
            ServersDone::Answer { client, answer } => {
                if answer.exit != 0 {
                    self.message(client, answer.text.trim_end().to_string());
                }
                self.fetch_server_rows();
            }
            ServersDone::SignIn {
                client,
                alias,
                name,
                answer,
            } => self.servers_signing_in(client, alias, name, answer),
            ServersDone::Failed { client, why } => self.message(client, why),
        }
    }

    /// Changes `client`'s overlay, if it is still open.
    fn change_overlay(&mut self, client: ClientId, change: impl FnOnce(&mut ServersOverlay)) {
        if let Some(c) = self.state.clients.get_mut(&client) {
            if let ClientMode::Servers(overlay) = &mut c.mode {
                change(overlay);
                c.dirty = true;
            }
        }
    }

    /// A key while the overlay is open.
    pub(crate) fn servers_key(&mut self, client: ClientId, mut overlay: ServersOverlay, key: Key) {
        let page = std::mem::replace(&mut overlay.page, ServersPage::List);
        match page {
            ServersPage::List => self.servers_list_key(client, overlay, key),
            ServersPage::Text {
                title,
                text,
                scroll,
            } => {
                overlay.page = match key.code {
                    KeyCode::Escape | KeyCode::Char('q') => ServersPage::List,
                    code => ServersPage::Text {
                        title,
                        text,
                        scroll: scrolled(scroll, code),
                    },
                };
                self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
            }
            ServersPage::Import { mut text } => {
                match key.code {
                    KeyCode::Escape => {}
                    KeyCode::Enter => {
                        self.preview_import(client, text.clone());
                        overlay.page = ServersPage::Import { text };
                    }
                    KeyCode::Backspace => {
                        text.pop();
                        overlay.page = ServersPage::Import { text };
                    }
                    KeyCode::Char(ch) if !key.ctrl && !key.alt => {
                        text.push(ch);
                        overlay.page = ServersPage::Import { text };
                    }
                    _ => overlay.page = ServersPage::Import { text },
                }
                self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
            }
            ServersPage::Add(form) => self.servers_form_key(client, overlay, *form, key),
            ServersPage::SignIn(page) => self.servers_sign_in_key(client, overlay, *page, key),
            ServersPage::Preview {
                source,
                text,
                scroll,
            } => {
                match key.code {
                    KeyCode::Escape | KeyCode::Char('q') => {}
                    KeyCode::Enter => self.import_pasted(client, source),
                    code => {
                        overlay.page = ServersPage::Preview {
                            source,
                            text,
                            scroll: scrolled(scroll, code),
                        }
                    }
                }
                self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
            }
        }
    }

    fn servers_list_key(&mut self, client: ClientId, mut overlay: ServersOverlay, key: Key) {
        let last = overlay.rows.len().saturating_sub(1);
        let alias = overlay.selected_row().map(|r| r.alias.clone());
        let enabled = overlay.selected_row().is_some_and(|r| r.enabled);
        let name = overlay.selected_row().map(|r| r.name.clone());
        match key.code {
            KeyCode::Escape | KeyCode::Char('q') => {
                self.set_mode(client, ClientMode::Normal);
                return;
            }
            KeyCode::Up | KeyCode::Char('k') => {
                overlay.selected = overlay.selected.saturating_sub(1)
            }
            KeyCode::Down | KeyCode::Char('j') => {
                overlay.selected = overlay.selected.saturating_add(1).min(last)
            }
            KeyCode::Char('a') => overlay.page = ServersPage::Add(Box::default()),
            KeyCode::Char('e') => {
                if let Some(alias) = alias {
                    self.with_hosting(client, move |hosting| match hosting.entry(&alias) {
                        Ok(entry) => {
                            let saved = hosting.client_secret_saved(&alias);
                            let form = super::server_form::form_of(&entry, saved);
                            ServersDone::Page {
                                client,
                                page: ServersPage::Add(Box::new(form)),
                            }
                        }
                        Err(why) => ServersDone::Failed { client, why },
                    });
                }
            }
            KeyCode::Char('i') => {
                overlay.page = ServersPage::Import {
                    text: String::new(),
                }
            }
            KeyCode::Char(' ') => {
                if let Some(alias) = alias {
                    // Shown at once; the rows fetched after the change confirm it.
                    if let Some(row) = overlay.rows.get_mut(overlay.selected) {
                        row.enabled = !enabled;
                    }
                    self.servers_request(
                        client,
                        McpRequest::SetEnabled {
                            alias,
                            enabled: !enabled,
                        },
                    );
                }
            }
            KeyCode::Char('r') => {
                if let Some(alias) = alias {
                    self.servers_request(client, McpRequest::Retry { alias });
                }
            }
            KeyCode::Char('s') if !key.ctrl => {
                if let (Some(alias), Some(name)) = (alias, name) {
                    self.servers_sign_in(client, alias, name);
                }
            }
            KeyCode::Char('c') if !key.ctrl => {
                if let Some(alias) = alias {
                    self.servers_cancel_sign_in(client, alias);
                }
            }
            KeyCode::Char('S') => {
                if let Some(alias) = alias {
                    self.servers_request(client, McpRequest::SignOut { alias });
                }
            }
            KeyCode::Char('D') => {
                if let Some(alias) = alias {
                    self.servers_request(client, McpRequest::Remove { alias });
                }
            }
            KeyCode::Enter => {
                if let Some(alias) = alias {
                    self.show_details(client, alias);
                }
            }
            _ => {}
        }
        self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
    }

    /// `Enter` on a server: what `calyx mcp details` prints, as a page.
    fn show_details(&mut self, client: ClientId, alias: String) {
        self.with_hosting(client, move |hosting| {
            let answer = hosting.handle(McpRequest::Details {
                alias: alias.clone(),
            });
            if answer.exit != 0 {
                return ServersDone::Failed {
                    client,
                    why: answer.text.trim_end().to_string(),
                };
            }
            ServersDone::Page {
                client,
                page: ServersPage::Text {
                    title: format!("{alias} details"),
                    text: answer.text,
                    scroll: 0,
                },
            }
        });
    }

    /// `Enter` in the import field: the preview, or why the text is not an import.
    fn preview_import(&mut self, client: ClientId, source: String) {
        self.with_hosting(client, move |hosting| {
            match hosting.import_preview(&source) {
                Ok((_, text)) => ServersDone::Page {
                    client,
                    page: ServersPage::Preview {
                        source,
                        text,
                        scroll: 0,
                    },
                },
                Err(why) => ServersDone::Failed { client, why },
            }
        });
    }

    /// `Enter` on the preview: imports with the default policy (taken aliases renamed).
    fn import_pasted(&mut self, client: ClientId, source: String) {
        self.with_hosting(
            client,
            move |hosting| match crate::hosted::host::overlay::parse_import(&source) {
                Ok(candidates) => ServersDone::Answer {
                    client,
                    answer: hosting.handle(McpRequest::Import {
                        candidates,
                        policy: "rename".into(),
                    }),
                },
                Err(why) => ServersDone::Failed { client, why },
            },
        );
    }

    /// Pasted text: into the import field verbatim (newlines, quotes and `--` kept), or into
    /// the form's focused field without its trailing newlines (a token pasted as a value).
    pub(crate) fn servers_paste(&mut self, client: ClientId, data: &[u8]) {
        let pasted = String::from_utf8_lossy(data)
            .replace("\r\n", "\n")
            .replace('\r', "\n");
        self.change_overlay(client, |o| match &mut o.page {
            ServersPage::Import { text } => text.push_str(&pasted),
            ServersPage::SignIn(page) => {
                if let Some(field) = &mut page.paste {
                    field.push_str(pasted.trim());
                }
            }
            ServersPage::Add(form) => {
                let field = form.focused();
                if let Some(text) = form.text_mut(field) {
                    text.push_str(pasted.trim_end_matches('\n'));
                }
                super::server_form::follow_name(form, field);
            }
            _ => {}
        });
    }
}

/// A text page's scroll after `code`.
fn scrolled(scroll: u16, code: KeyCode) -> u16 {
    match code {
        KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
        KeyCode::PageUp => scroll.saturating_sub(PAGE),
        KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(PAGE),
        KeyCode::Home | KeyCode::Char('g') => 0,
        _ => scroll,
    }
}
