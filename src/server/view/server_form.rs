//! The keys of the servers overlay's Add form, and the check `Ctrl-S` makes before anything is
//! sent: the same rules `calyx mcp add` applies ([`crate::hosted::validate`]), each refusal
//! focused on the field it is about, so the user sees where to type.

use calyx_tui::{FormField, ServerForm, ServersOverlay, ServersPage};

use crate::hosted::entry::{HttpTarget, ServerEntry, StdioTarget, Transport};
use crate::hosted::validate::{self, InvalidEntry};
use crate::hosted::wire::McpRequest;
use crate::keys::{Key, KeyCode};
use crate::server::model::state::{ClientId, ClientMode};
use crate::server::owner::Server;

impl Server {
    /// A key while the Add form is open.
    pub(crate) fn servers_form_key(
        &mut self,
        client: ClientId,
        mut overlay: ServersOverlay,
        mut form: ServerForm,
        key: Key,
    ) {
        let count = form.fields().len();
        let field = form.focused();
        match key.code {
            KeyCode::Escape => {
                self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
                return;
            }
            KeyCode::Char('s') if key.ctrl => {
                let taken: Vec<&str> = overlay.rows.iter().map(|r| r.alias.as_str()).collect();
                match check_form(&form, &taken) {
                    Ok(request) => {
                        self.servers_request(client, request);
                        self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
                        return;
                    }
                    Err((field, why)) => {
                        form.focus_on(field);
                        form.error = Some(why);
                    }
                }
            }
            KeyCode::Tab | KeyCode::Down => form.focus = (form.focus + 1) % count,
            KeyCode::BackTab | KeyCode::Up => form.focus = (form.focus + count - 1) % count,
            KeyCode::Left | KeyCode::Right if field == FormField::Transport => {
                form.http = !form.http
            }
            KeyCode::Char(' ') if field == FormField::Enabled => form.disabled = !form.disabled,
            KeyCode::Backspace => {
                if let Some(text) = form.text_mut(field) {
                    text.pop();
                }
            }
            KeyCode::Char(ch) if !key.ctrl && !key.alt => {
                if let Some(text) = form.text_mut(field) {
                    text.push(ch);
                }
            }
            _ => {}
        }
        overlay.page = ServersPage::Add(form);
        self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
    }
}

/// The field an [`InvalidEntry`] is about.
fn field_of(invalid: &InvalidEntry) -> FormField {
    match invalid {
        InvalidEntry::Alias { .. }
        | InvalidEntry::AliasTaken(_)
        | InvalidEntry::AliasChange { .. } => FormField::Alias,
        InvalidEntry::NameEmpty { .. } | InvalidEntry::NameTooLong { .. } => FormField::Name,
        InvalidEntry::CommandEmpty { .. } | InvalidEntry::Cwd { .. } => FormField::Command,
        InvalidEntry::Url { .. } => FormField::Url,
        InvalidEntry::EnvName { .. } | InvalidEntry::HeaderName { .. } => FormField::SecretName,
        InvalidEntry::EnvValue { .. } | InvalidEntry::HeaderValue { .. } => FormField::SecretValue,
    }
}

/// The `calyx mcp add` request the form stands for, or the first field that is wrong and why.
/// `taken`: the aliases listed now. An empty name is the alias.
pub(crate) fn check_form(
    form: &ServerForm,
    taken: &[&str],
) -> Result<McpRequest, (FormField, String)> {
    let refuse = |invalid: InvalidEntry| (field_of(&invalid), invalid.to_string());
    let alias = form.alias.trim().to_string();
    validate::check_alias(&alias).map_err(refuse)?;
    if taken.contains(&alias.as_str()) {
        return Err(refuse(InvalidEntry::AliasTaken(alias)));
    }
    let secret_name = form.secret_name.trim().to_string();
    let names: Vec<String> = (!secret_name.is_empty())
        .then(|| secret_name.clone())
        .into_iter()
        .collect();
    let transport = if form.http {
        Transport::Http(HttpTarget {
            url: form.url.trim().to_string(),
            legacy_sse: false,
            headers: names,
            oauth: Default::default(),
        })
    } else {
        let mut words = form.command.split_whitespace().map(str::to_string);
        Transport::Stdio(StdioTarget {
            command: words.next().unwrap_or_default(),
            args: words.collect(),
            cwd: None,
            env: names,
        })
    };
    let name = match form.name.trim() {
        "" => alias.clone(),
        name => name.to_string(),
    };
    let entry = ServerEntry {
        alias: alias.clone(),
        name,
        enabled: !form.disabled,
        transport,
        note: None,
    };
    validate::check_entry(&entry).map_err(refuse)?;
    let mut secrets = Vec::new();
    if !secret_name.is_empty() {
        let value = &form.secret_value;
        let account = if form.http {
            validate::check_header_value(&alias, &secret_name, value).map_err(refuse)?;
            format!("header/{secret_name}")
        } else {
            validate::check_env_value(&alias, &secret_name, value).map_err(refuse)?;
            format!("env/{secret_name}")
        };
        secrets.push((account, value.clone()));
    }
    Ok(McpRequest::Add { entry, secrets })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> ServerForm {
        ServerForm {
            alias: "ev".into(),
            command: "node server.js stdio".into(),
            secret_name: "API_KEY".into(),
            secret_value: "sk-1".into(),
            ..ServerForm::default()
        }
    }

    #[test]
    fn a_good_form_is_the_add_request_with_its_secret() {
        let Ok(McpRequest::Add { entry, secrets }) = check_form(&form(), &["gh"]) else {
            panic!("accepted");
        };
        assert_eq!(entry.name, "ev", "an empty name is the alias");
        assert!(entry.enabled);
        assert_eq!(
            entry.transport,
            Transport::Stdio(StdioTarget {
                command: "node".into(),
                args: vec!["server.js".into(), "stdio".into()],
                cwd: None,
                env: vec!["API_KEY".into()],
            })
        );
        assert_eq!(
            secrets,
            vec![("env/API_KEY".to_string(), "sk-1".to_string())]
        );
    }

    #[test]
    fn a_refusal_names_the_first_wrong_field() {
        let mut bad = form();
        bad.alias = "Bad Alias".into();
        bad.command.clear();
        let (field, why) = check_form(&bad, &[]).expect_err("refused");
        assert_eq!(field, FormField::Alias);
        assert!(why.contains("invalid alias"), "{why}");
        let (field, why) = check_form(&form(), &["ev"]).expect_err("refused");
        assert_eq!((field, why.contains("taken")), (FormField::Alias, true));
        let mut bad = form();
        bad.command = "  ".into();
        assert_eq!(
            check_form(&bad, &[]).err().map(|e| e.0),
            Some(FormField::Command)
        );
        let mut bad = form();
        bad.http = true;
        bad.url = "ftp://x".into();
        assert_eq!(
            check_form(&bad, &[]).err().map(|e| e.0),
            Some(FormField::Url)
        );
        let mut bad = form();
        bad.secret_name = "1BAD".into();
        assert_eq!(
            check_form(&bad, &[]).err().map(|e| e.0),
            Some(FormField::SecretName)
        );
    }
}
