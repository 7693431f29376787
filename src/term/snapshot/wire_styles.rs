//! Styles on the wire. Each side of an attach keeps a style table of its own (the server's holds
//! every style its scrollback uses, and is compacted when the server's cells say so), so rows
//! and pens cross by value: the sender numbers the styles the rows it sends use, in the order
//! it meets them (0 is the default style; equal styles get one number), with the hyperlinks
//! they name. The receiver makes a table of them (a snapshot) or takes them into its own (rows
//! it asked for, rows the server starred). A snapshot then holds only the styles of what it
//! sends, however many the model has met, and two models that show the same cells give the
//! same bytes whatever their ids.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use super::super::cell::{HyperlinkId, Style, StyleId};
use super::super::row::Row;
use super::super::styles::{FxHasher, Hyperlink, StyleTable};
use super::codec::{Reader, Writer};
use super::parts::{load_style, save_style};
use super::SnapshotError::{self, Invalid};

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Most bytes of hyperlink targets one snapshot or batch of rows carries: a link is up to 8 KiB
/// (`osc.rs`), and a screen of cells each with its own would not fit a frame. Cells past it
/// cross without their link (the server keeps it).
const MOST_LINK_BYTES: usize = 8 << 20;
/// What a style costs on the wire, at most (`save_style`): for `Numbering::bytes`.
const STYLE_BYTES: usize = 24;

/// Styles by value, with the hyperlinks they name; ids index into them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireStyles {
    styles: Vec<Style>,
    links: Vec<Hyperlink>,
}

impl Default for WireStyles {
    fn default() -> Self {
        WireStyles { styles: vec![Style::default()], links: Vec::new() }
    }
}

/// A model's style ids numbered for the wire, as they are met (`WireStyles`).
pub struct Numbering<'a> {
    table: &'a StyleTable,
    by_id: FxMap<u32, StyleId>,
    by_style: FxMap<Style, StyleId>,
    links_by_id: FxMap<u32, HyperlinkId>,
    out: WireStyles,
    link_bytes: usize,
    /// The last id numbered and its number: a row's cells mostly repeat their neighbour's.
    last: (StyleId, StyleId),
}

impl<'a> Numbering<'a> {
    pub fn new(table: &'a StyleTable) -> Numbering<'a> {
        let mut by_style = FxMap::default();
        by_style.insert(Style::default(), StyleId::DEFAULT);
        Numbering {
            table,
            by_id: FxMap::default(),
            by_style,
            links_by_id: FxMap::default(),
            out: WireStyles::default(),
            link_bytes: 0,
            last: (StyleId::DEFAULT, StyleId::DEFAULT),
        }
    }

    /// The wire number of the model's style `id`.
    #[inline]
    pub fn id(&mut self, id: StyleId) -> StyleId {
        if id == self.last.0 {
            return self.last.1;
        }
        let wire = self.number(id);
        self.last = (id, wire);
        wire
    }

    fn number(&mut self, id: StyleId) -> StyleId {
        if let Some(&wire) = self.by_id.get(&id.0) {
            return wire;
        }
        let wire = self.style(*self.table.get(id));
        self.by_id.insert(id.0, wire);
        wire
    }

    /// The wire number of `style`, a style of the model's (a pen's not yet in its table).
    pub fn style(&mut self, mut style: Style) -> StyleId {
        style.hyperlink = style.hyperlink.and_then(|link| self.link(link));
        let next = StyleId(self.out.styles.len() as u32);
        let wire = *self.by_style.entry(style).or_insert(next);
        if wire == next {
            self.out.styles.push(style);
        }
        wire
    }

    fn link(&mut self, id: HyperlinkId) -> Option<HyperlinkId> {
        if let Some(&wire) = self.links_by_id.get(&id.0) {
            return Some(wire);
        }
        let link = self.table.link(id)?;
        let bytes = link.uri.len() + link.id.as_ref().map_or(0, String::len);
        if self.link_bytes + bytes > MOST_LINK_BYTES {
            return None;
        }
        self.link_bytes += bytes;
        let wire = HyperlinkId(self.out.links.len() as u32);
        self.out.links.push(link.clone());
        self.links_by_id.insert(id.0, wire);
        Some(wire)
    }

    /// `row` with its cells' styles numbered.
    pub fn row(&mut self, row: &Row) -> Row {
        let mut row = row.clone();
        for cell in row.cells_mut() {
            cell.set_style(self.id(cell.style()));
        }
        row
    }

    /// About how many bytes the styles numbered so far take on the wire.
    pub fn bytes(&self) -> usize {
        self.out.styles.len() * STYLE_BYTES + self.link_bytes
    }

    pub fn finish(self) -> WireStyles {
        self.out
    }
}

impl WireStyles {
    #[allow(clippy::len_without_is_empty)] // never empty: the default style is always there
    pub fn len(&self) -> usize {
        self.styles.len()
    }

    /// Whether every style id in `rows` names one of these.
    pub fn holds(&self, rows: &[&Row]) -> bool {
        rows.iter().flat_map(|row| row.cells()).all(|c| c.style().index() < self.styles.len())
    }

    pub fn save(&self, w: &mut Writer) {
        w.usize(self.styles.len());
        for style in &self.styles {
            save_style(style, w);
        }
        w.usize(self.links.len());
        for link in &self.links {
            w.opt_str(link.id.as_deref());
            w.str(&link.uri);
        }
    }

    /// Styles as `save` wrote them, the first the default and every link named there.
    pub fn load(r: &mut Reader<'_>) -> Result<WireStyles, SnapshotError> {
        // A style takes at least seven bytes (`save_style`).
        let count = r.count(7)?;
        let styles = (0..count).map(|_| load_style(r)).collect::<Result<Vec<_>, _>>()?;
        let count = r.count(2)?;
        let mut links = Vec::with_capacity(count);
        for _ in 0..count {
            links.push(Hyperlink { id: r.opt_string()?, uri: r.string()? });
        }
        let link_ok = |style: &Style| style.hyperlink.is_none_or(|l| (l.0 as usize) < links.len());
        if styles.first() != Some(&Style::default()) || !styles.iter().all(link_ok) {
            return Err(Invalid("a style table"));
        }
        Ok(WireStyles { styles, links })
    }

    /// These styles as a model's table of its own (ids unchanged).
    pub fn into_table(self) -> StyleTable {
        StyleTable::holding(self.styles, self.links)
    }

    /// These styles taken into `table`: the id each now has there, by wire id.
    pub fn adopt(&self, table: &mut StyleTable) -> Vec<StyleId> {
        let links: Vec<HyperlinkId> =
            self.links.iter().map(|link| table.intern_link(link.clone())).collect();
        self.styles
            .iter()
            .map(|style| {
                let mut style = *style;
                style.hyperlink = style.hyperlink.and_then(|l| links.get(l.0 as usize).copied());
                table.intern(style)
            })
            .collect()
    }
}
