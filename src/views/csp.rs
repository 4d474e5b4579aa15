//! The sandbox page's Content-Security-Policy, computed from a view resource's `_meta.ui.csp`
//! (issue 17, "Host page and sandbox").
//!
//! The header is the only thing that keeps a view's HTML from reaching hosts its server did not
//! declare, and the inner frame inherits it, so it is built here from the resource's metadata
//! and never from anything the page could change. The MCP Apps spec's default policy applies
//! when nothing is declared; a declared entry is copied into the header only when it has one of
//! a few strict shapes, so no entry can add a directive, widen a source list to `*` or bring a
//! keyword such as `'unsafe-eval'`. What is dropped is returned, so the card and the page can
//! show "Ignored CSP entries" instead of failing silently.

use serde_json::{Map, Value};

/// Where each declared domain list goes. The names are the spec's `McpUiResourceCsp` fields.
const FIELDS: [&str; 4] = [
    "connectDomains",
    "resourceDomains",
    "frameDomains",
    "baseUriDomains",
];

/// The domains of a `csp` object that passed [`accept_source`], normalised (lower-case scheme
/// and host, no trailing slash) and without duplicates. This is also what the host reports as
/// `hostCapabilities.sandbox.csp`: the domains actually allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedDomains {
    /// `connectDomains`: `connect-src`.
    pub connect: Vec<String>,
    /// `resourceDomains`: `script-src`, `style-src`, `img-src`, `font-src`, `media-src`.
    pub resource: Vec<String>,
    /// `frameDomains`: `frame-src` (else `'none'`).
    pub frame: Vec<String>,
    /// `baseUriDomains`: `base-uri` (else `'self'`).
    pub base_uri: Vec<String>,
}

impl AllowedDomains {
    /// The spec's `McpUiResourceCsp` shape, for `hostCapabilities.sandbox.csp`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "connectDomains": self.connect,
            "resourceDomains": self.resource,
            "frameDomains": self.frame,
            "baseUriDomains": self.base_uri,
        })
    }
}

/// The policy for one view: the header value, the domains it allows and the entries dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxCsp {
    /// The `Content-Security-Policy` header value of the sandbox page.
    pub header: String,
    /// The domains that made it into the header.
    pub allowed: AllowedDomains,
    /// Entries dropped, as the server wrote them (non-strings as their JSON text). They are
    /// server-provided text: sanitize before showing them on a terminal.
    pub ignored: Vec<String>,
}

/// The policy for a resource whose merged `_meta.ui` carries `csp` (or not: `None`, or any
/// non-object, gives the spec's default policy, which allows no outside host).
pub fn sandbox_csp(csp: Option<&Value>) -> SandboxCsp {
    let mut allowed = AllowedDomains::default();
    let mut ignored = Vec::new();
    if let Some(Value::Object(map)) = csp {
        for field in FIELDS {
            let target = match field {
                "connectDomains" => &mut allowed.connect,
                "resourceDomains" => &mut allowed.resource,
                "frameDomains" => &mut allowed.frame,
                _ => &mut allowed.base_uri,
            };
            collect(map, field, target, &mut ignored);
        }
    }
    SandboxCsp {
        header: header(&allowed),
        allowed,
        ignored,
    }
}

/// Sorts one field's entries into accepted (normalised, deduplicated) and ignored.
fn collect(
    map: &Map<String, Value>,
    field: &str,
    into: &mut Vec<String>,
    ignored: &mut Vec<String>,
) {
    let entries = match map.get(field) {
        None | Some(Value::Null) => return,
        Some(Value::Array(entries)) => entries.as_slice(),
        Some(other) => std::slice::from_ref(other),
    };
    for entry in entries {
        match entry.as_str().and_then(accept_source) {
            Some(source) if !into.contains(&source) => into.push(source),
            Some(_) => {}
            None => ignored.push(match entry {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            }),
        }
    }
}

