//! The text the benchmarks parse: muxbench's four line kinds (../shared/bench/muxbench.py),
//! optionally with an OSC 8 hyperlink and strikethrough on every fifth line.

// Each example that includes this file uses only some of it.
#![allow(dead_code)]

/// About `mb` MiB of muxbench's mixed ANSI text; with `links`, every fifth line also carries an
/// OSC 8 hyperlink and SGR 9.
pub fn payload(mb: usize, links: bool) -> Vec<u8> {
    let target = mb * 1024 * 1024;
    let mut out = String::with_capacity(target + 256);
    let mut i = 0usize;
    while out.len() < target {
        match i % 4 {
            0 => out.push_str(&format!(
                "plain ascii text line with some words in it and a number {i}\n"
            )),
            1 => out.push_str(&format!(
                "\x1b[1;32mgreen bold\x1b[0m \x1b[38;5;208morange\x1b[0m \x1b[48;2;10;20;30mtruecolor bg\x1b[0m {i}\n"
            )),
            2 => out.push_str(&format!(
                "unicode: \u{e9}\u{e8}\u{ea} \u{4e2d}\u{6587}\u{5b57}\u{7b26} \u{2713} \u{2192} {i}\n"
            )),
            _ => out.push_str(&format!(
                "    fn main() {{ println!(\"{i}\"); }} // code-like line with tabs\t\tand more\n"
            )),
        }
        if links && i.is_multiple_of(5) {
            out.push_str(&format!(
                "\x1b]8;id=l{i};https://example.com/item/{i}\x1b\\link {i}\x1b]8;;\x1b\\ \x1b[9mstruck\x1b[29m\n"
            ));
        }
        i += 1;
    }
    out.into_bytes()
}

/// `text` as a pane's reader gets it from the PTY: the line discipline turns each `\n` into
/// `\r\n` (onlcr), so each line starts at the left edge instead of where the last one ended.
pub fn as_the_pty_delivers(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 32);
    for &b in text {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// CPU time this thread has used, in seconds: a rate per CPU second is the rate per core,
/// which other programs on a busy machine change far less than they change wall time.
pub fn thread_cpu_seconds() -> f64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec to the pointer, which points at `now`, alive
    // and writable for the call; CLOCK_THREAD_CPUTIME_ID is supported on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if rc != 0 {
        return 0.0;
    }
    now.tv_sec as f64 + now.tv_nsec as f64 / 1e9
}
