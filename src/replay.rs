//! `paddock replay`: a recorded byte stream in, the final screen out, as text or JSON.
//!
//! This is what bug reports and tests use: the text form is readable and diffable; the JSON form
//! adds each row's attribute runs. Formatting is pure; reading the file happens in `main`.

use serde::Serialize;
use thiserror::Error;

use crate::term::{row_text, MAX_DIMENSION};
use crate::term::{Color, Style, StyleFlags, TermConfig, TermSize, Terminal, UnderlineStyle};

#[derive(Debug, Error, PartialEq, Eq)]
pub enum SizeError {
    #[error("size {0:?} is not COLSxROWS (for example 80x24)")]
    Format(String),
    #[error("size {0:?} is out of range: columns and rows must be 1 to {MAX_DIMENSION}")]
    Range(String),
}

/// Parse `COLSxROWS`, e.g. `80x24`.
pub fn parse_size(text: &str) -> Result<TermSize, SizeError> {
    let (cols, lines) =
        text.split_once(['x', 'X']).ok_or_else(|| SizeError::Format(text.to_owned()))?;
    let parse =
        |part: &str| part.trim().parse::<usize>().map_err(|_| SizeError::Format(text.to_owned()));
    let (cols, lines) = (parse(cols)?, parse(lines)?);
    let valid = 1..=MAX_DIMENSION;
    if !valid.contains(&cols) || !valid.contains(&lines) {
        return Err(SizeError::Range(text.to_owned()));
    }
    Ok(TermSize::new(cols, lines))
}

/// Run `bytes` through a fresh terminal of `size`.
pub fn replay(bytes: &[u8], size: TermSize, scrollback_lines: usize) -> Terminal {
    let mut term = Terminal::new(size, TermConfig { scrollback_lines });
    term.advance(bytes);
    term
}

/// The text format: one line per visible row, then `cursor ROW COL`.
pub fn to_text(term: &Terminal) -> String {
    term.screen_text()
}

#[derive(Serialize)]
struct JsonScreen {
    cols: usize,
    rows: usize,
    cursor: JsonCursor,
    title: Option<String>,
    alt_screen: bool,
    lines: Vec<JsonLine>,
}

#[derive(Serialize)]
struct JsonCursor {
    row: usize,
    col: usize,
    visible: bool,
}

#[derive(Serialize)]
struct JsonLine {
    text: String,
    wrapped: bool,
    runs: Vec<JsonRun>,
}

/// A run of cells with one style; columns are cell columns (a wide character spans two).
#[derive(Serialize)]
struct JsonRun {
    col: usize,
    len: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    fg: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bg: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    underline_color: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    underline: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    attrs: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    link: Option<String>,
}

/// The JSON format: the text plus attribute runs per row. Runs in the default style are left
/// out, so a plain screen has no runs at all.
pub fn to_json(term: &Terminal) -> String {
    let cursor = term.cursor();
    let lines = term
        .rows()
        .iter()
        .map(|row| JsonLine { text: row_text(row), wrapped: row.wrapped(), runs: runs(term, row) })
        .collect();
    let screen = JsonScreen {
        cols: term.size().cols,
        rows: term.size().lines,
        cursor: JsonCursor { row: cursor.row, col: cursor.col, visible: cursor.visible },
        title: term.title().map(str::to_owned),
        alt_screen: term.is_alt_screen(),
        lines,
    };
    // Serializing plain structs of strings and numbers cannot fail.
    serde_json::to_string_pretty(&screen).unwrap_or_default() + "\n"
}

fn runs(term: &Terminal, row: &crate::term::Row) -> Vec<JsonRun> {
    let mut runs: Vec<JsonRun> = Vec::new();
    let cells = row.cells();
    let mut start = 0;
    while start < cells.len() {
        let id = cells[start].style();
        let len = cells[start..].iter().take_while(|c| c.style() == id).count();
        let style = term.style(id);
        if *style != Style::default() {
            runs.push(json_run(term, style, start, len));
        }
        start += len;
    }
    runs
}

fn json_run(term: &Terminal, style: &Style, col: usize, len: usize) -> JsonRun {
    let color = |c: Color| match c {
        Color::Default => None,
        Color::Indexed(i) => Some(i.to_string()),
        Color::Rgb(r, g, b) => Some(format!("#{r:02x}{g:02x}{b:02x}")),
    };
    let names = [
        (StyleFlags::BOLD, "bold"),
        (StyleFlags::DIM, "dim"),
        (StyleFlags::ITALIC, "italic"),
        (StyleFlags::BLINK, "blink"),
        (StyleFlags::INVERSE, "inverse"),
        (StyleFlags::HIDDEN, "hidden"),
        (StyleFlags::STRIKE, "strike"),
        (StyleFlags::PROTECTED, "protected"),
    ];
    let underline = match style.underline {
        UnderlineStyle::None => None,
        UnderlineStyle::Single => Some("single"),
        UnderlineStyle::Double => Some("double"),
        UnderlineStyle::Curly => Some("curly"),
        UnderlineStyle::Dotted => Some("dotted"),
        UnderlineStyle::Dashed => Some("dashed"),
    };
    JsonRun {
        col,
        len,
        fg: color(style.fg),
        bg: color(style.bg),
        underline_color: color(style.underline_color),
        underline,
        attrs: names.iter().filter(|(f, _)| style.flags.contains(*f)).map(|(_, n)| *n).collect(),
        link: style.hyperlink.and_then(|id| term.hyperlink(id)).map(|l| l.uri.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_or_explain() {
        assert_eq!(parse_size("80x24"), Ok(TermSize::new(80, 24)));
        assert_eq!(parse_size("132X50"), Ok(TermSize::new(132, 50)));
        assert!(matches!(parse_size("80"), Err(SizeError::Format(_))));
        assert!(matches!(parse_size("ax24"), Err(SizeError::Format(_))));
        assert!(matches!(parse_size("0x24"), Err(SizeError::Range(_))));
        assert!(matches!(parse_size("80x99999"), Err(SizeError::Range(_))));
    }
}
