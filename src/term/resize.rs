//! Resizing: the primary screen reflows (wrapped lines are re-joined and re-wrapped at the new
//! width, with the scrollback), the alternate screen is cut or padded.
//!
//! Invariants after a resize: every row of both screens and the scrollback is exactly `cols`
//! wide; the cursor stays on the same logical line where it can; the scrollback stays within its
//! limit; nothing panics on any size (sizes are clamped to 1..=MAX_DIMENSION).

use super::cell::Cell;
use super::row::Row;
use super::scrollback::Scrollback;
use super::state::{Screen, State, MAX_DIMENSION};

pub fn resize(state: &mut State, cols: usize, lines: usize) {
    let cols = cols.clamp(1, MAX_DIMENSION);
    let lines = lines.clamp(1, MAX_DIMENSION);
    if cols == state.cols() && lines == state.lines() {
        return;
    }
    let alt = state.mode(super::modes::Modes::ALT_SCREEN);
    let (primary, alternate) = if alt {
        (&mut state.inactive, &mut state.active)
    } else {
        (&mut state.active, &mut state.inactive)
    };
    reflow_primary(primary, &mut state.scrollback, cols, lines);
    resize_plain(alternate, cols, lines);
    for screen in [&mut state.active, &mut state.inactive] {
        let saved = &mut screen.saved;
        saved.row = saved.row.min(lines - 1);
        saved.col = saved.col.min(cols - 1);
        saved.pending_wrap = false;
    }
    state.region = 0..lines;
    state.tabs.resize(cols);
}

/// The alternate screen: rows are cut or padded; rows above the cursor go first when it
/// shrinks, so the cursor's row stays visible.
fn resize_plain(screen: &mut Screen, cols: usize, lines: usize) {
    let mut rows = screen.grid.take_rows();
    for row in &mut rows {
        row.resize(cols, Cell::default());
    }
    let cursor = &mut screen.cursor;
    if rows.len() > lines {
        let from_top = (cursor.row + 1).saturating_sub(lines);
        rows.drain(..from_top);
        cursor.row -= from_top;
        rows.truncate(lines);
    }
    while rows.len() < lines {
        rows.push(Row::new(cols, Cell::default()));
    }
    cursor.row = cursor.row.min(lines - 1);
    // The last-column flag survives a change of height, not of width.
    cursor.pending_wrap &= cursor.col + 1 == cols;
    cursor.col = cursor.col.min(cols - 1);
    screen.grid.replace(rows, cols);
}

/// A position as (row index in the list of all rows, column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Spot {
    row: usize,
    col: usize,
}

fn reflow_primary(screen: &mut Screen, history: &mut Scrollback, cols: usize, lines: usize) {
    if cols == screen.grid.cols() {
        refit_height(screen, history, lines);
    } else {
        reflow_all(screen, history, cols, lines);
    }
}

/// A change of height only: nothing rewraps, so the scrollback stays packed except for the rows
/// that come back to the screen. Same result as `reflow_all` (a test holds them together), at
/// the cost of the rows that move instead of the whole scrollback: a window dragged taller or
/// shorter must not unpack 10,000 rows per step.
fn refit_height(screen: &mut Screen, history: &mut Scrollback, lines: usize) {
    let cols = screen.grid.cols();
    let mut rows = screen.grid.take_rows();
    let cursor_row = screen.cursor.row;
    // Rows that move from the scrollback onto the screen (positive) or the other way.
    let moved_down = if rows.len() > lines {
        let excess = rows.len() - lines;
        let below_cursor = rows.len() - 1 - cursor_row;
        let dropped = excess.min(below_cursor);
        rows.truncate(rows.len() - dropped);
        let top = excess - dropped;
        for row in rows.drain(..top) {
            history.push(row);
        }
        -(top as isize)
    } else {
        let deficit = lines - rows.len();
        let pulled = history.pop_newest(deficit);
        let count = pulled.len();
        rows.splice(0..0, pulled);
        rows.extend((count..deficit).map(|_| Row::new(cols, Cell::default())));
        count as isize
    };
    screen.grid.replace(rows, cols);
    let shift = |row: usize| row.saturating_add_signed(moved_down);
    screen.cursor.row = shift(cursor_row).min(lines - 1);
    let saved = &mut screen.saved;
    // As `reflow_all` does: the saved cursor's last-column flag becomes its column.
    saved.col = (saved.col + usize::from(saved.pending_wrap)).min(cols - 1);
    saved.row = shift(saved.row).min(lines - 1);
    saved.pending_wrap = false;
}

