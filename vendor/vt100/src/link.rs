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
pub const MAX_LINKS: usize = 4096;
/// Most URI and id bytes one screen holds at a time (about 128 links of maximum length).
const MAX_TABLE_BYTES: usize = 256 * 1024;
/// A compaction visits every cell of the screen; it may run again only after this many new
/// links per cell it visited last time (one per `COMPACT_CELLS_PER_LINK` cells) were asked
/// for. That makes its cost at most this many cell visits per new link, whatever the program
/// prints: a table full of links the screen still shows would otherwise be scanned for every
/// new link (about 50 us each at 200x150 cells, issue 13). A screen of up to
/// `MAX_LINKS * COMPACT_CELLS_PER_LINK` cells (262,144) never waits, since filling the table
/// takes that many new links.
const COMPACT_CELLS_PER_LINK: usize = 64;

/// The index map's key for a link: a 64-bit FNV-1a hash of its URI and id. A collision (two
/// links with one hash, which a program can arrange) only costs a duplicate entry: a hit is
/// compared with the table's entry before it is reused.
fn key(link: &Link) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    feed(link.uri.as_bytes());
    // A separator no URI contains (they have no control characters), then the id.
    feed(&[0, u8::from(link.id.is_some())]);
    feed(link.id.as_deref().unwrap_or("").as_bytes());
    hash
}

#[cfg(feature = "std")]
type Index = std::collections::HashMap<u64, u16>;
#[cfg(not(feature = "std"))]
type Index = alloc::collections::BTreeMap<u64, u16>;

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
///
/// Each distinct link has one entry, found in constant time through `index`. The table holds
/// at most [`MAX_LINKS`] entries and `MAX_TABLE_BYTES` of text; when full, the screen compacts
/// it (drops the links no cell points at and renumbers the rest, a scan of every cell), but
/// no more often than `COMPACT_CELLS_PER_LINK` allows. In between, a new link finds no room
/// and its text shows unlinked: only a screen showing more than 4,096 distinct links at once
/// gets there, and a cell never points at another link than its own.
#[derive(Clone, Debug, Default)]
pub struct LinkTable {
    links: Vec<Link>,
    bytes: usize,
    /// The entry of each link, by `key`.
    index: Index,
    /// New links asked for since the last compaction.
    misses: usize,
    /// Cells the last compaction visited.
    last_scan: usize,
}

impl LinkTable {
    /// The link with this index, if any.
    pub fn get(&self, index: u16) -> Option<&Link> {
        usize::from(index)
            .checked_sub(1)
            .and_then(|i| self.links.get(i))
    }

    /// Whether adding `link` needs a compaction first.
    fn is_full_for(&self, link: &Link) -> bool {
        self.links.len() >= MAX_LINKS
            || self.bytes + link.bytes() > MAX_TABLE_BYTES
    }

    /// The index of `link` if the table has it.
    fn find(&self, key: u64, link: &Link) -> Option<u16> {
        let index = *self.index.get(&key)?;
        (self.get(index) == Some(link)).then_some(index)
    }

    /// The index for `link`, its existing entry or a new one. None when the table is full:
    /// the caller may compact it if [`LinkTable::may_compact`] says so, and ask again.
    pub fn intern(&mut self, link: Link) -> Option<u16> {
        let key = key(&link);
        if let Some(index) = self.find(key, &link) {
            return Some(index);
        }
        if self.is_full_for(&link) {
            self.misses = self.misses.saturating_add(1);
            return None;
        }
        self.misses = self.misses.saturating_add(1);
        let index = u16::try_from(self.links.len() + 1).ok()?;
        self.bytes += link.bytes();
        self.links.push(link);
        // On a collision the newer link takes the key; the older keeps its entry.
        self.index.insert(key, index);
        Some(index)
    }

    /// Whether enough new links were asked for since the last compaction to pay for another
    /// (see `COMPACT_CELLS_PER_LINK`).
    pub fn may_compact(&self) -> bool {
        self.misses.saturating_mul(COMPACT_CELLS_PER_LINK) >= self.last_scan
    }

    /// Keeps only the links whose index is marked in `used` (indexed like the table, 0 unused)
    /// and returns the old-to-new index map. `scanned`: the cells visited to mark them.
    pub fn compact(&mut self, used: &[bool], scanned: usize) -> Vec<u16> {
        let mut map = vec![0u16; self.links.len() + 1];
        let old = core::mem::take(&mut self.links);
        self.bytes = 0;
        self.index.clear();
        for (i, link) in old.into_iter().enumerate() {
            if used.get(i + 1).copied().unwrap_or(false) {
                self.bytes += link.bytes();
                let key = key(&link);
                self.links.push(link);
                // at most MAX_LINKS entries, so this fits
                let index = u16::try_from(self.links.len()).unwrap_or(0);
                self.index.insert(key, index);
                map[i + 1] = index;
            }
        }
        self.misses = 0;
        self.last_scan = scanned;
        map
    }

    /// The number of entries (for slices indexed by link index: `len() + 1`).
    pub fn len(&self) -> usize {
        self.links.len()
    }
}
