//! TOML editing by a comment-delimited block: calyx's tables live between two marker comments
//! at the end of the file, and nothing outside the block changes (toml_edit parses the file
//! before and after, so a file calyx cannot read is refused and an edit that would break the
//! file is never written).
//!
//! Why a block rather than toml_edit's document model: arrays of tables (`[[hooks.Stop]]`,
//! Kimi's `[[hooks]]`) have no name to find calyx's element by, and re-serialising through a
//! document model moves comments and whitespace. The block makes removal exact.
//!
//! Other programs write into the file too: Codex has been seen placing its own tables between
//! calyx's markers. So every table inside the block that is not positively calyx's is moved
//! out of it verbatim, on install and on uninstall.

use std::str::FromStr;

use super::{line_ending, split_bom, EditError};

/// First line of calyx's block.
pub const BEGIN: &str =
    "# >>> calyx (managed by `calyx setup`; other tables here are moved out) >>>";
/// Last line of calyx's block.
pub const END: &str = "# <<< calyx <<<";

/// A table header: `[a.b]` or `[[a.b]]`, with its key path unquoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub array: bool,
    pub path: Vec<String>,
}

impl Header {
    /// Whether the header's path begins with `prefix`.
    pub fn starts_with(&self, prefix: &[&str]) -> bool {
        self.path.len() >= prefix.len() && self.path.iter().zip(prefix).all(|(a, b)| a == b)
    }
}

/// Decides whether a table (header and its text, header line included) is calyx's.
pub type Ownership<'a> = &'a dyn Fn(&Header, &str) -> bool;

/// One table of the file: its header (none for the lines before the first header) and text.
#[derive(Debug, Clone)]
struct Chunk {
    header: Option<Header>,
    text: String,
}

/// The file split around calyx's block.
struct Layout<'a> {
    before: &'a str,
    block: Option<&'a str>,
    after: &'a str,
}

/// Checks that `text` is TOML, naming the line where it is not.
pub fn validate(text: &str) -> Result<(), EditError> {
    let (_, body) = split_bom(text);
    toml_edit::DocumentMut::from_str(body)
        .map(|_| ())
        .map_err(|e| {
            let line = e.span().map(|s| super::line_of(body, s.start));
            let message = e.message().trim().to_string();
            EditError {
                line,
                message: format!("invalid TOML: {message}"),
            }
        })
}

/// Puts `block_body` (TOML text with `\n` line ends, no markers) into calyx's block, moving out
/// foreign tables found in it, and dropping tables outside it that `adopt` claims (a hand-written
/// entry under calyx's own name). Returns the new text; equal to `text` when nothing changes.
pub fn install(
    text: &str,
    block_body: &str,
    is_ours: Ownership<'_>,
    adopt: &dyn Fn(&Header) -> bool,
) -> Result<String, EditError> {
    validate(text)?;
    let (bom, body) = split_bom(text);
    let nl = line_ending(body);
    let layout = split_block(body)?;
    let mut block = format!("{BEGIN}{nl}");
    for line in block_body.lines() {
        block.push_str(line);
        block.push_str(nl);
    }
    block.push_str(END);
    block.push_str(nl);
    let keep = |chunks: Vec<Chunk>| -> String {
        chunks
            .into_iter()
            .filter(|c| !c.header.as_ref().is_some_and(adopt))
            .map(|c| c.text)
            .collect()
    };
    let before = keep(chunks(layout.before));
    let after = keep(chunks(layout.after));
    let out = match layout.block {
        Some(old) => {
            let foreign = foreign_chunks(old, is_ours);
            format!("{bom}{before}{foreign}{block}{after}")
        }
        None if before.is_empty() && after.is_empty() => format!("{bom}{block}"),
        None => format!("{bom}{before}{nl}{block}"),
    };
    validate(&out).map_err(|e| {
        EditError::new(format!(
            "calyx's entries would not fit into this file ({e}); nothing was written"
        ))
    })?;
    Ok(out)
}

