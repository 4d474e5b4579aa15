//! Hosting in the running server: the [`Supervisor`] over `mcp-servers.json`, the switch
//! `[mcp] host_servers`, and the answers to `calyx mcp ...` ([`McpRequest`]). Every change is
//! made in the file under its lock and applied to the connections at once; `reload` applies a
//! hand edit (start added or enabled servers, stop removed or disabled ones, restart changed
//! ones).
//!
//! Methods block (file locks, the secret store, which may take 3 s): the server calls them on
//! a blocking thread inside its runtime.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::connection::filter::has_ui;
use super::connection::state::ServerState;
use super::entry::ServerEntry;
use super::import::{self, ConflictPolicy};
use super::route::HostedRoute;
use super::rows::render_details;
pub use super::rows::{render_rows, row};
use super::secrets::{delete_server_secrets, LazyChoice, SecretStore};
use super::server_list::{self, ListError, ServerList};
use super::supervisor::Supervisor;
use super::tools_cache::ToolsCache;
use super::validate::InvalidEntry;
use super::wire::McpRequest;

/// Stderr lines Details shows.
const STDERR_LINES: usize = 20;

/// The answer to one `calyx mcp` request: exit code (0, 1 failure, 2 bad input), the text to
/// print, and the JSON `--json` prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct McpAnswer {
    pub exit: u8,
    pub text: String,
    #[serde(default)]
    pub json: Option<Value>,
}

impl McpAnswer {
    /// A change done to `alias`: `text` for people, `{"alias", "result", "warnings"}` for
    /// `--json` (`result` is `added`, `changed`, `enabled`, `disabled`, `reconnecting`,
    /// `removed`, `signed-in` or `signed-out`).
    fn done(alias: &str, result: &str, warnings: &[String], text: String) -> Self {
        McpAnswer {
            exit: 0,
            text,
            json: Some(json!({"alias": alias, "result": result, "warnings": warnings})),
        }
    }

    fn failed(text: impl Into<String>) -> Self {
        McpAnswer {
            exit: 1,
            text: text.into(),
            json: None,
        }
    }

    fn of_list_error(error: &ListError) -> Self {
        let usage = matches!(error, ListError::Invalid(_) | ListError::Unknown(_));
        McpAnswer {
            exit: if usage { 2 } else { 1 },
            text: error.to_string(),
            json: None,
        }
    }
}

/// The server's hosted servers.
pub struct Hosting {
    route: HostedRoute,
    supervisor: Supervisor,
    /// The secret store, chosen at its first use ([`LazyChoice`]).
    secrets: Arc<LazyChoice>,
    list_path: PathBuf,
    /// The entries the supervisor runs now, by alias (what `reload` compares against).
    applied: Mutex<BTreeMap<String, ServerEntry>>,
}

impl Hosting {
    /// Hosting publishing into `route`, with secrets from `secrets` (a store already chosen,
    /// or a [`LazyChoice`] made at first need), over the list at `list_path`. Nothing starts
    /// until [`Hosting::reload`]. The tools cache is in memory until
    /// [`Hosting::with_tools_cache`].
    pub fn new(route: HostedRoute, secrets: impl Into<LazyChoice>, list_path: PathBuf) -> Self {
        let secrets = Arc::new(secrets.into());
        Hosting {
            supervisor: Supervisor::new(route.registry.clone(), secrets.clone()),
            route,
            secrets,
            list_path,
            applied: Mutex::new(BTreeMap::new()),
        }
    }

    /// This hosting remembering published tool lists in `cache` (the server's: the file
    /// [`ToolsCache::default_path`], read at start). Call before [`Hosting::reload`].
    pub fn with_tools_cache(mut self, cache: ToolsCache) -> Self {
        self.supervisor = Supervisor::new(self.route.registry.clone(), self.secrets.clone())
            .with_tools_cache(cache);
        self
    }

    /// The supervisor (state changes for tests and the overlay).
    pub fn supervisor(&self) -> &Supervisor {
        &self.supervisor
    }

    /// The calls waiting for a server's sign-in (the floating prompt shows them).
    pub fn sign_in_prompts(&self) -> &Arc<super::sign_in_prompt::SignInPrompts> {
        self.route.registry.sign_in_prompts()
    }

    /// The hosted servers' elicitations waiting for the user (the panel shows them).
    pub fn elicitations(&self) -> &Arc<super::elicit::Elicitations> {
        self.route.registry.elicitations()
    }

