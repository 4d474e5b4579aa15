//! What [`crate::escape`] wrote, picked out so the panel can style it: escapes (`\x1b`,
//! `\u{202e}`), counted runs (`␠×70000`, `↵×12`) and elisions (`⋯ 40 lines not shown ⋯`)
//! stand out from the text around them, so an escaped character is not mistaken for text and
//! a label not for spaces. Text an agent typed that looks like an escape (a literal `\x1b`) is
//! styled too: that can raise a false alarm, never hide anything, since every real hazard is
//! escaped.

use ratatui::style::{Color, Modifier, Style};

use crate::escape::{ELISION_MARK, NEWLINE_MARK, SPACE_MARK, TAB_MARK};

/// How an escape or a counted run is drawn.
pub fn mark_style() -> Style {
    Style::default()
        .fg(Color::Black)
        .bg(Color::LightMagenta)
        .add_modifier(Modifier::BOLD)
}

/// How a note of what was left out is drawn.
pub fn elision_style() -> Style {
    Style::default()
        .fg(Color::Black)
        .bg(Color::LightYellow)
        .add_modifier(Modifier::BOLD)
}

/// `line` cut into (text, style) pieces: marks in their style, the rest in `base`.
pub fn segments(line: &str, base: Style) -> Vec<(String, Style)> {
    let mut out: Vec<(String, Style)> = Vec::new();
    let mut push = |text: &str, style: Style| {
        if text.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((t, s)) if *s == style => t.push_str(text),
            _ => out.push((text.to_string(), style)),
        }
    };
    let mut plain_from = 0;
    let mut i = 0;
    while i < line.len() {
        let rest = &line[i..];
        let found = mark_len(rest)
            .map(|n| (n, mark_style()))
            .or_else(|| elision_len(rest).map(|n| (n, elision_style())));
        match found {
            Some((n, style)) => {
                push(&line[plain_from..i], base);
                push(&rest[..n], style);
                i += n;
                plain_from = i;
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    push(&line[plain_from..], base);
    out
}

/// The length of an escape or counted run at the start of `s`, with its `×N` count.
fn mark_len(s: &str) -> Option<usize> {
    let first = s.chars().next()?;
    let token = if matches!(first, SPACE_MARK | TAB_MARK | NEWLINE_MARK) {
        first.len_utf8()
    } else if let Some(hex) = s.strip_prefix("\\x") {
        let n = hex.bytes().take(2).filter(u8::is_ascii_hexdigit).count();
        (n == 2).then_some(4)?
    } else if let Some(hex) = s.strip_prefix("\\u{") {
        let n = hex.bytes().take_while(u8::is_ascii_hexdigit).count();
        (n > 0 && hex[n..].starts_with('}')).then_some(3 + n + 1)?
    } else {
        return None;
    };
    let count = s[token..]
        .strip_prefix('×')
        .map(|d| d.bytes().take_while(u8::is_ascii_digit).count())
        .filter(|n| *n > 0)
        .map_or(0, |n| '×'.len_utf8() + n);
    Some(token + count)
}

/// The length of an elision at the start of `s`: from one `⋯` to the next.
fn elision_len(s: &str) -> Option<usize> {
    let after = s.strip_prefix(ELISION_MARK)?;
    let end = after.find(ELISION_MARK)?;
    Some(ELISION_MARK.len_utf8() * 2 + end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_runs_and_elisions_are_picked_out() {
        let base = Style::default();
        let got = segments("a\\x1b[2J␠×70000; \\u{202e}x ⋯ 3 lines not shown ⋯", base);
        let marked: Vec<&str> = got
            .iter()
            .filter(|(_, s)| *s != base)
            .map(|(t, _)| t.as_str())
            .collect();
        assert_eq!(
            marked,
            vec!["\\x1b", "␠×70000", "\\u{202e}", "⋯ 3 lines not shown ⋯"]
        );
        let all: String = got.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(all, "a\\x1b[2J␠×70000; \\u{202e}x ⋯ 3 lines not shown ⋯");
    }
}
