//! Sizes as tmux's `resize-pane -x/-y` and `join-pane -l` take them: a number of cells, or a
//! percentage of the window (`30%`), parsed where the command line is read so a bad one is a
//! usage error before anything reaches the server.

use serde::{Deserialize, Serialize};

/// A size as tmux's `-x`, `-y` and `-l` take it: cells, or a percentage of the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Size {
    Cells(u16),
    Percent(u16),
}

impl Size {
    /// The size in cells of a window `whole` cells across.
    pub fn cells_of(self, whole: u16) -> u16 {
        match self {
            Size::Cells(n) => n,
            Size::Percent(p) => {
                u16::try_from(u32::from(whole) * u32::from(p.min(100)) / 100).unwrap_or(whole)
            }
        }
    }
}

impl std::str::FromStr for Size {
    type Err = String;

    /// `40` (cells) or `30%`; zero, a sign or anything else is refused with why.
    fn from_str(text: &str) -> Result<Size, String> {
        let bad = || format!("{text:?} is not a size (cells like 40, or a percentage like 30%)");
        let (digits, percent) = match text.strip_suffix('%') {
            Some(d) => (d, true),
            None => (text, false),
        };
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let n: u16 = digits.parse().map_err(|_| bad())?;
        match (n, percent) {
            (0, _) => Err(bad()),
            (101.., true) => Err(format!("{text:?}: a percentage is at most 100%")),
            (n, true) => Ok(Size::Percent(n)),
            (n, false) => Ok(Size::Cells(n)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_as_cells_or_percentages_and_refuse_the_rest() {
        assert_eq!("40".parse(), Ok(Size::Cells(40)));
        assert_eq!("30%".parse(), Ok(Size::Percent(30)));
        for bad in ["", "%", "0", "-3", "+3", "3x", "101%", "99999999"] {
            assert!(bad.parse::<Size>().is_err(), "{bad:?}");
        }
        assert_eq!(Size::Percent(25).cells_of(80), 20);
        assert_eq!(Size::Cells(7).cells_of(80), 7);
    }
}
