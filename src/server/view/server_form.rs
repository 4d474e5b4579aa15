//! The keys of the servers overlay's Add and Edit form, and the check `Ctrl-S` makes before
//! anything is sent: the same rules `calyx mcp add` applies ([`crate::hosted::validate`], the
//! command split like `calyx mcp add` splits arguments), each refusal focused on the field it is
//! about, so the user sees where to type. Edit sends only what changed, as `calyx mcp edit`
//! would (a saved secret stays unless its value is retyped; a cleared row is unset).

use calyx_tui::{
    FormField, FormOrigin, SecretEntry, ServerForm, ServersOverlay, ServersPage, CLIENT_AUTHS,
};

use crate::argsplit::split_args;
use crate::hosted::alias::derive_alias;
use crate::hosted::edit::EntryEdit;
use crate::hosted::entry::{
    ClientAuth, HttpTarget, OAuthSettings, ServerEntry, StdioTarget, Transport,
};
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
            KeyCode::Left => form.choose(false),
            KeyCode::Right => form.choose(true),
            KeyCode::Char(' ') if form.switch() => {}
            KeyCode::Backspace => {
                if let Some(text) = form.text_mut(field) {
                    text.pop();
                }
                follow_name(&mut form, field);
            }
            KeyCode::Char(ch) if !key.ctrl && !key.alt => {
                if let Some(text) = form.text_mut(field) {
                    text.push(ch);
                }
                follow_name(&mut form, field);
            }
            _ => {}
        }
        form.tidy();
        overlay.page = ServersPage::Add(Box::new(form));
        self.set_mode(client, ClientMode::Servers(Box::new(overlay)));
    }
}

/// After the text of `field` changed: on Add, the alias follows the name until the user types one
/// (the rule `calyx mcp import` uses, [`derive_alias`]).
pub(crate) fn follow_name(form: &mut ServerForm, field: FormField) {
    match field {
        FormField::Alias => form.alias_typed = true,
        FormField::Name if form.editing.is_none() && !form.alias_typed => {
            form.alias = derive_alias(&form.name).unwrap_or_default();
        }
        _ => {}
    }
}

/// The field an [`InvalidEntry`] is about; `secrets`: the form's rows, to find a named one.
fn field_of(invalid: &InvalidEntry, secrets: &[SecretEntry]) -> FormField {
    let row = |name: &str| {
        secrets
            .iter()
            .position(|s| s.name.trim() == name)
            .unwrap_or(0)
    };
    match invalid {
        InvalidEntry::Alias { .. }
        | InvalidEntry::AliasTaken(_)
        | InvalidEntry::AliasChange { .. } => FormField::Alias,
        InvalidEntry::NameEmpty { .. } | InvalidEntry::NameTooLong { .. } => FormField::Name,
        InvalidEntry::CommandEmpty { .. } => FormField::Command,
        InvalidEntry::Cwd { .. } => FormField::Cwd,
        InvalidEntry::Url { .. } => FormField::Url,
        InvalidEntry::EnvName { name, .. } | InvalidEntry::HeaderName { name, .. } => {
            FormField::SecretName(row(name))
        }
        InvalidEntry::EnvValue { name, .. } | InvalidEntry::HeaderValue { name, .. } => {
            FormField::SecretValue(row(name))
        }
    }
}

/// The index of `auth` in [`CLIENT_AUTHS`].
fn auth_index(auth: ClientAuth) -> usize {
    match auth {
        ClientAuth::None => 0,
        ClientAuth::ClientSecretPost => 1,
        ClientAuth::ClientSecretBasic => 2,
    }
}

/// The [`ClientAuth`] at `index` of [`CLIENT_AUTHS`].
fn auth_at(index: usize) -> ClientAuth {
    match CLIENT_AUTHS.get(index).copied() {
        Some("post") => ClientAuth::ClientSecretPost,
        Some("basic") => ClientAuth::ClientSecretBasic,
        _ => ClientAuth::None,
    }
}

