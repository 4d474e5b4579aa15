//! One hosted server as `mcp-servers.json` stores it. Only names of secrets are here (`env`,
//! `headers`): their values live in the secret store, so the file can be shown, diffed and
//! backed up without leaking a token.

use serde::{Deserialize, Serialize};

/// A server the user added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerEntry {
    pub alias: String,
    pub name: String,
    pub enabled: bool,
    #[serde(flatten)]
    pub transport: Transport,
    /// Why calyx added it disabled (an import whose `${VAR}` did not resolve); cleared when the
    /// user enables it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// How calyx reaches the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "lowercase")]
pub enum Transport {
    Stdio(StdioTarget),
    Http(HttpTarget),
}

/// A server calyx starts itself and speaks to over stdin/stdout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StdioTarget {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// Names of the variables set for it; the values are secrets.
    #[serde(default)]
    pub env: Vec<String>,
}

/// A server at a URL (Streamable HTTP, or the legacy HTTP+SSE transport).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpTarget {
    pub url: String,
    #[serde(default)]
    pub legacy_sse: bool,
    /// Names of the request headers sent; the values are secrets.
    #[serde(default)]
    pub headers: Vec<String>,
    #[serde(default)]
    pub oauth: OAuthSettings,
}

/// The OAuth client settings of an HTTP server (the client secret is a secret).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OAuthSettings {
    #[serde(default)]
    pub client_id: Option<String>,
    #[serde(default)]
    pub client_auth: ClientAuth,
    #[serde(default)]
    pub fixed_redirect_port: bool,
}

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientAuth {
    #[default]
    None,
    ClientSecretPost,
    ClientSecretBasic,
}

impl ServerEntry {
    /// `stdio` or `http`, as rows and `--json` show it.
    pub fn transport_name(&self) -> &'static str {
        match self.transport {
            Transport::Stdio(_) => "stdio",
            Transport::Http(_) => "http",
        }
    }

    /// The command line or the URL, as a row shows it.
    pub fn target(&self) -> String {
        match &self.transport {
            Transport::Stdio(s) if s.args.is_empty() => s.command.clone(),
            Transport::Stdio(s) => format!("{} {}", s.command, crate::argsplit::join_args(&s.args)),
            Transport::Http(h) => h.url.clone(),
        }
    }

    /// The names of this server's secrets (for removal with the server).
    pub fn secret_names(&self) -> Vec<String> {
        match &self.transport {
            Transport::Stdio(s) => s.env.iter().map(|n| format!("env/{n}")).collect(),
            Transport::Http(h) => h.headers.iter().map(|n| format!("header/{n}")).collect(),
        }
    }
}
