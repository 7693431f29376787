//! The style table: the [`Style`]s cells use, referred to by [`StyleId`].
//!
//! A pen's style is interned when something is first printed with it (`Pen::id_in`), never per
//! printed character.
//! Lookups go through a small cache of recently interned styles, not a global index: a program
//! that cycles through a few dozen styles gets the same ids back, and one that paints every cell
//! in a new truecolor costs an append, not a cache-missing probe into a large hash table. The
//! table is compacted from time to time ([`StyleTable::compact`]): styles no cell uses any more
//! are dropped and the rest renumbered, which bounds it by the number of cells. Hyperlinks
//! (OSC 8) live here too, referenced from styles, and are compacted with them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use super::cell::{HyperlinkId, Style, StyleId};

/// An OSC 8 hyperlink target.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Hyperlink {
    /// The `id=` parameter, which joins separate runs into one link.
    pub id: Option<String>,
    pub uri: String,
}

/// The Fx hash (as in rustc): styles are hashed on every SGR sequence, and SipHash's DoS
/// resistance buys nothing for keys this small in tables this bounded.
#[derive(Default)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    #[inline]
    fn write_u32(&mut self, value: u32) {
        self.write_u64(value as u64);
    }

    #[inline]
    fn write_u8(&mut self, value: u8) {
        self.write_u64(value as u64);
    }

    #[inline]
    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Below this size the table is never compacted: a few thousand styles cost nothing.
const COMPACT_FLOOR: usize = 4096;

/// Slots in the recent-styles cache (direct-mapped by hash).
const RECENT_SLOTS: usize = 256;

#[derive(Debug)]
pub struct StyleTable {
    styles: Vec<Style>,
    recent: Box<[Option<(Style, StyleId)>; RECENT_SLOTS]>,
    links: Vec<Hyperlink>,
    link_index: FxMap<Hyperlink, HyperlinkId>,
    /// Size at which the next compaction is due.
    compact_at: usize,
    /// The most styles held at once (measured when compacting), for memory reports.
    peak: usize,
    /// The last compaction's map, old id → new id, and the marks it was given: kept with
    /// their memory, as the table's own is, so that a flood of new styles (each cell its own
    /// truecolor) compacts again and again without faulting fresh pages in every time.
    remap: Vec<StyleId>,
    marks: Vec<bool>,
}

impl Default for StyleTable {
    fn default() -> Self {
        StyleTable::holding(vec![Style::default()], Vec::new())
    }
}

fn slot(style: &Style) -> usize {
    let mut hasher = FxHasher::default();
    style.hash(&mut hasher);
    (hasher.finish() >> 56) as usize % RECENT_SLOTS
}

impl StyleTable {
    /// An id for `style`: the recent one if the cache has it, else a new entry.
    #[inline]
    pub fn intern(&mut self, style: Style) -> StyleId {
        let slot = &mut self.recent[slot(&style)];
        if let Some((cached, id)) = slot {
            if *cached == style {
                return *id;
            }
        }
        // The default style is always id 0, so a blank cell looks untouched
        // (`Cell::is_default_blank`) however long ago the cache last held it.
        if style == Style::default() {
            return StyleId::DEFAULT;
        }
        let id = StyleId(self.styles.len() as u32);
        self.styles.push(style);
        *slot = Some((style, id));
        id
    }

    #[inline]
    pub fn get(&self, id: StyleId) -> &Style {
        // Ids only come from this table, and compaction remaps every live one; a stale id can
        // only be a bug, and the default style is the harmless answer to it.
        self.styles.get(id.index()).unwrap_or(&self.styles[0])
    }

    pub fn intern_link(&mut self, link: Hyperlink) -> HyperlinkId {
        if let Some(&id) = self.link_index.get(&link) {
            return id;
        }
        let id = HyperlinkId(self.links.len() as u32);
        self.links.push(link.clone());
        self.link_index.insert(link, id);
        id
    }

    pub fn link(&self, id: HyperlinkId) -> Option<&Hyperlink> {
        self.links.get(id.0 as usize)
    }

    #[allow(clippy::len_without_is_empty)] // never empty: the default style is always there
    pub fn len(&self) -> usize {
        self.styles.len()
    }

    /// The most styles the table has held at once.
    pub fn peak(&self) -> usize {
        self.peak.max(self.styles.len())
    }

    /// A table holding `styles` (the first the default) and `links` under their indices, as
    /// a snapshot names them (`snapshot::wire_styles`); the caller checked every link id.
    pub(crate) fn holding(styles: Vec<Style>, links: Vec<Hyperlink>) -> StyleTable {
        let link_index =
            links.iter().enumerate().map(|(i, l)| (l.clone(), HyperlinkId(i as u32))).collect();
        let compact_at = (styles.len().max(links.len()) * 2).max(COMPACT_FLOOR);
        let peak = styles.len();
        StyleTable {
            styles,
            recent: Box::new([None; RECENT_SLOTS]),
            links,
            link_index,
            compact_at,
            peak,
            remap: Vec::new(),
            marks: Vec::new(),
        }
    }

