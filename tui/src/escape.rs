//! Text from agents made safe and honest to draw, for the approval panel and `calyx approvals`
//! alike (one function, so the two cannot disagree). A tool input comes from a model and may
//! carry escape sequences, bidi overrides ("Trojan Source"), tag characters (hidden prompt
//! text), zero-width or default-ignorable code points, or a run of whitespace long enough to
//! push a command's tail off the screen. Every such character becomes a visible escape such
//! as `\x1b` or `\u{202e}`, and every long run a counted label such as `␠×70000`, so what the
//! human reads is what runs. The labels' first characters (`␠ ⇥ ↵ ⋯`) are themselves escaped
//! when an input contains them, so a label on screen always comes from here, and the panel can
//! style them (see [`crate::marks`]).

use unicode_width::UnicodeWidthChar;

/// Starts a label for a run of spaces: `␠×70000`.
pub const SPACE_MARK: char = '␠';
/// Starts a label for a run of tabs: `⇥×12`.
pub const TAB_MARK: char = '⇥';
/// Stands for a newline inside one line (`a↵b`), or counts a run of them (`↵×5000`).
pub const NEWLINE_MARK: char = '↵';
/// Starts and ends a line that says what was left out (`⋯ 20 lines not shown ⋯`).
pub const ELISION_MARK: char = '⋯';

/// Widest run of blanks (a tab counts 4) drawn as blanks inside a line; a wider one is labelled.
const BLANK_RUN: usize = 8;
/// The same at the start of a body line, where code indentation is this deep.
const INDENT_RUN: usize = 32;
/// Identical escapes in a row from this many on are counted (`\u{200b}×500`), not repeated.
const COUNTED_RUN: usize = 3;
/// Zero-width marks (combining accents) kept raw on one base character; more are escaped, so
/// stacked marks ("Zalgo") cannot smear over neighbouring rows.
const MARKS_PER_BASE: usize = 2;

/// Whether `c` is never drawn raw: controls (C0, DEL, C1), bidi controls, tag characters and
/// the other default-ignorable code points, separators and blank look-alikes of the space,
/// noncharacters, and the label characters of this module. Variation selectors are here too;
/// [`escape_line`] lets one through right after a character that takes it (an emoji).
pub fn is_hazard(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            // Default_Ignorable_Code_Point (Unicode DerivedCoreProperties), which includes the
            // bidi controls 061C, 200E-200F, 202A-202E, 2066-2069 and the tags E0000-E007F.
            0x00ad | 0x034f | 0x061c | 0x115f..=0x1160 | 0x17b4..=0x17b5 | 0x180b..=0x180f
            | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x206f | 0x3164 | 0xfe00..=0xfe0f
            | 0xfeff | 0xffa0 | 0xfff0..=0xfff8 | 0x1bca0..=0x1bca3 | 0x1d173..=0x1d17a
            | 0xe0000..=0xe0fff
            // Line and paragraph separators, interlinear annotation, the other format
            // characters (Arabic number signs, Egyptian hieroglyph and Kaithi format controls).
            | 0x2028..=0x2029 | 0xfff9..=0xfffb | 0x0600..=0x0605 | 0x06dd | 0x070f
            | 0x0890..=0x0891 | 0x08e2 | 0x110bd | 0x110cd | 0x13430..=0x1343f
            // Blanks that look like a space but are not one (a shell splits only on spaces).
            | 0x00a0 | 0x1680 | 0x2000..=0x200a | 0x202f | 0x205f | 0x3000 | 0x2800
            // Noncharacters.
            | 0xfdd0..=0xfdef)
        || (c as u32) & 0xfffe == 0xfffe
        || matches!(c, SPACE_MARK | TAB_MARK | NEWLINE_MARK | ELISION_MARK)
}

fn is_selector(c: char) -> bool {
    matches!(c as u32, 0xfe00..=0xfe0f | 0xe0100..=0xe01ef)
}

/// A character a variation selector may follow (`❤` in `❤️`): visible, not ASCII, not blank.
fn takes_selector(c: char) -> bool {
    !c.is_ascii() && !c.is_whitespace() && !is_hazard(c) && c.width().unwrap_or(0) > 0
}

