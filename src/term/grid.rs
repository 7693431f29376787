//! The visible rows of one screen (primary or alternate) and the scrolling operations on them.
//!
//! Invariant: exactly `lines` rows, each exactly `cols` cells wide. Rows that scroll off the top
//! of a region that starts at the top of the screen go to the scrollback when one is given.
//!
//! Each row carries a damage mark: set by anything that may change the row's text or what it
//! joins (writing through `row_mut`, scrolling a region past its neighbours), cleared by whoever
//! checks the rows (the redactor, `redact.rs`). Marks move with their rows. A row is also
//! *fresh* while it is blank since a reset and untouched: a clean run (`clean_run.rs`) may start
//! there and write it without a mark (`row_in_clean_run`).

use std::ops::Range;

use super::cell::Cell;
use super::row::Row;
use super::scrollback::Scrollback;

#[derive(Debug)]
pub struct Grid {
    rows: Vec<Row>,
    cols: usize,
    /// One per row: `DAMAGED` (changed since the last check) and `FRESH` (blank since a reset,
    /// and not written since), in one byte so that a write sets both with one store.
    marks: Vec<u8>,
    /// Lines scrolled (up or down) so far, wrapping: a screen of identical lines that scrolls
    /// looks the same after, but it moved.
    scrolled: u64,
}

const DAMAGED: u8 = 1;
const FRESH: u8 = 2;

impl Grid {
    pub fn new(cols: usize, lines: usize) -> Grid {
        let rows = (0..lines).map(|_| Row::new(cols, Cell::default())).collect();
        Grid { rows, cols, marks: vec![FRESH; lines], scrolled: 0 }
    }

    /// Rows, marks and the scroll count, for a snapshot.
    pub(super) fn parts(&self) -> (&[Row], &[u8], u64) {
        (&self.rows, &self.marks, self.scrolled)
    }

    /// A grid from a snapshot's parts; the caller checked that every row is `cols` wide and
    /// that there is one mark per row.
    pub(super) fn from_parts(rows: Vec<Row>, cols: usize, marks: Vec<u8>, scrolled: u64) -> Grid {
        Grid { rows, cols, marks, scrolled }
    }

    #[inline]
    pub fn cols(&self) -> usize {
        self.cols
    }

    #[inline]
    pub fn lines(&self) -> usize {
        self.rows.len()
    }

    #[inline]
    pub fn row(&self, line: usize) -> &Row {
        &self.rows[line]
    }

    #[inline]
    pub fn row_mut(&mut self, line: usize) -> &mut Row {
        self.marks[line] = DAMAGED;
        &mut self.rows[line]
    }

    /// A row written by a clean run (see `clean_run.rs`): no new damage mark, no longer fresh.
    #[inline]
    pub fn row_in_clean_run(&mut self, line: usize) -> &mut Row {
        self.marks[line] &= DAMAGED;
        &mut self.rows[line]
    }

