//! The command log must not depend on where the output was cut into chunks: any stream of text,
//! escape fragments and shell marks, fed whole or in random pieces, gives the same records.

use calyx_pty::{CommandLog, CommandRecord};
use proptest::prelude::*;

fn stream() -> impl Strategy<Value = Vec<u8>> {
    let fragment = prop_oneof![
        any::<u8>().prop_map(|b| vec![b]),
        Just(b"\x1b".to_vec()),
        Just(b"\x1b]".to_vec()),
        Just(b"\x1b\\".to_vec()),
        Just(b"\x07".to_vec()),
        Just(b"\x1b[31m".to_vec()),
        Just(b"hello\r\n".to_vec()),
        Just(b"\x1b]133;A\x07".to_vec()),
        Just(b"\x1b]133;C;cmdline=make --token t0k\x07".to_vec()),
        Just(b"\x1b]133;C\x1b\\".to_vec()),
        (0i32..300).prop_map(|n| format!("\x1b]133;D;{n}\x07").into_bytes()),
        Just(b"\x1b]7;file://h/tmp/x%20y\x07".to_vec()),
    ];
    prop::collection::vec(fragment, 0..300).prop_map(|v| v.concat())
}

/// Records without their clock times.
fn records(log: &CommandLog) -> Vec<CommandRecord> {
    log.records()
        .map(|r| CommandRecord {
            started_ms: 0,
            finished_ms: r.finished_ms.map(|_| 0),
            ..r.clone()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn chunking_never_changes_the_records(data in stream(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8)) {
        let mut whole = CommandLog::default();
        whole.feed(&data);
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(data.len() + 1)).collect();
        points.sort_unstable();
        let mut pieces = CommandLog::default();
        let mut from = 0;
        for p in points {
            pieces.feed(&data[from..p]);
            from = p;
        }
        pieces.feed(&data[from..]);
        prop_assert_eq!(records(&whole), records(&pieces));
        for r in whole.records() {
            prop_assert!(!r.command.contains("t0k"));
        }
    }
}