fn reflow_all(screen: &mut Screen, history: &mut Scrollback, cols: usize, lines: usize) {
    let old_cols = screen.grid.cols();
    let mut all = history.drain_all();
    let history_len = all.len();
    all.extend(screen.grid.take_rows());
    let (cursor, saved) = (screen.cursor, screen.saved);
    let spot_of = |c: super::cursor::Cursor| Spot {
        row: history_len + c.row,
        col: c.col + usize::from(c.pending_wrap),
    };
    let (mut cursor_spot, mut saved_spot) = (spot_of(cursor), spot_of(saved));
    let mut top_spot = Spot { row: history_len, col: 0 };
    if cols != old_cols {
        let keep = history.limit() + lines;
        let spots = &mut [&mut cursor_spot, &mut top_spot, &mut saved_spot];
        all = rewrap(all, cols, keep, spots);
    }
    // A cursor that ends up just past a full row keeps the last-column flag there.
    let pending_wrap = cursor_spot.col >= cols;
    cursor_spot.col = cursor_spot.col.min(cols - 1);

    // Fit the old screen's rows to the new height, keeping the cursor visible: drop rows below
    // the cursor first, then send rows off the top into the scrollback; when growing, pull rows
    // back from the scrollback before adding blank ones at the bottom.
    let mut screen_start = top_spot.row.min(cursor_spot.row);
    let screen_rows = all.len() - screen_start;
    if screen_rows > lines {
        let excess = screen_rows - lines;
        let below_cursor = all.len() - 1 - cursor_spot.row;
        let dropped = excess.min(below_cursor);
        all.truncate(all.len() - dropped);
        screen_start += excess - dropped;
    } else {
        let deficit = lines - screen_rows;
        let pulled = deficit.min(screen_start);
        screen_start -= pulled;
        for _ in 0..deficit - pulled {
            all.push(Row::new(cols, Cell::default()));
        }
    }
    let screen_rows: Vec<Row> = all.drain(screen_start..).collect();
    history.refill(all);
    screen.grid.replace(screen_rows, cols);
    screen.cursor.row = cursor_spot.row - screen_start;
    screen.cursor.col = cursor_spot.col;
    screen.cursor.pending_wrap = pending_wrap;
    screen.saved.row = saved_spot.row.saturating_sub(screen_start).min(lines - 1);
    screen.saved.col = saved_spot.col.min(cols - 1);
    screen.saved.pending_wrap = false;
}

/// Re-join wrapped rows into logical lines and wrap them again at `cols`, moving each spot
/// with the cell it was on. Only about the newest `keep` rows are kept: narrowing a long
/// scrollback a lot would otherwise build millions of rows only to drop them.
fn rewrap(rows: Vec<Row>, cols: usize, keep: usize, spots: &mut [&mut Spot]) -> Vec<Row> {
    let mut out = Vec::with_capacity(rows.len());
    // Rows dropped from the front of `out` so far; spots count them (absolute row numbers).
    let mut dropped = 0;
    let mut line = LogicalLine::default();
    // For each spot: its offset in the logical line being collected, once found.
    let mut pending: Vec<Option<usize>> = vec![None; spots.len()];
    // The rows the spots were on before the rewrap (flush moves the spots themselves).
    let old: Vec<Spot> = spots.iter().map(|s| **s).collect();
    for (index, row) in rows.into_iter().enumerate() {
        let wrapped = row.wrapped();
        for (spot, offset) in old.iter().zip(pending.iter_mut()) {
            if spot.row == index {
                *offset = Some(line.cells.len() + spot.col);
            }
        }
        line.push_row(row);
        if !wrapped {
            line.flush(cols, &mut out, dropped, spots, &mut pending);
            if out.len() > 2 * keep.max(1) {
                let excess = out.len() - keep;
                out.drain(..excess);
                dropped += excess;
            }
        }
    }
    if !line.cells.is_empty() || pending.iter().any(Option::is_some) {
        line.flush(cols, &mut out, dropped, spots, &mut pending);
    }
    for spot in spots.iter_mut() {
        spot.row = spot.row.saturating_sub(dropped);
    }
    out
}

#[derive(Default)]
struct LogicalLine {
    cells: Vec<Cell>,
    marks: Vec<(usize, char)>,
}

impl LogicalLine {
    fn push_row(&mut self, row: Row) {
        let wrapped = row.wrapped();
        let (mut cells, marks) = row.into_parts();
        // Wrap and mark flags are re-derived when the line is wrapped again.
        for cell in &mut cells {
            cell.set_flag(Cell::WRAP | Cell::MARKS, false);
        }
        // A filler left where a wide character did not fit is not content.
        if wrapped && cells.last().is_some_and(|c| c.has(Cell::LEADING_SPACER)) {
            cells.pop();
        }
        let (base, len) = (self.cells.len(), cells.len());
        let marks = marks.into_iter().filter(|(col, _)| (*col as usize) < len);
        self.marks.extend(marks.map(|(col, m)| (base + col as usize, m)));
        self.cells.extend(cells);
    }

