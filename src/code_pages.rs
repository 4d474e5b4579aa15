//! Handing back the page mappings of the server's own code that it is not running.
//!
//! Why: on Linux 6.18 with large page-cache folios (ext4 builds them from readahead, 8 MB on
//! this machine), touching one byte of the executable maps its whole folio, up to 2 MB, into
//! the process. A server that has just started has run clap's command tree, the MCP tool
//! schemas, the config loaders and the endpoints' set-up, scattered over the 21 MB of text, and
//! keeps 12-16 MB of it mapped (RssFile) though it never runs that code again
//! (docs/performance.md, "Server memory and idle CPU", session 15).
//!
//! `MADV_DONTNEED` on a private, read-only file mapping without private (copied-on-write)
//! pages only removes this process's page-table entries: the bytes stay in the page cache,
//! shared with every other process running the binary, and the next instruction fetched from
//! such a page maps the same page-cache page again (a minor fault, no disk read). Nothing a
//! reader of the mapping can see changes. Only the executable's own mappings are touched: they
//! stay mapped at the same addresses for the life of the process, so a range read from
//! `/proc/self/smaps` cannot have become someone else's memory by the time it is advised (a
//! shared library could in principle be unloaded and its addresses reused).

use std::ops::Range;
use std::path::Path;

/// What one release did: the mappings advised and their resident size just before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Released {
    pub mappings: usize,
    pub resident_kib: u64,
}

/// One mapping of the executable that may be released: its address range and resident KiB.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Droppable {
    pub range: Range<usize>,
    pub resident_kib: u64,
}

/// Why a release did nothing.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("madvise of {start:#x}..{end:#x}: {source}")]
    Advise {
        start: usize,
        end: usize,
        source: std::io::Error,
    },
}

/// Releases the resident pages of this process's executable that can be mapped again from the
/// page cache. Call it off the async threads (it reads `/proc/self/smaps`, which walks the
/// page tables). Errors are for the log; the process is unchanged by a failed release.
pub fn release_code_pages() -> Result<Released, ReleaseError> {
    let exe = std::fs::read_link("/proc/self/exe").map_err(|source| ReleaseError::Read {
        path: "/proc/self/exe".into(),
        source,
    })?;
    release_from(Path::new("/proc/self/smaps"), &exe)
}

/// [`release_code_pages`] with the smaps file and the executable's path given (tests).
pub fn release_from(smaps: &Path, exe: &Path) -> Result<Released, ReleaseError> {
    let text = std::fs::read_to_string(smaps).map_err(|source| ReleaseError::Read {
        path: smaps.display().to_string(),
        source,
    })?;
    let exe = exe.to_string_lossy();
    let mut released = Released::default();
    for mapping in droppable(&text, &exe) {
        advise_dontneed(&mapping.range)?;
        released.mappings += 1;
        released.resident_kib += mapping.resident_kib;
    }
    Ok(released)
}

/// Drops this process's page-table entries for `range`, a mapping [`droppable`] chose.
fn advise_dontneed(range: &Range<usize>) -> Result<(), ReleaseError> {
    let len = range.end.saturating_sub(range.start);
    if len == 0 {
        return Ok(());
    }
    // SAFETY: `range` is a whole mapping of this process's own executable, read from
    // /proc/self/smaps: private, without write permission, not locked, and with no anonymous
    // (copied-on-write) pages, so every resident page is a page-cache page of the file. The
    // executable's mappings are never unmapped while the process runs, so the range is still
    // that mapping. MADV_DONTNEED on it only drops the page-table entries; the next access maps
    // the same page-cache bytes again, so no memory any Rust reference points at changes.
    let rc = unsafe { libc::madvise(range.start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(ReleaseError::Advise {
            start: range.start,
            end: range.end,
            source: std::io::Error::last_os_error(),
        })
    }
}

/// The mappings of `exe` in `smaps` (the text of a `/proc/PID/smaps`) whose pages can be
/// dropped and mapped again unchanged: readable, not writable, private, not locked, with no
/// anonymous pages and something resident. Lines it does not understand are skipped, and a
/// mapping with a field missing or unreadable is left alone.
pub fn droppable(smaps: &str, exe: &str) -> Vec<Droppable> {
    let mut out = Vec::new();
    let mut current: Option<Candidate> = None;
    for line in smaps.lines() {
        if let Some(header) = Header::parse(line) {
            if let Some(done) = current.take().and_then(Candidate::finish) {
                out.push(done);
            }
            current = header.eligible(exe).then(|| Candidate::new(header.range));
            continue;
        }
        if let Some(candidate) = current.as_mut() {
            candidate.field(line);
        }
    }
    if let Some(done) = current.and_then(Candidate::finish) {
        out.push(done);
    }
    out
}

/// A mapping's first line: `start-end perms offset dev inode [path]`.
struct Header<'a> {
    range: Range<usize>,
    perms: &'a str,
    path: &'a str,
}

impl<'a> Header<'a> {
    fn parse(line: &'a str) -> Option<Self> {
        let mut parts = line.splitn(6, ' ');
        let (start, end) = parts.next()?.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        let perms = parts.next()?;
        if perms.len() != 4 || start >= end {
            return None;
        }
        let _offset = parts.next()?;
        let _device = parts.next()?;
        let _inode = parts.next()?;
        let path = parts.next().map(str::trim).unwrap_or("");
        Some(Self {
            range: start..end,
            perms,
            path,
        })
    }

    fn eligible(&self, exe: &str) -> bool {
        let p = self.perms.as_bytes();
        let read_only_private = p[0] == b'r' && p[1] != b'w' && p[3] == b'p';
        // A replaced binary shows as "PATH (deleted)" (in smaps and in /proc/self/exe): still
        // this process's executable.
        read_only_private && !exe.is_empty() && live(self.path) == live(exe)
    }
}

/// A mapped file's path without the " (deleted)" the kernel adds once it is replaced.
fn live(path: &str) -> &str {
    path.strip_suffix(" (deleted)").unwrap_or(path)
}

/// A mapping being read: the fields that decide whether it is released.
struct Candidate {
    range: Range<usize>,
    resident_kib: Option<u64>,
    anonymous_kib: Option<u64>,
    locked: bool,
    flags_seen: bool,
}

impl Candidate {
    fn new(range: Range<usize>) -> Self {
        Self {
            range,
            resident_kib: None,
            anonymous_kib: None,
            locked: false,
            flags_seen: false,
        }
    }

    fn field(&mut self, line: &str) {
        let Some((key, value)) = line.split_once(':') else {
            return;
        };
        let kib = || value.trim().strip_suffix("kB")?.trim().parse::<u64>().ok();
        match key {
            "Rss" => self.resident_kib = kib(),
            "Anonymous" => self.anonymous_kib = kib(),
            "Locked" => self.locked |= kib().is_none_or(|k| k > 0),
            "VmFlags" => {
                self.flags_seen = true;
                self.locked |= value.split_whitespace().any(|f| f == "lo");
            }
            _ => {}
        }
    }

    fn finish(self) -> Option<Droppable> {
        let resident_kib = self.resident_kib?;
        let private_pages = self.anonymous_kib?;
        let keep = private_pages > 0 || self.locked || !self.flags_seen || resident_kib == 0;
        (!keep).then_some(Droppable {
            range: self.range,
            resident_kib,
        })
    }
}

#[cfg(test)]
#[path = "code_pages_tests.rs"]
mod tests;
