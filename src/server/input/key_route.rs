//! The prefix state machine: where a key goes in the normal and prefix modes. Pure (the keymap,
//! the key and the clock in; a decision out), so it is unit tested without a server or panes;
//! `input::route` acts on the decision.

use tokio::time::{Duration, Instant};

use crate::commands::{Action, Keymap};
use crate::keys::Key;

/// How long after a repeatable binding the next repeatable key works without the prefix again
/// (tmux's `repeat-time`, 500 ms by default): `prefix C-Up C-Up C-Up` moves a border three times.
pub const REPEAT_TIME: Duration = Duration::from_millis(500);

/// What to do with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRoute {
    /// It is the prefix: the next key is a command.
    Prefix,
    /// Run this bound action.
    Perform(Action),
    /// A key after the prefix that nothing is bound to: dropped, as tmux drops it.
    Unbound,
    /// Not for calyx: the focused pane gets it (or the approval panel, or copy mode).
    Pass,
}

/// Bindings that may repeat without the prefix: the resize keys, as tmux binds them with `-r`.
pub fn repeats(action: Action) -> bool {
    matches!(action, Action::ResizePane(_))
}

/// Until when repeatable keys work without the prefix after `action` ran at `now` (the
/// server asks [`key_repeats`], which knows the keys bound with `-r` too).
#[cfg(test)]
pub fn repeat_window(action: Action, now: Instant) -> Option<Instant> {
    repeats(action).then(|| now + REPEAT_TIME)
}

/// Whether `key` after the prefix repeats: its action does, or it was bound with `bind-key -r`.
pub fn key_repeats(key: &Key, action: Action, keymap: &Keymap) -> bool {
    repeats(action) || keymap.repeat.contains(key)
}

/// A key pressed right after the prefix. The prefix itself is bound too (to send-prefix, which
/// passes the prefix byte through to the pane), so pressing it twice types it once.
pub fn after_prefix(key: &Key, keymap: &Keymap) -> KeyRoute {
    match keymap.lookup(key) {
        Some(action) => KeyRoute::Perform(action),
        None => KeyRoute::Unbound,
    }
}

