//! The terminal's state and the operations escape sequences are made of.
//!
//! `State` is what the vte parser drives (see `perform.rs`); each method here is one primitive
//! (print, line feed, erase, scroll, …) with the semantics of xterm as Alacritty implements them,
//! except where a comment says why we differ. Erasing and editing live in `erase.rs`. Invariants kept by every method: the cursor is
//! inside the grid, and the scroll region is a non-empty range inside the grid.

use std::ops::Range;

use unicode_width::UnicodeWidthChar;

use super::cell::{Cell, Style};
use super::colors::ColorOverrides;
use super::cursor::{Charset, Cursor, CursorShape, Pen};
use super::events::{Outbox, TermEvent};
use super::grid::Grid;
use super::modes::{ModeState, Modes};
use super::scrollback::Scrollback;
use super::styles::StyleTable;
use super::tabs::TabStops;

/// One screen: its rows, its cursor and what DECSC saved on it.
#[derive(Debug)]
pub struct Screen {
    pub grid: Grid,
    pub cursor: Cursor,
    pub saved: Cursor,
}

impl Screen {
    fn new(cols: usize, lines: usize) -> Screen {
        Screen {
            grid: Grid::new(cols, lines),
            cursor: Cursor::default(),
            saved: Default::default(),
        }
    }
}

/// What the program set about the window rather than the grid.
#[derive(Debug, Default)]
pub struct WindowState {
    pub title: Option<String>,
    pub title_stack: Vec<Option<String>>,
    pub cwd: Option<String>,
    /// DECSCUSR; `None` is the user's configured default.
    pub cursor_shape: Option<(CursorShape, bool)>,
}

/// The three alternate-screen modes, which differ in clearing and cursor saving.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AltScreenMode {
    /// ?47: switch only.
    Plain,
    /// ?1047: clear the alternate screen when leaving it.
    ClearOnExit,
    /// ?1049: save the cursor and clear the alternate screen when entering it.
    SaveCursor,
}

#[derive(Debug)]
pub struct State {
    /// The screen being shown and written to.
    pub active: Screen,
    /// The other screen (the primary while the alternate screen is shown, and vice versa).
    pub inactive: Screen,
    pub scrollback: Scrollback,
    pub styles: StyleTable,
    pub modes: ModeState,
    /// Rows [start, end) that scroll (DECSTBM).
    pub region: Range<usize>,
    pub tabs: TabStops,
    pub outbox: Outbox,
    pub window: WindowState,
    pub colors: ColorOverrides,
    /// The last printed character, for REP.
    pub last_printed: Option<char>,
    /// The OSC string being parsed was cut for length: its dispatch is to be ignored.
    pub discard_next_osc: bool,
    /// An OSC 99 notification sent in chunks, until its last one.
    pub kitty_notification: Option<super::osc::KittyNotification>,
    /// For a pane with secrets: what finds them in the model (`redact.rs`).
    pub(super) redaction: Option<super::redact::Redaction>,
    /// Rows written only by text the stream masker read whole, which the model's check skips.
    pub(super) clean_runs: super::clean_run::CleanRuns,
    /// Widths of the characters printed lately (`widths.rs`).
    widths: super::widths::Widths,
}

/// Sizes are clamped to this range so that no input can make the grid empty or absurdly large.
pub const MAX_DIMENSION: usize = 4096;

impl State {
    pub fn new(cols: usize, lines: usize, scrollback_limit: usize) -> State {
        let cols = cols.clamp(1, MAX_DIMENSION);
        let lines = lines.clamp(1, MAX_DIMENSION);
        State {
            active: Screen::new(cols, lines),
            inactive: Screen::new(cols, lines),
            scrollback: Scrollback::new(scrollback_limit),
            styles: StyleTable::default(),
            modes: ModeState::default(),
            region: 0..lines,
            tabs: TabStops::new(cols),
            outbox: Outbox::default(),
            window: WindowState::default(),
            colors: ColorOverrides::default(),
            last_printed: None,
            discard_next_osc: false,
            kitty_notification: None,
            redaction: None,
            clean_runs: Default::default(),
            widths: Default::default(),
        }
    }

    #[inline]
    pub fn cols(&self) -> usize {
        self.active.grid.cols()
    }

    #[inline]
    pub fn lines(&self) -> usize {
        self.active.grid.lines()
    }

    #[inline]
    pub fn mode(&self, mode: Modes) -> bool {
        self.modes.flags.contains(mode)
    }

    /// A blank cell in the pen's erase style.
    #[inline]
    pub fn blank(&mut self) -> Cell {
        let pen = &mut self.active.cursor.pen;
        let id = *pen.blank.get_or_insert_with(|| self.styles.intern(pen.style.erased()));
        Cell::blank(id)
    }

