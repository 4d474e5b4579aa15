//! tmux's preset layouts (`select-layout`, `prefix Space`, `prefix M-1`..`M-5`): a window's
//! panes rearranged into one of five shapes, in the order the panes are listed. Driving four
//! agents side by side is one `select-layout tiled` away.

use crate::layout::{Layout, PaneId, SplitDir};

/// The five shapes, in tmux's cycling order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Preset {
    /// Side by side, equal widths.
    EvenHorizontal,
    /// Stacked, equal heights.
    EvenVertical,
    /// The first pane across the top, the others side by side below it.
    MainHorizontal,
    /// The first pane on the left, the others stacked on its right.
    MainVertical,
    /// A grid as square as the count allows.
    Tiled,
}

impl Preset {
    pub const ALL: [Preset; 5] = [
        Preset::EvenHorizontal,
        Preset::EvenVertical,
        Preset::MainHorizontal,
        Preset::MainVertical,
        Preset::Tiled,
    ];

    /// tmux's name for the preset.
    pub fn name(self) -> &'static str {
        match self {
            Preset::EvenHorizontal => "even-horizontal",
            Preset::EvenVertical => "even-vertical",
            Preset::MainHorizontal => "main-horizontal",
            Preset::MainVertical => "main-vertical",
            Preset::Tiled => "tiled",
        }
    }

    /// The preset a name (or a unique start of one, as tmux accepts) stands for.
    pub fn parse(name: &str) -> Result<Preset, String> {
        let name = name.trim();
        if let Some(exact) = Preset::ALL.into_iter().find(|p| p.name() == name) {
            return Ok(exact);
        }
        let starts: Vec<Preset> = Preset::ALL
            .into_iter()
            .filter(|p| !name.is_empty() && p.name().starts_with(name))
            .collect();
        match starts.as_slice() {
            [one] => Ok(*one),
            _ => Err(format!(
                "unknown layout: {name} (one of {})",
                Preset::ALL.map(Preset::name).join(", ")
            )),
        }
    }

    /// The next preset when cycling (`prefix Space`); from none, the first.
    pub fn after(current: Option<Preset>) -> Preset {
        let at = current
            .and_then(|c| Preset::ALL.iter().position(|p| *p == c))
            .map_or(0, |i| (i + 1) % Preset::ALL.len());
        Preset::ALL[at]
    }

    /// `panes` arranged in this shape (None for no panes).
    pub fn build(self, panes: &[PaneId]) -> Option<Layout> {
        let (first, rest) = panes.split_first()?;
        let mut layout = match self {
            Preset::EvenHorizontal => chain(panes, SplitDir::Horizontal)?,
            Preset::EvenVertical => chain(panes, SplitDir::Vertical)?,
            Preset::MainHorizontal => main(*first, rest, SplitDir::Vertical),
            Preset::MainVertical => main(*first, rest, SplitDir::Horizontal),
            Preset::Tiled => tiled(panes)?,
        };
        // The main pane keeps its half: only what lines up after it is evened out.
        if let (Preset::MainHorizontal | Preset::MainVertical, Layout::Split { second, .. }) =
            (self, &mut layout)
        {
            second.equalize();
        } else {
            layout.equalize();
        }
        Some(layout)
    }
}

/// `panes` one after the other in direction `dir`.
fn chain(panes: &[PaneId], dir: SplitDir) -> Option<Layout> {
    let (last, before) = panes.split_last()?;
    Some(
        before
            .iter()
            .rev()
            .fold(Layout::Pane(*last), |after, pane| Layout::Split {
                dir,
                ratio: 500,
                first: Box::new(Layout::Pane(*pane)),
                second: Box::new(after),
            }),
    )
}

/// `main` on one side of `dir` (half of it), the others lined up across the other half.
fn main(main: PaneId, rest: &[PaneId], dir: SplitDir) -> Layout {
    let across = match dir {
        SplitDir::Horizontal => SplitDir::Vertical,
        SplitDir::Vertical => SplitDir::Horizontal,
    };
    match chain(rest, across) {
        None => Layout::Pane(main),
        Some(others) => Layout::Split {
            dir,
            ratio: 500,
            first: Box::new(Layout::Pane(main)),
            second: Box::new(others),
        },
    }
}

/// Rows of `ceil(sqrt(n))` panes, stacked; the last row may hold fewer (they share its width).
fn tiled(panes: &[PaneId]) -> Option<Layout> {
    let columns = (1..=panes.len()).find(|c| c * c >= panes.len())?;
    let rows: Vec<Layout> = panes
        .chunks(columns)
        .filter_map(|row| chain(row, SplitDir::Horizontal))
        .collect();
    let (last, before) = rows.split_last()?;
    Some(
        before
            .iter()
            .rev()
            .fold(last.clone(), |after, row| Layout::Split {
                dir: SplitDir::Vertical,
                ratio: 500,
                first: Box::new(row.clone()),
                second: Box::new(after),
            }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::layout::Rect;

    fn sizes(layout: &Layout, area: Rect) -> Vec<(u16, u16)> {
        let mut rects = layout.rects(area);
        rects.sort_by_key(|(id, _)| *id);
        rects
            .into_iter()
            .map(|(_, r)| (r.width, r.height))
            .collect()
    }

    #[test]
    fn tiled_four_panes_are_four_equal_panes() {
        let layout = Preset::Tiled.build(&[1, 2, 3, 4]).expect("layout");
        assert_eq!(sizes(&layout, Rect::new(0, 0, 160, 44)), vec![(80, 22); 4]);
        assert_eq!(layout.panes(), vec![1, 2, 3, 4]);
    }

    #[test]
    fn even_and_main_shapes() {
        let area = Rect::new(0, 0, 120, 40);
        let even = Preset::EvenHorizontal.build(&[1, 2, 3]).expect("layout");
        assert_eq!(sizes(&even, area), vec![(40, 40); 3]);
        let stacked = Preset::EvenVertical.build(&[1, 2, 3, 4]).expect("layout");
        assert_eq!(sizes(&stacked, area), vec![(120, 10); 4]);
        let main_v = Preset::MainVertical.build(&[1, 2, 3]).expect("layout");
        assert_eq!(sizes(&main_v, area), vec![(60, 40), (60, 20), (60, 20)]);
        let main_h = Preset::MainHorizontal.build(&[1, 2, 3]).expect("layout");
        assert_eq!(sizes(&main_h, area), vec![(120, 20), (60, 20), (60, 20)]);
        assert_eq!(Preset::Tiled.build(&[7]), Some(Layout::Pane(7)));
        assert_eq!(Preset::Tiled.build(&[]), None);
    }

    #[test]
    fn names_prefixes_and_cycling() {
        assert_eq!(Preset::parse("tiled"), Ok(Preset::Tiled));
        assert_eq!(Preset::parse("main-v"), Ok(Preset::MainVertical));
        assert!(Preset::parse("main").is_err(), "ambiguous");
        assert!(Preset::parse("spiral").is_err());
        assert_eq!(Preset::after(None), Preset::EvenHorizontal);
        assert_eq!(Preset::after(Some(Preset::Tiled)), Preset::EvenHorizontal);
        assert_eq!(
            Preset::after(Some(Preset::EvenHorizontal)),
            Preset::EvenVertical
        );
    }
}
