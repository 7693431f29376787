//! Redaction in the model: the second line of defence for a pane whose program holds secrets.
//!
//! The pane's masker (`vault::mask`) stars values in the byte stream before the parser sees
//! them. Some drawing puts a value on screen that no byte stream shows whole: REP, backspace
//! and overwrite, cursor moves that draw it out of order, a partial redraw that completes an
//! old half, controls the parser drops. So the model checks what it actually holds: after each
//! chunk, the rows that changed (with the rows their text joins: a wrapped row's neighbours, and
//! as many line ends as a value holds); before a row scrolls into the scrollback, that row. Any
//! value found is starred in the cells themselves, one `*` per cell. Titles, notifications,
//! hyperlink targets and the working directory are checked as decoded text, and a clipboard
//! write whose decoded payload holds a value is dropped.
//!
//! The model knows no value: a [`Redactor`] finds them in text.

use std::borrow::Cow;
use std::ops::Range;

use super::cell::Cell;
use super::modes::Modes;
use super::row::Row;
use super::shown_text;
use super::state::State;
use unicode_width::UnicodeWidthChar;

/// What finds values in text. The pane's vault side implements it; the model only asks.
pub trait Redactor: Send {
    /// Append to `found` the byte ranges of `text` where a value stands.
    fn find(&mut self, text: &[u8], found: &mut Vec<Range<usize>>);
    /// The longest value, in bytes (at least one): how far from a change a value can reach.
    fn longest(&self) -> usize;
    /// The most line ends (`\n`) one value holds.
    fn line_ends(&self) -> usize;
    /// Whether every value is ASCII: then any other character may be shown to `find` as the
    /// one byte 0xFF (which no value holds), which costs far less to read back than UTF-8.
    fn ascii_only(&self) -> bool;
}

/// Reused buffers, so that a check allocates nothing in the steady state.
#[derive(Default)]
pub(super) struct Scratch {
    text: Vec<u8>,
    found: Vec<Range<usize>>,
    lines: Vec<(u64, u64)>,
    changed: Vec<u64>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // The text may hold a value that was found.
        self.text.fill(0);
    }
}

/// A redactor and its buffers, as the model holds them.
pub(super) struct Redaction {
    pub(super) redactor: Box<dyn Redactor>,
    scratch: Scratch,
    /// On a replica (`replica.rs`): what the server's text checks found, one entry per check
    /// in order; rows are not checked here (the server sends the rows it starred).
    pub(super) replayed: Option<Replayed>,
    /// On the server: what this chunk's checks found, for replicas.
    pub(super) log: FoundLog,
}

/// What the text checks of one chunk found on the server, to be replayed on a replica.
#[derive(Debug, Default)]
pub(super) struct Replayed {
    pub(super) finds: std::collections::VecDeque<Vec<Range<usize>>>,
    /// A check found no entry left: the replica is not where the server was.
    pub(super) short: bool,
}

/// On the server, since the chunk began: what each text check found, and the oldest row
/// (by absolute number, at the time) a value was starred in.
#[derive(Debug, Default)]
pub(super) struct FoundLog {
    pub(super) text: Vec<Vec<Range<usize>>>,
    pub(super) starred_from: Option<u64>,
}

impl Redaction {
    pub(super) fn new(redactor: Box<dyn Redactor>) -> Redaction {
        Redaction {
            redactor,
            scratch: Scratch::default(),
            replayed: None,
            log: FoundLog::default(),
        }
    }

    /// A text check: the redactor's answer, written down for replicas; on a replica, the
    /// server's answer, kept inside `text`.
    fn find_text(&mut self, text: &[u8], found: &mut Vec<Range<usize>>) {
        match &mut self.replayed {
            None => {
                self.redactor.find(text, found);
                self.log.text.push(found.clone());
            }
            Some(replayed) => match replayed.finds.pop_front() {
                Some(ranges) => found
                    .extend(ranges.into_iter().filter(|r| r.start < r.end && r.end <= text.len())),
                None => replayed.short = true,
            },
        }
    }
}

impl std::fmt::Debug for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redaction")
    }
}

/// Rows by absolute number: the scrollback's, then the screen's (the scrollback only while the
/// primary screen is shown: the alternate screen has none).
struct Lines {
    /// Absolute number of the first row that can be read.
    oldest: u64,
    /// Absolute number of screen row 0.
    screen: u64,
    end: u64,
}

impl Lines {
    fn of(state: &State) -> Lines {
        let screen = state.scrollback.pushed();
        let oldest = if state.mode(Modes::ALT_SCREEN) {
            screen
        } else {
            screen - state.scrollback.len() as u64
        };
        Lines { oldest, screen, end: screen + state.lines() as u64 }
    }

