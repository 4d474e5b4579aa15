//! tmux's `-F FORMAT` for scripts: `#{pane_id}`, `#{session_name}` and the rest expanded for
//! one pane (`calyx split -P -F ...`, `list-panes -F`, `display-message -p`). The variable
//! names are tmux's, so scripts written for tmux keep working; calyx adds its own under
//! `calyx_`. An unknown variable expands to nothing, as in tmux. Values come from programs in
//! panes (a title, a command, a directory name), so each is made safe to print first: a
//! control character is shown escaped, never sent raw to the terminal the script prints on.

use crate::protocol::PaneInfo;

/// What `-P` prints without `-F` after a split or a new window (tmux's default).
pub const NEW_PANE: &str = "#{session_name}:#{window_index}.#{pane_index}";
/// What `-P` prints without `-F` after a new session (tmux's default).
pub const NEW_SESSION: &str = "#{session_name}:";

/// What `display-message` shows without a message (tmux's default).
pub const DISPLAY_MESSAGE: &str =
    "[#{session_name}] #{window_index}:#{window_name}, current pane #{pane_index}";

/// The variables [`expand`] knows, for `--help` and the README.
pub const VARIABLES: &[&str] = &[
    "session_name",
    "window_index",
    "window_name",
    "pane_id",
    "pane_index",
    "pane_pid",
    "pane_current_path",
    "pane_current_command",
    "pane_title",
    "pane_width",
    "pane_height",
    "pane_active",
    "pane_dead",
    "calyx_surface_id",
    "calyx_session_id",
];

/// The value of one variable for `pane` (None: not a variable calyx knows).
fn value(pane: &PaneInfo, name: &str) -> Option<String> {
    let flag = |on: bool| if on { "1" } else { "0" }.to_string();
    Some(match name {
        "session_name" => pane.session.clone(),
        "window_index" => pane.window.to_string(),
        "window_name" => pane.window_name.clone(),
        "pane_id" => format!("%{}", pane.pane_id),
        "pane_index" => pane.index.to_string(),
        "pane_pid" => pane.pid.map(|p| p.to_string()).unwrap_or_default(),
        "pane_current_path" => pane.cwd.clone(),
        "pane_current_command" => pane.command.clone(),
        "pane_title" => pane.title.clone(),
        "pane_width" => pane.cols.to_string(),
        "pane_height" => pane.rows.to_string(),
        "pane_active" => flag(pane.focused),
        "pane_dead" => flag(pane.dead),
        "calyx_surface_id" => pane.surface_id.clone(),
        "calyx_session_id" => pane.record_id.clone(),
        _ => return None,
    })
}

/// A variable's value, safe to print (empty for a name calyx does not know).
fn shown(pane: &PaneInfo, name: &str) -> String {
    value(pane, name)
        .map(|v| calyx_tui::escape::visible(&v))
        .unwrap_or_default()
}

/// tmux's one-letter aliases (`#S`, `#I`, ...).
fn alias(letter: char) -> Option<&'static str> {
    Some(match letter {
        'S' => "session_name",
        'I' => "window_index",
        'W' => "window_name",
        'D' => "pane_id",
        'P' => "pane_index",
        'T' => "pane_title",
        _ => return None,
    })
}

/// `format` with every `#{name}`, `#X` alias and `##` replaced for `pane`. Text that is not a
/// variable is kept as written (a `#` before anything else, an unclosed `#{`).
pub fn expand(format: &str, pane: &PaneInfo) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        match after.chars().next() {
            Some('#') => {
                out.push('#');
                rest = &after[1..];
            }
            Some('{') => match after[1..].find('}') {
                Some(end) => {
                    let name = &after[1..1 + end];
                    out.push_str(&shown(pane, name));
                    rest = &after[end + 2..];
                }
                None => {
                    out.push('#');
                    rest = after;
                }
            },
            Some(letter) => match alias(letter) {
                Some(name) => {
                    out.push_str(&shown(pane, name));
                    rest = &after[letter.len_utf8()..];
                }
                None => {
                    out.push('#');
                    rest = after;
                }
            },
            None => {
                out.push('#');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane() -> PaneInfo {
        PaneInfo {
            id: "%7".into(),
            pane_id: 7,
            session: "work".into(),
            window: 2,
            window_name: "build".into(),
            index: 1,
            rows: 40,
            cols: 100,
            command: "bash".into(),
            pid: Some(4242),
            title: "make".into(),
            cwd: "/src".into(),
            focused: true,
            surface_id: "surf-1".into(),
            record_id: "rec-1".into(),
            dead: false,
        }
    }

    #[test]
    fn tmux_variables_and_aliases_expand() {
        let p = pane();
        assert_eq!(expand("#{pane_id}", &p), "%7");
        assert_eq!(
            expand("#{session_name}:#{pane_id} #{pane_pid}", &p),
            "work:%7 4242"
        );
        assert_eq!(expand(NEW_PANE, &p), "work:2.1");
        assert_eq!(expand(NEW_SESSION, &p), "work:");
        assert_eq!(expand("#S/#I/#P/#D/#W/#T", &p), "work/2/1/%7/build/make");
        assert_eq!(
            expand("#{pane_current_path} #{calyx_surface_id}", &p),
            "/src surf-1"
        );
        assert_eq!(expand("#{pane_width}x#{pane_height}", &p), "100x40");
        assert_eq!(expand("#{pane_active}#{pane_dead}", &p), "10");
    }

    #[test]
    fn other_text_is_kept_and_unknown_variables_are_empty() {
        let p = pane();
        assert_eq!(expand("## #x #{", &p), "# #x #{");
        assert_eq!(expand("[#{nope}]", &p), "[]");
        assert_eq!(expand("日本 #{pane_index} é", &p), "日本 1 é");
        assert_eq!(expand("", &p), "");
    }

    #[test]
    fn a_title_with_escape_sequences_prints_escaped() {
        let mut p = pane();
        p.title = "x\u{1b}]52;c;Y3VybA==\u{7}".into();
        let out = expand("#{pane_title}", &p);
        assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    }

    #[test]
    fn every_listed_variable_has_a_value() {
        for name in VARIABLES {
            assert!(value(&pane(), name).is_some(), "{name}");
        }
    }
}