    /// Which secret store is in use, and why; or that none is chosen yet.
    pub fn secrets_summary(&self) -> String {
        self.secrets.summary()
    }

    /// Turns hosting on or off (`[mcp] host_servers`): off stops every server and the route
    /// answers 404; on starts the list's enabled servers.
    pub fn set_enabled(&self, on: bool) -> Result<(), ListError> {
        self.route.set_enabled(on);
        self.reload()
    }

    /// Reads the list and applies the difference to the running connections.
    /// With `secret_store = "keyring"` and no usable Secret Service nothing starts; this does
    /// not probe (the server's thread calls it on `reload-config`): [`Hosting::start`] does.
    pub fn reload(&self) -> Result<(), ListError> {
        if !self.route.is_enabled() || self.secrets.known_failure().is_some() {
            // Nothing runs, but the servers are not removed: their cached tools stay.
            self.apply(&ServerList::default(), false);
            return Ok(());
        }
        let list = server_list::load(&self.list_path)?;
        self.apply(&list, true);
        Ok(())
    }

    /// Starts what is new or changed, stops what is gone; `removed` when what is gone left the
    /// list (its cached tools are forgotten too), not only stopped running.
    fn apply(&self, list: &ServerList, removed: bool) {
        let mut applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        let wanted: BTreeMap<String, ServerEntry> = list
            .servers
            .iter()
            .map(|e| (e.alias.clone(), e.clone()))
            .collect();
        for alias in applied.keys() {
            if !wanted.contains_key(alias) {
                tracing::info!("hosted MCP: stopping `{alias}` (removed)");
                self.supervisor.forget(alias);
                // Its MCP App views go with it (a reconnecting server keeps them).
                self.route.views.hub.alias_gone(alias);
                if removed {
                    self.supervisor.forget_cached_tools(alias);
                }
            }
        }
        for (alias, entry) in &wanted {
            if !entry.enabled {
                self.route.views.hub.alias_gone(alias);
            }
            if applied.get(alias) != Some(entry) {
                tracing::info!("hosted MCP: starting `{alias}`");
                self.supervisor.start(entry.clone());
            }
        }
        *applied = wanted;
    }

    /// The first start: with `secret_store = "keyring"` the Secret Service is probed first
    /// (blocking, 3 s at most per call), then the list is applied ([`Hosting::reload`]).
    pub fn start(&self) -> Result<(), ListError> {
        if let Err(why) = self.secrets.required() {
            tracing::error!("{why}");
        }
        self.reload()
    }

    /// Changes the list under its lock, then applies it.
    fn change<T>(
        &self,
        change: impl FnOnce(&mut ServerList) -> Result<T, ListError>,
    ) -> Result<T, ListError> {
        let result = server_list::update(&self.list_path, change)?;
        self.reload()?;
        Ok(result)
    }

    /// Answers one `calyx mcp` request.
    pub fn handle(&self, request: McpRequest) -> McpAnswer {
        if let Err(why) = self.secrets.required() {
            // `secret_store = "keyring"` without a usable Secret Service: nothing runs, the
            // list still shows what is saved, each row with the reason.
            return match request {
                McpRequest::List => self.list_with(|_| ServerState::Failed {
                    sentence: why.clone(),
                }),
                _ => McpAnswer::failed(why),
            };
        }
        match request {
            McpRequest::List => self.list(),
            McpRequest::Details { alias } => self.details(&alias),
            McpRequest::Add { entry, secrets } => self.add(entry, &secrets),
            McpRequest::Edit {
                alias,
                edit,
                secrets,
            } => self.edit(&alias, &edit, &secrets),
            McpRequest::SetEnabled { alias, enabled } => {
                match self.change(|list| list.set_enabled(&alias, enabled)) {
                    Ok(()) => {
                        let result = if enabled { "enabled" } else { "disabled" };
                        McpAnswer::done(&alias, result, &[], format!("`{alias}` {result}\n"))
                    }
                    Err(e) => McpAnswer::of_list_error(&e),
                }
            }
            McpRequest::Retry { alias } => self.retry(&alias),
            McpRequest::Remove { alias } => self.remove(&alias),
            McpRequest::Import { candidates, policy } => self.import(candidates, &policy),
            McpRequest::SignIn { alias, forwarded } => self.sign_in(&alias, forwarded),
            McpRequest::SignInPaste { alias, redirect } => self.sign_in_paste(&alias, &redirect),
            McpRequest::SignInWait { alias } => self.sign_in_wait(&alias),
            McpRequest::SignOut { alias } => self.sign_out(&alias),
            // The owner loop answers it from the views hub before hosting is asked.
            McpRequest::Views => McpAnswer::failed("views are listed by the server loop"),
        }
    }

