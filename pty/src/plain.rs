//! A command's output bytes as the plain text an agent wants: escape sequences removed, CR LF
//! as LF, a lone CR (a progress bar redrawing its line) restarting the line, backspace erasing.
//! This is not a terminal emulator: cursor movement is dropped, not applied, which is what
//! recorded command output needs and costs one pass.

use std::iter::Peekable;
use std::str::Chars;

/// The text of `raw` with terminal control sequences removed.
pub fn plain_text(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(text.len());
    let mut line_start = 0;
    let mut carriage_return = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => skip_escape(&mut chars),
            '\n' => {
                carriage_return = false;
                out.push('\n');
                line_start = out.len();
            }
            '\r' => carriage_return = chars.peek() != Some(&'\n'),
            '\x08' => {
                if out.len() > line_start {
                    out.pop();
                }
            }
            '\t' => push(&mut out, &mut carriage_return, line_start, '\t'),
            c if c.is_control() => {}
            c => push(&mut out, &mut carriage_return, line_start, c),
        }
    }
    out
}

fn push(out: &mut String, carriage_return: &mut bool, line_start: usize, c: char) {
    if std::mem::take(carriage_return) {
        out.truncate(line_start);
    }
    out.push(c);
}

/// Skips one escape sequence after its ESC.
fn skip_escape(chars: &mut Peekable<Chars<'_>>) {
    match chars.next() {
        Some('[') => {
            // CSI: parameters and intermediates, then a final byte in @..~.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            // A string: up to BEL or ST (ESC \).
            while let Some(c) = chars.next() {
                if c == '\x07' {
                    break;
                }
                if c == '\x1b' {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    break;
                }
            }
        }
        Some('(' | ')' | '*' | '+' | '#' | '%') => {
            chars.next();
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::plain_text;

    #[test]
    fn strips_sequences_and_applies_line_controls() {
        let raw = b"\x1b[1;31mred\x1b[0m\r\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x07\r\n10%\r50%\r100%\r\nab\x08c\x1b(Bd\tz\x07";
        assert_eq!(plain_text(raw), "red\nlink\n100%\nacd\tz");
    }

    #[test]
    fn a_trailing_carriage_return_keeps_the_line() {
        assert_eq!(plain_text(b"done\r"), "done");
    }
}
