//! Rows in the scrollback, packed: about one byte per cell of ASCII text instead of eight.
//!
//! A row that scrolls off the screen is no longer edited in place (only reflowed on resize,
//! restyled by style-table compaction, or read), so it is stored as its characters in UTF-8,
//! runs of styles, and the rare layout flags and combining marks beside them, all in one
//! allocation. Trailing cells that are untouched blanks (a space in the default style, no flags)
//! are not stored at all: a 40-character log line in a 200-column pane keeps 40 characters.
//! Invariant: `unpack(pack(row)) == row`, cell for cell and mark for mark.

use super::cell::{Cell, StyleId};
use super::row::Row;

/// Bit position of the layout flags in a cell's bits (see `Cell`); stored as one byte.
const FLAG_SHIFT: u32 = 21;
const RUN_BYTES: usize = 6;
const FLAG_BYTES: usize = 3;
const MARK_BYTES: usize = 6;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackedRow {
    /// The characters (UTF-8), then the style runs (style u32, count u16), then the flagged
    /// cells (column u16, flags u8), then the marks (column u16, char u32); little-endian.
    data: Box<[u8]>,
    cols: u16,
    /// Cells stored; the rest are default blanks.
    kept: u16,
    text_len: u16,
    runs: u16,
    flags: u16,
    marks: u16,
}

impl PackedRow {
    pub fn pack(row: &Row) -> PackedRow {
        let cells = row.cells();
        let kept = cells.iter().rposition(|c| *c != Cell::default()).map_or(0, |last| last + 1);
        let mut text = Vec::with_capacity(kept + RUN_BYTES);
        let mut runs: Vec<(StyleId, u16)> = Vec::new();
        let mut flagged: Vec<(u16, u8)> = Vec::new();
        for (col, cell) in cells[..kept].iter().enumerate() {
            let c = cell.ch();
            if c.is_ascii() {
                text.push(c as u8);
            } else {
                text.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
            match runs.last_mut() {
                Some((style, count)) if *style == cell.style() => *count += 1,
                _ => runs.push((cell.style(), 1)),
            }
            if cell.flags() != 0 {
                flagged.push((col as u16, (cell.flags() >> FLAG_SHIFT) as u8));
            }
        }
        let marks = row.all_marks();
        let text_len = text.len();
        let mut data = text;
        data.reserve_exact(
            runs.len() * RUN_BYTES + flagged.len() * FLAG_BYTES + marks.len() * MARK_BYTES,
        );
        for (style, count) in &runs {
            data.extend_from_slice(&style.0.to_le_bytes());
            data.extend_from_slice(&count.to_le_bytes());
        }
        for (col, flags) in &flagged {
            data.extend_from_slice(&col.to_le_bytes());
            data.push(*flags);
        }
        for (col, mark) in marks {
            data.extend_from_slice(&col.to_le_bytes());
            data.extend_from_slice(&(*mark as u32).to_le_bytes());
        }
        PackedRow {
            data: data.into_boxed_slice(),
            cols: cells.len() as u16,
            kept: kept as u16,
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
        for (style, count) in self.runs() {
            for _ in 0..count {
                cells.push(Cell::new(chars.next().unwrap_or(' '), 0, style));
            }
        }
        cells.resize(self.cols(), Cell::default());
        for (col, flags) in self.flagged() {
            if let Some(cell) = cells.get_mut(col) {
                cell.set_flag(flags, true);
            }
        }
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

    fn flagged(&self) -> impl Iterator<Item = (usize, u32)> + '_ {
        self.section(self.flags_start(), self.flags, FLAG_BYTES)
            .map(|b| (usize::from(u16::from_le_bytes([b[0], b[1]])), u32::from(b[2]) << FLAG_SHIFT))
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

#[cfg(test)]
mod tests {
    use super::*;

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
