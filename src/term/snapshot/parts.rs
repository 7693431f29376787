//! Each part of the model as snapshot bytes, and back with its invariants checked.

use super::super::cell::{Cell, Color, HyperlinkId, Style, StyleFlags, StyleId, UnderlineStyle};
use super::super::colors::{ColorOverrides, DynamicColor, Rgb};
use super::super::cursor::{Charset, Charsets, Cursor, CursorShape, Pen};
use super::super::grid::Grid;
use super::super::modes::{ModeState, Modes, MouseEncoding, MouseTracking};
use super::super::osc::KittyNotification;
use super::super::osc_guard::OscGuard;
use super::super::row::Row;
use super::super::scrollback::Scrollback;
use super::super::state::{Screen, State, WindowState, MAX_DIMENSION};
use super::super::tabs::TabStops;
use super::super::utf8_carry::Utf8Carry;
use super::codec::{Reader, Writer};
use super::wire_styles::{Numbering, WireStyles};
use super::SnapshotError::{self, Invalid};

/// Most rows a scrollback may be configured to keep.
const MOST_SCROLLBACK: usize = 1 << 24;
/// Most titles a title stack holds (`osc.rs` keeps fewer).
const MOST_TITLES: usize = 4096;

/// The model's state with the newest `scrollback_rows` scrollback rows, or as many of them as
/// `row_bytes` holds (`save_newest_rows`).
pub fn save_state(state: &State, scrollback_rows: usize, row_bytes: usize, w: &mut Writer) {
    let mut numbering = Numbering::new(&state.styles);
    save_screen(&state.active, &mut numbering, w);
    save_screen(&state.inactive, &mut numbering, w);
    let scrollback = &state.scrollback;
    w.usize(scrollback.limit());
    w.u64(scrollback.pushed());
    let sent = scrollback_rows.min(scrollback.len()) as u64;
    let lines = scrollback.pushed() - sent..scrollback.pushed();
    save_newest_rows(scrollback, lines, &mut numbering, row_bytes, w);
    numbering.finish().save(w);
    w.u32(state.modes.flags.bits());
    w.u8(state.modes.mouse as u8);
    w.u8(state.modes.mouse_encoding as u8);
    w.usize(state.region.start);
    w.usize(state.region.end);
    let stops: Vec<u8> = state.tabs.stops().iter().map(|&s| u8::from(s)).collect();
    w.bytes(&stops);
    save_window(&state.window, w);
    save_colors(&state.colors, w);
    w.bool(state.last_printed.is_some());
    w.u32(state.last_printed.map_or(0, u32::from));
    w.bool(state.discard_next_osc);
    w.bool(state.kitty_notification.is_some());
    if let Some(pending) = &state.kitty_notification {
        let (id, title, body) = pending.parts();
        w.opt_str(id);
        w.str(title);
        w.str(body);
    }
}

pub fn load_state(r: &mut Reader<'_>) -> Result<State, SnapshotError> {
    let active = load_screen(r)?;
    let inactive = load_screen(r)?;
    let (cols, lines) = (active.grid.cols(), active.grid.lines());
    if (inactive.grid.cols(), inactive.grid.lines()) != (cols, lines) {
        return Err(Invalid("screens of two sizes"));
    }
    let limit = r.up_to(MOST_SCROLLBACK, "a scrollback limit")?;
    let pushed = r.u64()?;
    let rows = load_newest_rows(r)?;
    if rows.len() > limit || rows.len() as u64 > pushed {
        return Err(Invalid("a scrollback"));
    }
    let scrollback = Scrollback::from_parts(limit, pushed, &rows);
    let styles = WireStyles::load(r)?;
    let modes = ModeState {
        flags: Modes::from_bits(r.u32()?),
        mouse: match r.u8()? {
            0 => MouseTracking::Off,
            1 => MouseTracking::Clicks,
            2 => MouseTracking::Drag,
            3 => MouseTracking::Motion,
            _ => return Err(Invalid("a mouse mode")),
        },
        mouse_encoding: match r.u8()? {
            0 => MouseEncoding::X10,
            1 => MouseEncoding::Utf8,
            2 => MouseEncoding::Sgr,
            _ => return Err(Invalid("a mouse encoding")),
        },
    };
    let region = r.up_to(lines, "a scroll region")?..r.up_to(lines, "a scroll region")?;
    if region.is_empty() {
        return Err(Invalid("a scroll region"));
    }
    let stops = r.bytes()?;
    if stops.len() != cols || stops.iter().any(|&s| s > 1) {
        return Err(Invalid("tab stops"));
    }
    let tabs = TabStops::from_stops(stops.iter().map(|&s| s == 1).collect());
    let window = load_window(r)?;
    let colors = load_colors(r)?;
    let has_last = r.bool()?;
    let last = char::from_u32(r.u32()?).ok_or(Invalid("a character"))?;
    let discard_next_osc = r.bool()?;
    let kitty_notification = if r.bool()? {
        Some(KittyNotification::from_parts(r.opt_string()?, r.string()?, r.string()?))
    } else {
        None
    };
    let mut state = State::new(cols, lines, limit);
    state.active = active;
    state.inactive = inactive;
    state.scrollback = scrollback;
    state.modes = modes;
    state.region = region;
    state.tabs = tabs;
    state.window = window;
    state.colors = colors;
    state.last_printed = has_last.then_some(last);
    state.discard_next_osc = discard_next_osc;
    state.kitty_notification = kitty_notification;
    check_ids(&state, &styles)?;
    state.styles = styles.into_table();
    // A pen's style is the one its id names.
    let styles = &state.styles;
    for screen in [&mut state.active, &mut state.inactive] {
        for pen in [&mut screen.cursor.pen, &mut screen.saved.pen] {
            pen.style = pen.id.map_or(Style::default(), |id| *styles.get(id));
        }
    }
    Ok(state)
}

