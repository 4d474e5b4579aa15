//! Reading the MCP server configs agent CLIs already use: `{"mcpServers": {...}}` (Claude Code,
//! Cursor, Gemini, Copilot), OpenCode's `{"mcp": {...}}`, VS Code's `{"servers": {...}}`, a bare
//! map `{name: server}`, or one server object. Every key calyx does not use is listed as
//! ignored rather than dropped silently.

use serde_json::{Map, Value};
use thiserror::Error;

use super::vars::expand;
use crate::hosted::alias::derive_alias;
use crate::hosted::entry::{HttpTarget, OAuthSettings, ServerEntry, StdioTarget, Transport};
use crate::hosted::validate;

/// Why an import text cannot be read at all.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ImportError {
    #[error("the import JSON does not parse at line {line}, column {column}: {message}")]
    Parse {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the import JSON must be an object: {{\"mcpServers\": {{...}}}}, a map of servers, or one server")]
    NotAnObject,
    #[error("server '{server}': \"{key}\" must be {expected}")]
    Type {
        server: String,
        key: String,
        expected: &'static str,
    },
    #[error("server '{server}': it has neither \"command\" nor \"url\"; give one of them")]
    NoTarget { server: String },
    #[error("the import JSON lists no servers")]
    Empty,
}

/// One server read from the import text, before conflicts are resolved. Serializable: `calyx
/// mcp import` reads the text with its own environment and sends these to the server.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Candidate {
    /// Its key in the map (its name), or `name`/`server` for a single object.
    pub key: String,
    /// The entry to save; `alias` is derived from the key, `enabled` false when a variable did
    /// not resolve or the source disabled it.
    pub entry: ServerEntry,
    /// Secret values: (`env/NAME` or `header/Name`, value).
    pub secrets: Vec<(String, String)>,
    /// `${VAR}` references that did not resolve.
    pub unresolved: Vec<String>,
    /// Keys calyx does not use, sorted.
    pub ignored: Vec<String>,
    /// Why this server cannot be imported (an invalid header name, a missing directory...).
    pub problem: Option<String>,
}

/// The keys of a server object calyx reads.
const KNOWN_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "environment",
    "cwd",
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "disabled",
    "enabled",
    "name",
];

/// Parses an import text; `lookup` resolves `${VAR}` references.
pub fn parse(
    text: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Candidate>, ImportError> {
    let root: Value = serde_json::from_str(text).map_err(|e| ImportError::Parse {
        line: e.line(),
        column: e.column(),
        message: strip_position(&e.to_string()),
    })?;
    let Value::Object(root) = root else {
        return Err(ImportError::NotAnObject);
    };
    let servers: ServerObjects = match wrapped_map(&root) {
        Some(map) => server_objects(map)?,
        None if looks_like_server(&root) => {
            let key = root
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("server")
                .to_string();
            vec![(key, &root)]
        }
        None => server_objects(&root)?,
    };
    if servers.is_empty() {
        return Err(ImportError::Empty);
    }
    servers
        .into_iter()
        .map(|(key, object)| candidate(&key, object, lookup))
        .collect()
}

/// serde_json appends " at line L column C"; the message names the position itself.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_string(),
        None => message.to_string(),
    }
}

fn wrapped_map(root: &Map<String, Value>) -> Option<&Map<String, Value>> {
    ["mcpServers", "mcp", "servers"]
        .iter()
        .find_map(|key| root.get(*key).and_then(Value::as_object))
}

fn looks_like_server(object: &Map<String, Value>) -> bool {
    ["command", "url", "httpUrl", "serverUrl"]
        .iter()
        .any(|k| object.contains_key(*k))
        || object.get("type").is_some_and(Value::is_string)
}

/// Each server's key and object.
type ServerObjects<'a> = Vec<(String, &'a Map<String, Value>)>;

fn server_objects(map: &Map<String, Value>) -> Result<ServerObjects<'_>, ImportError> {
    map.iter()
        .map(|(key, value)| match value {
            Value::Object(object) => Ok((key.clone(), object)),
            _ => Err(ImportError::Type {
                server: key.clone(),
                key: key.clone(),
                expected: "an object describing the server",
            }),
        })
        .collect()
}

/// Typed access to one server's keys, with the error naming server and key.
struct Fields<'a> {
    server: &'a str,
    object: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    fn error(&self, key: &str, expected: &'static str) -> ImportError {
        ImportError::Type {
            server: self.server.to_string(),
            key: key.to_string(),
            expected,
        }
    }

    fn string(&self, key: &str) -> Result<Option<&'a str>, ImportError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(self.error(key, "a string")),
        }
    }

    fn bool(&self, key: &str) -> Result<Option<bool>, ImportError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(self.error(key, "true or false")),
        }
    }

    fn strings(&self, key: &str) -> Result<Vec<&'a str>, ImportError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .ok_or_else(|| self.error(key, "an array of strings"))
                })
                .collect(),
            Some(_) => Err(self.error(key, "an array of strings")),
        }
    }

    fn string_map(&self, key: &str) -> Result<Vec<(&'a str, &'a str)>, ImportError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| {
                    v.as_str()
                        .map(|v| (k.as_str(), v))
                        .ok_or_else(|| self.error(key, "an object of string values"))
                })
                .collect(),
            Some(_) => Err(self.error(key, "an object of string values")),
        }
    }
}

