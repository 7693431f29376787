//! Cells to rectangles: what the rect pipeline draws for a pane, computed without a GPU.
//!
//! Pure: a terminal's read-only view in, `RectInstance`s in pixels out. Runs of cells with the
//! same background become one rectangle, and cells on the theme's background become none (the
//! frame is cleared to it), so a screen of plain text costs a handful of instances. Colors are
//! sRGB bytes as the program named them; the pipeline writes them unconverted.

use std::borrow::Cow;
use std::ops::Range;

use crate::mux::{Divider, Rect};
use crate::term::{
    default_palette, Color, CursorShape, DynamicColor, Rgb, Row, StyleFlags, Terminal,
    UnderlineStyle,
};
use crate::view::PaneView;

/// One filled rectangle, in pixels from the top-left of the target; the layout the shader's
/// instance buffer reads (see shaders/rect.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RectInstance {
    pub origin: [f32; 2],
    pub size: [f32; 2],
    /// sRGB, 0–1, with alpha.
    pub color: [f32; 4],
}

impl RectInstance {
    pub fn new(x: f32, y: f32, width: f32, height: f32, color: Rgb) -> RectInstance {
        RectInstance { origin: [x, y], size: [width, height], color: rgba(color) }
    }
}

pub fn rgba(color: Rgb) -> [f32; 4] {
    let channel = |c: u8| f32::from(c) / 255.0;
    [channel(color.r), channel(color.g), channel(color.b), 1.0]
}

/// The size of one cell in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellSize {
    pub width: f32,
    pub height: f32,
}

/// The colors paddock chooses (programs may override the palette and the dynamic colors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theme {
    pub foreground: Rgb,
    pub background: Rgb,
    pub cursor: Rgb,
    pub divider: Rgb,
    pub selection: Rgb,
    /// Search matches, and the one the view jumped to.
    pub search_match: Rgb,
    pub current_match: Rgb,
    /// The pane title strips' background, and the focused pane's.
    pub strip: Rgb,
    pub focused_strip: Rgb,
    /// The 16 ANSI colors (a program's OSC 4 changes win).
    pub palette: [Rgb; 16],
}

impl Default for Theme {
    /// The configuration's default colors, with the chrome's own (dividers, search matches,
    /// title strips) around them.
    fn default() -> Theme {
        let colors = crate::config::ThemeColors::default();
        Theme {
            foreground: colors.foreground,
            background: colors.background,
            cursor: colors.cursor,
            divider: Rgb { r: 0x50, g: 0x50, b: 0x58 },
            selection: colors.selection,
            search_match: Rgb { r: 0x6a, g: 0x55, b: 0x1c },
            current_match: Rgb { r: 0xb0, g: 0x6a, b: 0x10 },
            strip: Rgb { r: 0x24, g: 0x24, b: 0x2a },
            focused_strip: Rgb { r: 0x30, g: 0x34, b: 0x44 },
            palette: colors.palette,
        }
    }
}

/// How the cursor is drawn when the program did not choose a shape, and how thick its lines are.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CursorStyle {
    pub shape: CursorShape,
    /// Beam width and underline height, in pixels.
    pub thickness: f32,
}

/// What covers a run of cells besides their own background.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HighlightKind {
    Selection,
    SearchMatch,
    CurrentMatch,
}

/// Cells `cols` of view row `row`, highlighted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Highlight {
    pub row: usize,
    pub cols: Range<usize>,
    pub kind: HighlightKind,
}

/// One pane to draw: the rows in view (the screen, or lines from the scrollback when scrolled
/// back), highlights over them, and where its top-left cell is, in pixels.
pub struct PaneScene<'a> {
    /// Styles, colors and the cursor.
    pub term: &'a Terminal,
    pub rows: Vec<Cow<'a, Row>>,
    pub highlights: Vec<Highlight>,
    pub origin: [f32; 2],
    pub focused: bool,
    /// Whether the cursor is drawn (not while scrolled back: its row is not in view).
    pub cursor: bool,
}