pub fn save_carry(carry: &Utf8Carry, w: &mut Writer) {
    w.bytes(carry.held());
}

pub fn load_carry(r: &mut Reader<'_>) -> Result<Utf8Carry, SnapshotError> {
    Utf8Carry::holding(r.bytes()?).ok_or(Invalid("a held character"))
}

pub fn save_guard(guard: &OscGuard, w: &mut Writer) {
    let (kind, n) = guard.parts();
    w.u8(kind);
    w.usize(n);
}

pub fn load_guard(r: &mut Reader<'_>) -> Result<OscGuard, SnapshotError> {
    let kind = r.u8()?;
    let n = r.up_to(usize::MAX, "an OSC length")?;
    OscGuard::from_parts(kind, n).ok_or(Invalid("an OSC guard"))
}

fn save_screen(screen: &Screen, numbering: &mut Numbering<'_>, w: &mut Writer) {
    let (rows, marks, scrolled) = screen.grid.parts();
    w.usize(screen.grid.cols());
    w.usize(rows.len());
    for row in rows {
        save_row(row, &mut |id| numbering.id(id), w);
    }
    w.bytes(marks);
    w.u64(scrolled);
    save_cursor(&screen.cursor, numbering, w);
    save_cursor(&screen.saved, numbering, w);
}

fn load_screen(r: &mut Reader<'_>) -> Result<Screen, SnapshotError> {
    let cols = r.up_to(MAX_DIMENSION, "a width")?;
    let lines = r.up_to(MAX_DIMENSION, "a height")?;
    if cols == 0 || lines == 0 {
        return Err(Invalid("a size"));
    }
    let rows = (0..lines).map(|_| load_row(r, Some(cols))).collect::<Result<Vec<_>, _>>()?;
    let marks = r.bytes()?;
    if marks.len() != lines || marks.iter().any(|&m| m > 3) {
        return Err(Invalid("row marks"));
    }
    let scrolled = r.u64()?;
    let grid = Grid::from_parts(rows, cols, marks.to_vec(), scrolled);
    let cursor = load_cursor(r, cols, lines)?;
    let saved = load_cursor(r, cols, lines)?;
    Ok(Screen { grid, cursor, saved })
}

/// A row, each cell's style id written as `id` gives it.
pub fn save_row(row: &Row, id: &mut impl FnMut(StyleId) -> StyleId, w: &mut Writer) {
    w.usize(row.len());
    for cell in row.cells() {
        w.u32(cell.bits());
        w.u32(id(cell.style()).0);
    }
    let marks = row.all_marks();
    w.usize(marks.len());
    for &(col, mark) in marks {
        w.u32(u32::from(col));
        w.u32(u32::from(mark));
    }
}

/// The scrollback's rows at absolute `lines`, newest first, until `budget` bytes (the rows and
/// the styles they bring) are spent: a frame holds them whatever the rows hold, and a replica
/// asks for the rest when it needs them. Returns how many were written.
pub fn save_newest_rows(
    scrollback: &Scrollback,
    lines: std::ops::Range<u64>,
    numbering: &mut Numbering<'_>,
    budget: usize,
    w: &mut Writer,
) -> usize {
    let mut body = Writer::default();
    let mut sent = 0usize;
    for line in lines.rev() {
        if body.bytes.len() + numbering.bytes() >= budget {
            break;
        }
        // By line: only the rows sent are unpacked.
        let Some(row) = scrollback.get_absolute(line) else { break };
        save_row(&row, &mut |id| numbering.id(id), &mut body);
        sent += 1;
    }
    w.usize(sent);
    w.bytes.extend_from_slice(&body.bytes);
    sent
}

