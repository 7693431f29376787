//! One row of cells, with the rare data that does not fit in a cell kept beside it.
//!
//! Invariant: a row always holds exactly as many cells as the grid has columns. Combining marks
//! are stored per row, keyed by column, and a cell has the `MARKS` flag exactly when an entry for
//! its column exists; every operation that moves or erases cells keeps the two in step.

use std::ops::Range;

use super::cell::Cell;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    cells: Vec<Cell>,
    /// Combining marks as (column, mark), in the order they arrived; empty (and unallocated)
    /// for almost every row, and kept allocated when a row is recycled.
    marks: Vec<(u16, char)>,
}

impl Row {
    pub fn new(cols: usize, blank: Cell) -> Row {
        Row { cells: vec![blank; cols], marks: Vec::new() }
    }

    pub(crate) fn from_cells(cells: Vec<Cell>) -> Row {
        Row { cells, marks: Vec::new() }
    }

    /// A row from its cells and marks; the `MARKS` flags must already match the marks.
    pub(crate) fn from_parts(cells: Vec<Cell>, marks: Vec<(u16, char)>) -> Row {
        Row { cells, marks }
    }

    /// Every combining mark as (column, mark), in arrival order.
    pub(crate) fn all_marks(&self) -> &[(u16, char)] {
        &self.marks
    }

    /// The row's text continues on the next row: it was wrapped, not ended by a newline. The
    /// mark is a flag on the last cell (as in Alacritty), so whatever rewrites, erases or moves
    /// that cell ends or moves the wrap with it.
    #[inline]
    pub fn wrapped(&self) -> bool {
        self.cells.last().is_some_and(|c| c.has(Cell::WRAP))
    }

    pub(crate) fn set_wrapped(&mut self, on: bool) {
        if let Some(last) = self.cells.last_mut() {
            last.set_flag(Cell::WRAP, on);
        }
    }

    #[inline]
    pub fn cells(&self) -> &[Cell] {
        &self.cells
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    #[inline]
    pub fn cell(&self, col: usize) -> Cell {
        self.cells[col]
    }

    /// Direct access for the hot print path; callers keep the marks invariant themselves.
    #[inline]
    pub(crate) fn cells_mut(&mut self) -> &mut [Cell] {
        &mut self.cells
    }

    /// Write a cell, dropping any marks the old one carried.
    #[inline]
    pub fn set(&mut self, col: usize, cell: Cell) {
        if self.cells[col].has(Cell::MARKS) {
            self.remove_marks(col..col + 1);
        }
        self.cells[col] = cell;
    }

    /// Blank every cell and forget wrapping: the row is as new.
    pub fn reset(&mut self, blank: Cell) {
        self.cells.fill(blank);
        self.marks.clear();
    }

    /// Change the width, padding with `blank` or cutting at the right edge.
    pub fn resize(&mut self, cols: usize, blank: Cell) {
        if cols < self.cells.len() {
            self.remove_marks(cols..self.cells.len());
            self.cells.truncate(cols);
            // A wide character cut in half by the new edge goes, with its marks.
            if self.cells.last().is_some_and(|c| c.has(Cell::WIDE)) {
                self.remove_marks(cols - 1..cols);
                self.cells[cols - 1] = blank;
            }
        } else {
            self.cells.resize(cols, blank);
        }
    }

    /// Blank the cells in `range` (clamped to the row).
    pub fn erase(&mut self, range: Range<usize>, blank: Cell) {
        let range = range.start.min(self.cells.len())..range.end.min(self.cells.len());
        self.remove_marks(range.clone());
        self.cells[range].fill(blank);
    }

    /// Shift cells from `col` right by `count`, blanking the gap; cells pushed past the edge are
    /// lost.
    pub fn insert_blank(&mut self, col: usize, count: usize, blank: Cell) {
        let len = self.cells.len();
        if col >= len {
            return;
        }
        let count = count.min(len - col);
        self.remove_marks(len - count..len);
        self.cells[col..].rotate_right(count);
        self.shift_marks(col, count as isize);
        self.cells[col..col + count].fill(blank);
        // A wide character pushed into the last column lost its right half over the edge.
        if self.cells[len - 1].has(Cell::WIDE) {
            self.remove_marks(len - 1..len);
            self.cells[len - 1] = blank;
        }
    }

    /// Remove `count` cells at `col`, shifting the rest left and blanking the right end.
    pub fn delete(&mut self, col: usize, count: usize, blank: Cell) {
        let len = self.cells.len();
        if col >= len {
            return;
        }
        let count = count.min(len - col);
        self.remove_marks(col..col + count);
        self.cells[col..].rotate_left(count);
        self.shift_marks(col + count, -(count as isize));
        self.cells[len - count..].fill(blank);
    }

    /// Combining marks that follow the character at `col`, in order.
    pub fn marks(&self, col: usize) -> impl Iterator<Item = char> + '_ {
        let has = self.cells.get(col).is_some_and(|c| c.has(Cell::MARKS));
        let marks = if has { &self.marks[..] } else { &[] };
        marks.iter().filter(move |(c, _)| *c as usize == col).map(|(_, m)| *m)
    }

