//! The servers overlay's Add and Edit form (`a` and `e` in `prefix M`): the transport, alias,
//! name; a stdio server's command and working directory, or an HTTP server's URL and legacy
//! HTTP+SSE switch; its environment variables or headers, each with a secret value (one more
//! row than there are, to add one); an HTTP server's OAuth client (ID, authentication, secret,
//! fixed redirect port); and the enable switch. The fields shown follow the transport. A secret value is drawn as `••••••`,
//! never as typed; on Edit a saved value shows so too and stays unless retyped. The
//! server checks the form on `Ctrl-S` and, when something is wrong, focuses that field and sets
//! the message drawn under it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Widget};

use crate::escape::visible;

/// One field of the form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormField {
    /// `stdio` or `http` (Left/Right).
    Transport,
    Alias,
    Name,
    /// The program and its arguments, split like a shell (stdio).
    Command,
    /// The working directory, empty for calyx's own (stdio).
    Cwd,
    /// The server's URL (http).
    Url,
    /// The legacy HTTP+SSE transport (Space; http).
    LegacySse,
    /// The name of the `n`th environment variable (stdio) or header (http); the row after the
    /// last takes a new one.
    SecretName(usize),
    /// Its value: a secret, drawn masked.
    SecretValue(usize),
    /// The OAuth client ID of an app registered with the authorization server (http).
    ClientId,
    /// `none`, `post` or `basic` (Left/Right; http).
    ClientAuth,
    /// The OAuth client secret: a secret, drawn masked (http).
    ClientSecret,
    /// The redirect listens on 41890 rather than a random port (Space; http).
    FixedPort,
    /// Whether the server runs (Space).
    Enabled,
}

/// The client authentications, in the order Left/Right walks them (the index is
/// [`ServerForm::client_auth`]).
pub const CLIENT_AUTHS: [&str; 3] = ["none", "post", "basic"];

/// One environment variable or header: its name and the value typed (empty on Edit: the
/// saved value stays).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretEntry {
    pub name: String,
    pub value: String,
}

/// What was typed into the Add or Edit form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerForm {
    pub http: bool,
    pub alias: String,
    pub name: String,
    pub command: String,
    pub cwd: String,
    pub url: String,
    pub legacy_sse: bool,
    /// The variables (stdio) or headers (http).
    pub secrets: Vec<SecretEntry>,
    pub client_id: String,
    /// An index into [`CLIENT_AUTHS`].
    pub client_auth: usize,
    pub client_secret: String,
    pub fixed_port: bool,
    /// Off: added switched off.
    pub disabled: bool,
    /// The user typed into the alias: it no longer follows the name.
    pub alias_typed: bool,
    /// The server as it was, when the form edits one (its alias then cannot change).
    pub editing: Option<FormOrigin>,
    /// The focused field, an index into [`ServerForm::fields`].
    pub focus: usize,
    /// Why the last `Ctrl-S` was refused (shown under the focused field).
    pub error: Option<String>,
}

/// What an edited server had when its form opened: what the form leaves alone unless changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FormOrigin {
    pub http: bool,
    pub name: String,
    pub command: String,
    pub cwd: String,
    pub url: String,
    pub legacy_sse: bool,
    /// Its variables or headers (their values are saved, not shown).
    pub secret_names: Vec<String>,
    pub client_id: String,
    pub client_auth: usize,
    /// A client secret is stored for it.
    pub client_secret_saved: bool,
    pub fixed_port: bool,
    pub enabled: bool,
}

/// The fields a masked secret shows as.
pub const MASK: &str = "••••••";

impl ServerForm {
    /// The fields shown, in order, for the form's transport: one variable or header row more
    /// than there are, to type a new one into.
    pub fn fields(&self) -> Vec<FormField> {
        let mut fields = vec![FormField::Transport, FormField::Alias, FormField::Name];
        if self.http {
            fields.extend([FormField::Url, FormField::LegacySse]);
        } else {
            fields.extend([FormField::Command, FormField::Cwd]);
        }
        for i in 0..=self.secrets.len() {
            fields.extend([FormField::SecretName(i), FormField::SecretValue(i)]);
        }
        if self.http {
            fields.extend([
                FormField::ClientId,
                FormField::ClientAuth,
                FormField::ClientSecret,
                FormField::FixedPort,
            ]);
        }
        fields.push(FormField::Enabled);
        fields
    }

    /// The focused field.
    pub fn focused(&self) -> FormField {
        let fields = self.fields();
        fields
            .get(self.focus)
            .copied()
            .unwrap_or(FormField::Transport)
    }

    /// Focuses `field`.
    pub fn focus_on(&mut self, field: FormField) {
        self.focus = self.fields().iter().position(|f| *f == field).unwrap_or(0);
    }

