//! The terminal model: bytes a program writes in, a screen (grid, cursor, modes, scrollback) out.
//!
//! Pure: no window, GPU, PTY or IO. [`Terminal::advance`] parses bytes with `vte` into a grid of
//! compact [`Cell`]s; whoever owns the terminal drains the reply bytes it queued for the
//! program ([`Terminal::take_replies`]) and the events it raised ([`Terminal::take_events`]);
//! a renderer reads the rows and tells what changed itself. Nothing here blocks, allocates per
//! printed character, or panics on any input.

mod accessors;
mod cell;
mod clean_run;
mod colors;
mod csi;
mod cursor;
mod erase;
mod events;
mod fast_csi;
mod grid;
mod modes;
mod osc;
mod osc_guard;
mod packed;
mod parser;
mod perform;
mod redact;
mod replica;
mod resize;
mod row;
mod scrollback;
mod sequence_tail;
mod sgr;
mod shown_text;
mod snapshot;
mod state;
mod styles;
mod tabs;
#[cfg(test)]
mod test_redactor;
mod text;
mod utf8_carry;
mod widths;

pub use accessors::{row_text, CursorView};
pub use cell::{Cell, Color, HyperlinkId, Style, StyleFlags, StyleId, UnderlineStyle};
pub use colors::{default_palette, DynamicColor, Rgb};
pub use cursor::CursorShape;
pub use events::{PromptMark, Signals, TermEvent};
pub use modes::{ModeState, Modes, MouseEncoding, MouseTracking};
pub use redact::Redactor;
pub use replica::{Follower, ReplicaEdits, ReplicaError, RowPlace};
pub use row::Row;
pub use snapshot::SnapshotError;
pub use state::MAX_DIMENSION;
pub use styles::Hyperlink;

use state::State;

/// A grid size in cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermSize {
    pub cols: usize,
    pub lines: usize,
}

impl TermSize {
    pub fn new(cols: usize, lines: usize) -> TermSize {
        TermSize { cols, lines }
    }
}

/// Settings the program cannot change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TermConfig {
    /// Rows kept above the screen on the primary screen.
    pub scrollback_lines: usize,
}

impl Default for TermConfig {
    fn default() -> Self {
        TermConfig { scrollback_lines: 10_000 }
    }
}

/// Most bytes parsed between two checks of the style table.
const SLICE: usize = 64 * 1024;

/// One terminal: a parser and the screen state it drives.
pub struct Terminal {
    parser: parser::Parser,
    carry: utf8_carry::Utf8Carry,
    guard: osc_guard::OscGuard,
    /// Where the parser stands in a sequence, for a snapshot (`sequence_tail.rs`).
    tail: sequence_tail::SequenceTail,
    state: State,
    /// Who follows this model's changes: the pane's replicas (`replica.rs`).
    follower: Option<Box<dyn Follower>>,
    /// On a replica that is followed in turn (a remote pane's replica on a server whose own
    /// windows follow it): the server's edits for the chunk being passed on, which are what
    /// `replica_edits` gives its follower.
    passing_on: Option<replica::ReplicaEdits>,
}

impl Terminal {
    /// A blank terminal. Sizes are clamped to `1..=MAX_DIMENSION`.
    pub fn new(size: TermSize, config: TermConfig) -> Terminal {
        Terminal {
            parser: Default::default(),
            carry: Default::default(),
            guard: Default::default(),
            tail: Default::default(),
            state: State::new(size.cols, size.lines, config.scrollback_lines),
            follower: None,
            passing_on: None,
        }
    }

    /// This terminal with its parser's fast path off, every byte read by vte: the reference
    /// the tests and the fuzz target hold the fast path to (`parser.rs`).
    #[doc(hidden)]
    pub fn without_fast_path(mut self) -> Terminal {
        self.parser = parser::Parser::vte_only();
        self
    }

