//! `set-option` and `show-options` (tmux's, for the settings calyx has): one setting of the
//! running config changed by the config file's own reader, so a value is checked and reported
//! exactly as in the file, and every setting shown as it would be written there. calyx has no
//! per-session settings: every one is global.

use std::path::Path;

use super::read::{self, SWITCHES, TABLES};
use super::{Config, Hyperlinks, PaneBorders, SetClipboard};

/// What messages about a typed setting name as their "file".
const SOURCE: &str = "set-option";

/// The config file's spelling of `name`: tmux's dashes (`base-index`) become underscores.
pub fn key_of(name: &str) -> String {
    name.trim().replace('-', "_")
}

/// `base` with the setting `name` changed: to `value`, back to its default (`unset`), or for an
/// on/off setting without a value, flipped. The problems are the config file's messages (a
/// setting in error keeps its value); an error is a request that names no value to read.
pub fn set(
    base: &Config,
    name: &str,
    value: Option<&str>,
    unset: bool,
) -> Result<(Config, Vec<String>), String> {
    let key = key_of(name);
    if TABLES.contains(&key.as_str()) {
        return Err(format!(
            "`{key}` is a table of the config file, not one value: {}",
            match key.as_str() {
                "keys" => "bind-key and unbind-key change keys",
                _ => "set it in the config file, then reload-config",
            }
        ));
    }
    let switch = SWITCHES.iter().find(|(n, _)| *n == key);
    let literal = match (unset, value, switch) {
        (true, _, _) => value_of(&Config::default(), &key).unwrap_or_else(|| "0".into()),
        (false, Some(v), Some(_)) => match v.trim() {
            "on" | "true" | "yes" | "1" => "true".into(),
            "off" | "false" | "no" | "0" => "false".into(),
            other => toml_string(other),
        },
        (false, Some(v), None) => match v.trim().parse::<i64>() {
            Ok(n) => n.to_string(),
            Err(_) => toml_string(v.trim()),
        },
        (false, None, Some((_, field))) => (!*field(&mut base.clone())).to_string(),
        (false, None, None) if value_of(base, &key).is_some() => {
            return Err(format!(
                "set-option {name}: which value? (show-options {name} shows it)"
            ))
        }
        // An unknown name: the reader says so, with the closest setting.
        (false, None, None) => "0".into(),
    };
    let text = format!("{key} = {literal}\n");
    let (config, problems) = read::read_onto(&text, Path::new(SOURCE), base.clone())?;
    let problems = problems
        .into_iter()
        .map(|p| p.replacen(&format!("{SOURCE}: line 1:"), &format!("{SOURCE}:"), 1))
        .collect();
    Ok((config, problems))
}

/// The values `name` takes, for Tab in the prompt: on/off for a switch, the words of a
/// setting that takes words; nothing for numbers and key names.
pub fn values_of(name: &str) -> Vec<String> {
    let key = key_of(name);
    let words: &[&str] = match key.as_str() {
        "hyperlinks" => &["auto", "always", "never"],
        "set_clipboard" => &["external", "on", "off"],
        "pane_borders" => &["box", "separators"],
        k if SWITCHES.iter().any(|(n, _)| *n == k) => &["on", "off"],
        _ => &[],
    };
    words.iter().map(|w| w.to_string()).collect()
}

/// Every setting (or the one named) as `name value`, the value as the config file spells it.
pub fn show(config: &Config, name: Option<&str>) -> Result<Vec<String>, String> {
    let names = super::option_names();
    let wanted: Vec<String> = match name.map(key_of) {
        None => names,
        Some(key) if names.contains(&key) => vec![key],
        Some(key) => {
            return Err(format!(
                "show-options: no setting `{key}` ({})",
                names.join(", ")
            ))
        }
    };
    Ok(wanted
        .into_iter()
        .filter_map(|key| value_of(config, &key).map(|v| format!("{key} {v}")))
        .collect())
}