    // ---- printing -------------------------------------------------------------------------

    /// Print a character the parser read as text.
    #[inline(always)]
    pub fn print(&mut self, c: char) {
        self.print_char(c, true);
    }

    /// `from_text`: the character is the stream's own (not REP), so it may go on with a clean
    /// run (`clean_run.rs`).
    #[inline(always)]
    fn print_char(&mut self, c: char, from_text: bool) {
        self.last_printed = Some(c);
        let Screen { grid, cursor, .. } = &mut self.active;
        let charset = cursor.charsets.current();
        // The hot path: a character that lands on plain cells, in the ASCII set, not in insert
        // mode and not wrapping. Everything else takes `print_slow`.
        if charset == Charset::Ascii
            && !cursor.pending_wrap
            && !self.modes.flags.contains(Modes::INSERT)
        {
            let width = match c {
                ' '..='~' => 1,
                _ => self.widths.of(c).unwrap_or(0),
            };
            let (cols, col) = (grid.cols(), cursor.col);
            if (1..=2).contains(&width) && col + width <= cols {
                // U+FFFD stands for bytes the stream masker saw as something else.
                let eligible = from_text && c != '\u{fffd}';
                let row = cursor.row;
                let clean = self.clean_runs.admit(eligible, grid, (row, col));
                let cells = if clean { grid.row_in_clean_run(row) } else { grid.row_mut(row) };
                let cells = cells.cells_mut();
                let plain = if width == 1 {
                    cells[col].flags() == 0
                } else {
                    cells[col].flags() | cells[col + 1].flags() == 0
                };
                if plain {
                    let id = cursor.pen.id_in(&mut self.styles);
                    if width == 1 {
                        cells[col] = Cell::new(c, 0, id);
                    } else {
                        cells[col] = Cell::new(c, Cell::WIDE, id);
                        cells[col + 1] = Cell::new(' ', Cell::WIDE_SPACER, id);
                    }
                    let next = col + width;
                    if next < cols {
                        cursor.col = next;
                    } else {
                        cursor.col = cols - 1;
                        cursor.pending_wrap = true;
                    }
                    return;
                }
            }
        }
        self.print_slow(c, charset);
    }

    fn print_slow(&mut self, c: char, charset: Charset) {
        self.clean_runs.end();
        let Some(width) = self.widths.of(c) else { return };
        if width == 0 {
            self.attach_mark(c);
            return;
        }
        let c = charset.map(c);
        if self.active.cursor.pending_wrap {
            self.wrap_line();
        }
        let cols = self.cols();
        if width == 2 && cols < 2 {
            // A wide character cannot exist in a one-column grid; dropping it keeps every row
            // exactly `cols` cells wide.
            return;
        }
        if self.mode(Modes::INSERT) && self.active.cursor.col + width < cols {
            let blank = self.blank();
            let cursor = self.active.cursor;
            self.active.grid.row_mut(cursor.row).insert_blank(cursor.col, width, blank);
        }
        if width == 1 {
            self.write_cell(c, 0);
        } else {
            if self.active.cursor.col + 1 >= cols {
                if !self.mode(Modes::AUTOWRAP) {
                    self.active.cursor.pending_wrap = true;
                    return;
                }
                // The wide character does not fit: leave a filler and continue on the next row.
                self.write_cell(' ', Cell::LEADING_SPACER);
                self.wrap_line();
            }
            self.write_cell(c, Cell::WIDE);
            self.active.cursor.col += 1;
            self.write_cell(' ', Cell::WIDE_SPACER);
        }
        let cursor = &mut self.active.cursor;
        if cursor.col + 1 < cols {
            cursor.col += 1;
        } else {
            cursor.pending_wrap = true;
        }
    }

    /// Write one cell at the cursor, first breaking up any wide character it overlaps.
    fn write_cell(&mut self, c: char, flags: u32) {
        let Screen { grid, cursor, .. } = &mut self.active;
        let (line, col) = (cursor.row, cursor.col);
        let last_col = grid.cols() - 1;
        let old = grid.row(line).cell(col);
        if old.has(Cell::WIDE | Cell::WIDE_SPACER) {
            // Only layout flags change on the neighbours, so a wrap on their row survives.
            let row = grid.row_mut(line);
            if old.has(Cell::WIDE) && col < last_col {
                row.cells_mut()[col + 1].set_flag(Cell::WIDE_SPACER, false);
            } else if col > 0 {
                // The wide character this half belonged to loses its glyph (other layout flags
                // stay: the half may have been orphaned by DCH, as in Alacritty).
                let prev = row.cell(col - 1);
                let flags = prev.flags() & !(Cell::WIDE | Cell::MARKS);
                row.set(col - 1, Cell::new(' ', flags, prev.style()));
            }
            if col <= 1 && line > 0 {
                grid.row_mut(line - 1).cells_mut()[last_col].set_flag(Cell::LEADING_SPACER, false);
            }
        }
        let id = cursor.pen.id_in(&mut self.styles);
        grid.row_mut(line).set(col, Cell::new(c, flags, id));
    }

