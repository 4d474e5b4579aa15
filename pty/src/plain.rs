//! A command's output bytes as the plain text an agent wants: escape sequences removed, CR LF
//! as LF, a lone CR (a progress bar redrawing its line) and backspace moving back over the line
//! so later text overwrites it, erase-to-end-of-line applied, trailing spaces trimmed. This is
//! not a terminal emulator: other cursor movement is dropped, not applied, which is what
//! recorded command output needs and costs one pass.

use std::iter::Peekable;
use std::str::Chars;

/// The text of `raw` with terminal control sequences removed.
pub fn plain_text(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let mut out = String::with_capacity(text.len());
    let mut line: Vec<char> = Vec::new();
    let mut col = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                if skip_escape(&mut chars) {
                    line.truncate(col);
                }
            }
            '\n' => {
                flush(&mut out, &mut line);
                out.push('\n');
                col = 0;
            }
            '\r' => col = 0,
            '\x08' => col = col.saturating_sub(1),
            c if c.is_control() && c != '\t' => {}
            c => {
                if let Some(cell) = line.get_mut(col) {
                    *cell = c;
                } else {
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    flush(&mut out, &mut line);
    out
}

fn flush(out: &mut String, line: &mut Vec<char>) {
    let end = line.iter().rposition(|c| *c != ' ').map_or(0, |i| i + 1);
    out.extend(&line[..end]);
    line.clear();
}

/// Skips one escape sequence after its ESC; true when it was "erase to end of line".
fn skip_escape(chars: &mut Peekable<Chars<'_>>) -> bool {
    match chars.next() {
        Some('[') => {
            // CSI: parameters and intermediates, then a final byte in @..~.
            let mut params = String::new();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    return c == 'K' && (params.is_empty() || params == "0");
                }
                params.push(c);
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
    false
}

#[cfg(test)]
mod tests {
    use super::plain_text;

    #[test]
    fn strips_sequences_and_applies_line_controls() {
        let raw = b"\x1b[1;31mred\x1b[0m\r\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x07\r\n10%\r50%\r100%\r\nab\x08c\x1b(Bd\tz\x07";
        assert_eq!(plain_text(raw), "red\nlink\n100%\nacd\tz");
        // zsh's end-of-output mark (PROMPT_SP) leaves nothing behind.
        let zsh = b"hi\r\n\x1b[1m\x1b[7m#\x1b[27m\x1b[1m\x1b[0m          \r \r";
        assert_eq!(plain_text(zsh), "hi\n");
        assert_eq!(plain_text(b"abcdef\r12\x1b[K\r\n"), "12\n");
    }

    #[test]
    fn a_trailing_carriage_return_keeps_the_line() {
        assert_eq!(plain_text(b"done\r"), "done");
    }
}
