//! The command-line flags of the pane-moving verbs (`resize-pane`, `swap-pane`, `join-pane` /
//! `move-pane`, `break-pane`), with tmux's names and meanings, kept beside `cli` so each file
//! has one concern. The `:` prompt reads the same definitions.

use clap::{ArgGroup, Args};

use crate::layout_size::Size;

/// `resize-pane`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("direction").args(["left", "right", "up", "down"])))]
pub struct ResizePaneArgs {
    /// Pane to resize (default: this pane inside calyx, else the focused one).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Move the pane's nearest side-by-side border leftward.
    #[arg(short = 'L')]
    pub left: bool,
    /// Move that border rightward.
    #[arg(short = 'R')]
    pub right: bool,
    /// Move the pane's nearest stacked border upward.
    #[arg(short = 'U')]
    pub up: bool,
    /// Move that border downward.
    #[arg(short = 'D')]
    pub down: bool,
    /// Width in cells, or a percentage of the window (e.g. 40 or 30%).
    #[arg(short = 'x', value_name = "WIDTH", conflicts_with = "direction")]
    pub width: Option<Size>,
    /// Height in cells, or a percentage of the window.
    #[arg(short = 'y', value_name = "HEIGHT", conflicts_with = "direction")]
    pub height: Option<Size>,
    /// Zoom the pane to fill its window, or unzoom.
    #[arg(short = 'Z', conflicts_with_all = ["direction", "width", "height"])]
    pub zoom: bool,
    /// Cells to move the border by with -L/-R/-U/-D (default 1).
    #[arg(value_name = "N", requires = "direction")]
    pub adjustment: Option<u16>,
}

impl ResizePaneArgs {
    /// The direction flag given, if any.
    pub fn direction(&self) -> Option<crate::layout::Direction> {
        use crate::layout::Direction;
        [
            (self.left, Direction::Left),
            (self.right, Direction::Right),
            (self.up, Direction::Up),
            (self.down, Direction::Down),
        ]
        .into_iter()
        .find_map(|(given, dir)| given.then_some(dir))
    }
}

/// `swap-pane`.
#[derive(Debug, Args)]
pub struct SwapPaneArgs {
    /// Source pane (default: this pane inside calyx, else the focused one).
    #[arg(short = 's', long = "source")]
    pub source: Option<String>,
    /// Target pane (default: this pane inside calyx, else the focused one).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Swap the target with the previous pane of its window (-s is not used).
    #[arg(short = 'U', conflicts_with_all = ["next", "source"])]
    pub previous: bool,
    /// Swap the target with the next pane of its window (-s is not used).
    #[arg(short = 'D', conflicts_with = "source")]
    pub next: bool,
    /// Keep focus where it was (the pane that arrives there gets it).
    #[arg(short = 'd')]
    pub detached: bool,
}

/// `join-pane` / `move-pane`.
#[derive(Debug, Args)]
pub struct JoinPaneArgs {
    /// Print help (-h means horizontal here, as in tmux).
    #[arg(long, action = clap::ArgAction::Help)]
    pub help: Option<bool>,
    /// Pane to move (default: this pane inside calyx, else the focused one).
    #[arg(short = 's', long = "source")]
    pub source: Option<String>,
    /// Pane to put it beside (any window, any session).
    #[arg(short = 't', long)]
    pub target: Option<String>,
    /// Side by side with the target (the default is below it).
    #[arg(short = 'h', long = "horizontal", conflicts_with = "vertical")]
    pub horizontal: bool,
    /// Below the target (the default).
    #[arg(short = 'v', long = "vertical")]
    pub vertical: bool,
    /// Left of or above the target instead of right or below.
    #[arg(short = 'b', long = "before")]
    pub before: bool,
    /// Size of the moved pane: cells, or a percentage of the target's size (e.g. 20 or 30%).
    #[arg(short = 'l', long = "size", value_name = "SIZE")]
    pub size: Option<Size>,
    /// Keep focus where it was instead of showing the moved pane.
    #[arg(short = 'd')]
    pub detached: bool,
}

/// `break-pane`.
#[derive(Debug, Args)]
pub struct BreakPaneArgs {
    /// Pane to move into a window of its own (default: this pane inside calyx, else the
    /// focused one).
    #[arg(short = 's', long = "source")]
    pub source: Option<String>,
    /// Do not show the new window.
    #[arg(short = 'd')]
    pub detached: bool,
    /// The new window's name (default: it follows the pane's command).
    #[arg(short = 'n', long)]
    pub name: Option<String>,
    /// Print the pane's new place (tmux's -P): by default
    /// `#{session_name}:#{window_index}.#{pane_index}`, or as -F says.
    #[arg(short = 'P', long = "print")]
    pub print: bool,
    /// Format for -P (implies -P), e.g. '#{pane_id}' or '#{window_index}'.
    #[arg(short = 'F', long = "format")]
    pub format: Option<String>,
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use crate::cli::{Cli, Command};
    use crate::layout::Direction;
    use crate::layout_size::Size;

    fn parse(line: &str) -> Result<Command, clap::Error> {
        let words = std::iter::once("calyx").chain(line.split_whitespace());
        Cli::try_parse_from(words).map(|cli| cli.command.expect("a command"))
    }

    #[test]
    fn resize_pane_takes_one_direction_a_count_and_sizes() {
        let Ok(Command::ResizePane(a)) = parse("resize-pane -t %3 -U 4") else {
            panic!("resize-pane");
        };
        assert_eq!(a.direction(), Some(Direction::Up));
        assert_eq!((a.adjustment, a.target.as_deref()), (Some(4), Some("%3")));
        let Ok(Command::ResizePane(a)) = parse("resize-pane -x 30% -y 12") else {
            panic!("resize-pane -x -y");
        };
        assert_eq!(
            (a.width, a.height),
            (Some(Size::Percent(30)), Some(Size::Cells(12)))
        );
        assert_eq!(a.direction(), None);
        // Usage errors: two directions, a count without one, a size with one, -Z with more.
        for bad in [
            "resize-pane -L -R",
            "resize-pane 3",
            "resize-pane -D -y 3",
            "resize-pane -Z -x 3",
            "resize-pane -x 0",
        ] {
            let e = parse(bad).expect_err(bad);
            assert_eq!(e.exit_code(), 2, "{bad}");
        }
    }

    #[test]
    fn join_pane_takes_h_as_horizontal_and_move_pane_is_the_same_verb() {
        let Ok(Command::JoinPane(a)) = parse("move-pane -h -b -l 20 -s %1 -t %2 -d") else {
            panic!("move-pane");
        };
        assert!(a.horizontal && a.before && a.detached);
        assert_eq!(a.size, Some(Size::Cells(20)));
        assert_eq!(
            (a.source.as_deref(), a.target.as_deref()),
            (Some("%1"), Some("%2"))
        );
        assert!(parse("join-pane -h -v").is_err());
    }

    #[test]
    fn swap_pane_neighbours_exclude_a_source() {
        let Ok(Command::SwapPane(a)) = parse("swap-pane -t %2 -U -d") else {
            panic!("swap-pane");
        };
        assert!(a.previous && !a.next && a.detached);
        assert!(parse("swap-pane -s %1 -D").is_err());
        assert!(parse("swap-pane -U -D").is_err());
        let Ok(Command::BreakPane(b)) = parse("break-pane -s %4 -n logs -F #{pane_id}") else {
            panic!("break-pane");
        };
        assert_eq!(
            (b.name.as_deref(), b.format.as_deref()),
            (Some("logs"), Some("#{pane_id}"))
        );
    }
}