    /// A zero-width character joins the character before the cursor.
    fn attach_mark(&mut self, mark: char) {
        let Screen { grid, cursor, .. } = &mut self.active;
        let mut col = cursor.col;
        if !cursor.pending_wrap {
            col = col.saturating_sub(1);
        }
        let row = grid.row_mut(cursor.row);
        if row.cell(col).has(Cell::WIDE_SPACER) {
            col = col.saturating_sub(1);
        }
        row.push_mark(col, mark);
    }

    /// Move to the start of the next row because the text continues there.
    pub fn wrap_line(&mut self) {
        if !self.mode(Modes::AUTOWRAP) {
            return;
        }
        let Cursor { row, col, .. } = self.active.cursor;
        // The mark goes on the cursor's cell, which is the last column unless a CBT moved the
        // cursor while the last-column flag was set (then, as in Alacritty, the row does not
        // count as wrapped until that cell reaches the end).
        self.active.grid.row_mut(row).cells_mut()[col].set_flag(Cell::WRAP, true);
        if row + 1 >= self.region.end {
            self.linefeed();
        } else {
            self.active.cursor.row += 1;
        }
        self.active.cursor.col = 0;
        self.active.cursor.pending_wrap = false;
    }

    /// REP: print the last printed character again.
    /// A combining mark is not repeated: it is not a graphic character of its own, and
    /// repeating one would only pile marks onto a cell.
    pub fn repeat_last(&mut self, count: usize) {
        if let Some(c) = self.last_printed.filter(|c| c.width() != Some(0)) {
            for _ in 0..count {
                self.print_char(c, false);
            }
        }
    }

    // ---- cursor motion --------------------------------------------------------------------

    /// LF, VT, FF and IND: down one row, scrolling at the bottom of the region.
    pub fn linefeed(&mut self) {
        let next = self.active.cursor.row + 1;
        if next == self.region.end {
            self.scroll_up(1);
        } else if next < self.lines() {
            self.active.cursor.row = next;
        }
    }

    pub fn carriage_return(&mut self) {
        self.active.cursor.col = 0;
        self.active.cursor.pending_wrap = false;
    }

    pub fn backspace(&mut self) {
        let cursor = &mut self.active.cursor;
        if cursor.col > 0 {
            cursor.col -= 1;
            cursor.pending_wrap = false;
        }
    }

    /// RI: up one row, scrolling down at the top of the region.
    pub fn reverse_index(&mut self) {
        if self.active.cursor.row == self.region.start {
            self.scroll_down(1);
        } else {
            self.active.cursor.row = self.active.cursor.row.saturating_sub(1);
        }
    }

    /// CUP: absolute position, relative to the region in origin mode.
    pub fn goto(&mut self, row: usize, col: usize) {
        let (offset, max_row) = if self.mode(Modes::ORIGIN) {
            (self.region.start, self.region.end - 1)
        } else {
            (0, self.lines() - 1)
        };
        let cursor = &mut self.active.cursor;
        cursor.row = row.saturating_add(offset).min(max_row);
        cursor.col = col.min(self.active.grid.cols() - 1);
        cursor.pending_wrap = false;
    }

    /// VPA: absolute row (origin-relative), same column.
    pub fn goto_row(&mut self, row: usize) {
        let col = self.active.cursor.col;
        self.goto(row, col);
    }

    /// CHA/HPA: absolute column, same row.
    pub fn goto_col(&mut self, col: usize) {
        let cursor = &mut self.active.cursor;
        cursor.col = col.min(self.active.grid.cols() - 1);
        cursor.pending_wrap = false;
    }

    /// CUU: up, stopping at the top margin when starting inside the region.
    pub fn move_up(&mut self, n: usize) {
        let cursor = &mut self.active.cursor;
        let top = if cursor.row >= self.region.start { self.region.start } else { 0 };
        cursor.row = cursor.row.saturating_sub(n).max(top);
        cursor.pending_wrap = false;
    }

