//! Published tool names: `<alias>-<tool>`, made safe for every model API an agent CLI talks to.
//!
//! Model APIs allow 64 characters (`^[a-zA-Z0-9_-]{1,64}$` at most, Copilot's up to 128 but the
//! same characters) and Claude Code prefixes `mcp__calyx-mcp__` (16), so a published name has
//! at most 48 characters from `[A-Za-z0-9_-]`. MCP itself allows `.` and `/` and longer names,
//! so such names are rewritten: each other character becomes `_`, the result is cut to 41 and
//! `_` plus 6 hex digits of SHA-256 over `alias NUL original` is appended. The hash makes the
//! name stable across restarts and independent of the order the server lists its tools in.
//! If two of one server's names still collide, the colliding rewritten ones are cut to 37 and
//! take 10 hex digits. Aliases contain no `-`, so the text before the first `-` of a published
//! name is always its alias, and names never collide across servers.

use std::collections::{BTreeMap, HashMap};

use sha2::{Digest, Sha256};

/// The longest published name.
pub const MAX_PUBLISHED_LEN: usize = 48;
/// Length kept before a 6-digit hash suffix (41 + `_` + 6 = 48).
const SHORT_HASH_KEEP: usize = 41;
/// Length kept before a 10-digit hash suffix on a collision (37 + `_` + 10 = 48).
const LONG_HASH_KEEP: usize = 37;

/// Whether `name` can be published as it is.
pub fn is_publishable(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_PUBLISHED_LEN
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// The published name of `tool` of server `alias`, ignoring collisions.
pub fn published_name(alias: &str, tool: &str) -> String {
    let plain = format!("{alias}-{tool}");
    if is_publishable(&plain) {
        plain
    } else {
        hashed(alias, tool, SHORT_HASH_KEEP, 6)
    }
}

/// What an app-registered tool's name is made from besides its own: `<alias>-app_<name>`.
const APP_PREFIX: &str = "app_";
/// Hashed into an app tool's suffix after its name, so it differs from the suffix of a server
/// tool literally named `app_<name>`.
const APP_SALT: &[u8] = b"\0app";

/// The published name of tool `name` that a view of server `alias` registered (issue 17, "App
/// context and app-registered tools"): `<alias>-app_<name>`, the name the hosting issue
/// reserved. Rewritten as a server tool's name is when it is not publishable as it is; when
/// `taken` says the name is someone else's (a server tool that maps onto it keeps its name, as
/// does an app tool named before), it takes the 6-digit hash suffix, then the 10-digit one.
/// None when even that is taken.
pub fn app_tool_name(alias: &str, name: &str, taken: impl Fn(&str) -> bool) -> Option<String> {
    let tool = format!("{APP_PREFIX}{name}");
    let plain = format!("{alias}-{tool}");
    [
        is_publishable(&plain).then(|| plain.clone()),
        Some(hashed_salted(alias, &tool, APP_SALT, SHORT_HASH_KEEP, 6)),
        Some(hashed_salted(alias, &tool, APP_SALT, LONG_HASH_KEEP, 10)),
    ]
    .into_iter()
    .flatten()
    .find(|candidate| !taken(candidate))
}

fn hashed(alias: &str, tool: &str, keep: usize, digits: usize) -> String {
    hashed_salted(alias, tool, b"", keep, digits)
}

/// `<alias>-<tool>` made publishable and cut to `keep`, then `_` and `digits` hex digits of
/// SHA-256 over `alias NUL tool salt`.
fn hashed_salted(alias: &str, tool: &str, salt: &[u8], keep: usize, digits: usize) -> String {
    let sanitized: String = format!("{alias}-{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(keep)
        .collect();
    let mut hasher = Sha256::new();
    hasher.update(alias.as_bytes());
    hasher.update([0u8]);
    hasher.update(tool.as_bytes());
    hasher.update(salt);
    let digest = hasher.finalize();
    let hex: String = digest
        .iter()
        .flat_map(|b| [b >> 4, b & 0xf])
        .take(digits)
        .map(|nibble| char::from_digit(u32::from(nibble), 16).unwrap_or('0'))
        .collect();
    format!("{sanitized}_{hex}")
}

/// The names of one server's tools, both ways.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerNames {
    /// Original name → published name.
    pub published: BTreeMap<String, String>,
    /// Published name → original name.
    pub original: HashMap<String, String>,
    /// Original names that could not be given a unique name (never seen in practice: it takes
    /// a 40-bit hash collision); Details lists them as excluded.
    pub unnamed: Vec<String>,
}

/// Names every tool of server `alias`. Duplicate originals (a broken server) are named once.
pub fn name_tools<'a>(alias: &str, tools: impl IntoIterator<Item = &'a str>) -> ServerNames {
    let mut originals: Vec<&str> = tools.into_iter().collect();
    // Sorting makes every later choice independent of the server's list order.
    originals.sort_unstable();
    originals.dedup();
    let mut by_name: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for tool in &originals {
        by_name
            .entry(published_name(alias, tool))
            .or_default()
            .push(tool);
    }
    let mut names = ServerNames::default();
    let claim = |names: &mut ServerNames, published: String, tool: &str| {
        if names.original.contains_key(&published) {
            names.unnamed.push(tool.to_string());
        } else {
            names.original.insert(published.clone(), tool.to_string());
            names.published.insert(tool.to_string(), published);
        }
    };
    let mut rewritten = Vec::new();
    for (published, tools) in by_name {
        if tools.len() == 1 {
            claim(&mut names, published, tools[0]);
            continue;
        }
        // A name that is valid as it is keeps it; the rewritten ones move to 10 digits.
        for tool in tools {
            if format!("{alias}-{tool}") == published {
                claim(&mut names, published.clone(), tool);
            } else {
                rewritten.push(tool);
            }
        }
    }
    for tool in rewritten {
        claim(&mut names, hashed(alias, tool, LONG_HASH_KEEP, 10), tool);
    }
    names.unnamed.sort_unstable();
    names
}

/// The alias a published name belongs to (the text before its first `-`).
pub fn alias_of(published: &str) -> Option<&str> {
    published.split_once('-').map(|(alias, _)| alias)
}

#[cfg(test)]
mod tests;
