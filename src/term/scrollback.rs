//! Scrollback: a bounded ring of the rows that scrolled off the top of the primary screen.
//!
//! Rows are stored packed (see `packed`): a row is packed as it enters and handed straight
//! back to the caller for reuse as a fresh screen row, so steady scrolling allocates only the
//! packed copy. Invariant: never more than `limit` rows.

use std::collections::VecDeque;

use super::cell::StyleId;
use super::packed::{PackScratch, PackedRow};
use super::row::Row;

#[derive(Debug, Default)]
pub struct Scrollback {
    rows: VecDeque<PackedRow>,
    limit: usize,
    scratch: PackScratch,
    /// Rows ever pushed (less those popped back): the absolute number of the first screen row,
    /// so that a line keeps its number while the ring turns (selections and search use it).
    pushed: u64,
}

impl Scrollback {
    pub fn new(limit: usize) -> Scrollback {
        Scrollback { rows: VecDeque::new(), limit, scratch: PackScratch::default(), pushed: 0 }
    }

    /// A scrollback holding `rows` (oldest first, at most `limit`) as the newest of `pushed`.
    pub(super) fn from_parts(limit: usize, pushed: u64, rows: &[Row]) -> Scrollback {
        let mut scratch = PackScratch::default();
        let rows = rows.iter().map(|row| PackedRow::pack_with(row, &mut scratch)).collect();
        Scrollback { rows, limit, scratch, pushed }
    }

    /// Put `rows` (oldest first) before the oldest row held, as many as the limit leaves room
    /// for (the newest of them); returns how many.
    pub(super) fn prepend(&mut self, rows: &[Row]) -> usize {
        let room = self.limit.saturating_sub(self.rows.len()).min(rows.len());
        let scratch = &mut self.scratch;
        for row in rows[rows.len() - room..].iter().rev() {
            self.rows.push_front(PackedRow::pack_with(row, scratch));
        }
        room
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// Append a row (the oldest falls off past the limit); returns `row` itself, whose
    /// allocation the caller reuses.
    pub fn push(&mut self, row: Row) -> Row {
        if self.limit == 0 {
            return row;
        }
        if self.rows.len() >= self.limit {
            self.rows.pop_front();
        }
        self.rows.push_back(PackedRow::pack_with(&row, &mut self.scratch));
        self.pushed += 1;
        row
    }

    /// The absolute number of the first screen row (rows ever pushed).
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The stored row with absolute number `line`, unpacked.
    pub fn get_absolute(&self, line: u64) -> Option<Row> {
        let oldest = self.pushed - self.rows.len() as u64;
        let index = line.checked_sub(oldest)?;
        self.get(usize::try_from(index).ok()?)
    }

    /// Replace the stored row with absolute number `line` (a redaction starred some of it).
    pub fn replace_absolute(&mut self, line: u64, row: &Row) {
        let oldest = self.pushed - self.rows.len() as u64;
        let index = line.checked_sub(oldest).and_then(|i| usize::try_from(i).ok());
        if let Some(slot) = index.and_then(|i| self.rows.get_mut(i)) {
            *slot = PackedRow::pack_with(row, &mut self.scratch);
        }
    }

    /// Row `i`, counting from the oldest (0), unpacked.
    pub fn get(&self, i: usize) -> Option<Row> {
        self.rows.get(i).map(PackedRow::unpack)
    }

    /// Every row, oldest first, unpacked one at a time.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = Row> + ExactSizeIterator + '_ {
        self.rows.iter().map(PackedRow::unpack)
    }

    /// Every style a row uses (for style-table compaction), without unpacking.
    pub(crate) fn styles(&self) -> impl Iterator<Item = StyleId> + '_ {
        self.rows.iter().flat_map(|r| r.runs().map(|(style, _)| style))
    }

    pub(crate) fn remap_styles(&mut self, remap: &[StyleId]) {
        self.rows.iter_mut().for_each(|r| r.remap_styles(remap));
    }

    /// Bytes held by the rows (packed data and headers).
    pub fn heap_bytes(&self) -> usize {
        self.rows.iter().map(PackedRow::heap_bytes).sum()
    }

    /// Take the newest `n` rows (or all there are) out, unpacked, oldest first.
    pub(crate) fn pop_newest(&mut self, n: usize) -> Vec<Row> {
        let from = self.rows.len().saturating_sub(n);
        self.pushed -= (self.rows.len() - from) as u64;
        self.rows.drain(from..).map(|r| r.unpack()).collect()
    }

    pub fn clear(&mut self) {
        self.rows.clear();
    }

    /// Take every row out, oldest first, unpacked (resize rebuilds them).
    pub(crate) fn drain_all(&mut self) -> Vec<Row> {
        self.pushed -= self.rows.len() as u64;
        self.rows.drain(..).map(|r| r.unpack()).collect()
    }

    /// Replace the contents with `rows` (oldest first), keeping only the newest `limit`.
    pub(crate) fn refill(&mut self, rows: Vec<Row>) {
        self.rows.clear();
        let skip = rows.len().saturating_sub(self.limit);
        let scratch = &mut self.scratch;
        self.pushed += (rows.len() - skip) as u64;
        self.rows.extend(rows[skip..].iter().map(|row| PackedRow::pack_with(row, scratch)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::cell::Cell;

    #[test]
    fn the_ring_is_bounded_and_hands_the_row_back() {
        let mut sb = Scrollback::new(2);
        let row = |c: char| {
            let mut r = Row::new(1, Cell::default());
            r.set(0, Cell::new(c, 0, Default::default()));
            r
        };
        assert_eq!(sb.push(row('a')).cell(0).ch(), 'a');
        sb.push(row('b'));
        sb.push(row('c'));
        assert_eq!(sb.len(), 2);
        assert_eq!(sb.get(0).map(|r| r.cell(0).ch()), Some('b'));
        assert_eq!(sb.get(1).map(|r| r.cell(0).ch()), Some('c'));
        assert_eq!(Scrollback::new(0).push(row('x')).cell(0).ch(), 'x');
        sb.refill(vec![row('d'), row('e'), row('f')]);
        let kept: Vec<char> = sb.iter().map(|r| r.cell(0).ch()).collect();
        assert_eq!(kept, ['e', 'f']);
    }
}
