//! Plain-text tables for the scripting verbs (`list-panes`, `approvals`): a header row and
//! columns padded to the widest cell as the terminal shows it, so a CJK session name or an
//! emoji title does not shift the columns after it (padding by `char` count does).

use unicode_width::UnicodeWidthStr;

/// Columns are separated by two spaces; the last column is not padded (it may be long).
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are empty, extra cells are ignored.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The header and every row, each line ending in a newline, without trailing spaces.
    pub fn render(&self) -> String {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| h.width()).collect();
        for row in &self.rows {
            for (i, width) in widths.iter_mut().enumerate() {
                *width = (*width).max(cell(row, i).width());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::new();
            for (i, width) in widths.iter().enumerate() {
                let text = cell(row, i);
                line.push_str(text);
                if i + 1 < columns {
                    line.push_str(&" ".repeat(width - text.width() + 2));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

/// Cell `i` of `row`, empty when the row is short.
fn cell(row: &[String], i: usize) -> &str {
    row.get(i).map(String::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_cells_keep_the_next_column_aligned() {
        let mut t = Table::new(&["SESSION", "WINDOW", "CWD"]);
        t.row(vec!["作業".into(), "0.0".into(), "/tmp".into()]);
        t.row(vec!["alpha-long".into(), "1.2".into(), "/".into()]);
        let text = t.render();
        let column_of = |line: &str, needle: &str| {
            let at = line.find(needle).expect("cell present");
            line[..at].width()
        };
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(column_of(lines[0], "WINDOW"), column_of(lines[1], "0.0"));
        assert_eq!(column_of(lines[1], "0.0"), column_of(lines[2], "1.2"));
        assert!(lines.iter().all(|l| !l.ends_with(' ')), "{text}");
    }
}