    /// Emit the line as rows of `cols` cells; resolve the spots that pointed into it.
    fn flush(
        &mut self,
        cols: usize,
        out: &mut Vec<Row>,
        dropped: usize,
        spots: &mut [&mut Spot],
        pending: &mut [Option<usize>],
    ) {
        let content = self.cells.iter().rposition(|c| !c.is_default_blank()).map_or(0, |i| i + 1);
        let mut row: Vec<Cell> = Vec::with_capacity(cols);
        let mut marks: Vec<(usize, char)> = Vec::new();
        // Where each source offset landed, for the spots.
        let mut landed: Vec<(usize, usize)> = Vec::with_capacity(content);
        // Rows keep marks in arrival order; a stable sort by position keeps each cell's order.
        self.marks.sort_by_key(|(offset, _)| *offset);
        let mut mark_iter = std::mem::take(&mut self.marks).into_iter().peekable();
        let mut i = 0;
        while i < content {
            let mut cell = self.cells[i];
            // A one-column grid cannot hold a wide character: it becomes a blank.
            let squeezed = cols < 2 && cell.has(Cell::WIDE);
            if squeezed {
                cell = Cell::blank(cell.style());
            }
            let wide = cell.has(Cell::WIDE);
            if row.len() == cols || (wide && row.len() + 1 == cols) {
                if row.len() + 1 == cols {
                    row.push(Cell::new(' ', Cell::LEADING_SPACER, cell.style()));
                }
                push_row(out, std::mem::take(&mut row), &mut marks, true, cols);
            }
            let at = (out.len(), row.len());
            landed.push(at);
            while mark_iter.peek().is_some_and(|(offset, _)| *offset < i) {
                mark_iter.next();
            }
            while let Some((_, m)) = mark_iter.next_if(|(offset, _)| *offset == i) {
                marks.push((row.len(), m));
            }
            row.push(cell);
            let follows = self.cells.get(i + 1).filter(|c| c.has(Cell::WIDE_SPACER));
            if let (true, Some(&spacer)) = (wide || squeezed, follows) {
                if wide {
                    landed.push((out.len(), row.len()));
                    row.push(spacer);
                } else {
                    landed.push(at);
                }
                i += 1;
            }
            i += 1;
        }
        let end = (out.len(), row.len());
        push_row(out, row, &mut marks, false, cols);
        for (spot, offset) in spots.iter_mut().zip(pending.iter_mut()) {
            let Some(offset) = offset.take() else {
                continue;
            };
            let (row, col) = match landed.get(offset) {
                Some(&at) => at,
                // Past the content: keep the distance from its end, on its last row.
                None => (end.0, end.1 + (offset - content)),
            };
            spot.row = dropped + row;
            spot.col = col;
        }
        self.cells.clear();
    }
}

fn push_row(
    out: &mut Vec<Row>,
    mut cells: Vec<Cell>,
    marks: &mut Vec<(usize, char)>,
    wrapped: bool,
    cols: usize,
) {
    cells.resize(cols, Cell::default());
    let mut row = Row::from_cells(cells);
    row.set_wrapped(wrapped);
    for (col, m) in marks.drain(..) {
        row.push_mark(col, m);
    }
    out.push(row);
}

#[cfg(test)]
mod tests {
    use crate::term::{TermConfig, TermSize, Terminal};

    /// Everything a height change may touch: screen, scrollback, both cursors.
    fn snapshot(term: &Terminal) -> String {
        let screen = &term.state.active;
        format!(
            "{}{}cursor {:?}\nsaved {:?}\n",
            term.scrollback_text(),
            term.screen_text(),
            (screen.cursor.row, screen.cursor.col, screen.cursor.pending_wrap),
            (screen.saved.row, screen.saved.col, screen.saved.pending_wrap),
        )
    }

    #[test]
    fn a_height_change_refits_exactly_as_a_full_reflow_would() {
        let streams: [&[u8]; 5] = [
            b"one\r\ntwo\r\nthree\r\nfour\r\nfive\r\nsix\r\nseven",
            b"a long line that wraps more than once at ten columns\x1b7\r\nnext\x1b[2;3H",
            b"\x1b[31mred\x1b[0m\r\n\xe6\xbc\xa2\xe5\xad\x97 wide\r\n\x1b[1;1Htop\x1b7\x1b[9;1H",
            b"0123456789",
            b"",
        ];
        for stream in streams {
            for limit in [0, 3, 100] {
                for lines in [1, 2, 4, 6, 9, 15] {
                    let config = TermConfig { scrollback_lines: limit };
                    let mut fast = Terminal::new(TermSize::new(10, 6), config);
                    let mut full = Terminal::new(TermSize::new(10, 6), config);
                    fast.advance(stream);
                    full.advance(stream);
                    fast.resize(TermSize::new(10, lines));
                    let state = &mut full.state;
                    let alt = state.mode(crate::term::Modes::ALT_SCREEN);
                    assert!(!alt);
                    super::reflow_all(&mut state.active, &mut state.scrollback, 10, lines);
                    let label = format!(
                        "{:?} limit {limit} lines {lines}",
                        String::from_utf8_lossy(stream)
                    );
                    assert_eq!(snapshot(&fast), snapshot(&full), "{label}");
                }
            }
        }
    }
}
