//! The peer model: alacritty_terminal 0.26, driven the way Alacritty drives it, snapshotted in
//! the same neutral form as ours.

use alacritty_terminal::event::{Event, EventListener};
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::test::TermSize;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::{self, Color, NamedColor};

use crate::snapshot::{CellSnap, Col, Snapshot};

#[derive(Clone, Copy)]
struct NoEvents;

impl EventListener for NoEvents {
    fn send_event(&self, _event: Event) {}
}

pub struct Reference {
    term: Term<NoEvents>,
    parser: ansi::Processor,
}

impl Reference {
    pub fn new(cols: usize, lines: usize, history: usize) -> Reference {
        let config = Config { scrolling_history: history, ..Default::default() };
        Reference {
            term: Term::new(config, &TermSize::new(cols, lines), NoEvents),
            parser: ansi::Processor::new(),
        }
    }

    pub fn advance(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.term, bytes);
    }

    /// Alacritty buffers bytes during synchronized output (2026) until the end mark or a
    /// timeout; a stream that ends inside one is flushed, as the timeout would.
    pub fn snapshot(&mut self) -> Snapshot {
        self.parser.stop_sync(&mut self.term);
        let grid = self.term.grid();
        let (cols, lines) = (grid.columns(), grid.screen_lines());
        let mut rows = Vec::with_capacity(lines);
        let mut wrapped = Vec::with_capacity(lines);
        for line in 0..lines {
            let row = &grid[Line(line as i32)];
            rows.push((0..cols).map(|col| cell(&row[Column(col)])).collect());
            wrapped.push(row[Column(cols - 1)].flags.contains(Flags::WRAPLINE));
        }
        let point = grid.cursor.point;
        Snapshot { rows, wrapped, cursor: (point.line.0 as usize, point.column.0) }
    }
}

fn color(c: Color, default: NamedColor) -> Col {
    match c {
        Color::Named(n) if n == default => Col::Default,
        Color::Named(n) if (n as usize) < 16 => Col::Indexed(n as u8),
        Color::Named(n) => panic!("unexpected named color {n:?} in a cell"),
        Color::Indexed(i) => Col::Indexed(i),
        Color::Spec(rgb) => Col::Rgb(rgb.r, rgb.g, rgb.b),
    }
}

fn cell(c: &alacritty_terminal::term::cell::Cell) -> CellSnap {
    let f = c.flags;
    let mut attrs = Vec::new();
    for (flag, name) in [
        (Flags::BOLD, "bold"),
        (Flags::DIM, "dim"),
        (Flags::ITALIC, "italic"),
        (Flags::INVERSE, "inverse"),
        (Flags::HIDDEN, "hidden"),
        (Flags::STRIKEOUT, "strike"),
        (Flags::UNDERLINE, "underline"),
        (Flags::DOUBLE_UNDERLINE, "underline-double"),
        (Flags::UNDERCURL, "underline-curly"),
        (Flags::DOTTED_UNDERLINE, "underline-dotted"),
        (Flags::DASHED_UNDERLINE, "underline-dashed"),
    ] {
        if f.contains(flag) {
            attrs.push(name);
        }
    }
    attrs.sort_unstable();
    // Alacritty keeps a tab character in the first cell a tab crossed, so copying text keeps
    // tabs; paddock keeps a space there (the screen shows the same).
    let mut text = if c.c == '\t' { ' '.to_string() } else { c.c.to_string() };
    text.extend(c.zerowidth().unwrap_or_default());
    let layout = if f.contains(Flags::WIDE_CHAR) {
        "wide"
    } else if f.contains(Flags::WIDE_CHAR_SPACER) {
        "spacer"
    } else if f.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
        "leading"
    } else {
        ""
    };
    CellSnap {
        text,
        fg: color(c.fg, NamedColor::Foreground),
        bg: color(c.bg, NamedColor::Background),
        underline_color: c
            .underline_color()
            .map_or(Col::Default, |u| color(u, NamedColor::Foreground)),
        attrs,
        layout,
        link: c.hyperlink().map(|h| h.uri().to_owned()),
    }
}