impl<'a> PaneScene<'a> {
    /// The program's screen as it is.
    pub fn screen(term: &'a Terminal, origin: [f32; 2], focused: bool) -> PaneScene<'a> {
        let rows = term.rows().iter().map(Cow::Borrowed).collect();
        PaneScene { term, rows, highlights: Vec::new(), origin, focused, cursor: true }
    }

    /// What `view` shows of the terminal: its scroll position, selection and search matches.
    pub fn viewed(
        term: &'a Terminal,
        view: &PaneView,
        origin: [f32; 2],
        focused: bool,
    ) -> PaneScene<'a> {
        let top = view.top_line(term);
        let lines = term.size().lines as u64;
        let rows: Vec<Cow<'a, Row>> = (top..top + lines).filter_map(|l| term.line(l)).collect();
        let mut highlights = Vec::new();
        if let Some(search) = view.search.as_ref().filter(|s| !s.query.is_empty()) {
            for (row, line) in (top..top + rows.len() as u64).enumerate() {
                for found in search.matches_in_line(term, line) {
                    let kind = if Some(found) == search.current {
                        HighlightKind::CurrentMatch
                    } else {
                        HighlightKind::SearchMatch
                    };
                    let cols = found.start.col..found.start.col + found.cells;
                    highlights.push(Highlight { row, cols, kind });
                }
            }
        }
        // A click that has not moved yet selects nothing.
        let selection = view.selection.filter(|s| !s.is_empty());
        if let Some(selection) = &selection {
            let (start, end) = selection.span(term);
            let cols = term.size().cols;
            for (row, line) in (top..top + rows.len() as u64).enumerate() {
                if line < start.line || line > end.line {
                    continue;
                }
                let from = if line == start.line { start.col } else { 0 };
                let to = if line == end.line { end.col + 1 } else { cols };
                highlights.push(Highlight { row, cols: from..to, kind: HighlightKind::Selection });
            }
        }
        let cursor = view.scrolled_back(term) == 0;
        PaneScene { term, rows, highlights, origin, focused, cursor }
    }

    /// The highlight over a cell, the last one given winning (the selection over matches).
    fn highlight(&self, row: usize, col: usize) -> Option<HighlightKind> {
        self.highlights.iter().rev().find(|h| h.row == row && h.cols.contains(&col)).map(|h| h.kind)
    }
}

/// The colors of one pane: the theme under the program's own overrides.
pub struct Colors<'a> {
    term: &'a Terminal,
    theme: &'a Theme,
}

impl<'a> Colors<'a> {
    pub fn new(term: &'a Terminal, theme: &'a Theme) -> Colors<'a> {
        Colors { term, theme }
    }

    pub fn background(&self) -> Rgb {
        let background = self.term.dynamic_color_override(DynamicColor::Background);
        background.unwrap_or(self.theme.background)
    }

    pub fn foreground(&self) -> Rgb {
        let foreground = self.term.dynamic_color_override(DynamicColor::Foreground);
        foreground.unwrap_or(self.theme.foreground)
    }

    pub fn cursor(&self) -> Rgb {
        self.term.dynamic_color_override(DynamicColor::Cursor).unwrap_or(self.theme.cursor)
    }

    pub fn resolve(&self, color: Color, default: Rgb) -> Rgb {
        match color {
            Color::Default => default,
            Color::Indexed(i) => self.term.palette_override(i).unwrap_or_else(|| {
                self.theme.palette.get(usize::from(i)).copied().unwrap_or(default_palette(i))
            }),
            Color::Rgb(r, g, b) => Rgb { r, g, b },
        }
    }

    /// A cell style's background as shown: inverse video swaps it with the foreground.
    pub fn cell_background(&self, fg: Color, bg: Color, flags: StyleFlags) -> Rgb {
        if flags.contains(StyleFlags::INVERSE) {
            self.resolve(fg, self.foreground())
        } else {
            self.resolve(bg, self.background())
        }
    }
}

/// The rectangles of one pane: cell backgrounds (merged into runs), then the cursor.
pub fn push_pane(
    pane: &PaneScene<'_>,
    cell: CellSize,
    theme: &Theme,
    cursor_style: CursorStyle,
    out: &mut Vec<RectInstance>,
) {
    let colors = Colors::new(pane.term, theme);
    let clear = colors.background();
    let [x0, y0] = pane.origin;
    for (row_index, row) in pane.rows.iter().enumerate() {
        let y = y0 + row_index as f32 * cell.height;
        let mut run: Option<(usize, Rgb)> = None;
        let cells = row.cells();
        let lit = pane.highlights.iter().any(|h| h.row == row_index);
        for col in 0..=cells.len() {
            let color = cells.get(col).map(|c| {
                let highlight = if lit { pane.highlight(row_index, col) } else { None };
                match highlight {
                    Some(HighlightKind::Selection) => theme.selection,
                    Some(HighlightKind::SearchMatch) => theme.search_match,
                    Some(HighlightKind::CurrentMatch) => theme.current_match,
                    None => {
                        let style = pane.term.style(c.style());
                        colors.cell_background(style.fg, style.bg, style.flags)
                    }
                }
            });
            if run.map(|(_, c)| Some(c)) == Some(color) {
                continue;
            }
            if let Some((start, color)) = run.take() {
                if color != clear {
                    let x = x0 + start as f32 * cell.width;
                    let width = (col - start) as f32 * cell.width;
                    out.push(RectInstance::new(x, y, width, cell.height, color));
                }
            }
            run = color.map(|c| (col, c));
        }
    }
    push_decorations(pane, cell, &colors, cursor_style.thickness.max(1.0) / 2.0, out);
    push_cursor(pane, cell, &colors, cursor_style, out);
}

