//! `calyx mcp edit`: a change to a server as flags describe it, applied by the server to the
//! entry it reads under the list's lock (so two edits never lose each other's change).

use serde::{Deserialize, Serialize};

use super::entry::{ClientAuth, HttpTarget, ServerEntry, StdioTarget, Transport};

/// What to change; `None` and empty lists leave things as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntryEdit {
    pub name: Option<String>,
    /// A new command and its arguments (makes an HTTP server a stdio one).
    pub command: Option<Vec<String>>,
    pub cwd: Option<String>,
    /// Variables to set (their values travel as secrets beside the edit).
    pub env: Vec<String>,
    pub unset_env: Vec<String>,
    /// A new URL (makes a stdio server an HTTP one).
    pub url: Option<String>,
    pub legacy_sse: Option<bool>,
    /// Headers to set (values travel as secrets).
    pub headers: Vec<String>,
    pub unset_headers: Vec<String>,
    pub client_id: Option<String>,
    pub client_auth: Option<ClientAuth>,
    pub fixed_redirect_port: Option<bool>,
}

impl EntryEdit {
    /// Applies the change; returns the secret names (`env/NAME`, `header/Name`) the entry no
    /// longer has, for the caller to delete.
    pub fn apply(&self, entry: &mut ServerEntry) -> Vec<String> {
        let before = entry.secret_names();
        if let Some(name) = &self.name {
            entry.name = name.clone();
        }
        if let Some(command) = &self.command {
            let mut parts = command.iter().cloned();
            let program = parts.next().unwrap_or_default();
            let args: Vec<String> = parts.collect();
            match &mut entry.transport {
                Transport::Stdio(s) => {
                    s.command = program;
                    s.args = args;
                }
                Transport::Http(_) => {
                    entry.transport = Transport::Stdio(StdioTarget {
                        command: program,
                        args,
                        cwd: None,
                        env: Vec::new(),
                    })
                }
            }
        }
        if let Some(url) = &self.url {
            match &mut entry.transport {
                Transport::Http(h) => h.url = url.clone(),
                Transport::Stdio(_) => {
                    entry.transport = Transport::Http(HttpTarget {
                        url: url.clone(),
                        legacy_sse: false,
                        headers: Vec::new(),
                        oauth: Default::default(),
                    })
                }
            }
        }
        match &mut entry.transport {
            Transport::Stdio(s) => {
                if let Some(cwd) = &self.cwd {
                    s.cwd = (!cwd.is_empty()).then(|| cwd.clone());
                }
                merge_names(&mut s.env, &self.env, &self.unset_env);
            }
            Transport::Http(h) => {
                if let Some(on) = self.legacy_sse {
                    h.legacy_sse = on;
                }
                merge_names(&mut h.headers, &self.headers, &self.unset_headers);
                if let Some(id) = &self.client_id {
                    h.oauth.client_id = (!id.is_empty()).then(|| id.clone());
                }
                if let Some(auth) = self.client_auth {
                    h.oauth.client_auth = auth;
                }
                if let Some(fixed) = self.fixed_redirect_port {
                    h.oauth.fixed_redirect_port = fixed;
                }
            }
        }
        let after = entry.secret_names();
        let mut gone: Vec<String> = before.into_iter().filter(|n| !after.contains(n)).collect();
        // A variable set again keeps its name but gets the new value from the caller.
        gone.dedup();
        gone
    }
}

/// `names` with `add` appended (once each) and `remove` taken out.
fn merge_names(names: &mut Vec<String>, add: &[String], remove: &[String]) {
    names.retain(|n| !remove.contains(n));
    for name in add {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio() -> ServerEntry {
        ServerEntry {
            alias: "ev".into(),
            name: "Everything".into(),
            enabled: true,
            transport: Transport::Stdio(StdioTarget {
                command: "node".into(),
                args: vec!["a.js".into()],
                cwd: None,
                env: vec!["A".into(), "B".into()],
            }),
            note: None,
        }
    }

    #[test]
    fn flags_change_only_what_they_name() {
        let mut entry = stdio();
        let edit = EntryEdit {
            name: Some("Ev".into()),
            env: vec!["C".into(), "A".into()],
            unset_env: vec!["B".into()],
            ..Default::default()
        };
        let gone = edit.apply(&mut entry);
        assert_eq!(gone, vec!["env/B".to_string()]);
        assert_eq!(entry.name, "Ev");
        let Transport::Stdio(s) = &entry.transport else {
            panic!("still stdio")
        };
        assert_eq!(s.env, vec!["A".to_string(), "C".to_string()]);
        assert_eq!(s.args, vec!["a.js".to_string()]);
    }

    #[test]
    fn a_url_makes_a_stdio_server_an_http_one_and_drops_its_variables() {
        let mut entry = stdio();
        let edit = EntryEdit {
            url: Some("http://127.0.0.1:9/mcp".into()),
            headers: vec!["X-Team".into()],
            ..Default::default()
        };
        let gone = edit.apply(&mut entry);
        assert_eq!(gone, vec!["env/A".to_string(), "env/B".to_string()]);
        let Transport::Http(h) = &entry.transport else {
            panic!("now http")
        };
        assert_eq!(h.url, "http://127.0.0.1:9/mcp");
        assert_eq!(h.headers, vec!["X-Team".to_string()]);
    }
}