/// Rows `save_newest_rows` wrote, oldest first.
pub fn load_newest_rows(r: &mut Reader<'_>) -> Result<Vec<Row>, SnapshotError> {
    let count = r.count(2)?;
    let mut rows = (0..count).map(|_| load_row(r, None)).collect::<Result<Vec<_>, _>>()?;
    rows.reverse();
    Ok(rows)
}

/// A row, `cols` wide when given (a screen's); a scrollback row is as wide as it was kept.
pub fn load_row(r: &mut Reader<'_>, cols: Option<usize>) -> Result<Row, SnapshotError> {
    let len = r.up_to(MAX_DIMENSION, "a row")?;
    if cols.is_some_and(|cols| cols != len) {
        return Err(Invalid("a row's width"));
    }
    let cells = (0..len)
        .map(|_| {
            let bits = r.u32()?;
            Cell::from_bits(bits, StyleId(r.u32()?)).ok_or(Invalid("a cell"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    // The model keeps at most two marks per cell on average (`row.rs`).
    let count = r.up_to(2 * len, "a row's marks")?;
    let mut marks = Vec::with_capacity(count);
    let mut marked = vec![false; len];
    for _ in 0..count {
        let col = r.up_to(len.saturating_sub(1), "a mark's column")?;
        let mark = char::from_u32(r.u32()?).ok_or(Invalid("a mark"))?;
        marked[col] = true;
        marks.push((col as u16, mark));
    }
    if cells.iter().zip(&marked).any(|(cell, &marked)| (cell.flags() & Cell::MARKS != 0) != marked)
    {
        return Err(Invalid("a row's marks"));
    }
    Ok(Row::from_parts(cells, marks))
}

fn save_cursor(cursor: &Cursor, numbering: &mut Numbering<'_>, w: &mut Writer) {
    w.usize(cursor.row);
    w.usize(cursor.col);
    w.bool(cursor.pending_wrap);
    let pen = &cursor.pen;
    let id = match pen.id {
        Some(id) => numbering.id(id),
        None => numbering.style(pen.style),
    };
    w.u32(id.0);
    w.bool(cursor.pen.blank.is_some());
    w.u32(cursor.pen.blank.map_or(0, |id| numbering.id(id).0));
    for slot in cursor.charsets.slots {
        w.bool(slot == Charset::DecSpecial);
    }
    w.usize(cursor.charsets.active);
}

fn load_cursor(r: &mut Reader<'_>, cols: usize, lines: usize) -> Result<Cursor, SnapshotError> {
    let row = r.up_to(lines - 1, "a cursor")?;
    let col = r.up_to(cols - 1, "a cursor")?;
    let pending_wrap = r.bool()?;
    let id = StyleId(r.u32()?);
    let has_blank = r.bool()?;
    let blank = StyleId(r.u32()?);
    let mut slots = [Charset::Ascii; 4];
    for slot in &mut slots {
        *slot = if r.bool()? { Charset::DecSpecial } else { Charset::Ascii };
    }
    let active = r.up_to(3, "a character set")?;
    // The style is the one `id` names, set once the table is read (`load_state`).
    let pen = Pen { style: Style::default(), id: Some(id), blank: has_blank.then_some(blank) };
    Ok(Cursor { row, col, pending_wrap, pen, charsets: Charsets { slots, active } })
}

fn save_color(color: Color, w: &mut Writer) {
    match color {
        Color::Default => w.u8(0),
        Color::Indexed(i) => {
            w.u8(1);
            w.u8(i);
        }
        Color::Rgb(red, green, blue) => {
            w.u8(2);
            w.bytes.extend_from_slice(&[red, green, blue]);
        }
    }
}

fn load_color(r: &mut Reader<'_>) -> Result<Color, SnapshotError> {
    Ok(match r.u8()? {
        0 => Color::Default,
        1 => Color::Indexed(r.u8()?),
        2 => Color::Rgb(r.u8()?, r.u8()?, r.u8()?),
        _ => return Err(Invalid("a color")),
    })
}

pub(super) fn save_style(style: &Style, w: &mut Writer) {
    save_color(style.fg, w);
    save_color(style.bg, w);
    save_color(style.underline_color, w);
    w.u8(style.underline as u8);
    w.u32(u32::from(style.flags.bits()));
    w.bool(style.hyperlink.is_some());
    w.u32(style.hyperlink.map_or(0, |l| l.0));
}

pub(super) fn load_style(r: &mut Reader<'_>) -> Result<Style, SnapshotError> {
    let fg = load_color(r)?;
    let bg = load_color(r)?;
    let underline_color = load_color(r)?;
    let underline = match r.u8()? {
        0 => UnderlineStyle::None,
        1 => UnderlineStyle::Single,
        2 => UnderlineStyle::Double,
        3 => UnderlineStyle::Curly,
        4 => UnderlineStyle::Dotted,
        5 => UnderlineStyle::Dashed,
        _ => return Err(Invalid("an underline")),
    };
    let flags = StyleFlags::from_bits(r.up_to(u16::MAX as usize, "style flags")? as u16);
    let has_link = r.bool()?;
    let link = HyperlinkId(r.u32()?);
    Ok(Style { fg, bg, underline_color, underline, flags, hyperlink: has_link.then_some(link) })
}

/// Every style id a cell, pen or scrollback row holds names a style in `styles`.
fn check_ids(state: &State, styles: &WireStyles) -> Result<(), SnapshotError> {
    let known = |id: StyleId| id.index() < styles.len();
    let row_ok = |row: &Row| row.cells().iter().all(|c| known(c.style()));
    let cursor_ok = |c: &Cursor| c.pen.id.is_some_and(known) && c.pen.blank.is_none_or(known);
    let screen_ok = |s: &Screen| {
        s.grid.rows().iter().all(row_ok) && cursor_ok(&s.cursor) && cursor_ok(&s.saved)
    };
    let ok = screen_ok(&state.active)
        && screen_ok(&state.inactive)
        && state.scrollback.styles().all(known);
    ok.then_some(()).ok_or(Invalid("a style id"))
}

fn save_window(window: &WindowState, w: &mut Writer) {
    w.opt_str(window.title.as_deref());
    w.usize(window.title_stack.len());
    for title in &window.title_stack {
        w.opt_str(title.as_deref());
    }
    w.opt_str(window.cwd.as_deref());
    w.bool(window.cursor_shape.is_some());
    let (shape, blinking) = window.cursor_shape.unwrap_or_default();
    w.u8(shape as u8);
    w.bool(blinking);
}

fn load_window(r: &mut Reader<'_>) -> Result<WindowState, SnapshotError> {
    let title = r.opt_string()?;
    let count = r.up_to(MOST_TITLES, "a title stack")?;
    let title_stack = (0..count).map(|_| r.opt_string()).collect::<Result<Vec<_>, _>>()?;
    let cwd = r.opt_string()?;
    let has_shape = r.bool()?;
    let shape = match r.u8()? {
        0 => CursorShape::Block,
        1 => CursorShape::Underline,
        2 => CursorShape::Beam,
        _ => return Err(Invalid("a cursor shape")),
    };
    let blinking = r.bool()?;
    let cursor_shape = has_shape.then_some((shape, blinking));
    Ok(WindowState { title, title_stack, cwd, cursor_shape })
}

fn save_rgb(rgb: Option<Rgb>, w: &mut Writer) {
    w.bool(rgb.is_some());
    if let Some(Rgb { r, g, b }) = rgb {
        w.bytes.extend_from_slice(&[r, g, b]);
    }
}

fn load_rgb(r: &mut Reader<'_>) -> Result<Option<Rgb>, SnapshotError> {
    Ok(if r.bool()? { Some(Rgb { r: r.u8()?, g: r.u8()?, b: r.u8()? }) } else { None })
}

const DYNAMIC: [DynamicColor; 3] =
    [DynamicColor::Foreground, DynamicColor::Background, DynamicColor::Cursor];

fn save_colors(colors: &ColorOverrides, w: &mut Writer) {
    for index in 0..=255 {
        save_rgb(colors.palette(index), w);
    }
    for which in DYNAMIC {
        save_rgb(colors.dynamic(which), w);
    }
}

fn load_colors(r: &mut Reader<'_>) -> Result<ColorOverrides, SnapshotError> {
    let mut colors = ColorOverrides::default();
    for index in 0..=255 {
        colors.set_palette(index, load_rgb(r)?);
    }
    for which in DYNAMIC {
        colors.set_dynamic(which, load_rgb(r)?);
    }
    Ok(colors)
}
