//! The identity headers: which pane (and which CLI) a request comes from.

use hyper::header::HeaderMap;

use calyx_integrations::AgentKind;

use super::{CallerKind, Identity};

pub use calyx_integrations::headers::{KIND_HEADER, SESSION_HEADER, SURFACE_HEADER};

/// The agent kind hook routes assume when none is sent: Claude Code's MCP and hook entries
/// carry no kind header (the one place this default is made).
pub const DEFAULT_HOOK_KIND: AgentKind = AgentKind::ClaudeCode;

/// Reads the identity headers. Empty values count as absent: Claude Code sends
/// `${CALYX_SURFACE_ID:-}` as an empty string outside a calyx pane.
pub fn from_headers(headers: &HeaderMap, default_kind: Option<AgentKind>) -> Identity {
    Identity {
        session_id: header(headers, SESSION_HEADER),
        surface_id: header(headers, SURFACE_HEADER),
        agent_kind: header(headers, KIND_HEADER)
            .map(|name| CallerKind::parse(&name))
            .or_else(|| default_kind.map(CallerKind::Known)),
    }
}

fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    let value = headers.get(name)?.to_str().ok()?.trim();
    // Some CLIs send an unexpanded `${CALYX_SURFACE_ID}` when the variable is unset (Copilot)
    // or always for the `:-` form (Hermes): such a value names no pane.
    let placeholder = value.starts_with("${") || value.starts_with("{env:");
    (!value.is_empty() && !placeholder).then(|| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    #[test]
    fn unexpanded_placeholders_are_absent() {
        let mut headers = HeaderMap::new();
        headers.insert(
            SURFACE_HEADER,
            HeaderValue::from_static("${CALYX_SURFACE_ID}"),
        );
        headers.insert(
            SESSION_HEADER,
            HeaderValue::from_static("{env:CALYX_SESSION_ID}"),
        );
        let id = from_headers(&headers, None);
        assert_eq!(id.surface_id, None);
        assert_eq!(id.session_id, None);
    }

    #[test]
    fn reads_and_defaults() {
        let mut headers = HeaderMap::new();
        headers.insert(SURFACE_HEADER, HeaderValue::from_static(" s-1 "));
        headers.insert(SESSION_HEADER, HeaderValue::from_static(""));
        let id = from_headers(&headers, Some(DEFAULT_HOOK_KIND));
        assert_eq!(id.surface_id.as_deref(), Some("s-1"));
        assert_eq!(id.session_id, None);
        assert_eq!(
            id.agent_kind,
            Some(CallerKind::Known(AgentKind::ClaudeCode))
        );
        headers.insert(KIND_HEADER, HeaderValue::from_static("codex"));
        assert_eq!(
            from_headers(&headers, None).agent_kind,
            Some(CallerKind::Known(AgentKind::Codex))
        );
        headers.insert(KIND_HEADER, HeaderValue::from_static("claude"));
        assert_eq!(
            from_headers(&headers, None).agent_kind,
            Some(CallerKind::Unknown("claude".into()))
        );
        assert_eq!(from_headers(&HeaderMap::new(), None).agent_kind, None);
    }
}
