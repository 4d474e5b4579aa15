//! What the pty crate's screen tests share (each test file includes it with `mod support;`).

use calyx_pty::{for_each_page, Answerback};

/// Every row of a vt100 parser's scrollback and screen, oldest first, cell by cell, with
/// wrap flags.
pub fn all_rows(parser: &mut vt100::Parser<Answerback>) -> Vec<(Vec<vt100::Cell>, bool)> {
    let mut rows = Vec::new();
    for_each_page(parser, |screen, take| {
        for r in 0..u16::try_from(take).unwrap_or(u16::MAX) {
            rows.push((
                screen.row_cells(r).unwrap_or_default().to_vec(),
                screen.row_wrapped(r),
            ));
        }
    });
    rows
}