    /// Compact at the next check (most cells went at once: the scrollback was cleared), if
    /// the table is past the size never compacted.
    pub fn compact_soon(&mut self) {
        self.compact_at = self.compact_at.min(self.styles.len().max(COMPACT_FLOOR));
    }

    /// Whether the table has grown enough since the last compaction to be worth one.
    pub fn wants_compaction(&self) -> bool {
        self.styles.len() >= self.compact_at || self.links.len() >= self.compact_at
    }

    /// Marks for [`StyleTable::compact`], one per id, all unset.
    pub fn unmarked(&mut self) -> Vec<bool> {
        let mut marks = std::mem::take(&mut self.marks);
        marks.clear();
        fit(&mut marks, self.styles.len());
        marks.resize(self.styles.len(), false);
        marks
    }

    /// Keep only the styles marked live (by id), renumbered densely, in place; `remap` then
    /// maps old id → new id. The caller rewrites every cell and pen through the map.
    /// Duplicates (a style interned again after it left the recent cache) are kept: merging
    /// them would cost a hash table probe per live style, and the table is bounded by the live
    /// cells either way.
    pub fn compact(&mut self, live: Vec<bool>) {
        let len = self.styles.len();
        self.peak = self.peak.max(len);
        let old_links = std::mem::take(&mut self.links);
        self.link_index.clear();
        self.recent.fill(None);
        self.remap.clear();
        fit(&mut self.remap, len);
        self.remap.resize(len, StyleId::DEFAULT);
        let mut kept = 0;
        for old in 0..len {
            // The default style keeps id 0 whether or not a cell uses it.
            if old != 0 && !live.get(old).copied().unwrap_or(false) {
                continue;
            }
            let mut style = self.styles[old];
            style.hyperlink = style.hyperlink.and_then(|link| {
                old_links.get(link.0 as usize).map(|l| self.intern_link(l.clone()))
            });
            self.remap[old] = StyleId(kept as u32);
            // `kept <= old`: the styles still to read are never overwritten.
            self.styles[kept] = style;
            kept += 1;
        }
        self.styles.truncate(kept);
        fit(&mut self.styles, kept);
        self.marks = live;
        self.compact_at = (self.styles.len().max(self.links.len()) * 2).max(COMPACT_FLOOR);
    }

    /// The last compaction's map from old ids to new ones.
    pub fn remap(&self) -> &[StyleId] {
        &self.remap
    }
}

/// Keep `buffer`'s memory for the next round (a flood of new styles grows the table again to
/// about this size) unless it holds far more than `needed`: most of it went for good (a
/// flood's scrollback cleared, found at the next compaction), and it goes back.
fn fit<T>(buffer: &mut Vec<T>, needed: usize) {
    let needed = needed.max(COMPACT_FLOOR);
    if buffer.capacity() > 4 * needed {
        buffer.shrink_to(2 * needed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::cell::Color;

    fn red() -> Style {
        Style { fg: Color::Indexed(1), ..Style::default() }
    }

    #[test]
    fn interning_is_idempotent_and_default_is_zero() {
        let mut table = StyleTable::default();
        assert_eq!(table.intern(Style::default()), StyleId::DEFAULT);
        let a = table.intern(red());
        assert_eq!(table.intern(red()), a);
        assert_eq!(table.get(a), &red());
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn compaction_drops_dead_styles_and_remaps_live_ones() {
        let mut table = StyleTable::default();
        let link = table.intern_link(Hyperlink { id: None, uri: "https://a".into() });
        let dead = table.intern(red());
        let live_style = Style { hyperlink: Some(link), ..red() };
        let live = table.intern(Style { bg: Color::Rgb(1, 2, 3), ..live_style });
        let mut marks = table.unmarked();
        marks[live.index()] = true;
        table.compact(marks);
        let remap = table.remap();
        assert_eq!(table.len(), 2);
        let new = remap[live.index()];
        assert_eq!(table.get(new).bg, Color::Rgb(1, 2, 3));
        let new_link = table.get(new).hyperlink.expect("link kept");
        assert_eq!(table.link(new_link).map(|l| l.uri.as_str()), Some("https://a"));
        assert_eq!(remap[dead.index()], StyleId::DEFAULT);
    }

    #[test]
    fn a_table_that_shrank_gives_its_memory_back() {
        let mut table = StyleTable::default();
        let many = 200_000u32;
        for i in 0..many {
            table.intern(Style {
                fg: Color::Rgb(i as u8, (i >> 8) as u8, (i >> 16) as u8),
                ..red()
            });
        }
        let marks = table.unmarked();
        table.compact(marks);
        // Nothing live: the table, its map and its marks go back to about the floor.
        let marks = table.unmarked();
        table.compact(marks);
        let most = 2 * COMPACT_FLOOR;
        assert!(table.styles.capacity() <= most, "{} styles' room", table.styles.capacity());
        assert!(table.remap.capacity() <= most, "{} ids' room", table.remap.capacity());
        assert!(table.marks.capacity() <= most, "{} marks' room", table.marks.capacity());
    }
}
