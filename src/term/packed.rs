//! Rows in the scrollback, packed: about one byte per cell of ASCII text instead of eight.
//!
//! A row that scrolls off the screen is no longer edited in place (only reflowed on resize,
//! restyled by style-table compaction, or read), so it is stored as its characters in UTF-8,
//! runs of styles, and the rare layout flags and combining marks beside them, all in one
//! allocation. Trailing cells that are untouched blanks (a space in the default style, no flags)
//! are not stored at all: a 40-character log line in a 200-column pane keeps 40 characters;
//! nor are the spacers right of wide characters. Flags are keyed by stored cell, not column.
//! Invariant: `unpack(pack(row)) == row`, cell for cell and mark for mark.

use super::cell::{Cell, StyleId};
use super::row::Row;

/// Bit position of the layout flags in a cell's bits (see `Cell`); stored as one byte.
const FLAG_SHIFT: u32 = 21;
/// In a wide character's flag byte: its spacer (a space in the same style, no other flags)
/// follows and is not stored. Halves what CJK text costs.
const IMPLIED_SPACER: u8 = 0x80;

// Lengths and counts are u16: a row's text (at most 4 bytes per column), its cells, runs, flag
// entries and marks (at most 2 per column + 16) must fit.
const _: () = assert!(super::MAX_DIMENSION * 4 <= u16::MAX as usize);
const _: () = assert!(super::MAX_DIMENSION * 2 + 16 <= u16::MAX as usize);
const RUN_BYTES: usize = 6;
const FLAG_BYTES: usize = 3;
const MARK_BYTES: usize = 6;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedRow {
    /// The characters (UTF-8), then the style runs (style u32, count u16), then the flagged
    /// cells (column u16, flags u8), then the marks (column u16, char u32); little-endian.
    data: Box<[u8]>,
    cols: u16,
    text_len: u16,
    runs: u16,
    flags: u16,
    marks: u16,
}

/// Buffers reused from one packing to the next, so packing a row allocates only its result.
#[derive(Debug, Default)]
pub struct PackScratch {
    data: Vec<u8>,
    runs: Vec<(StyleId, u16)>,
    flagged: Vec<(u16, u8)>,
}

impl PackedRow {
    #[cfg(test)]
    pub fn pack(row: &Row) -> PackedRow {
        PackedRow::pack_with(row, &mut PackScratch::default())
    }

    pub fn pack_with(row: &Row, scratch: &mut PackScratch) -> PackedRow {
        let cells = row.cells();
        let kept = kept_len(cells);
        let PackScratch { data: text, runs, flagged } = scratch;
        text.clear();
        text.reserve(kept * 4);
        runs.clear();
        flagged.clear();
        let mut stored = 0u16;
        // The flag entry of a wide character whose spacer may be implied, and its style.
        let mut wide: Option<(usize, StyleId)> = None;
        let mut at = 0;
        while at < kept {
            let cell = cells[at];
            if wide.is_none() {
                // Most of a row is ASCII without flags in one style: such a stretch goes in
                // whole, one compare per cell to find its end and one copy of its characters.
                let stretch = ascii_stretch(&cells[at..kept]);
                if stretch > 0 {
                    text.extend(cells[at..at + stretch].iter().map(|c| c.code() as u8));
                    match runs.last_mut() {
                        Some((style, count)) if *style == cell.style() => *count += stretch as u16,
                        _ => runs.push((cell.style(), stretch as u16)),
                    }
                    stored += stretch as u16;
                    at += stretch;
                    continue;
                }
            }
            at += 1;
            if let Some((entry, style)) = wide.take() {
                if cell == Cell::new(' ', Cell::WIDE_SPACER, style) {
                    flagged[entry].1 |= IMPLIED_SPACER;
                    continue;
                }
            }
            push_utf8(text, cell.ch());
            match runs.last_mut() {
                Some((style, count)) if *style == cell.style() => *count += 1,
                _ => runs.push((cell.style(), 1)),
            }
            let flags = cell.flags();
            if flags != 0 {
                flagged.push((stored, (flags >> FLAG_SHIFT) as u8));
                if flags & Cell::WIDE != 0 {
                    wide = Some((flagged.len() - 1, cell.style()));
                }
            }
            stored += 1;
        }
        let marks = row.all_marks();
        let text_len = text.len();
        let data = text;
        for (style, count) in runs.iter() {
            data.extend_from_slice(&style.0.to_le_bytes());
            data.extend_from_slice(&count.to_le_bytes());
        }
        for (col, flags) in flagged.iter() {
            data.extend_from_slice(&col.to_le_bytes());
            data.push(*flags);
        }
        for (col, mark) in marks {
            data.extend_from_slice(&col.to_le_bytes());
            data.extend_from_slice(&(*mark as u32).to_le_bytes());
        }
        PackedRow {
            data: Box::from(&data[..]),
            cols: cells.len() as u16,
            text_len: text_len as u16,
            runs: runs.len() as u16,
            flags: flagged.len() as u16,
            marks: marks.len() as u16,
        }
    }