    /// Feed bytes the program wrote. Sequences may be split across calls at any byte.
    pub fn advance(&mut self, bytes: &[u8]) {
        self.advance_chunk(bytes, false);
    }

    /// [`Terminal::advance`] with one output of the pane's stream masker
    /// (`vault::mask::Masker`), which has starred every value standing whole in its text:
    /// rows written only by such text are not read again by the model's check
    /// (`clean_run.rs`). Anything else (paddock's own notes in the pane) goes through
    /// `advance`, and every row it writes is checked.
    pub fn advance_masked(&mut self, bytes: &[u8]) {
        self.advance_chunk(bytes, true);
    }

    fn advance_chunk(&mut self, bytes: &[u8], masked: bool) {
        if let Some(redaction) = &mut self.state.redaction {
            redaction.log = Default::default();
        }
        // A clean run never goes on from another chunk: the stream masker read each alone.
        let no_line_ends =
            self.state.redaction.as_ref().is_some_and(|r| r.redactor.line_ends() == 0);
        self.state.clean_runs.begin_chunk(masked && no_line_ends);
        // In slices, so that the style table is compacted often enough however much arrives
        // at once (a replayed file can be gigabytes).
        for slice in bytes.chunks(SLICE) {
            let Terminal { parser, carry, guard, tail, state, .. } = self;
            carry.feed(slice, |whole| {
                guard.feed(whole, |piece| match piece {
                    osc_guard::Piece::Bytes(bytes) => {
                        tail.feed(bytes);
                        parser.advance(state, bytes);
                    }
                    osc_guard::Piece::AbortOsc => state.discard_next_osc = true,
                })
            });
            self.state.compact_styles_if_needed();
        }
        self.state.clean_runs.begin_chunk(false);
        self.state.redact_changes();
        if let Some(mut follower) = self.follower.take() {
            follower.parsed(bytes, masked, self);
            self.follower = Some(follower);
        }
    }

    /// Tell `follower` every change from now on, as it happens (`None`: no one).
    pub fn set_follower(&mut self, follower: Option<Box<dyn Follower>>) {
        self.follower = follower;
    }

    /// The model changed other than by parsing: a follower starts again from it.
    fn restarted(&mut self) {
        if let Some(mut follower) = self.follower.take() {
            follower.restarted(self);
            self.follower = Some(follower);
        }
    }

    /// Check the model for the values `redactor` finds from now on: after every chunk, in the
    /// rows that changed, in titles, notifications and links, and in clipboard writes (which
    /// are dropped when they hold one). Rows already on screen are checked at the next chunk.
    pub fn set_redactor(&mut self, redactor: Box<dyn Redactor>) {
        self.state.redaction = Some(redact::Redaction::new(redactor));
        self.state.active.grid.damage_all();
        self.state.redact_changes();
        self.restarted();
    }

    /// `text` from elsewhere that is shown beside this pane (a notification its program sent
    /// through the control socket), with the values its redactor finds starred as in titles.
    pub fn redact(&mut self, text: String) -> String {
        self.state.redact_text(text)
    }

    /// Resize the grid (clamped to `1..=MAX_DIMENSION`); the primary screen reflows.
    pub fn resize(&mut self, size: TermSize) {
        // Rows a shrinking screen pushes into the scrollback leave checked.
        self.state.redact_changes();
        resize::resize(&mut self.state, size.cols, size.lines);
        self.state.redact_changes();
        self.restarted();
    }

    /// Bytes the terminal must send back to the program (answers to queries), oldest first.
    pub fn take_replies(&mut self) -> Vec<u8> {
        self.state.outbox.take_replies()
    }

    /// Events raised since the last call, oldest first.
    pub fn take_events(&mut self) -> Vec<TermEvent> {
        self.state.outbox.take_events()
    }

    /// Running counts of bells, notifications and prompts since the terminal started.
    pub fn signals(&self) -> &Signals {
        self.state.outbox.signals()
    }
}