    /// CUD: down, stopping at the bottom margin when starting inside the region.
    pub fn move_down(&mut self, n: usize) {
        let lines = self.lines();
        let cursor = &mut self.active.cursor;
        let bottom = if cursor.row < self.region.end { self.region.end - 1 } else { lines - 1 };
        cursor.row = cursor.row.saturating_add(n).min(bottom);
        cursor.pending_wrap = false;
    }

    pub fn move_forward(&mut self, n: usize) {
        let last = self.cols() - 1;
        let cursor = &mut self.active.cursor;
        cursor.col = cursor.col.saturating_add(n).min(last);
        cursor.pending_wrap = false;
    }

    pub fn move_backward(&mut self, n: usize) {
        let cursor = &mut self.active.cursor;
        cursor.col = cursor.col.saturating_sub(n);
        cursor.pending_wrap = false;
    }

    /// HT: to the next tab stop. A tab after the last column acts as a line wrap (Alacritty).
    pub fn tab(&mut self) {
        if self.active.cursor.pending_wrap {
            self.wrap_line();
            return;
        }
        self.forward_tabs(1);
    }

    /// CHT: forward `count` tab stops (or to the last column), keeping the last-column flag.
    pub fn forward_tabs(&mut self, count: usize) {
        for _ in 0..count.min(self.cols()) {
            self.active.cursor.col = self.tabs.next(self.active.cursor.col);
        }
    }

    /// CBT: back to the previous tab stop; with none left of the cursor it stays (Alacritty).
    pub fn back_tab(&mut self, count: usize) {
        for _ in 0..count {
            match self.tabs.prev(self.active.cursor.col) {
                Some(col) => self.active.cursor.col = col,
                None => break,
            }
        }
    }

    /// DECSC: position, pen, character sets and the last-column flag. Origin mode is not saved
    /// (DEC STD 070 saves it; Alacritty does not, and we match the peer programs are tested on).
    pub fn save_cursor(&mut self) {
        self.active.saved = self.active.cursor;
    }

    pub fn restore_cursor(&mut self) {
        self.active.cursor = self.active.saved;
        self.clamp_cursor();
    }

    pub fn clamp_cursor(&mut self) {
        let (cols, lines) = (self.cols(), self.lines());
        let cursor = &mut self.active.cursor;
        cursor.row = cursor.row.min(lines - 1);
        cursor.col = cursor.col.min(cols - 1);
    }

    // ---- scrolling ------------------------------------------------------------------------

    /// SU, and the scroll at the bottom of the region.
    pub fn scroll_up(&mut self, n: usize) {
        let start = self.region.start;
        self.scroll_up_from(start, n, true);
    }

    /// SD, and the scroll at the top of the region.
    pub fn scroll_down(&mut self, n: usize) {
        let start = self.region.start;
        self.scroll_down_from(start, n);
    }

    /// Scroll rows [origin, region end) up by `n`. Rows leaving the top of the screen go to the
    /// scrollback when `to_history` and this is the primary screen.
    fn scroll_up_from(&mut self, origin: usize, n: usize, to_history: bool) {
        let n = n.min(self.region.len());
        let to_history = to_history && origin == 0 && !self.mode(Modes::ALT_SCREEN);
        if to_history && self.redaction.is_some() {
            self.redact_leaving(n);
        }
        let blank = self.blank();
        let history = if to_history { Some(&mut self.scrollback) } else { None };
        self.active.grid.scroll_up(origin..self.region.end, n, blank, history);
    }

    fn scroll_down_from(&mut self, origin: usize, n: usize) {
        let n = n.min(self.region.len());
        let blank = self.blank();
        self.active.grid.scroll_down(origin..self.region.end, n, blank);
    }

    /// IL: insert blank rows at the cursor, inside the region.
    pub fn insert_lines(&mut self, n: usize) {
        let row = self.active.cursor.row;
        if self.region.contains(&row) {
            self.scroll_down_from(row, n);
        }
    }

    /// DL: delete rows at the cursor, inside the region. Deleted rows never enter the scrollback
    /// (Alacritty sends them there when the cursor is on the top row; they were not scrolled off).
    pub fn delete_lines(&mut self, n: usize) {
        let row = self.active.cursor.row;
        if self.region.contains(&row) {
            self.scroll_up_from(row, n, false);
        }
    }

    /// DECSTBM.
    pub fn set_region(&mut self, top: usize, bottom: Option<usize>) {
        let lines = self.lines();
        let bottom = bottom.unwrap_or(lines);
        let top = top.max(1);
        if top >= bottom {
            return;
        }
        // Clamped after the check, as Alacritty does: `5;12r` on 5 rows is the last row alone.
        // A region wholly below the screen is refused (Alacritty keeps it, empty, and then a
        // line feed on the last row does nothing).
        let region = (top - 1).min(lines)..bottom.min(lines);
        if region.is_empty() {
            return;
        }
        self.region = region;
        self.goto(0, 0);
    }

