//! A replica of a pane's model: the server's bytes, plus what its redactor did.
//!
//! A window attached to the server feeds its replica the bytes the server's model parsed, in
//! the same chunks, so the replica goes through the same states. The one thing it cannot do
//! itself is what the pane's redactor does, since the replica never holds the values: the
//! server says, for each chunk, what each of its text checks found (titles, notifications,
//! links, the working directory, clipboard writes), which the replica's model takes in the same
//! order in place of asking a redactor, and when values were starred in cells, the rows as they
//! stand after the chunk, which replace the replica's. Neither holds a value.

use std::collections::VecDeque;
use std::ops::Range;

use super::cell::Cell;
use super::redact::{Redaction, Redactor, Replayed};
use super::row::Row;
use super::snapshot::codec::{Reader, Writer};
use super::snapshot::parts::{load_newest_rows, load_row, save_newest_rows, save_row};
use super::snapshot::wire_styles::{Numbering, WireStyles};
use super::snapshot::SnapshotError;
use super::snapshot::MOST_ROW_BYTES;
use super::Terminal;

/// Who follows a model's changes in the order they happen: on the server, a pane's replicas.
/// Called with the model's lock held, so it must not block.
pub trait Follower: Send {
    /// One chunk the model parsed (as [`Terminal::advance_masked`] when `masked`); what its
    /// redactor did in it is `term.replica_edits()`, worked out only by a follower that
    /// sends it somewhere.
    fn parsed(&mut self, bytes: &[u8], masked: bool, term: &Terminal);
    /// The model changed other than by parsing (a resize, a new redactor): a replica starts
    /// again from `term` as it now stands.
    fn restarted(&mut self, term: &Terminal);
}

/// Where a row an edit replaces stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowPlace {
    /// A row of the screen being shown, from the top.
    Shown(usize),
    /// A row of the other screen (the primary while the alternate one is shown, or back).
    Other(usize),
    /// A scrollback row, by absolute line number.
    Scrollback(u64),
}

/// What a replica needs besides one chunk's bytes (empty for almost every chunk).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplicaEdits {
    /// What each text check found, in order (byte ranges of the text checked).
    pub text_finds: Vec<Vec<Range<usize>>>,
    /// Rows in which values were starred, as they stand after the chunk; their style ids
    /// name `styles`.
    pub rows: Vec<(RowPlace, Row)>,
    /// The styles of `rows`, by value (the replica's ids are its own).
    pub styles: WireStyles,
}

/// Why a replica could not follow the server.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReplicaError {
    #[error("the replica checked text the server did not (it is out of step)")]
    ChecksShort,
    #[error("the server checked text the replica did not (it is out of step)")]
    ChecksLeft,
    #[error("an edit names a row the replica does not have")]
    NoSuchRow,
    #[error("an edit's row is not as wide as the screen")]
    RowWidth,
    #[error("an edit's row has a style the edit does not carry")]
    StyleId,
}

/// The replica's stand-in for the redactor: it is never asked, since text checks take the
/// server's answers and rows are not checked.
struct Replaying;

impl Redactor for Replaying {
    fn find(&mut self, _: &[u8], _: &mut Vec<Range<usize>>) {}
    fn longest(&self) -> usize {
        1
    }
    fn line_ends(&self) -> usize {
        // Not zero: a replica never marks clean runs (nothing reads them there).
        1
    }
    fn ascii_only(&self) -> bool {
        true
    }
}

impl ReplicaEdits {
    pub fn is_empty(&self) -> bool {
        self.text_finds.is_empty() && self.rows.is_empty()
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.usize(self.text_finds.len());
        for ranges in &self.text_finds {
            w.usize(ranges.len());
            for range in ranges {
                w.usize(range.start);
                w.usize(range.end);
            }
        }
        w.usize(self.rows.len());
        for (place, row) in &self.rows {
            match *place {
                RowPlace::Shown(i) => {
                    w.u8(0);
                    w.usize(i);
                }
                RowPlace::Other(i) => {
                    w.u8(1);
                    w.usize(i);
                }
                RowPlace::Scrollback(line) => {
                    w.u8(2);
                    w.u64(line);
                }
            }
            save_row(row, &mut |id| id, &mut w);
        }
        self.styles.save(&mut w);
        w.bytes
    }

