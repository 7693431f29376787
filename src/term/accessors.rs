//! Read-only accessors of the terminal for renderers, replay and tests: rows, cursor, modes,
//! styles, titles and the text of the screen.

use super::cell::{HyperlinkId, Style, StyleId};
use super::colors::{DynamicColor, Rgb};
use super::cursor::CursorShape;
use super::modes::{ModeState, Modes};
use super::row::Row;
use super::styles::Hyperlink;
use super::{TermSize, Terminal};

/// Where the cursor is and how it should be drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CursorView {
    pub row: usize,
    pub col: usize,
    pub visible: bool,
    /// `None`: the user's configured shape.
    pub shape: Option<CursorShape>,
    pub blinking: bool,
}

impl Terminal {
    pub fn size(&self) -> TermSize {
        TermSize { cols: self.state.cols(), lines: self.state.lines() }
    }

    pub fn cursor(&self) -> CursorView {
        let cursor = &self.state.active.cursor;
        let shape = self.state.window.cursor_shape;
        CursorView {
            row: cursor.row,
            col: cursor.col,
            visible: self.state.mode(Modes::SHOW_CURSOR),
            shape: shape.map(|(shape, _)| shape),
            blinking: shape.map_or(self.state.mode(Modes::BLINKING_CURSOR), |(_, b)| b),
        }
    }

    pub fn modes(&self) -> ModeState {
        self.state.modes
    }

    pub fn is_alt_screen(&self) -> bool {
        self.state.mode(Modes::ALT_SCREEN)
    }

    /// A visible row, 0 at the top of the screen.
    pub fn row(&self, line: usize) -> Option<&Row> {
        self.state.active.grid.rows().get(line)
    }

    pub fn rows(&self) -> &[Row] {
        self.state.active.grid.rows()
    }

    /// A digest of what the screen shows: every visible cell's character, layout and style,
    /// and how far the screen has scrolled. Output that leaves it the same (a frame redrawn as
    /// it was, the cursor moved or shown) left nothing new to see. The cursor is left out.
    /// Style ids are hashed as they are, so the rare compaction of the style table reads as a
    /// change once.
    pub fn screen_fingerprint(&self) -> u64 {
        let grid = &self.state.active.grid;
        let mut digest = Digest(grid.scrolled() ^ (u64::from(self.is_alt_screen()) << 63));
        for row in grid.rows() {
            for cell in row.cells() {
                digest.add(cell.digest_word());
            }
            for &(col, mark) in row.all_marks() {
                digest.add((u64::from(col) << 32) | u64::from(mark));
            }
            digest.add(u64::MAX);
        }
        digest.0
    }

    pub fn scrollback_len(&self) -> usize {
        self.state.scrollback.len()
    }

    /// A scrollback row, 0 being the oldest.
    pub fn scrollback_row(&self, index: usize) -> Option<Row> {
        self.state.scrollback.get(index)
    }

    /// The absolute number of the top screen row. Every row the screen and scrollback hold has
    /// a number that stays its own while output scrolls it up (until a resize reflows them):
    /// the scrollback holds `first_line()..screen_line()`, the screen the `lines` after.
    pub fn screen_line(&self) -> u64 {
        self.state.scrollback.pushed()
    }

    /// The absolute number of the oldest row kept.
    pub fn first_line(&self) -> u64 {
        self.screen_line() - self.scrollback_len() as u64
    }

    /// The row with absolute number `line`: borrowed from the screen, unpacked from the
    /// scrollback; `None` past either end.
    pub fn line(&self, line: u64) -> Option<std::borrow::Cow<'_, Row>> {
        use std::borrow::Cow;
        match line.checked_sub(self.screen_line()) {
            Some(row) => self.row(usize::try_from(row).ok()?).map(Cow::Borrowed),
            None => self.state.scrollback.get_absolute(line).map(Cow::Owned),
        }
    }

    pub fn style(&self, id: StyleId) -> &Style {
        self.state.styles.get(id)
    }

    pub fn hyperlink(&self, id: HyperlinkId) -> Option<&Hyperlink> {
        self.state.styles.link(id)
    }

    pub fn title(&self) -> Option<&str> {
        self.state.window.title.as_deref()
    }

    /// The working directory the program last reported (OSC 7).
    pub fn working_directory(&self) -> Option<&str> {
        self.state.window.cwd.as_deref()
    }

    /// A palette entry the program overrode (OSC 4), if any.
    pub fn palette_override(&self, index: u8) -> Option<Rgb> {
        self.state.colors.palette(index)
    }

    pub fn dynamic_color_override(&self, which: DynamicColor) -> Option<Rgb> {
        self.state.colors.dynamic(which)
    }

    /// Styles the style table holds (bounded by the live cells through compaction).
    pub fn style_count(&self) -> usize {
        self.state.styles.len()
    }

    /// The most styles the table has held at once: what a flood of new styles cost at worst.
    pub fn peak_style_count(&self) -> usize {
        self.state.styles.peak()
    }

    /// Replies and events dropped because a queue was full.
    pub fn dropped_outputs(&self) -> u64 {
        self.state.outbox.dropped()
    }

    /// The visible screen as text: one line per row, trailing blanks trimmed, the right halves
    /// of wide characters skipped, combining marks after their base; then `cursor ROW COL`.
    pub fn screen_text(&self) -> String {
        let mut out = String::new();
        for row in self.rows() {
            out.push_str(&row_text(row));
            out.push('\n');
        }
        let cursor = self.cursor();
        out.push_str(&format!("cursor {} {}\n", cursor.row, cursor.col));
        out
    }

    /// The scrollback as text, oldest line first, one line per row (as `screen_text` rows).
    pub fn scrollback_text(&self) -> String {
        let mut out = String::new();
        for row in self.state.scrollback.iter() {
            out.push_str(&row_text(&row));
            out.push('\n');
        }
        out
    }

    /// Bytes used by the scrollback's rows (cells, row headers and marks), for memory reports.
    pub fn scrollback_bytes(&self) -> usize {
        self.state.scrollback.heap_bytes()
    }
}

/// A row's text: fillers skipped, marks kept, trailing spaces trimmed.
pub fn row_text(row: &Row) -> String {
    let mut text = String::with_capacity(row.len());
    for (col, cell) in row.cells().iter().enumerate() {
        if cell.is_filler() {
            continue;
        }
        text.push(cell.ch());
        text.extend(row.marks(col));
    }
    let trimmed = text.trim_end_matches(' ').len();
    text.truncate(trimmed);
    text
}

/// A fast non-cryptographic digest (the multiply-rotate of rustc's FxHasher): a change it
/// misses only costs one sample of a pane reading as idle.
struct Digest(u64);

impl Digest {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}
