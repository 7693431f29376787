//! A model-neutral snapshot of a screen, so paddock and Alacritty can be compared cell by cell,
//! and a readable report of where two snapshots differ.

use std::fmt::Write as _;

use paddock::term::{Cell, Color, StyleFlags, Terminal, UnderlineStyle};

/// Colors after normalisation: Alacritty's named ANSI colors are palette indices 0–15.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Col {
    Default,
    Indexed(u8),
    Rgb(u8, u8, u8),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellSnap {
    /// The character plus its combining marks.
    pub text: String,
    pub fg: Col,
    pub bg: Col,
    pub underline_color: Col,
    /// Attribute names, sorted: bold, dim, italic, inverse, hidden, strike, underline kinds.
    pub attrs: Vec<&'static str>,
    /// "wide", "spacer", "leading" or "".
    pub layout: &'static str,
    pub link: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub rows: Vec<Vec<CellSnap>>,
    pub wrapped: Vec<bool>,
    pub cursor: (usize, usize),
}

impl Snapshot {
    pub fn text(&self) -> String {
        let mut out = String::new();
        for row in &self.rows {
            let line: String = row
                .iter()
                .filter(|c| c.layout != "spacer" && c.layout != "leading")
                .map(|c| c.text.as_str())
                .collect();
            out.push_str(line.trim_end_matches(' '));
            out.push('\n');
        }
        let _ = writeln!(out, "cursor {} {}", self.cursor.0, self.cursor.1);
        out
    }
}

pub fn of_paddock(term: &Terminal) -> Snapshot {
    let color = |c: Color| match c {
        Color::Default => Col::Default,
        Color::Indexed(i) => Col::Indexed(i),
        Color::Rgb(r, g, b) => Col::Rgb(r, g, b),
    };
    let rows = term
        .rows()
        .iter()
        .map(|row| {
            row.cells()
                .iter()
                .enumerate()
                .map(|(col, cell)| {
                    let style = term.style(cell.style());
                    let mut attrs = Vec::new();
                    for (flag, name) in [
                        (StyleFlags::BOLD, "bold"),
                        (StyleFlags::DIM, "dim"),
                        (StyleFlags::ITALIC, "italic"),
                        (StyleFlags::INVERSE, "inverse"),
                        (StyleFlags::HIDDEN, "hidden"),
                        (StyleFlags::STRIKE, "strike"),
                    ] {
                        if style.flags.contains(flag) {
                            attrs.push(name);
                        }
                    }
                    attrs.extend(match style.underline {
                        UnderlineStyle::None => None,
                        UnderlineStyle::Single => Some("underline"),
                        UnderlineStyle::Double => Some("underline-double"),
                        UnderlineStyle::Curly => Some("underline-curly"),
                        UnderlineStyle::Dotted => Some("underline-dotted"),
                        UnderlineStyle::Dashed => Some("underline-dashed"),
                    });
                    attrs.sort_unstable();
                    let mut text = cell.ch().to_string();
                    text.extend(row.marks(col));
                    CellSnap {
                        text,
                        fg: color(style.fg),
                        bg: color(style.bg),
                        underline_color: color(style.underline_color),
                        attrs,
                        layout: layout(*cell),
                        link: style
                            .hyperlink
                            .and_then(|l| term.hyperlink(l))
                            .map(|l| l.uri.clone()),
                    }
                })
                .collect()
        })
        .collect();
    let cursor = term.cursor();
    Snapshot {
        rows,
        wrapped: term.rows().iter().map(|r| r.wrapped()).collect(),
        cursor: (cursor.row, cursor.col),
    }
}

fn layout(cell: Cell) -> &'static str {
    if cell.has(Cell::WIDE) {
        "wide"
    } else if cell.has(Cell::WIDE_SPACER) {
        "spacer"
    } else if cell.has(Cell::LEADING_SPACER) {
        "leading"
    } else {
        ""
    }
}

/// A readable account of the differences: both screens as text, then the first differing cells.
pub fn report(ours: &Snapshot, theirs: &Snapshot) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "--- paddock\n{}--- alacritty\n{}", ours.text(), theirs.text());
    let mut shown = 0;
    for (line, (a, b)) in ours.rows.iter().zip(&theirs.rows).enumerate() {
        for (col, (x, y)) in a.iter().zip(b).enumerate() {
            if x != y && shown < 12 {
                let _ = writeln!(out, "[{line}][{col}] paddock {x:?}\n         alacritty {y:?}");
                shown += 1;
            }
        }
    }
    for (line, (a, b)) in ours.wrapped.iter().zip(&theirs.wrapped).enumerate() {
        if a != b && shown < 12 {
            let _ = writeln!(out, "row {line}: wrapped paddock={a} alacritty={b}");
            shown += 1;
        }
    }
    if ours.cursor != theirs.cursor {
        let _ = writeln!(out, "cursor: paddock {:?} alacritty {:?}", ours.cursor, theirs.cursor);
    }
    out
}