    pub fn decode(bytes: &[u8]) -> Result<ReplicaEdits, SnapshotError> {
        let mut r = Reader::new(bytes);
        let checks = r.count(1)?;
        let mut text_finds = Vec::with_capacity(checks);
        for _ in 0..checks {
            let count = r.count(2)?;
            let mut ranges = Vec::with_capacity(count);
            for _ in 0..count {
                ranges.push(r.up_to(usize::MAX, "a range")?..r.up_to(usize::MAX, "a range")?);
            }
            text_finds.push(ranges);
        }
        let count = r.count(3)?;
        let mut rows = Vec::with_capacity(count);
        for _ in 0..count {
            let place = match r.u8()? {
                0 => RowPlace::Shown(r.up_to(usize::MAX, "a row")?),
                1 => RowPlace::Other(r.up_to(usize::MAX, "a row")?),
                2 => RowPlace::Scrollback(r.u64()?),
                _ => return Err(SnapshotError::Invalid("a row's place")),
            };
            rows.push((place, load_row(&mut r, None)?));
        }
        let styles = WireStyles::load(&mut r)?;
        if !r.is_empty() {
            return Err(SnapshotError::Trailing);
        }
        if !styles.holds(&rows.iter().map(|(_, row)| row).collect::<Vec<_>>()) {
            return Err(SnapshotError::Invalid("a style id"));
        }
        Ok(ReplicaEdits { text_finds, rows, styles })
    }
}

impl Terminal {
    /// Up to `count` scrollback rows just before absolute line `before`, as many as 32 MiB
    /// holds, for a replica that scrolled back past what it holds: their first line, and the
    /// rows encoded with their styles.
    pub fn scrollback_rows(&self, before: u64, count: usize) -> (u64, Vec<u8>) {
        self.scrollback_rows_within(before, count, MOST_ROW_BYTES)
    }

    pub(super) fn scrollback_rows_within(
        &self,
        before: u64,
        count: usize,
        budget: usize,
    ) -> (u64, Vec<u8>) {
        let scrollback = &self.state.scrollback;
        let oldest = scrollback.pushed() - scrollback.len() as u64;
        let end = before.clamp(oldest, scrollback.pushed());
        let first = end.saturating_sub(count as u64).max(oldest);
        let mut w = Writer::default();
        let mut numbering = Numbering::new(&self.state.styles);
        let sent = save_newest_rows(scrollback, first..end, &mut numbering, budget, &mut w);
        numbering.finish().save(&mut w);
        (end - sent as u64, w.bytes)
    }

    /// On a replica: rows the server sent (`scrollback_rows`), put before the oldest row this
    /// replica holds when they end right there (else they are stale, and left out). Returns
    /// how many were added.
    pub fn prepend_scrollback(&mut self, first: u64, rows: &[u8]) -> Result<usize, SnapshotError> {
        let mut r = Reader::new(rows);
        let mut rows = load_newest_rows(&mut r)?;
        let styles = WireStyles::load(&mut r)?;
        if !r.is_empty() {
            return Err(SnapshotError::Trailing);
        }
        if !styles.holds(&rows.iter().collect::<Vec<_>>()) {
            return Err(SnapshotError::Invalid("a style id"));
        }
        let scrollback = &self.state.scrollback;
        let oldest = scrollback.pushed() - scrollback.len() as u64;
        if first.checked_add(rows.len() as u64) != Some(oldest) {
            return Ok(0);
        }
        let ids = styles.adopt(&mut self.state.styles);
        rows.iter_mut().for_each(|row| row.remap_styles(&ids));
        Ok(self.state.scrollback.prepend(&rows))
    }

    /// On the server, right after a chunk: what a replica needs besides its bytes. (On a
    /// replica, to its own follower: the server's edits it took with the chunk.)
    pub fn replica_edits(&self) -> ReplicaEdits {
        if let Some(edits) = &self.passing_on {
            return edits.clone();
        }
        let Some(redaction) = &self.state.redaction else { return ReplicaEdits::default() };
        let mut edits = ReplicaEdits {
            text_finds: redaction.log.text.clone(),
            rows: Vec::new(),
            styles: WireStyles::default(),
        };
        if let Some(from) = redaction.log.starred_from {
            let state = &self.state;
            let mut numbering = Numbering::new(&state.styles);
            let screen = state.scrollback.pushed();
            let oldest = screen - state.scrollback.len() as u64;
            for line in from.max(oldest)..screen {
                if let Some(row) = state.scrollback.get_absolute(line) {
                    edits.rows.push((RowPlace::Scrollback(line), numbering.row(&row)));
                }
            }
            for (i, row) in state.active.grid.rows().iter().enumerate() {
                edits.rows.push((RowPlace::Shown(i), numbering.row(row)));
            }
            for (i, row) in state.inactive.grid.rows().iter().enumerate() {
                edits.rows.push((RowPlace::Other(i), numbering.row(row)));
            }
            edits.styles = numbering.finish();
        }
        edits
    }

