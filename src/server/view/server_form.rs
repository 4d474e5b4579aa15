//! The keys of the servers overlay's Add and Edit form, and the check `Ctrl-S` makes before
//! anything is sent: the same rules `calyx mcp add` applies ([`crate::hosted::validate`]), each
//! refusal focused on the field it is about, so the user sees where to type. Edit sends only
//! what changed (a saved secret stays unless its value is retyped).

use calyx_tui::{FormField, FormOrigin, ServerForm, ServersOverlay, ServersPage};

use crate::hosted::edit::EntryEdit;

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
                    Ok(requests) => {
                        self.servers_requests(client, requests);
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
        overlay.page = ServersPage::Add(Box::new(form));
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

/// The Edit form of `entry`: its first variable or header named, its value saved.
pub(crate) fn form_of(entry: &ServerEntry) -> ServerForm {
    let (http, command, url, secret_name) = match &entry.transport {
        Transport::Stdio(s) => {
            let words: Vec<&str> = std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .collect();
            (false, words.join(" "), String::new(), s.env.first())
        }
        Transport::Http(h) => (true, String::new(), h.url.clone(), h.headers.first()),
    };
    let secret_name = secret_name.cloned().unwrap_or_default();
    ServerForm {
        http,
        alias: entry.alias.clone(),
        name: entry.name.clone(),
        command: command.clone(),
        url: url.clone(),
        secret_name: secret_name.clone(),
        secret_value: String::new(),
        disabled: !entry.enabled,
        editing: Some(FormOrigin {
            http,
            name: entry.name.clone(),
            command,
            url,
            secret_name,
            enabled: entry.enabled,
        }),
        focus: 0,
        error: None,
    }
}

/// The `calyx mcp` requests the form stands for (`add`; or `edit` and maybe `enable` /
/// `disable`), or the first field that is wrong and why. `taken`: the aliases listed now. An
/// empty name is the alias.
pub(crate) fn check_form(
    form: &ServerForm,
    taken: &[&str],
) -> Result<Vec<McpRequest>, (FormField, String)> {
    let refuse = |invalid: InvalidEntry| (field_of(&invalid), invalid.to_string());
    let alias = form.alias.trim().to_string();
    validate::check_alias(&alias).map_err(refuse)?;
    if form.editing.is_none() && taken.contains(&alias.as_str()) {
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
    let Some(origin) = &form.editing else {
        return Ok(vec![McpRequest::Add { entry, secrets }]);
    };
    Ok(edit_requests(form, origin, entry, secrets))
}

/// What an Edit changes: only the fields that differ from `origin`; the saved secret is kept
/// unless its value was retyped, and dropped when its name was changed or cleared.
fn edit_requests(
    form: &ServerForm,
    origin: &FormOrigin,
    entry: ServerEntry,
    mut secrets: Vec<(String, String)>,
) -> Vec<McpRequest> {
    let mut edit = EntryEdit::default();
    if entry.name != origin.name {
        edit.name = Some(entry.name.clone());
    }
    let same_transport = origin.http == form.http;
    match &entry.transport {
        Transport::Http(h) if !same_transport || h.url != origin.url => {
            edit.url = Some(h.url.clone())
        }
        Transport::Stdio(s) if !same_transport || form.command.trim() != origin.command => {
            edit.command = Some(
                std::iter::once(s.command.clone())
                    .chain(s.args.clone())
                    .collect(),
            )
        }
        _ => {}
    }
    let name = form.secret_name.trim().to_string();
    if same_transport && !origin.secret_name.is_empty() && name != origin.secret_name {
        let unset = if form.http {
            &mut edit.unset_headers
        } else {
            &mut edit.unset_env
        };
        unset.push(origin.secret_name.clone());
    }
    if form.value_saved() && form.secret_value.is_empty() {
        // Not retyped: the saved value stays.
        secrets.clear();
    } else if !name.is_empty() {
        let set = if form.http {
            &mut edit.headers
        } else {
            &mut edit.env
        };
        set.push(name);
    }
    let alias = entry.alias.clone();
    let mut requests = vec![McpRequest::Edit {
        alias: alias.clone(),
        edit,
        secrets,
    }];
    if entry.enabled != origin.enabled {
        requests.push(McpRequest::SetEnabled {
            alias,
            enabled: entry.enabled,
        });
    }
    requests
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
        let requests = check_form(&form(), &["gh"]).expect("accepted");
        let [McpRequest::Add { entry, secrets }] = requests.as_slice() else {
            panic!("one add: {requests:?}");
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
            &vec![("env/API_KEY".to_string(), "sk-1".to_string())]
        );
    }

    fn saved() -> ServerEntry {
        ServerEntry {
            alias: "ev".into(),
            name: "Everything".into(),
            enabled: true,
            transport: Transport::Stdio(StdioTarget {
                command: "node".into(),
                args: vec!["server.js".into()],
                cwd: None,
                env: vec!["API_KEY".into()],
            }),
            note: None,
        }
    }

    #[test]
    fn an_unchanged_edit_keeps_the_saved_secret_and_changes_nothing() {
        let form = form_of(&saved());
        assert_eq!(form.command, "node server.js");
        assert!(form.value_saved());
        let requests = check_form(&form, &["ev"]).expect("accepted");
        assert_eq!(
            requests,
            vec![McpRequest::Edit {
                alias: "ev".into(),
                edit: EntryEdit::default(),
                secrets: Vec::new(),
            }]
        );
    }

    #[test]
    fn an_edit_sends_what_changed_retyped_secrets_and_the_switch() {
        let mut form = form_of(&saved());
        form.name = "Everything 2".into();
        form.secret_value = "sk-2".into();
        form.disabled = true;
        let requests = check_form(&form, &["ev"]).expect("accepted");
        let edit = EntryEdit {
            name: Some("Everything 2".into()),
            env: vec!["API_KEY".into()],
            ..EntryEdit::default()
        };
        assert_eq!(
            requests,
            vec![
                McpRequest::Edit {
                    alias: "ev".into(),
                    edit,
                    secrets: vec![("env/API_KEY".into(), "sk-2".into())],
                },
                McpRequest::SetEnabled {
                    alias: "ev".into(),
                    enabled: false,
                },
            ]
        );
        // A renamed variable drops the old one.
        let mut form = form_of(&saved());
        form.secret_name = "TOKEN".into();
        form.secret_value = "t".into();
        let requests = check_form(&form, &[]).expect("accepted");
        let Some(McpRequest::Edit { edit, .. }) = requests.first() else {
            panic!("an edit: {requests:?}");
        };
        assert_eq!(edit.env, vec!["TOKEN".to_string()]);
        assert_eq!(edit.unset_env, vec!["API_KEY".to_string()]);
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