    /// The text of a typed field (None for choices and switches). The row after the last
    /// variable or header becomes a new one.
    pub fn text_mut(&mut self, field: FormField) -> Option<&mut String> {
        if let FormField::SecretName(i) | FormField::SecretValue(i) = field {
            if i == self.secrets.len() {
                self.secrets.push(SecretEntry::default());
            }
        }
        match field {
            FormField::Alias if self.editing.is_some() => None,
            FormField::Alias => Some(&mut self.alias),
            FormField::Name => Some(&mut self.name),
            FormField::Command => Some(&mut self.command),
            FormField::Cwd => Some(&mut self.cwd),
            FormField::Url => Some(&mut self.url),
            FormField::SecretName(i) => self.secrets.get_mut(i).map(|s| &mut s.name),
            FormField::SecretValue(i) => self.secrets.get_mut(i).map(|s| &mut s.value),
            FormField::ClientId => Some(&mut self.client_id),
            FormField::ClientSecret => Some(&mut self.client_secret),
            FormField::Transport
            | FormField::LegacySse
            | FormField::ClientAuth
            | FormField::FixedPort
            | FormField::Enabled => None,
        }
    }

    /// Drops blank rows at the end of the variables or headers (the row after them stays).
    pub fn tidy(&mut self) {
        while self
            .secrets
            .last()
            .is_some_and(|s| s.name.is_empty() && s.value.is_empty())
        {
            self.secrets.pop();
        }
    }

    /// `Left`/`Right` on a choice (`forward`: Right).
    pub fn choose(&mut self, forward: bool) {
        match self.focused() {
            FormField::Transport => self.http = !self.http,
            FormField::ClientAuth => {
                let n = CLIENT_AUTHS.len();
                self.client_auth = (self.client_auth + if forward { 1 } else { n - 1 }) % n;
            }
            _ => {}
        }
    }

    /// `Space` on a switch; false when the focused field is not one.
    pub fn switch(&mut self) -> bool {
        match self.focused() {
            FormField::Enabled => self.disabled = !self.disabled,
            FormField::LegacySse => self.legacy_sse = !self.legacy_sse,
            FormField::FixedPort => self.fixed_port = !self.fixed_port,
            _ => return false,
        }
        true
    }

    /// On Edit, whether the value of variable or header `i` is in the secret store (its name
    /// was saved, on the same transport).
    pub fn value_saved(&self, i: usize) -> bool {
        let Some(entry) = self.secrets.get(i) else {
            return false;
        };
        self.editing.as_ref().is_some_and(|o| {
            o.http == self.http && !entry.name.is_empty() && o.secret_names.contains(&entry.name)
        })
    }

    /// On Edit, whether a client secret is stored.
    pub fn client_secret_saved(&self) -> bool {
        self.editing
            .as_ref()
            .is_some_and(|o| o.http && self.http && o.client_secret_saved)
    }

    fn label(&self, field: FormField) -> &'static str {
        match field {
            FormField::Transport => "Transport",
            FormField::Alias => "Alias",
            FormField::Name => "Name",
            FormField::Command => "Command",
            FormField::Cwd => "Directory",
            FormField::Url => "URL",
            FormField::LegacySse => "Legacy SSE",
            FormField::SecretName(_) if self.http => "Header",
            FormField::SecretName(_) => "Variable",
            FormField::SecretValue(_) => "Value",
            FormField::ClientId => "Client ID",
            FormField::ClientAuth => "Client auth",
            FormField::ClientSecret => "Client secret",
            FormField::FixedPort => "Fixed port",
            FormField::Enabled => "Enabled",
        }
    }

    fn shown(&self, field: FormField) -> String {
        let switch = |on: bool| if on { "[x]" } else { "[ ]" }.to_string();
        match field {
            FormField::Transport => if self.http {
                "  stdio  [http]"
            } else {
                "[stdio]  http "
            }
            .to_string(),
            FormField::ClientAuth => CLIENT_AUTHS
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    if i == self.client_auth {
                        format!("[{a}]")
                    } else {
                        format!(" {a} ")
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
            FormField::Enabled => switch(!self.disabled),
            FormField::LegacySse => switch(self.legacy_sse),
            FormField::FixedPort => format!("{} 41890", switch(self.fixed_port)),
            FormField::SecretValue(i) => {
                let typed = self.secrets.get(i).is_some_and(|s| !s.value.is_empty());
                if typed || self.value_saved(i) {
                    MASK.to_string()
                } else {
                    String::new()
                }
            }
            FormField::ClientSecret => {
                if !self.client_secret.is_empty() || self.client_secret_saved() {
                    MASK.to_string()
                } else {
                    String::new()
                }
            }
            FormField::Alias => visible(&self.alias),
            FormField::Name => visible(&self.name),
            FormField::Command => visible(&self.command),
            FormField::Cwd => visible(&self.cwd),
            FormField::Url => visible(&self.url),
            FormField::SecretName(i) => self
                .secrets
                .get(i)
                .map(|s| visible(&s.name))
                .unwrap_or_default(),
            FormField::ClientId => visible(&self.client_id),
        }
    }
}