/// A setting's value in `config` as TOML (`true`, `10000`, `"auto"`); None for a name that is
/// not a one-value setting.
fn value_of(config: &Config, key: &str) -> Option<String> {
    if let Some((_, field)) = SWITCHES.iter().find(|(n, _)| *n == key) {
        return Some(field(&mut config.clone()).to_string());
    }
    Some(match key {
        "prefix" => toml_string(&config.keymap.prefix.name()),
        "scrollback_lines" => config.scrollback_lines.to_string(),
        "scrollback_bytes" => config.scrollback_bytes.to_string(),
        "base_index" => config.base_index.to_string(),
        "hyperlinks" => toml_string(match config.hyperlinks {
            Hyperlinks::Auto => "auto",
            Hyperlinks::Always => "always",
            Hyperlinks::Never => "never",
        }),
        "set_clipboard" => toml_string(match config.set_clipboard {
            SetClipboard::External => "external",
            SetClipboard::On => "on",
            SetClipboard::Off => "off",
        }),
        "pane_borders" => toml_string(match config.pane_borders {
            PaneBorders::Box => "box",
            PaneBorders::Separators => "separators",
        }),
        _ => return None,
    })
}

/// `text` as a TOML string literal.
fn toml_string(text: &str) -> String {
    toml_edit::Value::from(text).to_string().trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Key;

    fn set_ok(base: &Config, name: &str, value: Option<&str>) -> Config {
        let (config, problems) = set(base, name, value, false).expect("a value to read");
        assert!(problems.is_empty(), "{problems:?}");
        config
    }

    #[test]
    fn switches_take_on_off_and_flip_without_a_value() {
        let c = set_ok(&Config::default(), "mouse", Some("off"));
        assert!(!c.mouse);
        assert!(set_ok(&c, "mouse", None).mouse);
        // tmux's spelling with dashes.
        assert!(set_ok(&Config::default(), "renumber-windows", Some("on")).renumber_windows);
    }

    #[test]
    fn numbers_words_and_the_prefix() {
        let base = Config::default();
        assert_eq!(set_ok(&base, "base-index", Some("1")).base_index, 1);
        assert_eq!(
            set_ok(&base, "hyperlinks", Some("never")).hyperlinks,
            Hyperlinks::Never
        );
        assert_eq!(
            set_ok(&base, "set-clipboard", Some("on")).set_clipboard,
            SetClipboard::On
        );
        let mut custom = base.clone();
        custom
            .keymap
            .bindings
            .insert(Key::parse("Q").expect("key"), crate::commands::Action::Zoom);
        let c = set_ok(&custom, "prefix", Some("C-a"));
        assert_eq!(c.keymap.prefix, Key::ctrl('a'));
        // The other bindings stay (the file's reader would start from the defaults).
        assert_eq!(
            c.keymap.lookup(&Key::parse("Q").expect("key")),
            Some(crate::commands::Action::Zoom)
        );
    }

    #[test]
    fn a_bad_value_is_the_file_s_message_and_keeps_the_setting() {
        let base = Config {
            base_index: 3,
            ..Config::default()
        };
        let (c, problems) = set(&base, "base_index", Some("-5"), false).expect("read");
        assert_eq!(c.base_index, 3);
        assert_eq!(
            problems,
            ["set-option: key `base_index`: expected a whole number of at least 0, found -5; using 3"]
        );
        let (_, problems) = set(&base, "mouse", Some("maybe"), false).expect("read");
        assert!(
            problems[0].contains("expected true or false, found \"maybe\""),
            "{problems:?}"
        );
        let (_, problems) = set(&base, "mose", Some("on"), false).expect("read");
        assert!(problems[0].contains("did you mean `mouse`"), "{problems:?}");
        assert!(set(&base, "keys", Some("x"), false)
            .unwrap_err()
            .contains("bind-key"));
        assert!(set(&base, "base_index", None, false)
            .unwrap_err()
            .contains("which value"));
    }

    #[test]
    fn unset_gives_back_the_default() {
        let base = Config {
            mouse: false,
            scrollback_lines: 5,
            ..Config::default()
        };
        let (c, _) = set(&base, "mouse", None, true).expect("read");
        assert!(c.mouse);
        let (c, _) = set(&base, "scrollback-lines", None, true).expect("read");
        assert_eq!(c.scrollback_lines, Config::default().scrollback_lines);
    }

    #[test]
    fn show_lists_every_setting_as_the_file_writes_it() {
        let all = show(&Config::default(), None).expect("all");
        assert_eq!(all.len(), super::super::option_names().len());
        assert!(all.contains(&"mouse true".to_string()));
        assert!(all.contains(&"prefix \"C-b\"".to_string()));
        assert!(all.contains(&"hyperlinks \"auto\"".to_string()));
        assert!(all.contains(&"pane_borders \"box\"".to_string()));
        assert_eq!(
            show(&Config::default(), Some("base-index")).expect("one"),
            ["base_index 0"]
        );
        assert!(show(&Config::default(), Some("nope")).is_err());
    }
}
