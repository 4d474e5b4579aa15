//! calyx: OSC 8 hyperlinks. A screen keeps a table of the links its cells point at; a cell holds
//! only a 2-byte index into it (see `Attrs::link`), so cells stay 32 bytes and parsing plain text
//! costs nothing extra.
//!
//! Links come from untrusted program output and end up in the user's terminal, so only URIs and
//! ids without control characters (C0, DEL, C1) and within a length cap are ever stored: anything
//! else ends the current link, as if the program had closed it.

use alloc::string::String;
use alloc::vec::Vec;

/// Longest URI kept, in bytes; longer ones are dropped (the text shows without a link).
pub const MAX_URI_BYTES: usize = 2048;
/// Longest `id=` parameter kept, in bytes; a longer id is dropped (the link stays).
pub const MAX_ID_BYTES: usize = 250;
/// Most links one screen holds at a time.
const MAX_LINKS: usize = 4096;
/// Most URI and id bytes one screen holds at a time (about 128 links of maximum length).
const MAX_TABLE_BYTES: usize = 256 * 1024;
/// How many of the most recent links are searched for a duplicate before adding a new entry:
/// a program that prints the same link on consecutive rows reuses one entry.
const DEDUP_WINDOW: usize = 32;

/// An OSC 8 hyperlink: its URI and optional `id` parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    uri: String,
    id: Option<String>,
}

impl Link {
    /// The target URI (never empty, no control characters, at most 2 KiB).
    #[must_use]
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The `id` parameter, which lets a terminal treat separate runs of cells as one link.
    #[must_use]
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }

    fn bytes(&self) -> usize {
        self.uri.len() + self.id.as_ref().map_or(0, String::len)
    }
}

/// Whether a string is safe to hand to another terminal inside an OSC 8 sequence.
fn clean(s: &str) -> bool {
    !s.chars().any(char::is_control)
}

/// Parses the parameters of `OSC 8 ; params ; URI ST` (`params` is `key=value` pairs separated
/// by `:`). Returns None for a closing sequence (empty URI) and for anything unsafe.
pub fn parse(params: &[u8], uri_parts: &[&[u8]]) -> Option<Link> {
    let mut len = uri_parts.iter().map(|p| p.len()).sum::<usize>();
    len += uri_parts.len().saturating_sub(1);
    if len == 0 || len > MAX_URI_BYTES {
        return None;
    }
    // vte splits the URI on ';': put it back together.
    let mut uri = String::with_capacity(len);
    for (i, part) in uri_parts.iter().enumerate() {
        if i > 0 {
            uri.push(';');
        }
        uri.push_str(core::str::from_utf8(part).ok()?);
    }
    if !clean(&uri) {
        return None;
    }
    let id = core::str::from_utf8(params).ok().and_then(|params| {
        params
            .split(':')
            .find_map(|kv| kv.strip_prefix("id="))
            .filter(|id| !id.is_empty() && id.len() <= MAX_ID_BYTES && clean(id))
            .map(String::from)
    });
    Some(Link { uri, id })
}

/// Writes the OSC 8 sequences that go from link `from` to link `to` (indexes into `links`; 0
/// none). Nothing when `links` is None or the two are the same.
pub fn write_change(
    contents: &mut String,
    links: Option<&LinkTable>,
    from: u16,
    to: u16,
) {
    let Some(links) = links else {
        return;
    };
    if from == to {
        return;
    }
    if from != 0 {
        contents.push_str("\x1b]8;;\x1b\\");
    }
    if let Some(link) = links.get(to) {
        contents.push_str("\x1b]8;");
        if let Some(id) = link.id() {
            contents.push_str("id=");
            contents.push_str(id);
        }
        contents.push(';');
        contents.push_str(link.uri());
        contents.push_str("\x1b\\");
    }
}

/// A screen's links; index 0 means "no link", entry `i` is index `i + 1`.
#[derive(Clone, Debug, Default)]
pub struct LinkTable {
    links: Vec<Link>,
    bytes: usize,
}

impl LinkTable {
    /// The link with this index, if any.
    pub fn get(&self, index: u16) -> Option<&Link> {
        usize::from(index)
            .checked_sub(1)
            .and_then(|i| self.links.get(i))
    }

    /// Whether adding `link` needs a compaction first.
    pub fn is_full_for(&self, link: &Link) -> bool {
        self.links.len() >= MAX_LINKS
            || self.bytes + link.bytes() > MAX_TABLE_BYTES
    }

    /// The index for `link`, reusing a recent identical entry; None when the table is full.
    pub fn intern(&mut self, link: Link) -> Option<u16> {
        let recent = self.links.len().saturating_sub(DEDUP_WINDOW);
        if let Some(i) =
            self.links[recent..].iter().rposition(|l| *l == link)
        {
            return u16::try_from(recent + i + 1).ok();
        }
        if self.is_full_for(&link) {
            return None;
        }
        let index = u16::try_from(self.links.len() + 1).ok()?;
        self.bytes += link.bytes();
        self.links.push(link);
        Some(index)
    }

    /// Keeps only the links whose index is marked in `used` (indexed like the table, 0 unused)
    /// and returns the old-to-new index map.
    pub fn compact(&mut self, used: &[bool]) -> Vec<u16> {
        let mut map = vec![0u16; self.links.len() + 1];
        let old = core::mem::take(&mut self.links);
        self.bytes = 0;
        for (i, link) in old.into_iter().enumerate() {
            if used.get(i + 1).copied().unwrap_or(false) {
                self.bytes += link.bytes();
                self.links.push(link);
                // at most MAX_LINKS entries, so this fits
                map[i + 1] = u16::try_from(self.links.len()).unwrap_or(0);
            }
        }
        map
    }

    /// The number of entries (for slices indexed by link index: `len() + 1`).
    pub fn len(&self) -> usize {
        self.links.len()
    }
}
