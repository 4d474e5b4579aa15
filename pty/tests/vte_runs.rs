//! The vendored vte's bulk hand-over (`Perform::print_str`, vendor/vte/CALYX-PATCHES.md):
//! whether a performer takes the runs whole or a character at a time, it must see exactly the
//! characters and control codes, in the order, that a character-by-character reading of the
//! text gives: C0 controls (below U+0020) and C1 controls (U+0080..=U+009F) executed, every
//! other character printed. Runs of every length around the 16-byte blocks vte checks at once,
//! and the printable characters whose UTF-8 starts like a C1 control's (U+00A0..=U+00BF).

use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Event {
    Print(char),
    Execute(u8),
}

/// Takes the default `print_str` (one `print` per character).
#[derive(Default)]
struct PerChar(Vec<Event>);

impl vte::Perform for PerChar {
    fn print(&mut self, c: char) {
        self.0.push(Event::Print(c));
    }
    fn execute(&mut self, byte: u8) {
        self.0.push(Event::Execute(byte));
    }
}

/// Takes runs whole, and checks that a run never holds a control character.
#[derive(Default)]
struct Runs(Vec<Event>);

impl vte::Perform for Runs {
    fn print(&mut self, c: char) {
        self.0.push(Event::Print(c));
    }
    fn print_str(&mut self, text: &str) {
        assert!(!text.is_empty(), "an empty run was handed over");
        for c in text.chars() {
            assert!(!is_control(c), "control {c:?} inside a run {text:?}");
            self.0.push(Event::Print(c));
        }
    }
    fn execute(&mut self, byte: u8) {
        self.0.push(Event::Execute(byte));
    }
}

fn is_control(c: char) -> bool {
    c < ' ' || ('\u{80}'..='\u{9f}').contains(&c)
}

/// What a reading of `text` one character at a time gives (no escape sequences in it).
fn expected(text: &str) -> Vec<Event> {
    text.chars()
        .map(|c| match c {
            c if is_control(c) => Event::Execute(c as u8),
            c => Event::Print(c),
        })
        .collect()
}

fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        // Printable ASCII runs of every length around a block.
        4 => "[ -~]{0,40}",
        // C0 controls but ESC (which starts a sequence) and C1 controls.
        2 => prop::sample::select(
            (0u32..0x20)
                .filter(|&c| c != 0x1b)
                .chain(0x80..0xa0)
                .filter_map(char::from_u32)
                .collect::<Vec<_>>()
        )
        .prop_map(String::from),
        // U+00A0..=U+00BF share C1's lead byte 0xC2; DEL; wide and combining characters.
        2 => prop::sample::select(vec!['\u{a0}', '\u{a9}', '\u{bf}', '\u{7f}', 'é', '中', '\u{301}', '🦀'])
            .prop_map(String::from),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #[test]
    fn runs_and_characters_give_the_same_events(text in text()) {
        let mut per_char = PerChar::default();
        vte::Parser::new().advance(&mut per_char, text.as_bytes());
        let mut runs = Runs::default();
        vte::Parser::new().advance(&mut runs, text.as_bytes());
        let want = expected(&text);
        prop_assert_eq!(&per_char.0, &want);
        prop_assert_eq!(&runs.0, &want);
    }
}

#[test]
fn a_c1_control_after_a_full_block_of_text_is_executed() {
    let text = format!("{}\u{85}\u{a0}{}\u{9b}", "x".repeat(16), "y".repeat(31));
    let mut runs = Runs::default();
    vte::Parser::new().advance(&mut runs, text.as_bytes());
    assert_eq!(runs.0, expected(&text));
}