/// A key pressed in normal mode. `repeat_until` is the end of the window a repeatable binding
/// opened: within it, repeatable keys run again; any other key ends it and goes on as usual.
pub fn in_normal(
    key: &Key,
    keymap: &Keymap,
    repeat_until: Option<Instant>,
    now: Instant,
) -> KeyRoute {
    if *key == keymap.prefix {
        return KeyRoute::Prefix;
    }
    if repeat_until.is_some_and(|until| now < until) {
        if let Some(action) = keymap.lookup(key).filter(|a| key_repeats(key, *a, keymap)) {
            return KeyRoute::Perform(action);
        }
    }
    // `bind-key -n`: the key is calyx's, not the pane's.
    if let Some(action) = keymap.root.get(key) {
        return KeyRoute::Perform(*action);
    }
    KeyRoute::Pass
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyCode;
    use crate::layout::{Direction, SplitDir};

    fn key(name: &str) -> Key {
        Key::parse(name).expect("key name")
    }

    fn defaults() -> Keymap {
        Keymap::defaults(Key::ctrl('b'))
    }

    #[test]
    fn the_prefix_then_a_bound_key_performs_its_action() {
        let km = defaults();
        let now = Instant::now();
        assert_eq!(in_normal(&key("C-b"), &km, None, now), KeyRoute::Prefix);
        for (name, action) in [
            ("%", Action::Split(SplitDir::Horizontal)),
            ("\"", Action::Split(SplitDir::Vertical)),
            ("o", Action::NextPane),
            ("Left", Action::SelectPane(Direction::Left)),
            ("x", Action::KillPane),
            ("z", Action::Zoom),
            ("c", Action::NewWindow),
            (",", Action::RenameWindow),
            ("n", Action::NextWindow),
            ("p", Action::PreviousWindow),
            ("7", Action::SelectWindow(7)),
            ("d", Action::Detach),
            ("[", Action::CopyMode),
            ("]", Action::Paste),
            ("?", Action::Help),
            (":", Action::CommandPrompt),
        ] {
            assert_eq!(
                after_prefix(&key(name), &km),
                KeyRoute::Perform(action),
                "{name}"
            );
        }
    }

    #[test]
    fn keys_without_the_prefix_reach_the_pane() {
        let km = defaults();
        let now = Instant::now();
        for name in ["%", "x", "a", "Enter", "C-c", "M-x", "F5", "Up", "C-Up"] {
            assert_eq!(
                in_normal(&key(name), &km, None, now),
                KeyRoute::Pass,
                "{name}"
            );
        }
    }

    #[test]
    fn the_prefix_pressed_twice_sends_the_prefix() {
        let km = defaults();
        assert_eq!(
            after_prefix(&key("C-b"), &km),
            KeyRoute::Perform(Action::SendPrefix)
        );
        // With another prefix, that prefix sends itself and C-b is an ordinary key again.
        let km = Keymap::defaults(Key::ctrl('a'));
        let now = Instant::now();
        assert_eq!(in_normal(&key("C-a"), &km, None, now), KeyRoute::Prefix);
        assert_eq!(
            after_prefix(&key("C-a"), &km),
            KeyRoute::Perform(Action::SendPrefix)
        );
        assert_eq!(in_normal(&key("C-b"), &km, None, now), KeyRoute::Pass);
    }

    #[test]
    fn an_unbound_key_after_the_prefix_is_dropped() {
        let km = defaults();
        for name in ["Q", "F7", "M-z", "Enter", "C-x"] {
            assert_eq!(after_prefix(&key(name), &km), KeyRoute::Unbound, "{name}");
        }
        assert_eq!(
            after_prefix(&Key::plain(KeyCode::Char('é')), &km),
            KeyRoute::Unbound
        );
    }

    #[test]
    fn resize_keys_repeat_without_the_prefix_within_the_repeat_time() {
        let km = defaults();
        let t0 = Instant::now();
        let action = match after_prefix(&key("C-Up"), &km) {
            KeyRoute::Perform(a) => a,
            other => panic!("{other:?}"),
        };
        assert_eq!(action, Action::ResizePane(Direction::Up));
        let until = repeat_window(action, t0);
        assert_eq!(until, Some(t0 + REPEAT_TIME));
        // Within the window: every resize key repeats, in any direction, Alt or Ctrl.
        let soon = t0 + REPEAT_TIME / 2;
        for (name, dir) in [
            ("C-Up", Direction::Up),
            ("C-Down", Direction::Down),
            ("M-Left", Direction::Left),
            ("M-Right", Direction::Right),
        ] {
            assert_eq!(
                in_normal(&key(name), &km, until, soon),
                KeyRoute::Perform(Action::ResizePane(dir)),
                "{name}"
            );
        }
        // A key that is bound but not repeatable, or not bound, goes to the pane as usual.
        assert_eq!(in_normal(&key("z"), &km, until, soon), KeyRoute::Pass);
        assert_eq!(in_normal(&key("Up"), &km, until, soon), KeyRoute::Pass);
        // The prefix still works inside the window.
        assert_eq!(in_normal(&key("C-b"), &km, until, soon), KeyRoute::Prefix);
        // Once the window has passed, resize keys are ordinary keys again.
        let late = t0 + REPEAT_TIME;
        assert_eq!(in_normal(&key("C-Up"), &km, until, late), KeyRoute::Pass);
    }

    #[test]
    fn keys_bound_without_the_prefix_and_repeatable_ones() {
        let mut km = defaults();
        km.root.insert(key("M-h"), Action::NextWindow);
        km.bindings
            .insert(key("j"), Action::SelectPane(Direction::Down));
        km.repeat.insert(key("j"));
        let now = Instant::now();
        assert_eq!(
            in_normal(&key("M-h"), &km, None, now),
            KeyRoute::Perform(Action::NextWindow)
        );
        // Other keys still reach the pane.
        assert_eq!(in_normal(&key("M-j"), &km, None, now), KeyRoute::Pass);
        // j bound with -r repeats within the window, like the resize keys.
        assert!(key_repeats(
            &key("j"),
            Action::SelectPane(Direction::Down),
            &km
        ));
        assert_eq!(
            in_normal(&key("j"), &km, Some(now + REPEAT_TIME), now),
            KeyRoute::Perform(Action::SelectPane(Direction::Down))
        );
        assert_eq!(in_normal(&key("j"), &km, None, now), KeyRoute::Pass);
    }

    #[test]
    fn only_resizing_opens_a_repeat_window() {
        let now = Instant::now();
        for action in [
            Action::Zoom,
            Action::SelectPane(Direction::Up),
            Action::KillPane,
            Action::SendPrefix,
            Action::Split(SplitDir::Vertical),
        ] {
            assert_eq!(repeat_window(action, now), None, "{action:?}");
        }
        assert!(repeat_window(Action::ResizePane(Direction::Left), now).is_some());
    }
}
