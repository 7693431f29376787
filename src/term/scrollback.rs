//! Scrollback: a bounded ring of the rows that scrolled off the top of the primary screen.
//!
//! Invariant: never more than `limit` rows. A row evicted from the front is handed back to the
//! caller for reuse as a fresh screen row, so steady scrolling allocates nothing.

use std::collections::VecDeque;

use super::row::Row;

#[derive(Debug, Default)]
pub struct Scrollback {
    rows: VecDeque<Row>,
    limit: usize,
}

impl Scrollback {
    pub fn new(limit: usize) -> Scrollback {
        Scrollback { rows: VecDeque::new(), limit }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Append a row; returns the row that fell off the front (or `row` itself when the limit is
    /// zero) so its allocation can be reused.
    pub fn push(&mut self, row: Row) -> Option<Row> {
        if self.limit == 0 {
            return Some(row);
        }
        let evicted = if self.rows.len() >= self.limit { self.rows.pop_front() } else { None };
        self.rows.push_back(row);
        evicted
    }

    /// Row `i`, counting from the oldest (0).
    pub fn get(&self, i: usize) -> Option<&Row> {
        self.rows.get(i)
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Row> + ExactSizeIterator {
        self.rows.iter()
    }

    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Row> {
        self.rows.iter_mut()
    }

    pub fn clear(&mut self) {
        self.rows.clear();
    }

    /// Take every row out, oldest first (resize rebuilds them).
    pub(crate) fn drain_all(&mut self) -> Vec<Row> {
        self.rows.drain(..).collect()
    }

    /// Replace the contents with `rows` (oldest first), keeping only the newest `limit`.
    pub(crate) fn refill(&mut self, rows: impl IntoIterator<Item = Row>) {
        self.rows.clear();
        self.rows.extend(rows);
        let excess = self.rows.len().saturating_sub(self.limit);
        self.rows.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::cell::Cell;

    #[test]
    fn the_ring_is_bounded_and_recycles_the_oldest_row() {
        let mut sb = Scrollback::new(2);
        let row = |c: char| {
            let mut r = Row::new(1, Cell::default());
            r.set(0, Cell::new(c, 0, Default::default()));
            r
        };
        assert!(sb.push(row('a')).is_none());
        assert!(sb.push(row('b')).is_none());
        let evicted = sb.push(row('c')).expect("oldest row comes back");
        assert_eq!(evicted.cell(0).ch(), 'a');
        assert_eq!(sb.len(), 2);
        assert_eq!(sb.get(0).map(|r| r.cell(0).ch()), Some('b'));
        assert!(Scrollback::new(0).push(row('x')).is_some());
    }
}