    // ---- pen ------------------------------------------------------------------------------

    pub fn set_pen(&mut self, style: Style) {
        let pen = &mut self.active.cursor.pen;
        if pen.style == style {
            return;
        }
        if style == Style::default() {
            // SGR 0 ends most colored spans: the default style needs no lookup.
            *pen = Pen::default();
            return;
        }
        *pen = Pen { style, id: None, blank: None };
    }

    // ---- screens --------------------------------------------------------------------------

    pub fn enter_alt_screen(&mut self, how: AltScreenMode) {
        if self.mode(Modes::ALT_SCREEN) {
            return;
        }
        // The screen going out of sight is checked first: its changes are this chunk's, and
        // the check after the chunk reads only the screen shown.
        self.redact_changes();
        if how == AltScreenMode::SaveCursor {
            self.save_cursor();
        }
        self.inactive.cursor = self.active.cursor;
        if how == AltScreenMode::SaveCursor {
            let (lines, blank) = (self.lines(), self.blank());
            self.inactive.grid.reset_rows(0..lines, blank);
        }
        std::mem::swap(&mut self.active, &mut self.inactive);
        self.modes.flags.set(Modes::ALT_SCREEN, true);
    }

    pub fn leave_alt_screen(&mut self, how: AltScreenMode) {
        if !self.mode(Modes::ALT_SCREEN) {
            return;
        }
        self.redact_changes();
        if how == AltScreenMode::ClearOnExit {
            let (lines, blank) = (self.lines(), self.blank());
            self.active.grid.reset_rows(0..lines, blank);
        }
        let alt_cursor = self.active.cursor;
        std::mem::swap(&mut self.active, &mut self.inactive);
        if how != AltScreenMode::SaveCursor {
            // ?47 and ?1047 share one cursor between the screens.
            self.active.cursor = alt_cursor;
        }
        self.modes.flags.set(Modes::ALT_SCREEN, false);
    }

    /// RIS: back to the state of a new terminal of the same size. Queued replies and events
    /// survive: they were produced before the reset.
    pub fn full_reset(&mut self) {
        let outbox = std::mem::take(&mut self.outbox);
        let redaction = self.redaction.take();
        let clean_runs = self.clean_runs.enabled;
        let title_was_set = self.window.title.is_some();
        *self = State::new(self.cols(), self.lines(), self.scrollback.limit());
        self.outbox = outbox;
        self.redaction = redaction;
        self.clean_runs.enabled = clean_runs;
        if title_was_set {
            self.outbox.event(TermEvent::Title(None));
        }
    }

    // ---- housekeeping ---------------------------------------------------------------------

    /// Compact the style table when it has grown; called between chunks, never mid-sequence.
    pub fn compact_styles_if_needed(&mut self) {
        if !self.styles.wants_compaction() {
            return;
        }
        // A pen's style may name a hyperlink, which compaction renumbers: every pen is in the
        // table first, and its style is read back from it after.
        for screen in [&mut self.active, &mut self.inactive] {
            for pen in [&mut screen.cursor.pen, &mut screen.saved.pen] {
                pen.id_in(&mut self.styles);
            }
        }
        let mut live = self.styles.unmarked();
        let mut mark = |id: super::cell::StyleId| {
            if let Some(slot) = live.get_mut(id.index()) {
                *slot = true;
            }
        };
        let screens = [&self.active, &self.inactive];
        for screen in screens {
            for row in screen.grid.rows() {
                row.cells().iter().for_each(|c| mark(c.style()));
            }
            for pen in [screen.cursor.pen, screen.saved.pen] {
                pen.id.map(&mut mark);
                pen.blank.map(&mut mark);
            }
        }
        self.scrollback.styles().for_each(&mut mark);
        self.styles.compact(live);
        let styles = &self.styles;
        let remap = styles.remap();
        let fix = |pen: &mut Pen| {
            pen.id = pen.id.map(|id| remap[id.index()]);
            pen.blank = pen.blank.map(|blank| remap[blank.index()]);
            // The pen's hyperlink id was renumbered with the table.
            if let Some(id) = pen.id {
                pen.style = *styles.get(id);
            }
        };
        for screen in [&mut self.active, &mut self.inactive] {
            screen.grid.remap_styles(remap);
            fix(&mut screen.cursor.pen);
            fix(&mut screen.saved.pen);
        }
        self.scrollback.remap_styles(remap);
    }
}
