//! Search the scrollback and the screen for text.
//!
//! Matching is per row, case-insensitive unless the query has a capital letter ("smart case",
//! as in vim and less). Nothing is indexed: the visible rows are matched when a frame asks
//! for highlights, and a jump scans rows outward from the current match until it finds one,
//! so new output never leaves a stale list behind.

use super::selection::Point;
use crate::term::{Row, Terminal};

/// One occurrence: `len` cells from `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Match {
    pub start: Point,
    /// Cells covered, wide characters counting two.
    pub cells: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Search {
    pub query: String,
    /// The match the view jumped to last.
    pub current: Option<Match>,
}

impl Search {
    fn folds_case(&self) -> bool {
        !self.query.chars().any(char::is_uppercase)
    }

    /// Every match in the row with absolute number `line`.
    pub fn matches_in_line(&self, term: &Terminal, line: u64) -> Vec<Match> {
        match term.line(line) {
            Some(row) => self.matches_in_row(&row, line),
            None => Vec::new(),
        }
    }

    fn matches_in_row(&self, row: &Row, line: u64) -> Vec<Match> {
        let fold = self.folds_case();
        let needle: Vec<char> = self.query.chars().map(|c| fold_char(c, fold)).collect();
        if needle.is_empty() {
            return Vec::new();
        }
        // The row's characters with the column each starts at.
        let mut chars: Vec<(char, usize)> = Vec::with_capacity(row.len());
        for col in 0..row.len() {
            let cell = row.cell(col);
            if !cell.is_filler() {
                chars.push((fold_char(cell.ch(), fold), col));
            }
        }
        let mut found = Vec::new();
        let mut i = 0;
        while i + needle.len() <= chars.len() {
            if chars[i..i + needle.len()].iter().map(|(c, _)| *c).eq(needle.iter().copied()) {
                let first = chars[i].1;
                let last = chars[i + needle.len() - 1].1;
                let wide = usize::from(row.cell(last).has(crate::term::Cell::WIDE));
                found.push(Match {
                    start: Point { line, col: first },
                    cells: last + 1 + wide - first,
                });
                i += needle.len();
            } else {
                i += 1;
            }
        }
        found
    }

    /// The next match before (`older`) or after the current one (or, with none, from the
    /// bottom of the screen up), scanning the whole history once; it becomes current.
    pub fn jump(&mut self, term: &Terminal, older: bool) -> Option<Match> {
        let first = term.first_line();
        let end = term.screen_line() + term.size().lines as u64;
        let from = self.current.map(|m| m.start);
        let candidate = |m: &Match| match from {
            None => true,
            Some(from) if older => m.start < from,
            Some(from) => m.start > from,
        };
        let start_line = from.map_or(if older { end.saturating_sub(1) } else { first }, |p| p.line);
        let found = if older {
            (first..=start_line).rev().find_map(|line| {
                self.matches_in_line(term, line).into_iter().rev().find(|m| candidate(m))
            })
        } else {
            (start_line..end).find_map(|line| {
                self.matches_in_line(term, line).into_iter().find(|m| candidate(m))
            })
        };
        if found.is_some() {
            self.current = found;
        }
        found
    }
}

fn fold_char(c: char, fold: bool) -> char {
    if fold {
        c.to_lowercase().next().unwrap_or(c)
    } else {
        c
    }
}
