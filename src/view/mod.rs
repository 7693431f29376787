//! What the user looks at in a pane, apart from what the program wrote: how far the view is
//! scrolled back, the selection, the search, and a clipboard write its rule held back.
//!
//! Pure: the terminal's read-only view in, positions out. Positions are absolute line numbers
//! (`Terminal::line`), so a scrolled-back view, a selection and a search match stay on their
//! text while the program keeps printing below them.

mod search;
mod selection;

pub use search::{Match, Search};
pub use selection::{Point, Selection, SelectionKind};

use std::time::{Duration, Instant};

use crate::term::Terminal;

/// How long a refused clipboard write is said in the title strip.
pub const REFUSAL_SHOWN: Duration = Duration::from_secs(10);

/// A clipboard write (OSC 52) from the pane's program that its rule held back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClipboardNote {
    /// Waiting for the user to let it through (`allow_clipboard`); a later write replaces it.
    Asking { text: String, primary: bool },
    /// Refused at `at`.
    Refused { at: Instant },
}

impl ClipboardNote {
    /// What the title strip says at `now`, if anything; `allow`: the key that lets it through.
    pub fn describe(&self, now: Instant, allow: Option<&str>) -> Option<String> {
        match self {
            ClipboardNote::Asking { text, .. } => {
                let count = text.chars().count();
                Some(match allow {
                    Some(key) => format!("copy {count} chars? {key}"),
                    None => format!("copy {count} chars? (allow_clipboard is unbound)"),
                })
            }
            ClipboardNote::Refused { at } => {
                (now < *at + REFUSAL_SHOWN).then(|| "clipboard write refused".to_owned())
            }
        }
    }
}

/// One pane's scroll position, selection and search.
#[derive(Clone, Debug, Default)]
pub struct PaneView {
    /// The absolute line at the top of the view when scrolled back; `None` follows the
    /// program's screen.
    top: Option<u64>,
    pub selection: Option<Selection>,
    pub search: Option<Search>,
    pub clipboard: Option<ClipboardNote>,
}

impl PaneView {
    /// The absolute line shown in the top row.
    pub fn top_line(&self, term: &Terminal) -> u64 {
        match self.top {
            // The scrollback may have dropped lines since: the oldest kept is as far as it goes.
            Some(top) if !term.is_alt_screen() => top.clamp(term.first_line(), term.screen_line()),
            _ => term.screen_line(),
        }
    }

    /// How many lines the view is scrolled back (0: following the screen).
    pub fn scrolled_back(&self, term: &Terminal) -> u64 {
        term.screen_line() - self.top_line(term)
    }

    /// Scroll by `lines` (negative: back into the scrollback). The alternate screen has no
    /// scrollback to show.
    pub fn scroll(&mut self, term: &Terminal, lines: i64) {
        if term.is_alt_screen() {
            self.top = None;
            return;
        }
        let top = self.top_line(term) as i64 + lines;
        let top = top.clamp(term.first_line() as i64, term.screen_line() as i64) as u64;
        self.top = (top < term.screen_line()).then_some(top);
    }

    /// Back to the program's screen.
    pub fn follow(&mut self) {
        self.top = None;
    }

    /// Scroll so that `line` is in view (roughly in its middle when it was not).
    pub fn reveal(&mut self, term: &Terminal, line: u64) {
        let top = self.top_line(term);
        let lines = term.size().lines as u64;
        if (top..top + lines).contains(&line) {
            return;
        }
        let target = line.saturating_sub(lines / 2) as i64;
        self.scroll(term, target - top as i64);
    }

    /// The view row (0 at the top) a point is on, if it is in view.
    pub fn row_of(&self, term: &Terminal, line: u64) -> Option<usize> {
        let row = line.checked_sub(self.top_line(term))?;
        (row < term.size().lines as u64).then_some(row as usize)
    }

    /// The point under view cell (`row`, `col`).
    pub fn point_at(&self, term: &Terminal, row: usize, col: usize) -> Point {
        let last_col = term.size().cols.saturating_sub(1);
        Point { line: self.top_line(term) + row as u64, col: col.min(last_col) }
    }
}

#[cfg(test)]
mod tests;
