//! Snapshot tests: the sidebar rendered into a buffer, as text.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Color;
use ratatui::widgets::Widget;

use super::*;

fn render(view: SidebarView<'_>, w: u16, h: u16) -> (String, Buffer) {
    let area = Rect::new(0, 0, w, h);
    let mut buf = Buffer::empty(area);
    view.render(area, &mut buf);
    let mut text = String::new();
    for y in 0..h {
        let mut line = String::new();
        let mut skip = 0;
        for x in 0..w {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let sym = buf[(x, y)].symbol();
            skip = sym.width().saturating_sub(1);
            line.push_str(sym);
        }
        text.push_str(line.trim_end());
        text.push('\n');
    }
    (text, buf)
}

fn row(state: RowState, name: &str, title: &str, since: &str) -> SidebarRow {
    SidebarRow {
        pane_label: "1.2".into(),
        agent_name: name.into(),
        title: title.into(),
        cwd_name: "app".into(),
        state,
        since_text: since.into(),
        subagents: Vec::new(),
    }
}

fn sample() -> Vec<SidebarRow> {
    let mut working = row(RowState::Working, "Claude Code", "fix the flaky test", "3m");
    working.subagents = vec![
        SubagentLine {
            agent_type: "general-purpose".into(),
            last_tool: "Read".into(),
            elapsed_text: "40s".into(),
        },
        SubagentLine {
            agent_type: "explore".into(),
            last_tool: String::new(),
            elapsed_text: "2s".into(),
        },
    ];
    vec![
        row(RowState::Blocked, "Codex", "deploy", "12s"),
        working,
        row(RowState::Idle, "Gemini CLI", "", "1h"),
        row(RowState::Unknown, "pi", "refactor", "20m"),
        row(RowState::Done, "OpenCode", "docs", "2d"),
    ]
}

#[test]
fn all_states_with_subagents() {
    let rows = sample();
    let view = SidebarView {
        rows: &rows,
        selected: Some(1),
        focused: true,
    };
    let (text, buf) = render(view, 32, 14);
    insta::assert_snapshot!(text);
    assert_eq!(buf[(0, 0)].symbol(), "!");
    assert_eq!(buf[(0, 0)].fg, Color::LightRed);
    assert_eq!(buf[(0, 2)].fg, Color::Yellow);
    assert!(buf[(5, 2)]
        .modifier
        .contains(ratatui::style::Modifier::REVERSED));
}

#[test]
fn narrow_sidebar_truncates_with_ellipsis() {
    let rows = sample();
    let view = SidebarView {
        rows: &rows,
        selected: None,
        focused: false,
    };
    let (text, _) = render(view, 16, 6);
    insta::assert_snapshot!(text);
}

#[test]
fn selection_below_the_fold_scrolls_into_view() {
    let rows = sample();
    let view = SidebarView {
        rows: &rows,
        selected: Some(4),
        focused: false,
    };
    let (text, _) = render(view, 28, 5);
    insta::assert_snapshot!(text);
}

#[test]
fn empty_and_tiny_areas() {
    let view = SidebarView {
        rows: &[],
        selected: None,
        focused: false,
    };
    let (text, _) = render(view, 20, 2);
    insta::assert_snapshot!(text);
    let rows = sample();
    let view = SidebarView {
        rows: &rows,
        selected: Some(9),
        focused: true,
    };
    let (text, _) = render(view, 3, 1);
    assert_eq!(text, "! …\n");
}

#[test]
fn truncate_respects_display_width() {
    assert_eq!(truncate("hello", 5), "hello");
    assert_eq!(truncate("hello", 4), "hel…");
    assert_eq!(truncate("日本語テキスト", 5), "日本…");
    assert_eq!(truncate("x", 0), "");
}
