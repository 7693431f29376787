//! A selection of text: from the cell where the drag started to the cell under the pointer,
//! grown to whole words (double click) or whole lines (triple click).

use crate::term::{Row, Terminal};

/// A cell by absolute line and column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Point {
    pub line: u64,
    pub col: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectionKind {
    /// Cell by cell, in reading order.
    Cells,
    /// Grown to whole words at both ends.
    Words,
    /// Grown to whole lines (a wrapped line counts as one).
    Lines,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    pub anchor: Point,
    pub head: Point,
    pub kind: SelectionKind,
}

/// Characters that end a word for double-click selection (as Alacritty's defaults): paths,
/// URLs and dotted names stay whole.
const WORD_SEPARATORS: &str = ",│`|:\"' ()[]{}<>\t";

impl Selection {
    pub fn new(at: Point, kind: SelectionKind) -> Selection {
        Selection { anchor: at, head: at, kind }
    }

    /// A cell selection that has not moved from where it started.
    pub fn is_empty(&self) -> bool {
        self.kind == SelectionKind::Cells && self.anchor == self.head
    }

    /// The first and last selected cells (inclusive), in reading order, grown to its kind.
    pub fn span(&self, term: &Terminal) -> (Point, Point) {
        let (mut start, mut end) = if self.anchor <= self.head {
            (self.anchor, self.head)
        } else {
            (self.head, self.anchor)
        };
        match self.kind {
            SelectionKind::Cells => {}
            SelectionKind::Words => {
                start.col = word_edge(term, start, -1);
                end.col = word_edge(term, end, 1);
            }
            SelectionKind::Lines => {
                // A wrapped line is one line: reach back to its first row and on to its last.
                while start.line > term.first_line()
                    && term.line(start.line - 1).is_some_and(|r| r.wrapped())
                {
                    start.line -= 1;
                }
                while term.line(end.line).is_some_and(|r| r.wrapped()) {
                    end.line += 1;
                }
                start.col = 0;
                end.col = term.size().cols.saturating_sub(1);
            }
        }
        (start, end)
    }

    /// Whether the cell at (`line`, `col`) is selected, given the `span`.
    pub fn contains(span: (Point, Point), line: u64, col: usize) -> bool {
        let point = Point { line, col };
        span.0 <= point && point <= span.1
    }

    /// The selected text: rows joined by newlines except where a row wrapped onto the next,
    /// trailing blanks of each line dropped, wide characters once, combining marks kept.
    pub fn text(&self, term: &Terminal) -> String {
        let (start, end) = self.span(term);
        let mut text = String::new();
        for line in start.line..=end.line {
            let Some(row) = term.line(line) else {
                continue;
            };
            let from = if line == start.line { start.col } else { 0 };
            let to = if line == end.line { end.col + 1 } else { row.len() };
            let piece = row_slice(&row, from, to);
            let continues = row.wrapped() && line != end.line;
            if continues {
                text.push_str(&piece);
            } else {
                text.push_str(piece.trim_end_matches(' '));
                if line != end.line {
                    text.push('\n');
                }
            }
        }
        text
    }
}

/// The text of cells `from..to` of a row, fillers skipped.
fn row_slice(row: &Row, from: usize, to: usize) -> String {
    let mut text = String::new();
    for col in from..to.min(row.len()) {
        let cell = row.cell(col);
        if cell.is_filler() {
            continue;
        }
        text.push(cell.ch());
        text.extend(row.marks(col));
    }
    text
}

/// The column where the word at `at` ends in direction `step` (-1: its first cell, 1: its
/// last). A separator or a blank is a word of its own.
fn word_edge(term: &Terminal, at: Point, step: isize) -> usize {
    let Some(row) = term.line(at.line) else {
        return at.col;
    };
    let class = |col: usize| {
        let ch = row.cell(col).ch();
        if ch == ' ' || ch == '\0' {
            0
        } else if WORD_SEPARATORS.contains(ch) {
            1
        } else {
            2
        }
    };
    let mine = class(at.col.min(row.len().saturating_sub(1)));
    let mut col = at.col.min(row.len().saturating_sub(1));
    loop {
        let next = col as isize + step;
        if next < 0 || next as usize >= row.len() {
            break;
        }
        let next = next as usize;
        // The right half of a wide character belongs to it.
        if !row.cell(next).is_filler() && class(next) != mine {
            break;
        }
        if mine == 1 {
            break;
        }
        col = next;
    }
    col
}