/// The escape of one character: `\x1b` below U+0100, else `\u{202e}`.
pub fn escape_char(c: char) -> String {
    if (c as u32) < 0x100 {
        format!("\\x{:02x}", c as u32)
    } else {
        format!("\\u{{{:04x}}}", c as u32)
    }
}

/// One line of text made safe to show (a tool name, a headline, a list row): a newline in it
/// becomes `↵`, long blank runs are labelled, hazards escaped.
pub fn visible(text: &str) -> String {
    escape_line(text, BLANK_RUN, false)
}

/// Text that already went through [`visible`] in the server (a headline `calyx approvals`
/// lists): what is still a hazard is escaped, the labels it wrote (`␠×70000`) are kept rather
/// than escaped a second time.
pub fn visible_again(text: &str) -> String {
    escape_line(text, BLANK_RUN, true)
}

/// One line of a body (a command's line, a diff's line): as [`visible`], but indentation up to
/// 32 columns stays blank.
pub fn visible_line(text: &str) -> String {
    escape_line(text, INDENT_RUN, false)
}

/// Whether a line holds only blanks (spaces and tabs), so a run of such lines is counted.
pub fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ' || b == b'\t')
}

/// [`visible`], with `indent` the widest leading blank run drawn as blanks, and label
/// characters kept when `labels` (text this module wrote already).
fn escape_line(text: &str, indent: usize, labels: bool) -> String {
    let mut out = String::with_capacity(text.len().min(1 << 20));
    // The last character drawn raw, and how many zero-width marks followed it.
    let mut base: Option<char> = None;
    let mut marks = 0;
    let mut rest = text;
    let mut at_start = true;
    while let Some(c) = rest.chars().next() {
        if c == ' ' || c == '\t' {
            let end = rest.find(|x| x != ' ' && x != '\t').unwrap_or(rest.len());
            blank_run(
                &mut out,
                &rest[..end],
                if at_start { indent } else { BLANK_RUN },
            );
            rest = &rest[end..];
            (base, marks, at_start) = (None, 0, false);
            continue;
        }
        at_start = false;
        let end = rest.find(|x| x != c).unwrap_or(rest.len());
        let count = end / c.len_utf8();
        rest = &rest[end..];
        if labels && matches!(c, SPACE_MARK | TAB_MARK | NEWLINE_MARK | ELISION_MARK) {
            out.extend(std::iter::repeat_n(c, count));
            (base, marks) = (None, 0);
        } else if c == '\n' {
            counted(&mut out, &NEWLINE_MARK.to_string(), count, 2);
            (base, marks) = (None, 0);
        } else if is_selector(c) && count == 1 && marks == 0 && base.is_some_and(takes_selector) {
            out.push(c);
            marks = MARKS_PER_BASE;
        } else if is_hazard(c) {
            counted(&mut out, &escape_char(c), count, COUNTED_RUN);
            // What follows an escape is drawn after `}`, not after the character before it.
            (base, marks) = (None, 0);
        } else if c.width() == Some(0) {
            let raw = if base.is_some() {
                count.min(MARKS_PER_BASE - marks)
            } else {
                0
            };
            out.extend(std::iter::repeat_n(c, raw));
            marks += raw;
            if count > raw {
                counted(&mut out, &escape_char(c), count - raw, COUNTED_RUN);
            }
        } else {
            out.extend(std::iter::repeat_n(c, count));
            (base, marks) = (Some(c), 0);
        }
    }
    out
}

/// `token` written `count` times, or once with `×count` from `from` on.
fn counted(out: &mut String, token: &str, count: usize, from: usize) {
    if count >= from {
        out.push_str(token);
        out.push_str(&format!("×{count}"));
    } else {
        for _ in 0..count {
            out.push_str(token);
        }
    }
}

