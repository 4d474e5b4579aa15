//! Graphemes whose width terminals disagree on. calyx lays cells out with `unicode-width`
//! (a ZWJ family or `❤️` is 2 columns), while tmux 3.3a and wcwidth-based terminals add up
//! the code points (6 and 1), and others treat flags or skin tones their own way. Where the
//! outer terminal's idea differs, its cursor ends up elsewhere than calyx thinks and the rest
//! of the row is drawn shifted (issue 15, item 3). The frame writer draws around such a
//! grapheme so a disagreement cannot move anything else: see calyx's `server::emit`.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Whether terminals may disagree on how many columns `symbol` (one grapheme) takes: it
/// joins code points with ZWJ, selects a presentation (VS15/VS16), carries a skin tone, is a
/// flag (regional indicators), or its width as a whole differs from the sum of its code
/// points' widths (what wcwidth-based terminals draw).
pub fn disputed(symbol: &str) -> bool {
    let mut chars = symbol.chars();
    let (Some(_), Some(_)) = (chars.next(), chars.next()) else {
        return false;
    };
    let special = symbol.chars().any(|c| {
        matches!(c,
            '\u{200d}' | '\u{fe0e}' | '\u{fe0f}'
            | '\u{1f3fb}'..='\u{1f3ff}'
            | '\u{1f1e6}'..='\u{1f1ff}')
    });
    let summed: usize = symbol.chars().map(|c| c.width().unwrap_or(0)).sum();
    special || summed != symbol.width()
}

#[cfg(test)]
mod tests {
    use super::disputed;

    #[test]
    fn joined_selected_toned_and_flag_graphemes_are_disputed() {
        for s in [
            "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}", // family (ZWJ)
            "\u{2764}\u{fe0f}",                            // heart with VS16
            "\u{1f44d}\u{1f3fd}",                          // thumbs up, medium skin
            "\u{1f1ef}\u{1f1f5}",                          // flag JP
        ] {
            assert!(disputed(s), "{s:?}");
        }
        for s in ["a", "\u{1f600}", "\u{4e2d}", "e\u{301}", " ", ""] {
            assert!(!disputed(s), "{s:?}");
        }
    }
}