    fn store_secrets(&self, alias: &str, secrets: &[(String, String)]) -> Result<(), String> {
        for (name, value) in secrets {
            self.secrets
                .set(&format!("{alias}/{name}"), value)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn add(&self, entry: ServerEntry, secrets: &[(String, String)]) -> McpAnswer {
        let alias = entry.alias.clone();
        let taken = server_list::load(&self.list_path)
            .map(|list| list.get(&alias).is_some())
            .unwrap_or(false);
        if taken {
            return McpAnswer {
                exit: 2,
                text: InvalidEntry::AliasTaken(alias).to_string(),
                json: None,
            };
        }
        // The values first, so the server starts with them.
        if let Err(e) = self.store_secrets(&alias, secrets) {
            return McpAnswer::failed(e);
        }
        match self.change(|list| list.add(entry)) {
            Ok(warnings) => {
                let warnings: Vec<String> = warnings.into_iter().map(|w| w.0).collect();
                let mut text = format!("added `{alias}`\n");
                for w in &warnings {
                    text.push_str(&format!("warning: {w}\n"));
                }
                McpAnswer::done(&alias, "added", &warnings, text)
            }
            Err(e) => McpAnswer::of_list_error(&e),
        }
    }

    fn edit(
        &self,
        alias: &str,
        edit: &super::edit::EntryEdit,
        secrets: &[(String, String)],
    ) -> McpAnswer {
        let known = server_list::load(&self.list_path).map(|list| list.get(alias).is_some());
        if let Ok(false) = known {
            return McpAnswer::of_list_error(&ListError::Unknown(alias.to_string()));
        }
        if let Err(e) = self.store_secrets(alias, secrets) {
            return McpAnswer::failed(e);
        }
        let result = self.change(|list| {
            let mut entry = list
                .get(alias)
                .cloned()
                .ok_or_else(|| ListError::Unknown(alias.to_string()))?;
            let gone = edit.apply(&mut entry);
            let warnings = list.edit(alias, entry)?;
            Ok((gone, warnings))
        });
        match result {
            Ok((gone, warnings)) => {
                for name in gone {
                    if let Err(e) = self.secrets.delete(&format!("{alias}/{name}")) {
                        return McpAnswer::failed(e.to_string());
                    }
                }
                let warnings: Vec<String> = warnings.into_iter().map(|w| w.0).collect();
                let mut text = format!("changed `{alias}`\n");
                for w in &warnings {
                    text.push_str(&format!("warning: {w}\n"));
                }
                McpAnswer::done(alias, "changed", &warnings, text)
            }
            Err(e) => McpAnswer::of_list_error(&e),
        }
    }

    fn retry(&self, alias: &str) -> McpAnswer {
        let entry = {
            let applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
            applied.get(alias).cloned()
        };
        match entry {
            Some(entry) if entry.enabled => {
                self.supervisor.start(entry);
                McpAnswer::done(
                    alias,
                    "reconnecting",
                    &[],
                    format!("reconnecting `{alias}`\n"),
                )
            }
            Some(_) => McpAnswer::failed(format!(
                "`{alias}` is disabled: enable it with `calyx mcp enable {alias}`"
            )),
            None => McpAnswer::of_list_error(&ListError::Unknown(alias.to_string())),
        }
    }

    fn remove(&self, alias: &str) -> McpAnswer {
        match self.change(|list| list.remove(alias)) {
            Ok(entry) => match delete_server_secrets(&*self.secrets, &entry) {
                Ok(()) => McpAnswer::done(
                    alias,
                    "removed",
                    &[],
                    format!("removed `{alias}` and its stored secrets\n"),
                ),
                Err(e) => McpAnswer::failed(format!(
                    "removed `{alias}`, but its secrets could not be deleted: {e}"
                )),
            },
            Err(e) => McpAnswer::of_list_error(&e),
        }
    }

    fn import(&self, candidates: Vec<import::Candidate>, policy: &str) -> McpAnswer {
        let policy: ConflictPolicy = match policy.parse() {
            Ok(p) => p,
            Err(e) => {
                return McpAnswer {
                    exit: 2,
                    text: e,
                    json: None,
                }
            }
        };
        let store: &dyn SecretStore = &*self.secrets;
        // The list is written first, the secrets stored next, and only then are the servers
        // started (with their values).
        let result = server_list::update(&self.list_path, |list| {
            let planned = import::plan(candidates, list, policy);
            // A replaced server's old secrets go first.
            for p in &planned {
                if p.action == import::Action::Replace {
                    if let Some(old) = list.get(&p.candidate.entry.alias) {
                        let _ = delete_server_secrets(store, old);
                    }
                }
            }
            let done = import::apply(&planned, list);
            let json = import::outcome_json(&planned, Some(&done));
            Ok((import::render(&planned), json, done))
        });
        match result {
            Ok((preview, json, done)) => {
                for c in &done {
                    if let Err(e) = self.store_secrets(&c.entry.alias, &c.secrets) {
                        return McpAnswer::failed(e);
                    }
                }
                if let Err(e) = self.reload() {
                    return McpAnswer::failed(e.to_string());
                }
                McpAnswer {
                    exit: 0,
                    text: format!("{preview}imported {} server(s)\n", done.len()),
                    json: Some(json),
                }
            }
            Err(e) => McpAnswer::of_list_error(&e),
        }
    }

    /// The state of `entry` as rows show it.
    fn state_of(&self, entry: &ServerEntry) -> ServerState {
        if !self.route.is_enabled() {
            return ServerState::Failed {
                sentence: "hosting is off (host_servers = false under [mcp] in config.toml)".into(),
            };
        }
        self.supervisor
            .state(&entry.alias)
            .unwrap_or(if entry.enabled {
                ServerState::Connecting
            } else {
                ServerState::Disabled
            })
    }

    fn list(&self) -> McpAnswer {
        self.list_with(|entry| self.state_of(entry))
    }

    /// The rows, each in the state `state_of` gives, then the `secrets:` line (text only).
    fn list_with(&self, state_of: impl Fn(&ServerEntry) -> ServerState) -> McpAnswer {
        let list = match server_list::load(&self.list_path) {
            Ok(list) => list,
            Err(e) => return McpAnswer::failed(e.to_string()),
        };
        let rows: Vec<Value> = list
            .servers
            .iter()
            .map(|e| {
                let mut r = row(e, &state_of(e));
                // Only HTTP servers sign in (and a keyring read per stdio row would be waste).
                if e.transport_name() == "http" {
                    r["signed_in"] = json!(self.signed_in(&e.alias));
                }
                r
            })
            .collect();
        McpAnswer {
            exit: 0,
            text: format!("{}{}\n", render_rows(&rows), self.secrets_summary()),
            json: Some(Value::Array(rows)),
        }
    }

    fn details(&self, alias: &str) -> McpAnswer {
        let list = match server_list::load(&self.list_path) {
            Ok(list) => list,
            Err(e) => return McpAnswer::failed(e.to_string()),
        };
        let Some(entry) = list.get(alias) else {
            return McpAnswer::of_list_error(&ListError::Unknown(alias.to_string()));
        };
        let mut json = row(entry, &self.state_of(entry));
        let facts = self.supervisor.facts(alias);
        // A held server (reconnecting) shows the tools agents still see.
        let server = self.route.registry.entry(alias);
        let (published, app_only, excluded, instructions) = match &server {
            Some(s) => (
                s.tools()
                    .published
                    .iter()
                    .map(|(name, tool)| {
                        json!({"name": name, "original": tool.name, "ui": has_ui(tool)})
                    })
                    .collect::<Vec<_>>(),
                s.tools()
                    .app_only
                    .iter()
                    .map(|t| json!(t.name))
                    .collect::<Vec<_>>(),
                s.tools()
                    .excluded
                    .iter()
                    .map(|(name, why)| json!({"name": name, "reason": why.to_string()}))
                    .collect::<Vec<_>>(),
                s.instructions().map(str::to_string),
            ),
            None => (Vec::new(), Vec::new(), Vec::new(), None),
        };
        json["published"] = json!(published);
        json["app_only"] = json!(app_only);
        json["excluded"] = json!(excluded);
        json["instructions"] = json!(instructions);
        json["protocol_version"] = json!(facts.protocol_version);
        json["server_name"] = json!(facts.server_name);
        json["server_version"] = json!(facts.server_version);
        json["last_failure"] = json!(facts.last_failure);
        json["stderr_tail"] = json!(facts
            .stderr
            .map(|ring| ring.tail(STDERR_LINES))
            .unwrap_or_default());
        McpAnswer {
            exit: 0,
            text: render_details(&json),
            json: Some(json),
        }
    }
}

pub mod overlay;
mod sign_in;

#[cfg(test)]
mod tests;