/// Collects expansions and their unresolved names.
struct Expander<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    unresolved: Vec<String>,
}

impl Expander<'_> {
    fn fill(&mut self, text: &str) -> String {
        let expanded = expand(text, self.lookup);
        for name in expanded.unresolved {
            if !self.unresolved.contains(&name) {
                self.unresolved.push(name);
            }
        }
        expanded.text
    }
}

fn candidate(
    key: &str,
    object: &Map<String, Value>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Candidate, ImportError> {
    let fields = Fields {
        server: key,
        object,
    };
    let mut vars = Expander {
        lookup,
        unresolved: Vec::new(),
    };
    let kind = fields.string("type")?;
    let url = match (
        fields.string("url")?,
        fields.string("httpUrl")?,
        fields.string("serverUrl")?,
    ) {
        (Some(u), _, _) | (None, Some(u), _) | (None, None, Some(u)) => Some(u),
        _ => None,
    };
    // OpenCode's `command` is an array: program and arguments.
    let (command, mut args): (Option<String>, Vec<String>) = match object.get("command") {
        Some(Value::Array(_)) => {
            let parts = fields.strings("command")?;
            let mut parts = parts.into_iter().map(|p| vars.fill(p));
            (parts.next(), parts.collect())
        }
        _ => (fields.string("command")?.map(|c| vars.fill(c)), Vec::new()),
    };
    args.extend(fields.strings("args")?.into_iter().map(|a| vars.fill(a)));
    let legacy_sse = kind == Some("sse");
    let is_http = match kind {
        Some("stdio" | "local") => false,
        Some("http" | "streamable-http" | "streamableHttp" | "sse" | "remote") => true,
        Some(_) => {
            return Err(fields.error(
                "type",
                "one of stdio, http, streamable-http, streamableHttp, sse, local, remote",
            ))
        }
        None => command.is_none() && url.is_some(),
    };
    let mut secrets = Vec::new();
    let transport = if is_http {
        let url = url.ok_or_else(|| fields.error("url", "a string"))?;
        let url = vars.fill(url);
        let mut headers = Vec::new();
        for (name, value) in fields.string_map("headers")? {
            headers.push(name.to_string());
            secrets.push((format!("header/{name}"), vars.fill(value)));
        }
        Transport::Http(HttpTarget {
            url,
            legacy_sse,
            headers,
            oauth: OAuthSettings::default(),
        })
    } else {
        let command = command.ok_or_else(|| ImportError::NoTarget {
            server: key.to_string(),
        })?;
        let mut env_pairs = fields.string_map("env")?;
        env_pairs.extend(fields.string_map("environment")?);
        let mut env = Vec::new();
        for (name, value) in env_pairs {
            env.push(name.to_string());
            secrets.push((format!("env/{name}"), vars.fill(value)));
        }
        let cwd = fields.string("cwd")?.map(|c| vars.fill(c));
        Transport::Stdio(StdioTarget {
            command,
            args,
            cwd,
            env,
        })
    };
    let enabled = match (fields.bool("disabled")?, fields.bool("enabled")?) {
        (Some(disabled), _) => !disabled,
        (None, Some(enabled)) => enabled,
        (None, None) => true,
    };
    let mut ignored: Vec<String> = object
        .keys()
        .filter(|k| !KNOWN_KEYS.contains(&k.as_str()))
        .cloned()
        .collect();
    ignored.sort();
    let name: String = key.chars().take(validate::MAX_NAME_CHARS).collect();
    let alias = derive_alias(key).unwrap_or_else(|| "server".to_string());
    let unresolved = vars.unresolved;
    let entry = ServerEntry {
        alias,
        name,
        enabled: enabled && unresolved.is_empty(),
        transport,
        // Written once the final alias is known (plan.rs).
        note: None,
    };
    let problem = check(&entry, &secrets).err();
    Ok(Candidate {
        key: key.to_string(),
        entry,
        secrets,
        unresolved,
        ignored,
        problem,
    })
}

/// The entry's own checks plus the secret values' (header values on one line).
fn check(entry: &ServerEntry, secrets: &[(String, String)]) -> Result<(), String> {
    validate::check_entry(entry).map_err(|e| e.to_string())?;
    for (account, value) in secrets {
        if let Some(name) = account.strip_prefix("header/") {
            validate::check_header_value(&entry.alias, name, value).map_err(|e| e.to_string())?;
        }
        if let Some(name) = account.strip_prefix("env/") {
            validate::check_env_value(&entry.alias, name, value).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