/// The Edit form of `entry`: its variables or headers named, their values saved;
/// `client_secret_saved`: a client secret is stored for it.
pub(crate) fn form_of(entry: &ServerEntry, client_secret_saved: bool) -> ServerForm {
    let mut form = ServerForm {
        alias: entry.alias.clone(),
        name: entry.name.clone(),
        disabled: !entry.enabled,
        ..ServerForm::default()
    };
    let names = match &entry.transport {
        Transport::Stdio(s) => {
            form.command = std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .map(quoted)
                .collect::<Vec<_>>()
                .join(" ");
            form.cwd = s.cwd.clone().unwrap_or_default();
            &s.env
        }
        Transport::Http(h) => {
            form.http = true;
            form.url = h.url.clone();
            form.legacy_sse = h.legacy_sse;
            form.client_id = h.oauth.client_id.clone().unwrap_or_default();
            form.client_auth = auth_index(h.oauth.client_auth);
            form.fixed_port = h.oauth.fixed_redirect_port;
            &h.headers
        }
    };
    form.secrets = names
        .iter()
        .map(|name| SecretEntry {
            name: name.clone(),
            value: String::new(),
        })
        .collect();
    form.editing = Some(FormOrigin {
        http: form.http,
        name: form.name.clone(),
        command: form.command.clone(),
        cwd: form.cwd.clone(),
        url: form.url.clone(),
        legacy_sse: form.legacy_sse,
        secret_names: names.clone(),
        client_id: form.client_id.clone(),
        client_auth: form.client_auth,
        client_secret_saved,
        fixed_port: form.fixed_port,
        enabled: entry.enabled,
    });
    form
}