    pub fn cols(&self) -> usize {
        usize::from(self.cols)
    }

    /// The row as cells again, written into `row` (whose allocations are reused).
    pub fn unpack_into(&self, row: &mut Row) {
        let (mut cells, mut marks) = std::mem::take(row).into_parts();
        cells.clear();
        marks.clear();
        let text = std::str::from_utf8(&self.data[..usize::from(self.text_len)]).unwrap_or("");
        let mut chars = text.chars();
        let mut flagged = self.flagged().peekable();
        let mut stored = 0u16;
        for (style, count) in self.runs() {
            for _ in 0..count {
                let c = chars.next().unwrap_or(' ');
                let entry = flagged.next_if(|(index, _)| *index == stored);
                let (flags, spacer) = entry.map_or((0, false), |(_, bits)| {
                    (u32::from(bits & !IMPLIED_SPACER) << FLAG_SHIFT, bits & IMPLIED_SPACER != 0)
                });
                cells.push(Cell::new(c, flags, style));
                if spacer {
                    cells.push(Cell::new(' ', Cell::WIDE_SPACER, style));
                }
                stored = stored.wrapping_add(1);
            }
        }
        cells.resize(self.cols(), Cell::default());
        cells.truncate(self.cols());
        marks.extend(self.marks());
        *row = Row::from_parts(cells, marks);
    }

    pub fn unpack(&self) -> Row {
        let mut row = Row::default();
        self.unpack_into(&mut row);
        row
    }

    fn section(&self, start: usize, count: u16, size: usize) -> impl Iterator<Item = &[u8]> {
        let end = start + usize::from(count) * size;
        self.data.get(start..end).unwrap_or(&[]).chunks_exact(size)
    }

    fn runs_start(&self) -> usize {
        usize::from(self.text_len)
    }

    fn flags_start(&self) -> usize {
        self.runs_start() + usize::from(self.runs) * RUN_BYTES
    }

    fn marks_start(&self) -> usize {
        self.flags_start() + usize::from(self.flags) * FLAG_BYTES
    }

    /// The style runs over the stored cells: (style, number of cells).
    pub fn runs(&self) -> impl Iterator<Item = (StyleId, u16)> + '_ {
        self.section(self.runs_start(), self.runs, RUN_BYTES).map(|b| {
            let style = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (StyleId(style), u16::from_le_bytes([b[4], b[5]]))
        })
    }

    /// (stored cell index, flag byte) for each stored cell with layout flags.
    fn flagged(&self) -> impl Iterator<Item = (u16, u8)> + '_ {
        self.section(self.flags_start(), self.flags, FLAG_BYTES)
            .map(|b| (u16::from_le_bytes([b[0], b[1]]), b[2]))
    }

    fn marks(&self) -> impl Iterator<Item = (u16, char)> + '_ {
        self.section(self.marks_start(), self.marks, MARK_BYTES).map(|b| {
            let mark = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
            (u16::from_le_bytes([b[0], b[1]]), char::from_u32(mark).unwrap_or(' '))
        })
    }

    /// Rewrite every style through `remap` (style-table compaction).
    pub fn remap_styles(&mut self, remap: &[StyleId]) {
        let start = self.runs_start();
        for run in self.data[start..].chunks_exact_mut(RUN_BYTES).take(usize::from(self.runs)) {
            let old = u32::from_le_bytes([run[0], run[1], run[2], run[3]]) as usize;
            if let Some(new) = remap.get(old) {
                run[..4].copy_from_slice(&new.0.to_le_bytes());
            }
        }
    }

    /// Bytes this row owns, header included.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<PackedRow>() + self.data.len()
    }
}