    /// Whether row `line` is blank since a reset and not written since.
    #[inline]
    pub fn fresh(&self, line: usize) -> bool {
        self.marks[line] & FRESH != 0
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// Lines scrolled so far (wrapping).
    pub fn scrolled(&self) -> u64 {
        self.scrolled
    }

    pub(crate) fn rows_mut(&mut self) -> &mut [Row] {
        self.marks.fill(DAMAGED);
        &mut self.rows
    }

    /// Renumber every cell's style (style-table compaction): the text stays as it is.
    pub(crate) fn remap_styles(&mut self, remap: &[super::cell::StyleId]) {
        self.rows.iter_mut().for_each(|r| r.remap_styles(remap));
    }

    /// Whether row `line` changed since its mark was last cleared.
    #[inline]
    pub fn damaged(&self, line: usize) -> bool {
        self.marks[line] & DAMAGED != 0
    }

    /// Clear the damage marks of `range`: their rows were checked.
    pub fn clear_damage(&mut self, range: Range<usize>) {
        self.marks[range].iter_mut().for_each(|m| *m &= !DAMAGED);
    }

    /// Whether any row is marked.
    pub fn any_damage(&self) -> bool {
        self.marks.iter().any(|m| m & DAMAGED != 0)
    }

    /// Mark every row (a resize, a reflow, a new redactor).
    pub fn damage_all(&mut self) {
        self.marks.iter_mut().for_each(|m| *m |= DAMAGED);
    }

    /// Row `line` was erased whole (every cell blanked): fresh again.
    pub fn erased_whole(&mut self, line: usize) {
        self.marks[line] = DAMAGED | FRESH;
    }

    /// Reset the rows in `range` to blanks.
    pub fn reset_rows(&mut self, range: Range<usize>, blank: Cell) {
        self.marks[range.clone()].fill(DAMAGED | FRESH);
        for row in &mut self.rows[range] {
            row.reset(blank);
        }
    }

    /// Mark rows `line` and the one before it: a region scroll put them next to each other,
    /// and a wrapped row's text now joins another row's.
    fn damage_joint(&mut self, line: usize) {
        if line > 0 && line < self.rows.len() {
            self.marks[line - 1] |= DAMAGED;
            self.marks[line] |= DAMAGED;
        }
    }

    /// Move the rows of `region` up by `n`; the top `n` go to `history` when the region starts
    /// at the top of the screen, and blank rows fill in at the bottom of the region.
    pub fn scroll_up(
        &mut self,
        region: Range<usize>,
        n: usize,
        blank: Cell,
        history: Option<&mut Scrollback>,
    ) {
        let n = n.min(region.len());
        if n == 0 {
            return;
        }
        self.scrolled = self.scrolled.wrapping_add(n as u64);
        let region_rows = &mut self.rows[region.clone()];
        if let (Some(history), 0) = (history, region.start) {
            for row in &mut region_rows[..n] {
                // The scrollback packs a copy and hands the row back; it is blanked below.
                let gone = std::mem::take(row);
                *row = history.push(gone);
            }
        }
        region_rows.rotate_left(n);
        let len = region_rows.len();
        for row in &mut region_rows[len - n..] {
            row.reset(blank);
        }
        self.marks[region.clone()].rotate_left(n);
        // The blank rows that filled in hold nothing to check.
        self.marks[region.end - n..region.end].fill(FRESH);
        // The rows below the region now follow blank ones, and the top row of a region at the
        // top of the screen follows what it followed before (the row scrolled off): only the
        // joint above a region lower down is new.
        self.damage_joint(region.start);
    }

    /// Move the rows of `region` down by `n`; blank rows fill in at the top of the region.
    pub fn scroll_down(&mut self, region: Range<usize>, n: usize, blank: Cell) {
        let n = n.min(region.len());
        if n == 0 {
            return;
        }
        self.scrolled = self.scrolled.wrapping_add(n as u64);
        let region_rows = &mut self.rows[region.clone()];
        region_rows.rotate_right(n);
        for row in &mut region_rows[..n] {
            row.reset(blank);
        }
        self.marks[region.clone()].rotate_right(n);
        self.marks[region.start..region.start + n].fill(FRESH);
        // Only the joint below the region is new (rows above the region now meet blank ones).
        self.damage_joint(region.end);
    }

    /// Replace all rows (resize); `rows` must be `lines` rows of `cols` cells.
    pub(crate) fn replace(&mut self, rows: Vec<Row>, cols: usize) {
        debug_assert!(rows.iter().all(|r| r.len() == cols));
        self.marks = vec![DAMAGED; rows.len()];
        self.rows = rows;
        self.cols = cols;
    }

    pub(crate) fn take_rows(&mut self) -> Vec<Row> {
        std::mem::take(&mut self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::cell::StyleId;

    fn grid_of(lines: &[&str]) -> Grid {
        let cols = lines[0].len();
        let mut grid = Grid::new(cols, lines.len());
        for (i, text) in lines.iter().enumerate() {
            for (j, c) in text.chars().enumerate() {
                grid.row_mut(i).set(j, Cell::new(c, 0, StyleId::DEFAULT));
            }
        }
        grid
    }

    fn text(grid: &Grid) -> Vec<String> {
        grid.rows().iter().map(|r| r.cells().iter().map(|c| c.ch()).collect()).collect()
    }

    #[test]
    fn full_scroll_feeds_history_in_order() {
        let mut grid = grid_of(&["a", "b", "c"]);
        let mut history = Scrollback::new(10);
        grid.scroll_up(0..3, 2, Cell::default(), Some(&mut history));
        assert_eq!(text(&grid), ["c", " ", " "]);
        let h: Vec<char> = history.iter().map(|r| r.cell(0).ch()).collect();
        assert_eq!(h, ['a', 'b']);
    }

    #[test]
    fn region_scrolls_leave_the_outside_alone() {
        let mut grid = grid_of(&["a", "b", "c", "d"]);
        grid.scroll_up(1..3, 1, Cell::default(), None);
        assert_eq!(text(&grid), ["a", "c", " ", "d"]);
        grid.scroll_down(0..4, 9, Cell::default());
        assert_eq!(text(&grid), [" ", " ", " ", " "]);
    }
}