/// Underlines (five styles, in the underline color or else the text's) and strikethrough.
fn push_decorations(
    pane: &PaneScene<'_>,
    cell: CellSize,
    colors: &Colors<'_>,
    line: f32,
    out: &mut Vec<RectInstance>,
) {
    let [x0, y0] = pane.origin;
    for (row_index, row) in pane.rows.iter().enumerate() {
        let top = y0 + row_index as f32 * cell.height;
        for (col, c) in row.cells().iter().enumerate() {
            let style = pane.term.style(c.style());
            let strike = style.flags.contains(StyleFlags::STRIKE);
            if style.underline == UnderlineStyle::None && !strike {
                continue;
            }
            let text = colors.resolve(style.fg, colors.foreground());
            let x = x0 + col as f32 * cell.width;
            let w = cell.width;
            if strike {
                out.push(RectInstance::new(x, top + cell.height * 0.5, w, line, text));
            }
            let color = colors.resolve(style.underline_color, text);
            let base = top + cell.height - 2.0 * line;
            let mut push = |dx: f32, dy: f32, width: f32| {
                out.push(RectInstance::new(x + dx, base + dy, width, line, color));
            };
            match style.underline {
                UnderlineStyle::None => {}
                UnderlineStyle::Single => push(0.0, 0.0, w),
                UnderlineStyle::Double => {
                    push(0.0, 0.0, w);
                    push(0.0, -2.0 * line, w);
                }
                // Half-cell segments up and down: a wave at any cell size.
                UnderlineStyle::Curly => {
                    push(0.0, -line, w / 2.0);
                    push(w / 2.0, 0.0, w / 2.0);
                }
                UnderlineStyle::Dotted => {
                    let mut dx = 0.0;
                    while dx < w {
                        push(dx, 0.0, line.min(w - dx));
                        dx += 2.0 * line;
                    }
                }
                UnderlineStyle::Dashed => {
                    push(0.0, 0.0, w * 0.4);
                    push(w * 0.6, 0.0, w * 0.4);
                }
            }
        }
    }
}

fn push_cursor(
    pane: &PaneScene<'_>,
    cell: CellSize,
    colors: &Colors<'_>,
    style: CursorStyle,
    out: &mut Vec<RectInstance>,
) {
    let cursor = pane.term.cursor();
    if !cursor.visible || !pane.cursor {
        return;
    }
    // A wide character's cursor covers both of its cells.
    let wide = pane
        .term
        .row(cursor.row)
        .is_some_and(|r| r.cells().get(cursor.col).is_some_and(|c| c.has(crate::term::Cell::WIDE)));
    let width = if wide { 2.0 * cell.width } else { cell.width };
    let x = pane.origin[0] + cursor.col as f32 * cell.width;
    let y = pane.origin[1] + cursor.row as f32 * cell.height;
    let color = colors.cursor();
    let line = style.thickness.min(cell.width).min(cell.height);
    let shape = cursor.shape.unwrap_or(style.shape);
    match (shape, pane.focused) {
        (CursorShape::Block, true) => out.push(RectInstance::new(x, y, width, cell.height, color)),
        (CursorShape::Beam, _) => out.push(RectInstance::new(x, y, line, cell.height, color)),
        (CursorShape::Underline, _) => {
            out.push(RectInstance::new(x, y + cell.height - line, width, line, color))
        }
        // An unfocused pane's block cursor is hollow: four edges.
        (CursorShape::Block, false) => {
            let h = cell.height;
            out.push(RectInstance::new(x, y, width, line, color));
            out.push(RectInstance::new(x, y + h - line, width, line, color));
            out.push(RectInstance::new(x, y, line, h, color));
            out.push(RectInstance::new(x + width - line, y, line, h, color));
        }
    }
}

/// The dividers between panes, laid out in cells from `origin` (pixels).
pub fn push_dividers(
    dividers: &[Divider],
    origin: [f32; 2],
    cell: CellSize,
    theme: &Theme,
    out: &mut Vec<RectInstance>,
) {
    for divider in dividers {
        let Rect { col, row, cols, rows } = divider.rect;
        let (x, y) = (origin[0] + col as f32 * cell.width, origin[1] + row as f32 * cell.height);
        out.push(RectInstance::new(
            x,
            y,
            cols as f32 * cell.width,
            rows as f32 * cell.height,
            theme.divider,
        ));
    }
}

#[cfg(test)]
mod tests;