/// How many cells from the first are ASCII without flags, in the first one's style.
#[inline(always)]
fn ascii_stretch(cells: &[Cell]) -> usize {
    let Some(first) = cells.first() else { return 0 };
    // Flags and characters above ASCII sit in the low word's upper bits, the style in the high
    // word: a cell belongs when everything but its 7 character bits equals the style.
    let want = first.raw() & !0x7f;
    if want & 0xffff_ffff != 0 {
        return 0;
    }
    cells.iter().position(|c| c.raw() & !0x7f != want).unwrap_or(cells.len())
}

/// How many cells of a row are kept: up to the last that is not a default blank. Rows that
/// scroll away are mostly blank at their end, so whole blocks of cells are tested at once
/// (without a branch per cell, which the compiler turns into vector compares) before the
/// last block is searched cell by cell.
fn kept_len(cells: &[Cell]) -> usize {
    const BLOCK: usize = 16;
    let blank = Cell::default().raw();
    let mut end = cells.len();
    while end >= BLOCK
        && cells[end - BLOCK..end].iter().fold(0, |any, c| any | (c.raw() ^ blank)) == 0
    {
        end -= BLOCK;
    }
    cells[..end].iter().rposition(|c| c.raw() != blank).map_or(0, |last| last + 1)
}

/// UTF-8 by hand: `extend_from_slice` of a 1–4 byte slice costs a `memcpy` call per character.
#[inline]
fn push_utf8(out: &mut Vec<u8>, c: char) {
    let code = c as u32;
    match code {
        0..=0x7F => out.push(code as u8),
        0x80..=0x7FF => {
            out.push(0xC0 | (code >> 6) as u8);
            out.push(0x80 | (code & 0x3F) as u8);
        }
        0x800..=0xFFFF => {
            out.push(0xE0 | (code >> 12) as u8);
            out.push(0x80 | ((code >> 6) & 0x3F) as u8);
            out.push(0x80 | (code & 0x3F) as u8);
        }
        _ => {
            out.push(0xF0 | (code >> 18) as u8);
            out.push(0x80 | ((code >> 12) & 0x3F) as u8);
            out.push(0x80 | ((code >> 6) & 0x3F) as u8);
            out.push(0x80 | (code & 0x3F) as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_keeps_cells_up_to_its_last_that_is_not_a_default_blank() {
        for len in [0, 1, 15, 16, 17, 40, 200] {
            let mut cells = vec![Cell::default(); len];
            assert_eq!(kept_len(&cells), 0);
            for at in 0..len {
                let mut with = cells.clone();
                with[at] = Cell::new('x', 0, StyleId::DEFAULT);
                assert_eq!(kept_len(&with), at + 1, "x at {at} of {len}");
                // A blank in another style is kept too.
                with[at] = Cell::blank(StyleId(3));
                assert_eq!(kept_len(&with), at + 1, "styled blank at {at} of {len}");
            }
            if let Some(last) = cells.last_mut() {
                *last = Cell::new(' ', Cell::WRAP, StyleId::DEFAULT);
                assert_eq!(kept_len(&cells), len, "a wrap flag on the last cell");
            }
        }
    }

    fn row_of(cells: &[Cell], marks: &[(usize, char)]) -> Row {
        let mut row = Row::from_parts(cells.to_vec(), Vec::new());
        for (col, mark) in marks {
            row.push_mark(*col, *mark);
        }
        row
    }

    #[test]
    fn rows_come_back_exactly_as_they_went_in() {
        let red = StyleId(3);
        let mut wide = Cell::new('漢', Cell::WIDE, red);
        wide.set_flag(Cell::WRAP, false);
        let mut last = Cell::new('z', 0, StyleId(9));
        last.set_flag(Cell::WRAP, true);
        let rows = [
            row_of(&[Cell::default(); 5], &[]),
            row_of(&[Cell::new('a', 0, red), Cell::default(), Cell::default()], &[]),
            row_of(
                &[
                    wide,
                    Cell::new(' ', Cell::WIDE_SPACER, red),
                    Cell::new('e', 0, StyleId::DEFAULT),
                    Cell::blank(StyleId(4)),
                    Cell::new(' ', Cell::LEADING_SPACER, StyleId::DEFAULT),
                    last,
                ],
                &[(2, '\u{301}'), (0, '\u{302}'), (2, '\u{303}')],
            ),
            row_of(&[Cell::new('\u{10FFFF}', 0, StyleId(u32::MAX))], &[]),
            Row::default(),
        ];
        for row in rows {
            let packed = PackedRow::pack(&row);
            assert_eq!(packed.unpack(), row);
            let mut reused = row_of(&[Cell::new('q', 0, red); 9], &[(1, '\u{301}')]);
            packed.unpack_into(&mut reused);
            assert_eq!(reused, row);
        }
    }

    #[test]
    fn random_rows_round_trip() {
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let chars = ['a', ' ', '漢', '😀', 'é', '\u{10FFFF}'];
        let flags = [0, Cell::WIDE, Cell::WIDE_SPACER, Cell::LEADING_SPACER, Cell::WRAP];
        for _ in 0..5_000 {
            let len = next(12) as usize;
            let mut cells = Vec::with_capacity(len);
            while cells.len() < len {
                let style = StyleId(next(3) as u32);
                let c = chars[next(chars.len() as u64) as usize];
                if next(3) == 0 && cells.len() + 1 < len {
                    // A wide character and its spacer, sometimes not quite the standard one.
                    cells.push(Cell::new(c, Cell::WIDE, style));
                    let spacer_style = if next(4) == 0 { StyleId(7) } else { style };
                    let extra = if next(4) == 0 { Cell::WRAP } else { 0 };
                    cells.push(Cell::new(' ', Cell::WIDE_SPACER | extra, spacer_style));
                } else {
                    cells.push(Cell::new(c, flags[next(flags.len() as u64) as usize], style));
                }
            }
            let mut row = Row::from_parts(cells, Vec::new());
            for _ in 0..next(4) {
                if len > 0 {
                    row.push_mark(next(len as u64) as usize, '\u{301}');
                }
            }
            assert_eq!(PackedRow::pack(&row).unpack(), row, "{row:?}");
        }
    }

    #[test]
    fn an_ascii_line_costs_about_a_byte_per_character() {
        let mut row = Row::new(200, Cell::default());
        for (col, c) in "cargo build --release: Compiling paddock v0.1.0".chars().enumerate() {
            row.set(col, Cell::new(c, 0, StyleId::DEFAULT));
        }
        let packed = PackedRow::pack(&row);
        assert_eq!(packed.heap_bytes(), std::mem::size_of::<PackedRow>() + 47 + RUN_BYTES);
        assert!(std::mem::size_of::<PackedRow>() <= 32);
    }

    #[test]
    fn remapping_styles_rewrites_every_run() {
        let row = row_of(&[Cell::new('a', 0, StyleId(2)), Cell::new('b', 0, StyleId(1))], &[]);
        let mut packed = PackedRow::pack(&row);
        packed.remap_styles(&[StyleId(0), StyleId(5), StyleId(6)]);
        let styles: Vec<StyleId> = packed.unpack().cells().iter().map(|c| c.style()).collect();
        assert_eq!(styles, [StyleId(6), StyleId(5)]);
    }
}