/// Removes calyx's block; tables in it that are not calyx's stay, verbatim, where it was.
pub fn uninstall(text: &str, is_ours: Ownership<'_>) -> Result<String, EditError> {
    validate(text)?;
    let (bom, body) = split_bom(text);
    let layout = split_block(body)?;
    let Some(old) = layout.block else {
        return Ok(text.to_string());
    };
    let foreign = foreign_chunks(old, is_ours);
    let mut before = layout.before;
    if foreign.is_empty() {
        // Install added exactly one line ending in front of the block: take it back.
        before = before
            .strip_suffix("\r\n")
            .or_else(|| before.strip_suffix('\n'))
            .unwrap_or(before);
    }
    let out = format!("{bom}{before}{foreign}{}", layout.after);
    validate(&out)?;
    Ok(out)
}

/// Whether the file has calyx's block.
pub fn has_block(text: &str) -> bool {
    split_block(split_bom(text).1).is_ok_and(|l| l.block.is_some())
}

/// The text of calyx's block (markers included), if any.
pub fn block_text(text: &str) -> Option<String> {
    split_block(split_bom(text).1)
        .ok()?
        .block
        .map(str::to_string)
}

fn split_block(text: &str) -> Result<Layout<'_>, EditError> {
    let mut offset = 0;
    let mut begin = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_end();
        if begin.is_none() && trimmed == BEGIN {
            begin = Some(offset);
        } else if let (Some(b), true) = (begin, trimmed == END) {
            let end = offset + line.len();
            return Ok(Layout {
                before: &text[..b],
                block: Some(&text[b..end]),
                after: &text[end..],
            });
        }
        offset += line.len();
    }
    match begin {
        Some(b) => Err(EditError::at(
            text,
            b,
            "calyx's block has a start marker but no end marker; fix or remove it by hand",
        )),
        None => Ok(Layout {
            before: text,
            block: None,
            after: "",
        }),
    }
}

/// The text of the tables inside `block` (markers included) that are not calyx's. A table
/// with no keys of its own (`[[hooks.Stop]]`) belongs with the calyx table right after it
/// that extends it (`[[hooks.Stop.hooks]]`).
fn foreign_chunks(block: &str, is_ours: Ownership<'_>) -> String {
    let all = chunks(block);
    let mut ours = vec![false; all.len()];
    for i in (0..all.len()).rev() {
        let Some(h) = &all[i].header else {
            // Lines before the first header: the begin marker, comments, stray keys.
            ours[i] = all[i]
                .text
                .lines()
                .all(|l| l.trim().is_empty() || l.trim_end() == BEGIN || l.trim_end() == END);
            continue;
        };
        ours[i] = is_ours(h, &all[i].text)
            || (is_bare(&all[i].text)
                && i + 1 < all.len()
                && ours[i + 1]
                && all[i + 1].header.as_ref().is_some_and(|n| {
                    n.starts_with(&h.path.iter().map(String::as_str).collect::<Vec<_>>())
                }));
    }
    all.into_iter()
        .zip(ours)
        .filter(|(_, ours)| !ours)
        .map(|(c, _)| strip_markers(&c.text))
        .collect()
}

/// Whether a table's text has nothing but its header, comments and blank lines.
fn is_bare(text: &str) -> bool {
    text.lines()
        .skip(1)
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
}

/// Drops calyx's marker lines from a chunk that is being moved out of the block.
fn strip_markers(text: &str) -> String {
    text.split_inclusive('\n')
        .filter(|l| l.trim_end() != BEGIN && l.trim_end() != END)
        .collect()
}

/// Splits text into tables at header lines (not inside multi-line strings).
fn chunks(text: &str) -> Vec<Chunk> {
    let mut out = vec![Chunk {
        header: None,
        text: String::new(),
    }];
    let mut in_string: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let header = if in_string.is_none() {
            parse_header(line)
        } else {
            None
        };
        for delim in ["\"\"\"", "'''"] {
            let count = line.matches(delim).count();
            if count % 2 == 1 {
                in_string = match in_string {
                    Some(d) if d == delim => None,
                    None => Some(delim),
                    other => other,
                };
            }
        }
        match header {
            Some(h) => out.push(Chunk {
                header: Some(h),
                text: line.to_string(),
            }),
            None => {
                if let Some(last) = out.last_mut() {
                    last.text.push_str(line);
                }
            }
        }
    }
    out.retain(|c| c.header.is_some() || !c.text.is_empty());
    out
}

