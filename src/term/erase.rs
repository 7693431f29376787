//! Erasing and editing: ED/EL (and their selective forms), ECH, ICH, DCH, DECALN, DECCOLM.
//!
//! Erased cells take the pen's background only (background color erase), as in xterm and
//! Alacritty. Selective erase leaves cells printed under DECSCA protection.

use std::ops::Range;

use super::cell::{Cell, Color, StyleFlags, UnderlineStyle};
use super::cursor::Cursor;
use super::modes::Modes;
use super::state::State;

/// How an erase treats protected (DECSCA) cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Erase {
    All,
    /// DECSED/DECSEL: leave protected cells alone.
    Unprotected,
}

impl State {
    fn erase_cells(&mut self, line: usize, cols: Range<usize>, how: Erase) {
        let blank = self.blank();
        let whole = cols.start == 0 && cols.end >= self.cols();
        let row = self.active.grid.row_mut(line);
        match how {
            Erase::All => {
                row.erase(cols, blank);
                if whole {
                    self.active.grid.erased_whole(line);
                }
            }
            Erase::Unprotected => {
                for col in cols {
                    let style = self.styles.get(row.cell(col).style());
                    if !style.flags.contains(StyleFlags::PROTECTED) {
                        row.set(col, blank);
                    }
                }
            }
        }
    }

    fn erase_rows(&mut self, rows: Range<usize>, how: Erase) {
        let cols = self.cols();
        for line in rows {
            self.erase_cells(line, 0..cols, how);
        }
    }

    /// EL / DECSEL. 0: cursor to end, 1: start to cursor, 2: whole row.
    pub fn erase_in_line(&mut self, mode: u16, how: Erase) {
        let Cursor { row, col, pending_wrap, .. } = self.active.cursor;
        let cols = self.cols();
        let range = match mode {
            // With the last-column flag set there is nothing "right of" the cursor (Alacritty).
            0 if pending_wrap => return,
            0 => col..cols,
            1 => 0..col + 1,
            2 => 0..cols,
            _ => return,
        };
        self.erase_cells(row, range, how);
    }

    /// ED / DECSED. 0: cursor to end of screen, 1: start of screen to cursor, 2: all, 3: the
    /// scrollback.
    pub fn erase_in_display(&mut self, mode: u16, how: Erase) {
        let Cursor { row, col, .. } = self.active.cursor;
        let (cols, lines) = (self.cols(), self.lines());
        match mode {
            0 => {
                self.erase_cells(row, col..cols, how);
                self.erase_rows(row + 1..lines, how);
            }
            1 => {
                self.erase_rows(0..row, how);
                self.erase_cells(row, 0..(col + 1).min(cols), how);
            }
            2 if how == Erase::All && !self.mode(Modes::ALT_SCREEN) => self.clear_viewport(),
            2 => self.erase_rows(0..lines, how),
            3 => {
                self.scrollback.clear();
                // The styles only those rows used go at the next compaction, now.
                self.styles.compact_soon();
            }
            _ => {}
        }
    }

    /// ED 2 on the primary screen: what was on screen moves into the scrollback (as Alacritty
    /// and most modern terminals do), so "clear" never destroys output the user may want back.
    fn clear_viewport(&mut self) {
        let used = (0..self.lines())
            .rev()
            .find(|&line| !self.row_looks_empty(line))
            .map_or(0, |line| line + 1);
        let blank = self.blank();
        let lines = self.lines();
        self.active.grid.scroll_up(0..lines, used, blank, Some(&mut self.scrollback));
        self.active.grid.reset_rows(0..lines, blank);
    }

    /// A row whose cells all look like untouched blanks (a colored background is not empty).
    fn row_looks_empty(&self, line: usize) -> bool {
        self.active.grid.row(line).cells().iter().all(|cell| {
            let style = self.styles.get(cell.style());
            cell.ch() == ' '
                && cell.flags() == 0
                && style.fg == Color::Default
                && style.bg == Color::Default
                && style.underline == UnderlineStyle::None
                && !style.flags.contains(StyleFlags::INVERSE)
                && !style.flags.contains(StyleFlags::STRIKE)
        })
    }

    /// ECH: blank `n` cells from the cursor, without moving anything.
    pub fn erase_chars(&mut self, n: usize) {
        let Cursor { row, col, .. } = self.active.cursor;
        let end = col.saturating_add(n).min(self.cols());
        self.erase_cells(row, col..end, Erase::All);
    }

    /// ICH.
    pub fn insert_blank(&mut self, n: usize) {
        let blank = self.blank();
        let Cursor { row, col, .. } = self.active.cursor;
        self.active.grid.row_mut(row).insert_blank(col, n, blank);
    }

    /// DCH. The count is clamped to the cells right of the cursor (Alacritty blanks cells left
    /// of the cursor when the count is larger; xterm does not).
    pub fn delete_chars(&mut self, n: usize) {
        let blank = self.blank();
        let Cursor { row, col, .. } = self.active.cursor;
        self.active.grid.row_mut(row).delete(col, n, blank);
    }

    /// DECALN: fill the screen with `E`.
    pub fn screen_alignment_test(&mut self) {
        let e = Cell::new('E', 0, Default::default());
        for row in self.active.grid.rows_mut() {
            row.reset(e);
        }
    }

    /// DECCOLM: the column count stays (the window owns it), but the side effects happen: the
    /// screen clears, margins reset and the cursor goes home.
    pub fn column_mode_switch(&mut self) {
        self.set_region(1, None);
        let (lines, blank) = (self.lines(), self.blank());
        self.active.grid.reset_rows(0..lines, blank);
    }
}
