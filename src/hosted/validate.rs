//! Checking a server entry before it is saved, with one sentence per mistake that names the
//! input and says what to do (the form shows it under the field; the CLI prints it).

use std::path::Path;

use thiserror::Error;

use super::alias::{is_valid_alias, suggest_alias, ALIAS_RULE};
use super::entry::{ServerEntry, Transport};

/// The longest display name, in characters.
pub const MAX_NAME_CHARS: usize = 64;

/// What is wrong with an entry.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum InvalidEntry {
    #[error("invalid alias `{alias}`: an alias is {ALIAS_RULE}{}", suggestion.as_ref().map(|s| format!("; try `{s}`")).unwrap_or_default())]
    Alias {
        alias: String,
        suggestion: Option<String>,
    },
    #[error("the alias `{0}` is taken by another server: choose another alias")]
    AliasTaken(String),
    #[error("the alias of `{from}` cannot change to `{to}`: remove the server and add it again under the new alias")]
    AliasChange { from: String, to: String },
    #[error("the name of `{alias}` is empty: give it a name of 1 to 64 characters")]
    NameEmpty { alias: String },
    #[error("the name of `{alias}` has {chars} characters: shorten it to 64 at most")]
    NameTooLong { alias: String, chars: usize },
    #[error("the command of `{alias}` is empty: give the program to run")]
    CommandEmpty { alias: String },
    #[error("the URL `{url}` of `{alias}` is not an http:// or https:// URL: enter one like https://host/mcp")]
    Url { alias: String, url: String },
    #[error("the environment variable name `{name}` of `{alias}` is invalid: use letters, digits and _ and do not start with a digit")]
    EnvName { alias: String, name: String },
    #[error("the header name `{name}` of `{alias}` is invalid: use letters, digits and !#$%&'*+-.^_`|~ only")]
    HeaderName { alias: String, name: String },
    #[error(
        "the value of header `{name}` of `{alias}` contains a line break: enter it on one line"
    )]
    HeaderValue { alias: String, name: String },
    #[error(
        "the value of environment variable `{name}` of `{alias}` contains a NUL byte: remove it"
    )]
    EnvValue { alias: String, name: String },
    #[error(
        "the working directory `{cwd}` of `{alias}` does not exist: create it or choose another"
    )]
    Cwd { alias: String, cwd: String },
}

/// Something accepted that the user should know about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning(pub String);

/// Checks the alias alone (before anything else, so a bad alias is the first thing reported).
pub fn check_alias(alias: &str) -> Result<(), InvalidEntry> {
    if is_valid_alias(alias) {
        return Ok(());
    }
    Err(InvalidEntry::Alias {
        alias: alias.to_string(),
        suggestion: suggest_alias(alias),
    })
}

/// Checks everything in `entry` that does not depend on other servers. Returns the warnings
/// for an entry that is accepted.
pub fn check_entry(entry: &ServerEntry) -> Result<Vec<Warning>, InvalidEntry> {
    check_alias(&entry.alias)?;
    let alias = entry.alias.clone();
    let chars = entry.name.chars().count();
    if entry.name.trim().is_empty() {
        return Err(InvalidEntry::NameEmpty { alias });
    }
    if chars > MAX_NAME_CHARS {
        return Err(InvalidEntry::NameTooLong { alias, chars });
    }
    let mut warnings = Vec::new();
    match &entry.transport {
        Transport::Stdio(stdio) => {
            if stdio.command.trim().is_empty() {
                return Err(InvalidEntry::CommandEmpty { alias });
            }
            for name in &stdio.env {
                check_env_name(&alias, name)?;
            }
            if let Some(cwd) = &stdio.cwd {
                if !Path::new(cwd).is_dir() {
                    return Err(InvalidEntry::Cwd {
                        alias,
                        cwd: cwd.clone(),
                    });
                }
            }
        }
        Transport::Http(http) => {
            if let Some(warning) = check_url(&alias, &http.url)? {
                warnings.push(warning);
            }
            for name in &http.headers {
                check_header_name(&alias, name)?;
            }
        }
    }
    Ok(warnings)
}

/// `http`/`https` with a host; plain `http` to a host that is not loopback is accepted with a
/// warning, because bearer tokens and header values would travel in clear.
pub fn check_url(alias: &str, url: &str) -> Result<Option<Warning>, InvalidEntry> {
    let bad = || InvalidEntry::Url {
        alias: alias.to_string(),
        url: url.to_string(),
    };
    let parsed = url::Url::parse(url).map_err(|_| bad())?;
    let host = parsed.host().ok_or_else(bad)?;
    match parsed.scheme() {
        "https" => Ok(None),
        "http" if is_loopback(&host) => Ok(None),
        "http" => Ok(Some(Warning(format!(
            "`{alias}` uses plain http to {host}: tokens and header values travel in clear; use https if the server offers it"
        )))),
        _ => Err(bad()),
    }
}

fn is_loopback(host: &url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(name) => name.eq_ignore_ascii_case("localhost"),
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`: what every shell and `env` accept.
pub fn check_env_name(alias: &str, name: &str) -> Result<(), InvalidEntry> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(InvalidEntry::EnvName {
            alias: alias.to_string(),
            name: name.to_string(),
        })
    }
}

/// An environment value may hold anything but NUL (which no process environment can carry).
pub fn check_env_value(alias: &str, name: &str, value: &str) -> Result<(), InvalidEntry> {
    if value.contains('\0') {
        return Err(InvalidEntry::EnvValue {
            alias: alias.to_string(),
            name: name.to_string(),
        });
    }
    Ok(())
}

/// An RFC 7230 `token`: one or more of ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``.
pub fn check_header_name(alias: &str, name: &str) -> Result<(), InvalidEntry> {
    let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if !name.is_empty() && name.chars().all(tchar) {
        Ok(())
    } else {
        Err(InvalidEntry::HeaderName {
            alias: alias.to_string(),
            name: name.to_string(),
        })
    }
}

/// A header value must not contain CR or LF (header injection) or NUL.
pub fn check_header_value(alias: &str, name: &str, value: &str) -> Result<(), InvalidEntry> {
    if value.contains(['\r', '\n', '\0']) {
        return Err(InvalidEntry::HeaderValue {
            alias: alias.to_string(),
            name: name.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