    fn row<'s>(&self, state: &'s State, line: u64) -> Option<Cow<'s, Row>> {
        match line.checked_sub(self.screen) {
            Some(i) => state.active.grid.rows().get(i as usize).map(Cow::Borrowed),
            None if line >= self.oldest => state.scrollback.get_absolute(line).map(Cow::Owned),
            None => None,
        }
    }

    fn wrapped(&self, state: &State, line: u64) -> bool {
        self.row(state, line).is_some_and(|r| r.wrapped())
    }
}

/// How far around a changed row a value may reach: rows joined by wrapping, and for values
/// with line ends that many unwrapped joints too, within the rows the longest value can fill.
fn reach(state: &State, lines: &Lines, line: u64, redactor: &dyn Redactor) -> (u64, u64) {
    let cols = state.cols().max(1);
    let most_rows = (redactor.longest().div_ceil(cols) + 1) as u64;
    let mut joints = redactor.line_ends();
    let (mut lo, mut hi) = (line, line);
    while lo > lines.oldest && line - lo < most_rows {
        if !lines.wrapped(state, lo - 1) {
            if joints == 0 {
                break;
            }
            joints -= 1;
        }
        lo -= 1;
    }
    let mut joints = redactor.line_ends();
    while hi + 1 < lines.end && hi - line < most_rows {
        if !lines.wrapped(state, hi) {
            if joints == 0 {
                break;
            }
            joints -= 1;
        }
        hi += 1;
    }
    (lo, hi)
}

/// The text of rows `lo..=hi`, as a value would be read in it (`shown_text.rs`), a row that was
/// not wrapped ended with `\n` after its last non-blank cell. With `cells`, the cell each byte
/// came from (`None` for a line end).
fn text_of(
    state: &State,
    lines: &Lines,
    (lo, hi): (u64, u64),
    ascii_only: bool,
    text: &mut Vec<u8>,
    mut cells: Option<&mut Vec<Option<(u64, usize)>>>,
) {
    for line in lo..=hi {
        let Some(row) = lines.row(state, line) else { continue };
        let row_cells = row.cells();
        let wrapped = row.wrapped();
        let end = if wrapped { row_cells.len() } else { shown_text::shown_end(row_cells) };
        let row_cells = &row_cells[..end];
        let layout = shown_text::append(row_cells, ascii_only, text);
        if let Some(cells) = cells.as_deref_mut() {
            shown_text::columns(row_cells, layout, ascii_only, line, cells);
        }
        if !wrapped {
            text.push(b'\n');
            if let Some(cells) = cells.as_deref_mut() {
                cells.push(None);
            }
        }
    }
}

/// Check rows `lo..=hi` and star every value found in them.
fn check_span(state: &mut State, redaction: &mut Redaction, lines: &Lines, span: (u64, u64)) {
    let Scratch { text, found, .. } = &mut redaction.scratch;
    text.clear();
    found.clear();
    let ascii_only = redaction.redactor.ascii_only();
    text_of(state, lines, span, ascii_only, text, None);
    redaction.redactor.find(text, found);
    text.fill(0);
    if found.is_empty() {
        return;
    }
    // Rare: work out which cells the values stand in, and star them.
    let mut cells = Vec::new();
    text.clear();
    text_of(state, lines, span, ascii_only, text, Some(&mut cells));
    text.fill(0);
    let mut starred: Vec<(u64, usize)> =
        found.iter().flat_map(|r| cells[r.clone()].iter().flatten().copied()).collect();
    starred.dedup();
    if let Some(oldest) = starred.iter().map(|&(line, _)| line).min() {
        let from = redaction.log.starred_from.get_or_insert(oldest);
        *from = (*from).min(oldest);
    }
    for (line, col) in starred {
        star(state, lines, line, col);
    }
}

/// Replace the character of one cell (screen or scrollback) with `*`, keeping its style and
/// layout; its combining marks go.
fn star(state: &mut State, lines: &Lines, line: u64, col: usize) {
    let starred = |cell: Cell| Cell::new('*', cell.flags() & !Cell::MARKS, cell.style());
    match line.checked_sub(lines.screen) {
        Some(i) => {
            let row = state.active.grid.row_mut(i as usize);
            let cell = row.cell(col);
            row.set(col, starred(cell));
        }
        None => {
            if let Some(mut row) = state.scrollback.get_absolute(line) {
                let cell = row.cell(col);
                row.set(col, starred(cell));
                state.scrollback.replace_absolute(line, &row);
            }
        }
    }
}

