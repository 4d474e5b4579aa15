//! `bind-key` and `unbind-key` at run time, as pure changes to a [`Keymap`]: the command is read
//! by the `:` prompt's parser when the key is bound, so a typo is refused at once rather than when
//! the key is pressed. A key-table command binds its action; any other command binds its line,
//! which the prompt runs when the key is pressed.

use crate::commands::{Action, Keymap};
use crate::keys::Key;

use super::prompt::{self, PromptCommand};

/// One `bind-key` or `unbind-key` made at run time; kept by the server so it outlasts a reload
/// of the config file (see [`reapply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeBinding {
    pub key: Key,
    /// Without the prefix (`-n`).
    pub root: bool,
    /// Repeatable (`-r`; after the prefix only).
    pub repeat: bool,
    /// The command line; None for `unbind-key`.
    pub command: Option<String>,
}

impl RuntimeBinding {
    /// Reads `bind-key`'s arguments: the key name and the command's words.
    pub fn bind(key: &str, root: bool, repeat: bool, command: &[String]) -> Result<Self, String> {
        Ok(Self {
            key: key_named(key)?,
            root,
            repeat: repeat && !root,
            command: Some(crate::argsplit::join_args(command)),
        })
    }

    /// Reads `unbind-key`'s arguments.
    pub fn unbind(key: &str, root: bool) -> Result<Self, String> {
        Ok(Self {
            key: key_named(key)?,
            root,
            repeat: false,
            command: None,
        })
    }
}

fn key_named(name: &str) -> Result<Key, String> {
    Key::parse(name).ok_or_else(|| format!("{name:?} is not a key name (try C-a, M-x, F5, Up)"))
}

/// Applies `binding` to `keymap`, or says why its command cannot run (nothing changes then).
pub fn apply(keymap: &mut Keymap, binding: &RuntimeBinding) -> Result<(), String> {
    let action = match &binding.command {
        Some(line) => Some(action_for(keymap, line)?),
        None => None,
    };
    let key = binding.key;
    let table = match binding.root {
        true => &mut keymap.root,
        false => &mut keymap.bindings,
    };
    match action {
        Some(action) => table.insert(key, action),
        None => table.remove(&key),
    };
    if !binding.root {
        match binding.repeat {
            true => keymap.repeat.insert(key),
            false => keymap.repeat.remove(&key),
        };
    }
    Ok(())
}

/// Applies the run-time bindings to a keymap just read from the config file, except where the
/// file binds the same key after the prefix: the file stays authoritative for what it names.
pub fn reapply(keymap: &mut Keymap, bindings: &[RuntimeBinding]) {
    for b in bindings {
        if b.root || !keymap.from_file.contains(&b.key) {
            // Each was checked when it was made; a command that no longer parses is dropped.
            let _ = apply(keymap, b);
        }
    }
}

/// The action `line` is: a key-table command's action, or the line itself to run.
fn action_for(keymap: &mut Keymap, line: &str) -> Result<Action, String> {
    match prompt::parse_command(line) {
        PromptCommand::Nothing => Err("bind-key: which command? (prefix ? lists them)".into()),
        PromptCommand::Refused(why) => Err(why),
        PromptCommand::Bound(action) => Ok(action),
        PromptCommand::Cli(_) | PromptCommand::SelectWindow { .. } => {
            let at = match keymap.lines.iter().position(|l| l == line) {
                Some(at) => at,
                None => {
                    keymap.lines.push(line.to_string());
                    keymap.lines.len() - 1
                }
            };
            u16::try_from(at)
                .map(Action::RunLine)
                .map_err(|_| "too many command lines bound".to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    fn keymap() -> Keymap {
        Keymap::defaults(Key::ctrl('b'))
    }

    fn key(name: &str) -> Key {
        Key::parse(name).expect("key")
    }

    #[test]
    fn a_table_command_binds_its_action_and_any_other_its_line() {
        let mut km = keymap();
        let b = RuntimeBinding::bind("Q", false, false, &words("copy-mode")).expect("bind");
        apply(&mut km, &b).expect("apply");
        assert_eq!(km.lookup(&key("Q")), Some(Action::CopyMode));
        let b =
            RuntimeBinding::bind("M-n", true, false, &words("new-window -n logs")).expect("bind");
        apply(&mut km, &b).expect("apply");
        let action = km.root.get(&key("M-n")).copied();
        assert_eq!(action, Some(Action::RunLine(0)));
        assert_eq!(km.command_of(Action::RunLine(0)), "new-window -n logs");
        // Quoted words keep their quotes in the line.
        let b = RuntimeBinding::bind(
            "W",
            false,
            false,
            &["new-window".into(), "-n".into(), "a b".into()],
        )
        .expect("bind");
        apply(&mut km, &b).expect("apply");
        assert_eq!(km.command_of(Action::RunLine(1)), "new-window -n 'a b'");
    }

    #[test]
    fn a_bad_command_or_key_is_refused_at_once_and_changes_nothing() {
        let mut km = keymap();
        let before = km.bindings.clone();
        let b = RuntimeBinding::bind("Q", false, false, &words("frobnicate")).expect("key");
        assert!(apply(&mut km, &b).unwrap_err().contains("unknown command"));
        let b = RuntimeBinding::bind("Q", false, false, &words("kill-pane -x")).expect("key");
        assert!(apply(&mut km, &b).unwrap_err().contains("'-x'"));
        assert_eq!(km.bindings, before);
        assert!(km.lines.is_empty());
        assert!(RuntimeBinding::bind("NoSuchKey", false, false, &words("zoom")).is_err());
    }

    #[test]
    fn unbind_and_repeat() {
        let mut km = keymap();
        apply(&mut km, &RuntimeBinding::unbind("z", false).expect("key")).expect("apply");
        assert_eq!(km.lookup(&key("z")), None);
        let b = RuntimeBinding::bind("j", false, true, &words("select-pane -D")).expect("bind");
        apply(&mut km, &b).expect("apply");
        assert!(km.repeat.contains(&key("j")));
        apply(&mut km, &RuntimeBinding::unbind("j", false).expect("key")).expect("apply");
        assert!(!km.repeat.contains(&key("j")));
    }

    #[test]
    fn at_a_reload_the_file_keeps_the_keys_it_names() {
        let made = [
            RuntimeBinding::bind("Q", false, false, &words("zoom")).expect("bind"),
            RuntimeBinding::bind("z", false, false, &words("copy-mode")).expect("bind"),
            RuntimeBinding::bind("z", true, false, &words("next-window")).expect("bind"),
        ];
        let mut reloaded = keymap();
        reloaded.from_file.insert(key("z"));
        reapply(&mut reloaded, &made);
        assert_eq!(reloaded.lookup(&key("Q")), Some(Action::Zoom));
        // The file names z: its binding (here the default) stands.
        assert_eq!(reloaded.lookup(&key("z")), Some(Action::Zoom));
        // The file has no keys without the prefix: the run-time one stays.
        assert_eq!(reloaded.root.get(&key("z")), Some(&Action::NextWindow));
    }
}
