//! A pane program that records exactly the bytes it reads: a small python3 script that puts its
//! terminal in raw mode, turns on the DEC private modes it is given (`1` application cursor keys,
//! `1004` focus events, `2004` bracketed paste, `1000`/`1006` mouse reporting...), prints READY,
//! then appends every byte it reads to a log file and prints their hex on its screen. Tests read
//! the log to see precisely what calyx delivered to the program.

use std::path::PathBuf;

use super::{wait_until, Env};

const SCRIPT: &str = r#"
import os, sys, tty
log = open(sys.argv[1], 'ab', buffering=0)
tty.setraw(0)
for mode in sys.argv[2:]:
    os.write(1, b'\x1b[?' + mode.encode() + b'h')
os.write(1, b'READY\r\n')
while True:
    data = os.read(0, 4096)
    if not data:
        break
    log.write(data)
    os.write(1, (' '.join('%02x' % b for b in data) + '\r\n').encode())
"#;

/// One key logger's script and log file.
pub struct KeyLog {
    script: PathBuf,
    log: PathBuf,
}

impl KeyLog {
    /// A logger named `name` (its log file is `name.log` in the test's directory).
    pub fn new(env: &Env, name: &str) -> Self {
        let script = env.path().join("keylog.py");
        std::fs::write(&script, SCRIPT).expect("write keylog.py");
        let log = env.path().join(format!("{name}.log"));
        std::fs::write(&log, b"").expect("create key log");
        Self { script, log }
    }

    /// The pane command: `python3 keylog.py LOG MODES...`.
    pub fn command(&self, modes: &[&str]) -> Vec<String> {
        let mut cmd = vec![
            "python3".to_string(),
            self.script.display().to_string(),
            self.log.display().to_string(),
        ];
        cmd.extend(modes.iter().map(|m| m.to_string()));
        cmd
    }

    /// `calyx` arguments after `--` for this logger, as `&str`s.
    pub fn args(cmd: &[String]) -> Vec<&str> {
        cmd.iter().map(String::as_str).collect()
    }

    /// Every byte the program has read so far.
    pub fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.log).unwrap_or_default()
    }

    /// Waits until the program has read exactly `want` since the log held `from` bytes, and
    /// returns the new length. Fails (with what did arrive) when something else or more arrives.
    pub fn expect_since(&self, from: usize, want: &[u8]) -> usize {
        let mut seen = Vec::new();
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_until(&format!("the program to read {:?}", show(want)), || {
                seen = self.bytes().get(from..).unwrap_or_default().to_vec();
                (seen.len() >= want.len()).then_some(())
            })
        }));
        assert!(
            done.is_ok() && seen == want,
            "the program read {:?}, expected {:?}",
            show(&seen),
            show(want)
        );
        from + want.len()
    }
}

/// Bytes with escapes visible, for messages.
pub fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace('\x1b', "\\e")
}
