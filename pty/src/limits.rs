//! The largest size a pane's screen (and a client's terminal) may have.
//!
//! Sizes come from clients, and any local process that can reach the server's socket can say
//! its terminal is 65535x65535. A screen costs about 32 bytes a cell in vt100 plus, per client
//! showing it, two frame buffers of ratatui cells: about 130 bytes a cell in all (a 4000x4000
//! client took the server to 2 GB, an 8000x8000 one killed it and every pane with it). So sizes
//! are clamped, never trusted: at most [`MAX_SIDE`] cells a side, as tmux caps them, and at
//! most [`MAX_CELLS`] cells in all, which bounds a pane's screen to about 32 MB and a client's
//! frames to about 100 MB whatever it reports. A million cells is 3x the largest terminal a
//! person can read (a 7680x4320 display with a 5x10-pixel font is 1536x432 = 663,552 cells),
//! so no real terminal is cut.

/// Most cells along one side (tmux's limit too).
pub const MAX_SIDE: u16 = 10_000;
/// Most cells of one screen or terminal.
pub const MAX_CELLS: u32 = 1_000_000;

/// `rows` x `cols` brought within the limits: each side between 1 and [`MAX_SIDE`], and then, if
/// the area is still over [`MAX_CELLS`], the height cut to fit (the width is kept, so lines do
/// not rewrap; a terminal taller than it can be shows the rest dotted, as for any client
/// larger than its session).
pub fn clamp_size(rows: u16, cols: u16) -> (u16, u16) {
    let cols = cols.clamp(1, MAX_SIDE);
    let rows = rows.clamp(1, MAX_SIDE);
    let most_rows = MAX_CELLS / u32::from(cols);
    // cols <= 10,000, so at least 100 rows fit, and the result fits a u16.
    let rows = u16::try_from(u32::from(rows).min(most_rows)).unwrap_or(rows);
    (rows, cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_within_the_limits_are_kept() {
        assert_eq!(clamp_size(50, 200), (50, 200));
        assert_eq!(clamp_size(432, 1536), (432, 1536));
        assert_eq!(clamp_size(0, 0), (1, 1));
    }

    #[test]
    fn each_side_and_the_area_are_capped() {
        assert_eq!(clamp_size(u16::MAX, 80), (10_000, 80));
        assert_eq!(clamp_size(24, u16::MAX), (24, 10_000));
        assert_eq!(clamp_size(10_000, 10_000), (100, 10_000));
        assert_eq!(clamp_size(4000, 4000), (250, 4000));
        for (r, c) in [(u16::MAX, u16::MAX), (3000, 3000), (1001, 999), (1, 10_000)] {
            let (rows, cols) = clamp_size(r, c);
            assert!(u32::from(rows) * u32::from(cols) <= MAX_CELLS, "{r}x{c}");
            assert!(rows >= 1 && cols >= 1 && rows <= MAX_SIDE && cols <= MAX_SIDE);
        }
    }
}