    /// On a replica restored from a snapshot of a pane whose text is checked for values: take
    /// the server's answers from now on (through [`Terminal::advance_replica`]).
    pub fn replay_checks(&mut self) {
        let mut redaction = Redaction::new(Box::new(Replaying));
        redaction.replayed = Some(Replayed::default());
        self.state.redaction = Some(redaction);
    }

    /// On a replica: one chunk the server's model parsed (`masked` as it was given to it),
    /// with what the server's redactor did in it. A follower of this replica is told of the
    /// chunk once the edits are in (never before: rows they star would reach it unstarred),
    /// with the server's edits as they came.
    pub fn advance_replica(
        &mut self,
        bytes: &[u8],
        masked: bool,
        edits: &ReplicaEdits,
    ) -> Result<(), ReplicaError> {
        let follower = self.follower.take();
        let stepped = self.step_replica(bytes, masked, edits);
        if let Some(mut follower) = follower {
            if stepped.is_ok() {
                self.passing_on = Some(edits.clone());
                follower.parsed(bytes, masked, self);
                self.passing_on = None;
            }
            self.follower = Some(follower);
        }
        stepped
    }

    /// Put `fresh` (restored from a newer snapshot of the same pane) in place of this model:
    /// whoever followed this one follows it, starting again from it.
    pub fn replace_with(&mut self, fresh: Terminal) {
        let follower = self.follower.take();
        *self = fresh;
        self.follower = follower;
        self.restarted();
    }

    fn step_replica(
        &mut self,
        bytes: &[u8],
        masked: bool,
        edits: &ReplicaEdits,
    ) -> Result<(), ReplicaError> {
        if let Some(replayed) = self.replayed() {
            replayed.finds = VecDeque::from(edits.text_finds.clone());
            replayed.short = false;
        }
        if masked {
            self.advance_masked(bytes);
        } else {
            self.advance(bytes);
        }
        if let Some(replayed) = self.replayed() {
            if replayed.short {
                return Err(ReplicaError::ChecksShort);
            }
            if !replayed.finds.is_empty() {
                replayed.finds.clear();
                return Err(ReplicaError::ChecksLeft);
            }
        } else if !edits.text_finds.is_empty() {
            return Err(ReplicaError::ChecksLeft);
        }
        if edits.rows.is_empty() {
            return Ok(());
        }
        if !edits.styles.holds(&edits.rows.iter().map(|(_, row)| row).collect::<Vec<_>>()) {
            return Err(ReplicaError::StyleId);
        }
        let ids = edits.styles.adopt(&mut self.state.styles);
        edits.rows.iter().try_for_each(|(place, row)| {
            let mut row = row.clone();
            row.remap_styles(&ids);
            self.replace_row(*place, &row)
        })
    }

    fn replayed(&mut self) -> Option<&mut Replayed> {
        self.state.redaction.as_mut().and_then(|r| r.replayed.as_mut())
    }

    fn replace_row(&mut self, place: RowPlace, row: &Row) -> Result<(), ReplicaError> {
        let state = &mut self.state;
        let styles = &state.styles;
        let (grid, i) = match place {
            RowPlace::Shown(i) => (&mut state.active.grid, i),
            RowPlace::Other(i) => (&mut state.inactive.grid, i),
            RowPlace::Scrollback(line) => {
                return match state.scrollback.get_absolute(line) {
                    Some(_) => {
                        state.scrollback.replace_absolute(line, row);
                        Ok(())
                    }
                    // Only rows the replica holds change; older ones are fetched starred.
                    None if line < state.scrollback.pushed() => Ok(()),
                    None => Err(ReplicaError::NoSuchRow),
                };
            }
        };
        if row.len() != grid.cols() {
            return Err(ReplicaError::RowWidth);
        }
        if i >= grid.lines() {
            return Err(ReplicaError::NoSuchRow);
        }
        // A row the server starred is no longer fresh, and its mark was cleared by the check:
        // the same here. Rows the edit repeats as they are keep their marks (and their ids:
        // the replica's may differ from the edit's for the same styles).
        let old = grid.row(i);
        let same_cell = |(a, b): (&Cell, &Cell)| {
            a.bits() == b.bits()
                && (a.style() == b.style() || styles.get(a.style()) == styles.get(b.style()))
        };
        let same = old.all_marks() == row.all_marks()
            && old.cells().iter().zip(row.cells()).all(same_cell);
        if !same {
            grid.row_mut(i).clone_from(row);
            grid.clear_damage(i..i + 1);
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "replica_tests.rs"]
mod tests;