/// Parses a `[a."b".c]` or `[[a.b]]` header line (a trailing comment is allowed).
pub fn parse_header(line: &str) -> Option<Header> {
    let t = line.trim();
    let (array, rest) = match t.strip_prefix("[[") {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('[')?),
    };
    let mut path = Vec::new();
    let mut chars = rest.char_indices().peekable();
    let mut current = String::new();
    loop {
        let (_, c) = chars.next()?;
        match c {
            ' ' | '\t' => {}
            '"' | '\'' => {
                let quote = c;
                loop {
                    let (_, c) = chars.next()?;
                    if c == quote {
                        break;
                    }
                    if c == '\\' && quote == '"' {
                        let (_, e) = chars.next()?;
                        current.push(e);
                    } else {
                        current.push(c);
                    }
                }
            }
            '.' => path.push(std::mem::take(&mut current)),
            ']' => {
                path.push(current);
                if array && chars.next().map(|(_, c)| c) != Some(']') {
                    return None;
                }
                let tail: String = chars.map(|(_, c)| c).collect();
                let tail = tail.trim();
                return (tail.is_empty() || tail.starts_with('#'))
                    .then_some(Header { array, path });
            }
            c if c.is_alphanumeric() || c == '-' || c == '_' => current.push(c),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ours(h: &Header, _: &str) -> bool {
        h.starts_with(&["mcp_servers", "calyx-ipc"])
    }

    fn adopt(h: &Header) -> bool {
        h.starts_with(&["mcp_servers", "calyx-ipc"])
    }

    const BODY: &str = "[mcp_servers.calyx-ipc]\nurl = \"http://127.0.0.1:1/mcp\"\n";

    #[test]
    fn headers() {
        let h = parse_header("[mcp_servers.\"calyx-ipc\".headers] # x\n").unwrap();
        assert_eq!(h.path, ["mcp_servers", "calyx-ipc", "headers"]);
        assert!(parse_header("[[hooks.Stop]]").unwrap().array);
        assert!(parse_header("key = [1]").is_none());
        assert!(parse_header("[a] b").is_none());
    }

    #[test]
    fn round_trips() {
        for original in ["", "a = 1", "a = 1\n", "a = 1\n\n", "[x]\r\ny = 2\r\n"] {
            let once = install(original, BODY, &ours, &adopt).unwrap();
            assert_eq!(install(&once, BODY, &ours, &adopt).unwrap(), once);
            assert_eq!(uninstall(&once, &ours).unwrap(), original, "{once:?}");
        }
    }

    #[test]
    fn foreign_tables_move_out_and_hand_written_entries_are_adopted() {
        let original = "[mcp_servers.calyx-ipc]\nurl = \"old\"\n\n[other]\nk = 1\n";
        let once = install(original, BODY, &ours, &adopt).unwrap();
        assert!(!once.contains("old"));
        let with_trust = once.replace(END, "[hooks.state.\"x\"]\ntrusted = true\n# <<< calyx <<<");
        let removed = uninstall(&with_trust, &ours).unwrap();
        assert!(removed.contains("[hooks.state.\"x\"]\ntrusted = true\n"));
        assert!(!removed.contains("calyx-ipc"));
        let reinstalled = install(&with_trust, BODY, &ours, &adopt).unwrap();
        let block = block_text(&reinstalled).unwrap();
        assert!(!block.contains("trusted"));
        assert!(reinstalled.contains("trusted = true"));
    }

    #[test]
    fn invalid_and_conflicting_files_are_refused() {
        let err = install("a = 1\nb = \n", BODY, &ours, &adopt).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(install("mcp_servers = { x = {} }\n", BODY, &ours, &adopt).is_err());
        assert!(uninstall(&format!("{BEGIN}\n"), &ours).is_err());
    }
}
