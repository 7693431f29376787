//! A terminal as bytes, for a replica: [`Terminal::snapshot`] and [`Terminal::restore`].
//!
//! A window attached to the server keeps a replica of each pane's model and feeds it the bytes
//! the server's model parsed, so the two must start from the same state: screens, cursors,
//! pens, modes, tab stops, colors, titles, the marks a redaction reads, the UTF-8 carry, the OSC
//! guard and where vte stands in a sequence (`sequence_tail.rs`). Styles go by value: only those
//! the cells and pens sent use, numbered afresh (`wire_styles.rs`), so the replica's style ids
//! are its own and two models showing the same cells give the same bytes. What only the server
//! needs is left out: replies and events waiting to be taken, and the redactor, which stays
//! with the values (a replica learns what it found from the server, `replica.rs`). The
//! scrollback's rows are sent newest first up to a count the caller chooses; older ones stay on
//! the server, addressed by their absolute line numbers, which the snapshot keeps.
//!
//! Restoring checks every invariant the model relies on (sizes, row widths, cursors inside
//! the grid, style and link ids inside the table, valid characters), so a bad snapshot is an
//! error, never a panic later.

pub(super) mod codec;
pub(super) mod parts;
pub(super) mod wire_styles;

use super::sequence_tail::SequenceTail;
use super::state::State;
use super::Terminal;
use codec::{Reader, Writer};

/// The snapshot format; a replica refuses any other.
const VERSION: u8 = 2;
/// Most bytes of scrollback rows (with their styles) a snapshot or an answer of rows carries,
/// well inside a frame (`ctl::wire::MAX_FRAME`): rows past it stay on the server until asked.
pub(super) const MOST_ROW_BYTES: usize = 32 << 20;

/// Why a snapshot could not be restored.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SnapshotError {
    #[error("the snapshot ends early")]
    Truncated,
    #[error("the snapshot's format is version {0}; this paddock reads version {VERSION}")]
    Version(u8),
    #[error("the snapshot is not valid (at {0})")]
    Invalid(&'static str),
    #[error("the snapshot has bytes after its end")]
    Trailing,
}

impl Terminal {
    /// The whole model as bytes, with the newest `scrollback_rows` rows of the scrollback, or
    /// as many of them as 32 MiB holds (the rest are counted, not sent).
    pub fn snapshot(&self, scrollback_rows: usize) -> Vec<u8> {
        self.snapshot_within(scrollback_rows, MOST_ROW_BYTES)
    }

    pub(super) fn snapshot_within(&self, scrollback_rows: usize, row_bytes: usize) -> Vec<u8> {
        let mut w = Writer::default();
        w.u8(VERSION);
        parts::save_state(&self.state, scrollback_rows, row_bytes, &mut w);
        parts::save_carry(&self.carry, &mut w);
        parts::save_guard(&self.guard, &mut w);
        w.bytes(self.tail.bytes());
        w.bool(self.state.redaction.is_some());
        w.bytes
    }

    /// A terminal in the state `bytes` describe (see [`Terminal::snapshot`]), and whether the
    /// original checked its text for values (then the replica takes what it found through
    /// [`Terminal::advance_replica`]).
    pub fn restore(bytes: &[u8]) -> Result<(Terminal, bool), SnapshotError> {
        let mut r = Reader::new(bytes);
        let version = r.u8()?;
        if version != VERSION {
            return Err(SnapshotError::Version(version));
        }
        let state: State = parts::load_state(&mut r)?;
        let carry = parts::load_carry(&mut r)?;
        let guard = parts::load_guard(&mut r)?;
        let tail_bytes = r.bytes()?;
        let redacted = r.bool()?;
        if !r.is_empty() {
            return Err(SnapshotError::Trailing);
        }
        let mut terminal = Terminal {
            parser: Default::default(),
            carry,
            guard,
            tail: SequenceTail::default(),
            state,
            follower: None,
            passing_on: None,
        };
        terminal.resume_sequence(tail_bytes)?;
        Ok((terminal, redacted))
    }

    /// Put the parser where the original's stood: the tail must be one `SequenceTail` could
    /// have kept (it calls nothing on the model but a DCS hook, which does nothing).
    fn resume_sequence(&mut self, tail: &[u8]) -> Result<(), SnapshotError> {
        let mut check = SequenceTail::default();
        check.feed(tail);
        if check.bytes() != tail {
            return Err(SnapshotError::Invalid("a sequence in progress"));
        }
        self.parser.advance(&mut self.state, tail);
        self.tail = check;
        Ok(())
    }
}

#[cfg(test)]
pub(super) mod tests;
