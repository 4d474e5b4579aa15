//! What the servers overlay (`prefix M`) asks of hosting beyond the `calyx mcp` answers: its
//! rows (a failed server's last stderr lines included) and the preview of an import pasted
//! into it, `${VAR}`s filled from the server's environment. Blocking, like the rest of
//! [`Hosting`]: the server calls these on a blocking thread.

use calyx_tui::ServerRow;

use super::super::connection::state::ServerState;
use super::super::entry::Transport;
use super::super::import::{self, Candidate, ConflictPolicy};
use super::super::server_list;
use super::{Hosting, STDERR_LINES};

impl Hosting {
    /// Every saved server as the overlay lists it.
    pub fn overlay_rows(&self) -> Result<Vec<ServerRow>, String> {
        let list = server_list::load(&self.list_path).map_err(|e| e.to_string())?;
        // `secret_store = "keyring"` without a Secret Service: every row says why nothing runs.
        let off = self.secrets.required().err();
        Ok(list
            .servers
            .iter()
            .map(|entry| {
                let state = match &off {
                    Some(why) => ServerState::Failed {
                        sentence: why.clone(),
                    },
                    None => self.state_of(entry),
                };
                let stderr = match state {
                    ServerState::Failed { .. } => self
                        .supervisor
                        .facts(&entry.alias)
                        .stderr
                        .map(|ring| ring.tail(STDERR_LINES))
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                ServerRow {
                    alias: entry.alias.clone(),
                    name: entry.name.clone(),
                    enabled: entry.enabled,
                    status: state.status_line(),
                    stderr,
                    transport: entry.transport_name().to_string(),
                    target: entry.target(),
                    signed_in: matches!(entry.transport, Transport::Http(_))
                        && self.signed_in(&entry.alias),
                }
            })
            .collect())
    }

    /// `text` parsed with the server's environment, and what importing it with the default
    /// policy would do (the text `calyx mcp import --dry-run` prints); a parse error names its
    /// line and column.
    pub fn import_preview(&self, text: &str) -> Result<(Vec<Candidate>, String), String> {
        let candidates = parse_import(text)?;
        let list = server_list::load(&self.list_path).map_err(|e| e.to_string())?;
        let planned = import::plan(candidates.clone(), &list, ConflictPolicy::default());
        Ok((candidates, import::render(&planned)))
    }
}

/// An import text read with the server's environment.
pub fn parse_import(text: &str) -> Result<Vec<Candidate>, String> {
    let lookup = |name: &str| std::env::var(name).ok();
    import::parse(text, &lookup).map_err(|e| e.to_string())
}

impl Hosting {
    /// Whether a client secret is stored for `alias` (the Edit form shows it masked).
    pub fn client_secret_saved(&self, alias: &str) -> bool {
        use super::super::secrets::SecretStore;
        matches!(
            self.secrets
                .get(&super::super::secrets::client_secret_account(alias)),
            Ok(Some(_))
        )
    }

    /// The saved entry of `alias` (the Edit form starts from it).
    pub fn entry(&self, alias: &str) -> Result<super::super::entry::ServerEntry, String> {
        let list = server_list::load(&self.list_path).map_err(|e| e.to_string())?;
        list.get(alias)
            .cloned()
            .ok_or_else(|| server_list::ListError::Unknown(alias.to_string()).to_string())
    }
}

impl Hosting {
    /// `c` in the overlay: ends the sign-in of `alias` in progress (its listener closes) and
    /// puts it back in `Sign-in required`; an error when none is in progress.
    pub fn cancel_sign_in(&self, alias: &str) -> Result<(), String> {
        if self.supervisor.state(alias) != Some(ServerState::SigningIn) {
            return Err(format!("no sign-in of `{alias}` is in progress"));
        }
        self.supervisor.sign_ins().cancel(alias);
        self.supervisor
            .set_state(alias, ServerState::SignInRequired);
        Ok(())
    }
}