    /// Attach a combining mark to the character at `col`.
    pub fn push_mark(&mut self, col: usize, mark: char) {
        // Bound the marks: a stream of combining characters must grow neither a cell (Zalgo
        // text is still readable with 16) nor a row (two per cell on average is more than any
        // script needs), and the scan below stays short.
        const MAX_MARKS_PER_CELL: usize = 16;
        let max_per_row = 2 * self.cells.len() + MAX_MARKS_PER_CELL;
        let Some(cell) = self.cells.get_mut(col) else {
            return;
        };
        if self.marks.len() >= max_per_row
            || self.marks.iter().filter(|(c, _)| *c as usize == col).count() >= MAX_MARKS_PER_CELL
        {
            return;
        }
        cell.set_flag(Cell::MARKS, true);
        self.marks.push((col as u16, mark));
    }

    fn remove_marks(&mut self, range: Range<usize>) {
        if self.marks.is_empty() {
            return;
        }
        self.marks.retain(|(c, _)| !range.contains(&(*c as usize)));
        for cell in &mut self.cells[range] {
            cell.set_flag(Cell::MARKS, false);
        }
    }

    /// Move the marks of columns at or after `from` by `by` columns.
    fn shift_marks(&mut self, from: usize, by: isize) {
        for (c, _) in self.marks.iter_mut() {
            if *c as usize >= from {
                *c = (*c as isize + by) as u16;
            }
        }
    }

    /// Bytes this row owns: the header, the cell buffer and any marks.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of::<Row>()
            + self.cells.capacity() * std::mem::size_of::<Cell>()
            + self.marks.capacity() * std::mem::size_of::<(u16, char)>()
    }

    /// Move this row's cells and marks out; used by reflow.
    pub(crate) fn into_parts(self) -> (Vec<Cell>, Vec<(u16, char)>) {
        (self.cells, self.marks)
    }

    /// Rewrite every cell's style through `remap` (style table compaction).
    pub(crate) fn remap_styles(&mut self, remap: &[super::cell::StyleId]) {
        for cell in &mut self.cells {
            if let Some(&new) = remap.get(cell.style().index()) {
                cell.set_style(new);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::cell::StyleId;

    fn row_of(text: &str) -> Row {
        Row::from_cells(text.chars().map(|c| Cell::new(c, 0, StyleId::DEFAULT)).collect())
    }

    fn text(row: &Row) -> String {
        row.cells().iter().map(|c| c.ch()).collect()
    }

    #[test]
    fn insert_and_delete_move_marks_with_their_cells() {
        let mut row = row_of("abcde");
        row.push_mark(2, '\u{301}');
        row.insert_blank(1, 2, Cell::default());
        assert_eq!(text(&row), "a  bc");
        assert_eq!(row.marks(4).collect::<String>(), "\u{301}");
        row.delete(0, 3, Cell::default());
        assert_eq!(text(&row), "bc   ");
        assert_eq!(row.marks(1).collect::<String>(), "\u{301}");
        row.erase(0..2, Cell::default());
        assert_eq!(row.marks(1).count(), 0);
        assert!(!row.cell(1).has(Cell::MARKS));
    }

    #[test]
    fn marks_pushed_off_the_edge_are_dropped() {
        let mut row = row_of("abc");
        row.push_mark(2, '\u{301}');
        row.insert_blank(0, 1, Cell::default());
        assert_eq!(text(&row), " ab");
        assert!(row.cells().iter().all(|c| !c.has(Cell::MARKS)));
        assert!(row.marks.is_empty());
    }
}
