//! The body of an approval summary: multi-line text made into escaped lines, and the one cap
//! on how much is rendered. The cap exists for memory and for the panel's row counter; it cuts
//! the middle, says so in a line of its own and in the panel's title, and always keeps the
//! tail, because the end of a command is where a hostile one puts what it really does.

use calyx_tui::escape::{is_blank, last_chars, visible_line, ELISION_MARK, NEWLINE_MARK};

/// Most characters of body rendered (a 1 MiB command is shown as its head and tail).
pub const MAX_CHARS: usize = 64 * 1024;
/// Most body lines rendered (a diff with more changed lines is cut the same way).
pub const MAX_LINES: usize = 2_000;
/// Blank lines in a row from this many on are one counted line (`↵×5000`).
const BLANK_LINES: usize = 3;
/// Text longer than this is escaped as its head and tail only (half of this each): escaping
/// costs time on the server's loop and memory in proportion to it, and the cap below would
/// cut the middle anyway.
const RAW_MAX: usize = 256 * 1024;
/// How the line that replaces the middle of such a text ends, after the count of its bytes.
const RAW_CUT: &str = "bytes of the middle not shown";

/// The lines of `text`, each escaped, a run of blank lines counted; a text over [`RAW_MAX`]
/// bytes as its head, a line counting the bytes left out, and its tail.
pub fn text_lines(text: &str) -> Vec<String> {
    if text.len() <= RAW_MAX {
        return escaped_lines(text);
    }
    let mut head_end = RAW_MAX / 2;
    while !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - RAW_MAX / 2;
    while !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let mut lines = escaped_lines(&text[..head_end]);
    lines.push(format!(
        "{ELISION_MARK} {} {RAW_CUT} {ELISION_MARK}",
        tail_start - head_end
    ));
    lines.extend(escaped_lines(&text[tail_start..]));
    lines
}

/// The bytes a line written by [`text_lines`] says it left out (0 for any other line).
fn raw_cut_bytes(line: &str) -> usize {
    line.strip_prefix(ELISION_MARK)
        .and_then(|rest| rest.strip_suffix(ELISION_MARK))
        .and_then(|rest| rest.trim().strip_suffix(RAW_CUT))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// [`text_lines`] for a text of any size.
fn escaped_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut blanks: Vec<&str> = Vec::new();
    let flush = |out: &mut Vec<String>, blanks: &mut Vec<&str>| {
        if blanks.len() >= BLANK_LINES {
            out.push(format!("{NEWLINE_MARK}×{}", blanks.len()));
        } else {
            out.extend(blanks.iter().map(|l| visible_line(l)));
        }
        blanks.clear();
    };
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if is_blank(line) {
            blanks.push(line);
        } else {
            flush(&mut out, &mut blanks);
            out.push(visible_line(line));
        }
    }
    flush(&mut out, &mut blanks);
    out
}

/// `lines` within [`MAX_LINES`] and [`MAX_CHARS`]: unchanged when they fit, else their head and
/// their tail around one line saying what was left out (`describe` words it from the lines
/// left out: a diff counts the changed ones). A line too long for half the budget is cut in its
/// own middle first. Returns what was cut, for the panel's title.
pub fn cap_middle(
    lines: Vec<String>,
    describe: impl Fn(&[String]) -> String,
) -> (Vec<String>, Option<String>) {
    // What was cut already: the middle of a huge text (before escaping), long lines.
    let raw_cut: usize = lines.iter().map(|l| raw_cut_bytes(l)).sum();
    let (lines, chars_cut) = cut_long_lines(lines);
    let mut notes = Vec::new();
    if raw_cut > 0 {
        notes.push(format!("{raw_cut} bytes not shown"));
    }
    if chars_cut > 0 {
        notes.push(format!("{chars_cut} characters not shown"));
    }
    let long_note = title_note(&notes);
    let chars: usize = lines.iter().map(|l| l.chars().count()).sum();
    if lines.len() <= MAX_LINES && chars <= MAX_CHARS {
        return (lines, long_note);
    }
    let (line_budget, char_budget) = (MAX_LINES / 2, MAX_CHARS / 2);
    let head_end = fit(lines.iter(), line_budget, char_budget);
    let tail_start = lines.len() - fit(lines.iter().rev(), line_budget, char_budget);
    // (The two cannot meet: together they would hold all the lines, which do not fit.)
    let tail_start = tail_start.max(head_end);
    let cut = describe(&lines[head_end..tail_start]);
    let mut out: Vec<String> = lines[..head_end].to_vec();
    out.push(format!("{ELISION_MARK} {cut} {ELISION_MARK}"));
    out.extend_from_slice(&lines[tail_start..]);
    notes.push(cut);
    (out, title_note(&notes))
}

