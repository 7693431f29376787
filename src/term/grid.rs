//! The visible rows of one screen (primary or alternate) and the scrolling operations on them.
//!
//! Invariant: exactly `lines` rows, each exactly `cols` cells wide. Rows that scroll off the top
//! of a region that starts at the top of the screen go to the scrollback when one is given.
//!
//! Each row carries a damage mark: set by anything that may change the row's text or what it
//! joins (writing through `row_mut`, scrolling a region past its neighbours), cleared by whoever
//! checks the rows (the redactor, `redact.rs`). Marks move with their rows.

use std::ops::Range;

use super::cell::Cell;
use super::row::Row;
use super::scrollback::Scrollback;

#[derive(Debug)]
pub struct Grid {
    rows: Vec<Row>,
    cols: usize,
    /// One per row: changed since the last check.
    damaged: Vec<bool>,
}

impl Grid {
    pub fn new(cols: usize, lines: usize) -> Grid {
        let rows = (0..lines).map(|_| Row::new(cols, Cell::default())).collect();
        Grid { rows, cols, damaged: vec![false; lines] }
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
        self.damaged[line] = true;
        &mut self.rows[line]
    }

    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    pub(crate) fn rows_mut(&mut self) -> &mut [Row] {
        self.damaged.fill(true);
        &mut self.rows
    }

    /// Whether row `line` changed since its mark was last cleared.
    #[inline]
    pub fn damaged(&self, line: usize) -> bool {
        self.damaged[line]
    }

    /// Clear the damage marks of `range`: their rows were checked.
    pub fn clear_damage(&mut self, range: Range<usize>) {
        self.damaged[range].fill(false);
    }

    /// Whether any row is marked.
    pub fn any_damage(&self) -> bool {
        self.damaged.contains(&true)
    }

    /// Mark every row (a resize, a reflow).
    pub fn damage_all(&mut self) {
        self.damaged.fill(true);
    }

    /// Reset the rows in `range` to blanks.
    pub fn reset_rows(&mut self, range: Range<usize>, blank: Cell) {
        self.damaged[range.clone()].fill(true);
        for row in &mut self.rows[range] {
            row.reset(blank);
        }
    }

    /// Mark rows `line` and the one before it: a region scroll put them next to each other,
    /// and a wrapped row's text now joins another row's.
    fn damage_joint(&mut self, line: usize) {
        if line > 0 && line < self.rows.len() {
            self.damaged[line - 1] = true;
            self.damaged[line] = true;
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
        self.damaged[region.clone()].rotate_left(n);
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
        let region_rows = &mut self.rows[region.clone()];
        region_rows.rotate_right(n);
        for row in &mut region_rows[..n] {
            row.reset(blank);
        }
        self.damaged[region.clone()].rotate_right(n);
        // Only the joint below the region is new (rows above the region now meet blank ones).
        self.damage_joint(region.end);
    }

    /// Replace all rows (resize); `rows` must be `lines` rows of `cols` cells.
    pub(crate) fn replace(&mut self, rows: Vec<Row>, cols: usize) {
        debug_assert!(rows.iter().all(|r| r.len() == cols));
        self.damaged = vec![true; rows.len()];
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
