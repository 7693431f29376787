//! Rows the model's own check may skip, because the pane's stream masker already read their text.
//!
//! The model's check (`redact.rs`) reads every row a chunk changed. Most rows of a program's
//! output are written the plainest way: a blank row, then characters from its first column on,
//! one after another, from one stretch of text between two escape sequences. The stream masker
//! in front of the model has already looked for every value in exactly that text (it reads each
//! stretch between escape sequences as one text, within the chunk it hands the model), so
//! reading it back from the cells finds nothing new. Such a row is written without a damage
//! mark: a *clean run*. Anything else marks the row as before.
//!
//! A character continues a clean run only when all of these hold, and otherwise it marks its
//! row (and the run ends):
//! - the chunk is one output of the stream masker (`Terminal::advance_masked`; paddock's own
//!   notes in a pane are not), and no value holds a line end (a run ends at every line end,
//!   so two runs could meet across one);
//! - it is printed by the parser's text path (not REP, not a charset's mapping, not a
//!   replacement character for invalid bytes, no combining mark), in the same chunk as the
//!   run's start, landing on plain cells without wrapping;
//! - nothing came between it and the run's last character, so it lands right after it: no
//!   control (every `execute` ends a run) and no escape sequence. The parser calls
//!   `Perform::terminated` before every step that is not a stretch of text, which ends the run:
//!   even a malformed sequence that it ignores without any other call (`ESC [ 1 < m`);
//! - or it starts a run in column 0 of a *fresh* row (blank since a reset, a scroll or a
//!   whole-row erase, and not written since) that is not the screen's first and whose row
//!   above does not wrap into it.
//!
//! So a value is either in text the stream masker saw whole (starred there), or touches a
//! marked row, whose check reaches across every wrapped joint around it.

use std::cell::Cell;

use super::grid::Grid;

#[derive(Debug, Default)]
pub(super) struct CleanRuns {
    /// Whether this chunk is the stream masker's output (`Terminal::advance_masked`) and no
    /// value holds a line end.
    pub(super) enabled: bool,
    /// Whether the last character printed went into a clean run, and nothing but text came
    /// after it. Every other way the cursor moves ends the run first: a control (`execute`),
    /// an escape sequence (the parser calls `terminated` before each of its bytes), the slow
    /// print path, a new chunk. So the next character lands right after the last one.
    running: Cell<bool>,
}

impl CleanRuns {
    /// Whether a character printed by the text path at (`row`, `col`) continues or starts a
    /// clean run (`eligible`: it is the character as the stream had it).
    #[inline(always)]
    pub(super) fn admit(
        &mut self,
        eligible: bool,
        grid: &Grid,
        (row, col): (usize, usize),
    ) -> bool {
        if !self.enabled {
            return false;
        }
        // Most characters go on with the run they are in, or are in none and not in column 0.
        if self.running.get() {
            if eligible {
                return true;
            }
            self.running.set(false);
            return false;
        }
        if col != 0 {
            return false;
        }
        let starts = eligible && row > 0 && grid.fresh(row) && !grid.row(row - 1).wrapped();
        self.running.set(starts);
        starts
    }

    /// A chunk begins: runs are allowed in it (`enabled`) or not, and none goes on from before.
    pub(super) fn begin_chunk(&mut self, enabled: bool) {
        self.enabled = enabled;
        self.end();
    }

    /// The current run is over: something other than its next character happened (the parser
    /// read something other than text, see `Perform::terminated`).
    #[inline(always)]
    pub(super) fn end(&self) {
        self.running.set(false);
    }
}

#[cfg(test)]
#[path = "clean_run_tests.rs"]
mod tests;