/// What the panel's title says was cut: the first (largest) cut, and that there is more; the
/// body's own lines say exactly what each cut left out.
fn title_note(notes: &[String]) -> Option<String> {
    let first = notes.first()?;
    Some(if notes.len() > 1 {
        format!("{first} and more")
    } else {
        first.clone()
    })
}

/// How many of `lines` (from the first) fit in `lines_max` lines and `chars_max` characters.
fn fit<'a>(lines: impl Iterator<Item = &'a String>, lines_max: usize, chars_max: usize) -> usize {
    let mut chars = 0;
    let mut n = 0;
    for line in lines.take(lines_max) {
        chars += line.chars().count();
        if chars > chars_max {
            break;
        }
        n += 1;
    }
    n
}

/// Each line over half of [`MAX_CHARS`] as its head, a note and its tail (a quarter each side),
/// with how many characters that left out.
fn cut_long_lines(lines: Vec<String>) -> (Vec<String>, usize) {
    let quarter = MAX_CHARS / 4;
    let mut out = Vec::with_capacity(lines.len());
    let mut cut_total = 0;
    for line in lines {
        let n = line.chars().count();
        if n <= 2 * quarter {
            out.push(line);
            continue;
        }
        let tail = last_chars(&line, quarter);
        let cut = n - quarter - tail.chars().count();
        cut_total += cut;
        out.push(line.chars().take(quarter).collect());
        out.push(format!(
            "{ELISION_MARK} {cut} characters of this line not shown {ELISION_MARK}"
        ));
        out.push(tail);
    }
    (out, cut_total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_line_runs_are_counted() {
        assert_eq!(text_lines("a\n\nb"), vec!["a", "", "b"]);
        assert_eq!(text_lines("a\n\n\n\nb\r"), vec!["a", "↵×3", "b"]);
    }

    #[test]
    fn a_huge_text_is_escaped_as_its_head_and_tail_and_says_so() {
        let text = format!("{}é{}TAIL", "\u{200b}".repeat(200_000), " ".repeat(300_000));
        let lines = text_lines(&text);
        assert_eq!(
            lines.len(),
            3,
            "{:?}",
            lines
                .iter()
                .map(|l| &l[..l.len().min(40)])
                .collect::<Vec<_>>()
        );
        assert!(lines[2].ends_with("TAIL"));
        // (Less the ends moved to character boundaries.)
        let cut = raw_cut_bytes(&lines[1]);
        assert!(
            (text.len() - RAW_MAX..text.len() - RAW_MAX + 8).contains(&cut),
            "{}",
            lines[1]
        );
        let (_, note) = cap_middle(lines, |h| format!("{} lines", h.len()));
        assert!(note.is_some_and(|n| n.contains(&format!("{cut} bytes not shown"))));
    }

    #[test]
    fn many_lines_keep_head_and_tail() {
        let lines: Vec<String> = (0..10_000).map(|i| format!("l{i}")).collect();
        let (out, cut) = cap_middle(lines, |h| format!("{} lines not shown", h.len()));
        assert_eq!(out.first().map(String::as_str), Some("l0"));
        assert_eq!(out.last().map(String::as_str), Some("l9999"));
        assert_eq!(cut.as_deref(), Some("8000 lines not shown"));
        assert!(out.len() <= MAX_LINES + 1);
    }
}
