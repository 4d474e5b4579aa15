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

/// The lines of `text`, each escaped, a run of blank lines counted.
pub fn text_lines(text: &str) -> Vec<String> {
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
    let (lines, chars_cut) = cut_long_lines(lines);
    let long_note = (chars_cut > 0).then(|| format!("{chars_cut} characters not shown"));
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
    let note = match long_note {
        Some(long) => format!("{long}, {cut}"),
        None => cut,
    };
    (out, Some(note))
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
    fn many_lines_keep_head_and_tail() {
        let lines: Vec<String> = (0..10_000).map(|i| format!("l{i}")).collect();
        let (out, cut) = cap_middle(lines, |h| format!("{} lines not shown", h.len()));
        assert_eq!(out.first().map(String::as_str), Some("l0"));
        assert_eq!(out.last().map(String::as_str), Some("l9999"));
        assert_eq!(cut.as_deref(), Some("8000 lines not shown"));
        assert!(out.len() <= MAX_LINES + 1);
    }
}