/// The header for these domains. With every list empty it is the spec's default policy plus the
/// directives calyx always sets (`frame-src`, `base-uri`, `object-src`, `form-action`).
/// `connect-src` gets no `'self'`: the sandbox origin is calyx's view server, which a view has
/// no reason to call.
fn header(allowed: &AllowedDomains) -> String {
    let with = |base: &[&str], extra: &[String]| -> String {
        let mut parts: Vec<&str> = base.to_vec();
        parts.extend(extra.iter().map(String::as_str));
        parts.join(" ")
    };
    let or = |list: &[String], fallback: &str| -> String {
        if list.is_empty() {
            fallback.to_string()
        } else {
            list.join(" ")
        }
    };
    let resource = &allowed.resource;
    let mut directives = vec![
        "default-src 'none'".to_string(),
        format!(
            "script-src {}",
            with(&["'self'", "'unsafe-inline'"], resource)
        ),
        format!(
            "style-src {}",
            with(&["'self'", "'unsafe-inline'"], resource)
        ),
        format!("img-src {}", with(&["'self'", "data:"], resource)),
        format!("media-src {}", with(&["'self'", "data:"], resource)),
    ];
    // The spec's default has no font-src (fonts fall back to default-src 'none'); declared
    // resource domains add it.
    if !resource.is_empty() {
        directives.push(format!("font-src {}", with(&["'self'"], resource)));
    }
    directives.push(format!("connect-src {}", or(&allowed.connect, "'none'")));
    directives.push(format!("frame-src {}", or(&allowed.frame, "'none'")));
    directives.push(format!("base-uri {}", or(&allowed.base_uri, "'self'")));
    directives.push("object-src 'none'".to_string());
    directives.push("form-action 'none'".to_string());
    directives.join("; ")
}

/// The normalised source expression for an accepted entry, `None` for a dropped one.
///
/// Accepted: `https://host[:port]`, `wss://host[:port]`, `https://*.example.com` (a wildcard
/// over at least two labels, so never `*.com`), and `http://` / `ws://` only for `127.0.0.1`,
/// `localhost` and `[::1]`; one trailing `/` is tolerated. Everything else is dropped: `*`,
/// scheme-only sources (`https:`), keywords, paths, other `http:` hosts, and anything holding a
/// character outside host names (so no whitespace, `;`, `,` or quote can reach the header).
pub fn accept_source(entry: &str) -> Option<String> {
    let entry = entry.strip_suffix('/').unwrap_or(entry);
    let (scheme, rest) = entry.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let (host, port) = split_port(rest)?;
    let host = host.to_ascii_lowercase();
    let ok = match scheme.as_str() {
        "https" => is_dns_name(&host) || is_wildcard(&host) || is_loopback(&host),
        "wss" => is_dns_name(&host) || is_loopback(&host),
        "http" | "ws" => is_loopback(&host),
        _ => false,
    };
    ok.then(|| match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

/// `host[:port]` with the port, when present, a number from 1 to 65535 (no `:*`).
fn split_port(rest: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if let Some(inner) = rest.strip_prefix('[') {
        let close = inner.find(']')?;
        let after = &rest[close + 2..];
        let host = &rest[..close + 2];
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match rest.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (rest, None),
        }
    };
    let port = match port {
        None => None,
        Some(digits) => {
            if digits.is_empty() || digits.len() > 5 || !digits.bytes().all(|b| b.is_ascii_digit())
            {
                return None;
            }
            let port: u16 = digits.parse().ok()?;
            if port == 0 {
                return None;
            }
            Some(port)
        }
    };
    Some((host, port))
}

/// A host name (or dotted IPv4 address): labels of ASCII letters, digits and inner hyphens.
fn is_dns_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

/// `*.example.com`: a wildcard over a name of at least two labels.
fn is_wildcard(host: &str) -> bool {
    host.strip_prefix("*.")
        .is_some_and(|name| is_dns_name(name) && name.contains('.'))
}

/// The loopback names the spec's local development servers use.
fn is_loopback(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "localhost" | "[::1]")
}

#[cfg(test)]
#[path = "csp_tests.rs"]
mod tests;
