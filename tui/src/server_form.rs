//! The servers overlay's Add and Edit form (`a` and `e` in `prefix M`): the transport, alias,
//! name, command or URL, one environment variable or header with its secret value, and the
//! enable switch. The fields shown follow the transport. A secret value is drawn as `••••••`,
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
    /// The program and its arguments, split at spaces (stdio).
    Command,
    /// The server's URL (http).
    Url,
    /// An environment variable's name (stdio) or a header's name (http).
    SecretName,
    /// Its value: a secret, drawn masked.
    SecretValue,
    /// Whether the server runs (Space).
    Enabled,
}

/// What was typed into the Add form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerForm {
    pub http: bool,
    pub alias: String,
    pub name: String,
    pub command: String,
    pub url: String,
    pub secret_name: String,
    pub secret_value: String,
    /// Off: added switched off.
    pub disabled: bool,
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
    pub url: String,
    /// Its first variable or header (its value is saved, not shown).
    pub secret_name: String,
    pub enabled: bool,
}

/// The fields a masked secret shows as.
pub const MASK: &str = "••••••";

impl ServerForm {
    /// The fields shown, in order, for the form's transport.
    pub fn fields(&self) -> Vec<FormField> {
        let target = if self.http {
            FormField::Url
        } else {
            FormField::Command
        };
        vec![
            FormField::Transport,
            FormField::Alias,
            FormField::Name,
            target,
            FormField::SecretName,
            FormField::SecretValue,
            FormField::Enabled,
        ]
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

    /// The text of a typed field (None for the transport and the switch).
    pub fn text_mut(&mut self, field: FormField) -> Option<&mut String> {
        match field {
            FormField::Alias if self.editing.is_some() => None,
            FormField::Alias => Some(&mut self.alias),
            FormField::Name => Some(&mut self.name),
            FormField::Command => Some(&mut self.command),
            FormField::Url => Some(&mut self.url),
            FormField::SecretName => Some(&mut self.secret_name),
            FormField::SecretValue => Some(&mut self.secret_value),
            FormField::Transport | FormField::Enabled => None,
        }
    }

    /// On Edit, the value of the unchanged variable or header is in the secret store.
    pub fn value_saved(&self) -> bool {
        self.editing.as_ref().is_some_and(|o| {
            !o.secret_name.is_empty() && o.secret_name == self.secret_name && o.http == self.http
        })
    }

    fn label(&self, field: FormField) -> &'static str {
        match field {
            FormField::Transport => "Transport",
            FormField::Alias => "Alias",
            FormField::Name => "Name",
            FormField::Command => "Command",
            FormField::Url => "URL",
            FormField::SecretName if self.http => "Header",
            FormField::SecretName => "Variable",
            FormField::SecretValue => "Value",
            FormField::Enabled => "Enabled",
        }
    }

    fn shown(&self, field: FormField) -> String {
        match field {
            FormField::Transport => if self.http {
                "  stdio  [http]"
            } else {
                "[stdio]  http "
            }
            .to_string(),
            FormField::Enabled => if self.disabled { "[ ]" } else { "[x]" }.to_string(),
            FormField::SecretValue if !self.secret_value.is_empty() || self.value_saved() => {
                MASK.to_string()
            }
            FormField::Alias => visible(&self.alias),
            FormField::Name => visible(&self.name),
            FormField::Command => visible(&self.command),
            FormField::Url => visible(&self.url),
            FormField::SecretName => visible(&self.secret_name),
            FormField::SecretValue => String::new(),
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
        let height = area.height.saturating_sub(2).min(20);
        let popup = Rect::new(
            area.x + (area.width - width) / 2,
            area.y + (area.height - height) / 2,
            width,
            height,
        );
        let focused = form.focused();
        let mut lines = Vec::new();
        for field in form.fields() {
            let on = field == focused;
            let label_style = if on {
                Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                Style::default().fg(Color::DarkGray)
            };
            lines.push(Line::from(vec![
                Span::styled(format!("{:>9} ", form.label(field)), label_style),
                Span::raw(" "),
                Span::raw(form.shown(field)),
            ]));
            if on {
                if let Some(error) = &form.error {
                    lines.push(Line::styled(
                        format!("           {error}"),
                        Style::default().fg(Color::LightRed),
                    ));
                }
            }
        }
        Clear.render(popup, buf);
        Paragraph::new(lines)
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
            secret_name: "API_KEY".into(),
            secret_value: "sk-live-123".into(),
            error: Some("invalid alias `Bad Alias`".into()),
            ..ServerForm::default()
        };
        form.focus_on(FormField::Alias);
        let mut buf = Buffer::empty(Rect::new(0, 0, 90, 14));
        ServerFormView { form: &form }.render(buf.area, &mut buf);
        let screen = text_of(&buf);
        insta::assert_snapshot!(screen);
        assert!(!screen.contains("sk-live"), "{screen}");
        assert!(screen.contains(MASK), "{screen}");
        // On Edit a saved value is masked too, and the alias cannot be typed into.
        form.secret_value.clear();
        form.editing = Some(FormOrigin {
            secret_name: "API_KEY".into(),
            ..FormOrigin::default()
        });
        assert!(form.value_saved());
        assert_eq!(form.shown(FormField::SecretValue), MASK);
        assert!(form.text_mut(FormField::Alias).is_none());
        // Switching to http swaps the command for the URL.
        form.http = true;
        assert!(form.fields().contains(&FormField::Url));
        assert!(!form.fields().contains(&FormField::Command));
    }
}