/// Draws a [`ServerForm`].
pub struct ServerFormView<'a> {
    pub form: &'a ServerForm,
}

impl Widget for ServerFormView<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let form = self.form;
        let width = area.width.saturating_sub(4).clamp(area.width.min(40), 90);
        let height = area.height.saturating_sub(2).min(30);
        let popup = Rect::new(
            area.x + (area.width - width) / 2,
            area.y + (area.height - height) / 2,
            width,
            height,
        );
        let focused = form.focused();
        let mut lines = Vec::new();
        // The line of the focused field (and its message): kept inside the box.
        let mut focus_line = 0;
        for field in form.fields() {
            let on = field == focused;
            if on {
                focus_line = lines.len() + usize::from(form.error.is_some());
            }
            let label_style = if on {
                Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                Style::default().fg(Color::DarkGray)
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{:>13} ", form.label(field)), label_style),
                Span::raw(" "),
                Span::raw(form.shown(field)),
            ]));
            if on {
                if let Some(error) = &form.error {
                    lines.push(Line::styled(
                        format!("               {error}"),
                        Style::default().fg(Color::LightRed),
                    ));
                }
            }
        }
        Clear.render(popup, buf);
        let inner_rows = usize::from(popup.height.saturating_sub(2)).max(1);
        let top = u16::try_from((focus_line + 1).saturating_sub(inner_rows)).unwrap_or(0);
        Paragraph::new(lines)
            .scroll((top, 0))
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .border_type(BorderType::Rounded)
                    .title(match form.editing {
                        Some(_) => format!(" edit `{}` ", visible(&form.alias)),
                        None => " add an MCP server ".to_string(),
                    })
                    .title_bottom(
                        Line::from(
                            " Tab/S-Tab field, ←→ choice, Space switch, C-s save, Esc cancel ",
                        )
                        .right_aligned(),
                    ),
            )
            .render(popup, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::text_of;

    #[test]
    fn the_form_masks_the_secret_and_shows_the_refusal_under_its_field() {
        let mut form = ServerForm {
            alias: "Bad Alias".into(),
            name: "Everything".into(),
            command: "npx -y @modelcontextprotocol/server-everything".into(),
            secrets: vec![SecretEntry {
                name: "API_KEY".into(),
                value: "sk-live-123".into(),
            }],
            error: Some("invalid alias `Bad Alias`".into()),
            ..ServerForm::default()
        };
        form.focus_on(FormField::Alias);
        let mut buf = Buffer::empty(Rect::new(0, 0, 90, 16));
        ServerFormView { form: &form }.render(buf.area, &mut buf);
        let screen = text_of(&buf);
        insta::assert_snapshot!(screen);
        assert!(!screen.contains("sk-live"), "{screen}");
        assert!(screen.contains(MASK), "{screen}");
        // On Edit a saved value is masked too, and the alias cannot be typed into.
        form.secrets[0].value.clear();
        form.editing = Some(FormOrigin {
            secret_names: vec!["API_KEY".into()],
            ..FormOrigin::default()
        });
        assert!(form.value_saved(0));
        assert_eq!(form.shown(FormField::SecretValue(0)), MASK);
        assert!(form.text_mut(FormField::Alias).is_none());
        // Switching to http swaps the command for the URL and shows the OAuth client.
        form.http = true;
        let fields = form.fields();
        assert!(fields.contains(&FormField::Url) && fields.contains(&FormField::ClientSecret));
        assert!(!fields.contains(&FormField::Command) && !fields.contains(&FormField::Cwd));
        assert!(!form.value_saved(0), "a variable is not a header");
    }

    #[test]
    fn the_row_after_the_last_secret_adds_one_and_choices_and_switches_move() {
        let mut form = ServerForm {
            http: true,
            ..ServerForm::default()
        };
        form.focus_on(FormField::SecretName(0));
        if let Some(text) = form.text_mut(FormField::SecretName(0)) {
            text.push_str("X-Team");
        }
        assert_eq!(form.secrets.len(), 1);
        assert!(
            form.fields().contains(&FormField::SecretName(1)),
            "a new row"
        );
        // Typing nothing into the new row leaves nothing behind.
        let _ = form.text_mut(FormField::SecretName(1));
        form.tidy();
        assert_eq!(form.secrets.len(), 1);
        form.focus_on(FormField::ClientAuth);
        form.choose(false);
        assert_eq!(CLIENT_AUTHS[form.client_auth], "basic");
        form.choose(true);
        form.choose(true);
        assert_eq!(CLIENT_AUTHS[form.client_auth], "post");
        assert_eq!(form.shown(FormField::ClientAuth), " none  [post]  basic ");
        form.focus_on(FormField::FixedPort);
        assert!(form.switch() && form.fixed_port);
        form.focus_on(FormField::Url);
        assert!(!form.switch(), "not a switch");
        form.client_secret = "s3cret".into();
        assert_eq!(form.shown(FormField::ClientSecret), MASK);
    }
}