/// A word as the form's command line shows it: quoted when splitting would change it.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty()
        && !word
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '\'' | '"' | '\\'));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The `calyx mcp` requests the form stands for (`add`; or `edit` and maybe `enable` /
/// `disable`), or the first field that is wrong and why. `taken`: the aliases listed now. An
/// empty name is the alias.
pub(crate) fn check_form(
    form: &ServerForm,
    taken: &[&str],
) -> Result<Vec<McpRequest>, (FormField, String)> {
    let refuse = |invalid: InvalidEntry| (field_of(&invalid, &form.secrets), invalid.to_string());
    let alias = form.alias.trim().to_string();
    validate::check_alias(&alias).map_err(refuse)?;
    if form.editing.is_none() && taken.contains(&alias.as_str()) {
        return Err(refuse(InvalidEntry::AliasTaken(alias)));
    }
    // The rows with a name, in order, once each.
    let mut names: Vec<String> = Vec::new();
    for row in &form.secrets {
        let name = row.name.trim().to_string();
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    let transport = if form.http {
        let client_id = form.client_id.trim();
        Transport::Http(HttpTarget {
            url: form.url.trim().to_string(),
            legacy_sse: form.legacy_sse,
            headers: names.clone(),
            oauth: OAuthSettings {
                client_id: (!client_id.is_empty()).then(|| client_id.to_string()),
                client_auth: auth_at(form.client_auth),
                fixed_redirect_port: form.fixed_port,
            },
        })
    } else {
        let words =
            split_args(form.command.trim()).map_err(|e| (FormField::Command, e.to_string()))?;
        let mut words = words.into_iter();
        let cwd = form.cwd.trim();
        Transport::Stdio(StdioTarget {
            command: words.next().unwrap_or_default(),
            args: words.collect(),
            cwd: (!cwd.is_empty()).then(|| cwd.to_string()),
            env: names.clone(),
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
    // The values to store: every row's on Add; on Edit the retyped ones and new names'.
    let mut secrets = Vec::new();
    for (i, row) in form.secrets.iter().enumerate() {
        let name = row.name.trim();
        if name.is_empty() || (form.value_saved(i) && row.value.is_empty()) {
            continue;
        }
        let account = if form.http {
            validate::check_header_value(&alias, name, &row.value).map_err(refuse)?;
            format!("header/{name}")
        } else {
            validate::check_env_value(&alias, name, &row.value).map_err(refuse)?;
            format!("env/{name}")
        };
        secrets.push((account, row.value.clone()));
    }
    if form.http && !form.client_secret.is_empty() {
        if form.client_secret.contains(['\r', '\n']) {
            return Err((
                FormField::ClientSecret,
                "the client secret has a line break: paste it on one line".into(),
            ));
        }
        secrets.push(("client-secret".into(), form.client_secret.clone()));
    }
    let Some(origin) = &form.editing else {
        return Ok(vec![McpRequest::Add { entry, secrets }]);
    };
    Ok(edit_requests(form, origin, entry, &names, secrets))
}

/// What an Edit changes: only the fields that differ from `origin`; a saved value is kept
/// unless retyped, and a variable or header whose row was cleared or renamed is dropped.
fn edit_requests(
    form: &ServerForm,
    origin: &FormOrigin,
    entry: ServerEntry,
    names: &[String],
    secrets: Vec<(String, String)>,
) -> Vec<McpRequest> {
    let mut edit = EntryEdit::default();
    if entry.name != origin.name {
        edit.name = Some(entry.name.clone());
    }
    let same_transport = origin.http == form.http;
    match &entry.transport {
        Transport::Http(h) => {
            if !same_transport || h.url != origin.url {
                edit.url = Some(h.url.clone());
            }
            if !same_transport || h.legacy_sse != origin.legacy_sse {
                edit.legacy_sse = Some(h.legacy_sse);
            }
            let client_id = h.oauth.client_id.clone().unwrap_or_default();
            if !same_transport || client_id != origin.client_id {
                edit.client_id = Some(client_id);
            }
            if !same_transport || form.client_auth != origin.client_auth {
                edit.client_auth = Some(h.oauth.client_auth);
            }
            if !same_transport || h.oauth.fixed_redirect_port != origin.fixed_port {
                edit.fixed_redirect_port = Some(h.oauth.fixed_redirect_port);
            }
        }
        Transport::Stdio(s) => {
            if !same_transport || form.command.trim() != origin.command {
                edit.command = Some(
                    std::iter::once(s.command.clone())
                        .chain(s.args.clone())
                        .collect(),
                );
            }
            let cwd = s.cwd.clone().unwrap_or_default();
            if !same_transport || cwd != origin.cwd {
                edit.cwd = Some(cwd);
            }
        }
    }
    let (set, unset) = if form.http {
        (&mut edit.headers, &mut edit.unset_headers)
    } else {
        (&mut edit.env, &mut edit.unset_env)
    };
    if same_transport {
        unset.extend(
            origin
                .secret_names
                .iter()
                .filter(|n| !names.contains(n))
                .cloned(),
        );
    }
    let prefix = if form.http { "header/" } else { "env/" };
    set.extend(
        secrets
            .iter()
            .filter_map(|(account, _)| account.strip_prefix(prefix).map(str::to_string)),
    );
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

    fn secret(name: &str, value: &str) -> SecretEntry {
        SecretEntry {
            name: name.into(),
            value: value.into(),
        }
    }

    fn form() -> ServerForm {
        ServerForm {
            alias: "ev".into(),
            command: "node 'my server.js' stdio".into(),
            secrets: vec![secret("API_KEY", "sk-1"), secret("REGION", "eu")],
            ..ServerForm::default()
        }
    }

    #[test]
    fn a_good_form_is_the_add_request_with_its_secrets() {
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
                args: vec!["my server.js".into(), "stdio".into()],
                cwd: None,
                env: vec!["API_KEY".into(), "REGION".into()],
            })
        );
        assert_eq!(
            secrets,
            &vec![
                ("env/API_KEY".to_string(), "sk-1".to_string()),
                ("env/REGION".to_string(), "eu".to_string())
            ]
        );
    }

    #[test]
    fn an_http_form_carries_legacy_sse_and_the_oauth_client() {
        let form = ServerForm {
            http: true,
            alias: "lin".into(),
            url: "https://mcp.example/sse".into(),
            legacy_sse: true,
            secrets: vec![secret("X-Team", "core")],
            client_id: "app-1".into(),
            client_auth: 2,
            client_secret: "shh".into(),
            fixed_port: true,
            ..ServerForm::default()
        };
        let requests = check_form(&form, &[]).expect("accepted");
        let [McpRequest::Add { entry, secrets }] = requests.as_slice() else {
            panic!("one add: {requests:?}");
        };
        assert_eq!(
            entry.transport,
            Transport::Http(HttpTarget {
                url: "https://mcp.example/sse".into(),
                legacy_sse: true,
                headers: vec!["X-Team".into()],
                oauth: OAuthSettings {
                    client_id: Some("app-1".into()),
                    client_auth: ClientAuth::ClientSecretBasic,
                    fixed_redirect_port: true,
                },
            })
        );
        assert_eq!(
            secrets,
            &vec![
                ("header/X-Team".to_string(), "core".to_string()),
                ("client-secret".to_string(), "shh".to_string())
            ]
        );
    }

    fn saved() -> ServerEntry {
        ServerEntry {
            alias: "ev".into(),
            name: "Everything".into(),
            enabled: true,
            transport: Transport::Stdio(StdioTarget {
                command: "node".into(),
                args: vec!["my server.js".into()],
                cwd: Some("/tmp".into()),
                env: vec!["API_KEY".into(), "REGION".into()],
            }),
            note: None,
        }
    }

    #[test]
    fn an_unchanged_edit_keeps_the_saved_secrets_and_changes_nothing() {
        let form = form_of(&saved(), false);
        assert_eq!(form.command, "node 'my server.js'");
        assert_eq!(form.cwd, "/tmp");
        assert!(form.value_saved(0) && form.value_saved(1));
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
    fn an_edit_sends_what_changed_retyped_secrets_cleared_rows_and_the_switch() {
        let mut form = form_of(&saved(), false);
        form.name = "Everything 2".into();
        form.secrets[0].value = "sk-2".into();
        form.secrets[1].name.clear();
        form.secrets.push(secret("TOKEN", "t"));
        form.cwd.clear();
        form.disabled = true;
        let requests = check_form(&form, &["ev"]).expect("accepted");
        let edit = EntryEdit {
            name: Some("Everything 2".into()),
            cwd: Some(String::new()),
            env: vec!["API_KEY".into(), "TOKEN".into()],
            unset_env: vec!["REGION".into()],
            ..EntryEdit::default()
        };
        assert_eq!(
            requests,
            vec![
                McpRequest::Edit {
                    alias: "ev".into(),
                    edit,
                    secrets: vec![
                        ("env/API_KEY".into(), "sk-2".into()),
                        ("env/TOKEN".into(), "t".into())
                    ],
                },
                McpRequest::SetEnabled {
                    alias: "ev".into(),
                    enabled: false,
                },
            ]
        );
    }

    #[test]
    fn an_http_edit_changes_only_the_oauth_settings_touched() {
        let entry = ServerEntry {
            transport: Transport::Http(HttpTarget {
                url: "https://mcp.example/mcp".into(),
                legacy_sse: false,
                headers: Vec::new(),
                oauth: OAuthSettings::default(),
            }),
            ..saved()
        };
        let mut form = form_of(&entry, true);
        assert!(form.client_secret_saved());
        form.client_auth = 1;
        form.legacy_sse = true;
        let requests = check_form(&form, &[]).expect("accepted");
        let edit = EntryEdit {
            legacy_sse: Some(true),
            client_auth: Some(ClientAuth::ClientSecretPost),
            ..EntryEdit::default()
        };
        assert_eq!(
            requests,
            vec![McpRequest::Edit {
                alias: "ev".into(),
                edit,
                secrets: Vec::new(),
            }],
            "the saved client secret stays"
        );
    }

    #[test]
    fn the_alias_follows_the_name_until_typed() {
        let mut form = ServerForm {
            name: "GitHub Copilot".into(),
            ..ServerForm::default()
        };
        follow_name(&mut form, FormField::Name);
        assert_eq!(form.alias, "githubcopi");
        form.alias = "gh".into();
        follow_name(&mut form, FormField::Alias);
        form.name = "Other".into();
        follow_name(&mut form, FormField::Name);
        assert_eq!(form.alias, "gh", "typed: kept");
        let mut edit = form_of(&saved(), false);
        edit.name = "Renamed".into();
        follow_name(&mut edit, FormField::Name);
        assert_eq!(edit.alias, "ev", "an alias is fixed once saved");
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
        bad.command = "node 'open".into();
        let (field, why) = check_form(&bad, &[]).expect_err("refused");
        assert_eq!(field, FormField::Command);
        assert!(why.contains("column 6"), "{why}");
        let mut bad = form();
        bad.cwd = "/no/such/dir".into();
        assert_eq!(
            check_form(&bad, &[]).err().map(|e| e.0),
            Some(FormField::Cwd)
        );
        let mut bad = form();
        bad.http = true;
        bad.url = "ftp://x".into();
        assert_eq!(
            check_form(&bad, &[]).err().map(|e| e.0),
            Some(FormField::Url)
        );
        let mut bad = form();
        bad.secrets[1].name = "1BAD".into();
        assert_eq!(
            check_form(&bad, &[]).err().map(|e| e.0),
            Some(FormField::SecretName(1))
        );
        let mut bad = form();
        bad.http = true;
        bad.url = "https://x.example/mcp".into();
        bad.secrets = vec![secret("X-Team", "a\nb")];
        assert_eq!(
            check_form(&bad, &[]).err().map(|e| e.0),
            Some(FormField::SecretValue(0))
        );
    }
}
