//! The settings and keys of the running server, changed without editing the config file:
//! `set-option`, `show-options`, `source-file`, `list-keys`, `bind-key`, `unbind-key`. A
//! setting goes through the config file's reader and is put in force as a reload puts the file
//! in force ([`Server::apply_config`]), so both check and apply a value the same way.

use crate::config::options;
use crate::protocol::Response;
use crate::server::input::bind_key::{self, RuntimeBinding};
use crate::server::owner::Server;

impl Server {
    /// `set-option [-t SESSION] [-u] NAME [VALUE]`. calyx's settings are global: with a
    /// session named, it must exist, and the answer says the value is global.
    pub(crate) fn set_option(
        &mut self,
        target: Option<String>,
        name: &str,
        value: Option<&str>,
        unset: bool,
    ) -> Response {
        if let Some(t) = &target {
            if let Err(e) = self.state.resolve(Some(t)) {
                return Response::Error(e);
            }
        }
        let (config, problems) = match options::set(&self.state.config, name, value, unset) {
            Ok(read) => read,
            Err(e) => return Response::Error(e),
        };
        if !problems.is_empty() {
            return Response::Error(problems.join("; "));
        }
        if let Some(e) = self.apply_config(config).hosting_error {
            return Response::Error(e);
        }
        match target {
            Some(t) => Response::Text(format!(
                "{} is global in calyx: set for every session, {t} included\n",
                options::key_of(name)
            )),
            None => Response::Ok,
        }
    }

    /// `show-options [-v] [NAME]`: the settings in force, as the config file writes them.
    pub(crate) fn show_options(&self, name: Option<&str>, value_only: bool) -> Response {
        match options::show(&self.state.config, name) {
            Ok(lines) => Response::Text(
                lines
                    .iter()
                    .map(|l| match value_only {
                        true => l.split_once(' ').map_or(l.as_str(), |(_, v)| v),
                        false => l.as_str(),
                    })
                    .map(|l| format!("{l}\n"))
                    .collect(),
            ),
            Err(e) => Response::Error(e),
        }
    }

    /// `source-file PATH`: that file applied as reload-config applies the config file, every
    /// problem reported at once; a file that is not there is an error (not the defaults).
    pub(crate) fn source_file(&mut self, path: &str) -> Response {
        let path = std::path::Path::new(path);
        if !path.is_file() {
            return Response::Error(format!("{}: no such file", path.display()));
        }
        let (text, errors) = self.apply_config_file(path, format!("read {}", path.display()));
        match errors.is_empty() {
            true => Response::Text(format!("{text}\n")),
            false => Response::Error(format!("{text}; {}", errors.join("; "))),
        }
    }

    /// `list-keys`: every binding as a `bind-key` line.
    pub(crate) fn list_keys(&self) -> Response {
        let lines = crate::commands::list_keys(&self.state.config.keymap);
        Response::Text(lines.iter().map(|l| format!("{l}\n")).collect())
    }

    /// `bind-key [-n] [-r] KEY COMMAND...`: refused at once when the key or command is bad.
    pub(crate) fn bind_key(
        &mut self,
        key: &str,
        root: bool,
        repeat: bool,
        command: &[String],
    ) -> Response {
        self.runtime_binding(RuntimeBinding::bind(key, root, repeat, command))
    }

    /// `unbind-key [-n] KEY`.
    pub(crate) fn unbind_key(&mut self, key: &str, root: bool) -> Response {
        self.runtime_binding(RuntimeBinding::unbind(key, root))
    }

    /// Applies a binding made at run time and keeps it for later reloads (the newest for a key
    /// replaces the older ones).
    fn runtime_binding(&mut self, binding: Result<RuntimeBinding, String>) -> Response {
        let binding = match binding {
            Ok(b) => b,
            Err(e) => return Response::Error(e),
        };
        if let Err(e) = bind_key::apply(&mut self.state.config.keymap, &binding) {
            return Response::Error(e);
        }
        self.runtime_bindings
            .retain(|b| (b.key, b.root) != (binding.key, binding.root));
        self.runtime_bindings.push(binding);
        for c in self.state.clients.values_mut() {
            c.dirty = true;
        }
        Response::Ok
    }
}