/// Check the spans around `changed` rows (absolute numbers, ascending), merged where they meet.
fn check_changed(state: &mut State, redaction: &mut Redaction, changed: &[u64]) {
    let lines = Lines::of(state);
    let mut spans = std::mem::take(&mut redaction.scratch.lines);
    spans.clear();
    for &line in changed {
        let (lo, hi) = reach(state, &lines, line, &*redaction.redactor);
        match spans.last_mut() {
            Some(last) if lo <= last.1 + 1 => last.1 = last.1.max(hi),
            _ => spans.push((lo, hi)),
        }
    }
    for &span in &spans {
        check_span(state, redaction, &lines, span);
    }
    redaction.scratch.lines = spans;
}

/// Whether a character (not ASCII) may show as nothing in a line of text such as a title: no
/// width, a control, or one that Unicode says to ignore or that fonts draw empty, whatever
/// width a terminal cell gives it. Leaving out more than shows only finds more.
fn shows_as_nothing(c: char) -> bool {
    matches!(c.width(), Some(0) | None)
        || matches!(
            u32::from(c),
            // Default ignorable code points (Unicode's DerivedCoreProperties).
            0xad | 0x34f | 0x61c | 0x115f..=0x1160 | 0x17b4..=0x17b5 | 0x180b..=0x180f
                | 0x200b..=0x200f | 0x202a..=0x202e | 0x2060..=0x206f | 0x3164
                | 0xfe00..=0xfe0f | 0xfeff | 0xffa0 | 0xfff0..=0xfff8 | 0x1bca0..=0x1bca3
                | 0x1d173..=0x1d17a | 0xe0000..=0xe0fff
                // Other format characters, which some fonts draw empty.
                | 0x600..=0x605 | 0x6dd | 0x70f | 0x890..=0x891 | 0x8e2 | 0x110bd | 0x110cd
                | 0x13430..=0x1343f
                // Line and paragraph separators.
                | 0x2028..=0x2029
        )
}

impl State {
    /// After a chunk: check the rows that changed, and clear their marks.
    pub(super) fn redact_changes(&mut self) {
        let Some(mut redaction) = self.redaction.take() else { return };
        if redaction.replayed.is_some() {
            // A replica: the rows the server starred come with the chunk, and the marks are
            // cleared here as they are there.
            let lines = self.lines();
            self.active.grid.clear_damage(0..lines);
        } else if self.active.grid.any_damage() {
            let screen = self.scrollback.pushed();
            let mut changed = std::mem::take(&mut redaction.scratch.changed);
            changed.clear();
            changed.extend(
                (0..self.lines())
                    .filter(|&i| self.active.grid.damaged(i))
                    .map(|i| screen + i as u64),
            );
            check_changed(self, &mut redaction, &changed);
            redaction.scratch.changed = changed;
            let lines = self.lines();
            self.active.grid.clear_damage(0..lines);
        }
        self.redaction = Some(redaction);
    }

    /// Before the top `n` rows scroll into the scrollback: when one of them changed, check
    /// every row that did (a screenful at a time as output scrolls, not a row at a time).
    pub(super) fn redact_leaving(&mut self, n: usize) {
        let n = n.min(self.lines());
        if (0..n).any(|i| self.active.grid.damaged(i)) {
            self.redact_changes();
        }
    }

    /// Star the values in `text` (decoded: a title, a notification, a path), as it shows:
    /// characters that may show as nothing (combining marks, joiners, variation selectors,
    /// format characters, line separators, fillers) do not hide a value, and are starred with
    /// it.
    pub(super) fn redact_text(&mut self, text: String) -> String {
        let Some(redaction) = self.redaction.as_mut() else { return text };
        // The shown text, and for each of its bytes where its character starts in `text`.
        let mut shown = Vec::with_capacity(text.len());
        let mut from = Vec::with_capacity(text.len());
        let mut utf8 = [0u8; 4];
        for (at, c) in text.char_indices() {
            if !c.is_ascii() && shows_as_nothing(c) {
                continue;
            }
            for &byte in c.encode_utf8(&mut utf8).as_bytes() {
                shown.push(byte);
                from.push(at);
            }
        }
        let mut found = Vec::new();
        redaction.find_text(&shown, &mut found);
        shown.fill(0);
        if found.is_empty() {
            return text;
        }
        let mut bytes = text.into_bytes();
        for range in found {
            let start = from[range.start];
            // Through the end of the last character, and the no-width ones after it.
            let end = from.get(range.end).copied().unwrap_or(bytes.len());
            bytes[start..end].fill(b'*');
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// Whether `bytes` (a decoded clipboard payload) hold a value.
    pub(super) fn holds_value(&mut self, bytes: &[u8]) -> bool {
        let Some(redaction) = self.redaction.as_mut() else { return false };
        let mut found = Vec::new();
        redaction.find_text(bytes, &mut found);
        !found.is_empty()
    }
}

#[cfg(test)]
#[path = "redact_tests.rs"]
mod tests;