/// A run of spaces and tabs: blanks when at most `limit` columns wide (a tab counts 4), else
/// each stretch of spaces or tabs labelled with its length.
fn blank_run(out: &mut String, run: &str, limit: usize) {
    let width: usize = run.bytes().map(|b| if b == b'\t' { 4 } else { 1 }).sum();
    if width <= limit {
        out.extend(run.bytes().flat_map(|b| {
            let n = if b == b'\t' { 4 } else { 1 };
            std::iter::repeat_n(' ', n)
        }));
        return;
    }
    let mut rest = run;
    while let Some(c) = rest.chars().next() {
        let end = rest.find(|x| x != c).unwrap_or(rest.len());
        match (c, end) {
            (' ', 1) => out.push(' '),
            (' ', n) => counted(out, &SPACE_MARK.to_string(), n, 1),
            (_, n) => counted(out, &TAB_MARK.to_string(), n, 2),
        }
        rest = &rest[end..];
    }
}

/// JSON text (as `serde_json` writes it) safe to print to a terminal, and still the same JSON:
/// each non-ASCII hazard (a C1 control, a bidi control, a tag character; serde escapes only the
/// C0 controls) becomes its `\uXXXX` escape, as a surrogate pair above U+FFFF.
pub fn json_safe(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_ascii() || !is_hazard(c) {
            out.push(c);
            continue;
        }
        let mut units = [0u16; 2];
        for unit in c.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{:04x}", unit));
        }
    }
    out
}

/// At most `max` characters of an escaped line: its head and its tail around a counted
/// elision, never only its head (a headline must show how a command ends too).
pub fn shorten_middle(line: &str, max: usize) -> String {
    let total = line.chars().count();
    if total <= max {
        return line.to_string();
    }
    let half = max / 2;
    let head: String = line.chars().take(half).collect();
    let tail = last_chars(line, half);
    let more = total - half - tail.chars().count();
    format!("{head} {ELISION_MARK}{more} more{ELISION_MARK} {tail}")
}

/// The last `n` characters of an escaped line, less any zero-width mark or selector they
/// start with: cut from its base, it would stand alone.
pub fn last_chars(line: &str, n: usize) -> String {
    let total = line.chars().count();
    line.chars()
        .skip(total.saturating_sub(n))
        .skip_while(|c| c.width() == Some(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_labelled_and_short_ones_kept() {
        assert_eq!(visible("a  b"), "a  b");
        assert_eq!(visible(&format!("a{}b", " ".repeat(9))), "a␠×9b");
        assert_eq!(visible("a\t\t\tb"), "a⇥×3b");
        assert_eq!(visible_line("        x"), "        x");
        assert_eq!(visible("a\nb\n\n\nc"), "a↵b↵×3c");
        assert_eq!(visible("\u{200b}\u{200b}\u{200b}"), "\\u{200b}×3");
        assert_eq!(visible("a\u{1b}[2J"), "a\\x1b[2J");
    }

    #[test]
    fn label_characters_in_an_input_are_escaped() {
        assert_eq!(visible("␠×5"), "\\u{2420}×5");
        assert_eq!(visible("⋯ 3 lines ⋯"), "\\u{22ef} 3 lines \\u{22ef}");
    }

    #[test]
    fn json_stays_json_without_raw_hazards() {
        let json = "{\"tool\":\"rm\u{202e}\u{e0041}\u{85}␠\"}";
        let safe = json_safe(json);
        assert_eq!(safe, "{\"tool\":\"rm\\u202e\\udb40\\udc41\\u0085\\u2420\"}");
    }

    #[test]
    fn escaping_twice_keeps_the_labels() {
        let once = visible(&format!("a{}b\u{202e}\n\n\nc", " ".repeat(70)));
        assert_eq!(once, "a␠×70b\\u{202e}↵×3c");
        assert_eq!(visible_again(&once), once);
        assert_eq!(visible_again("x\u{e0041}"), "x\\u{e0041}");
    }

    #[test]
    fn marks_stay_on_their_base_but_do_not_pile_up() {
        assert_eq!(visible("e\u{301}"), "e\u{301}");
        assert_eq!(
            visible("e\u{301}\u{302}\u{303}"),
            "e\u{301}\u{302}\\u{0303}"
        );
        assert_eq!(visible(" \u{301}"), " \\u{0301}");
    }

    #[test]
    fn a_long_line_keeps_its_tail() {
        let short = shorten_middle(&format!("{}END", "x".repeat(500)), 40);
        assert!(short.ends_with("END") && short.contains("⋯"), "{short}");
    }
}
