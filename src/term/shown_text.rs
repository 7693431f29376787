//! A row's text as bytes, the way the model's check (`redact.rs`) hands it to the redactor: what
//! the row shows, cheaply. Fillers (the right half of a wide character, the gap a wide
//! character left at a row's end) are no text, and combining marks are left out (a value drawn
//! with a mark on each character still reads as the value).
//!
//! Most rows are plain ASCII and take one pass that the compiler vectorizes. When every value is
//! ASCII, any other character is shown as the one byte 0xFF, which no value holds: then a
//! spacer right of its wide character may stay (as 0xFF too) instead of being left out, which
//! finds the same values, and the bytes still line up one to one with the cells.

use super::cell::Cell;

const FILLERS: u32 = Cell::WIDE_SPACER | Cell::LEADING_SPACER;

/// How the bytes [`append`] wrote line up with the row's cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Layout {
    /// Byte `i` is cell `i`.
    OneToOne,
    /// Fillers left out, every other cell's character in turn (UTF-8, or 0xFF for any
    /// character that is not ASCII when every value is).
    Compacted,
}

/// Append the text of `cells` (a row's, up to where it ends) to `text`.
pub(super) fn append(cells: &[Cell], ascii_only: bool, text: &mut Vec<u8>) -> Layout {
    let start = text.len();
    text.resize(start + cells.len(), 0);
    let (mut more, mut orphans, mut before) = (0, 0, 0);
    for (byte, cell) in text[start..].iter_mut().zip(cells) {
        let bits = cell.code() | cell.flags();
        more |= bits;
        // A spacer whose left neighbour is not its wide character (DCH can leave one).
        orphans |= bits & Cell::WIDE_SPACER & !(before << 1);
        before = bits;
        // Marks and the wrap mark leave a character as it is; any other flag is a wide
        // character or a filler.
        let shown = bits & !(Cell::MARKS | Cell::WRAP);
        *byte = if shown < 0x80 { shown as u8 } else { 0xff };
    }
    const _: () = assert!(Cell::WIDE << 1 == Cell::WIDE_SPACER);
    let plain = more & !(0x7f | Cell::WRAP | Cell::MARKS) == 0;
    if plain || (ascii_only && more & Cell::LEADING_SPACER == 0 && orphans == 0) {
        return Layout::OneToOne;
    }
    text.truncate(start);
    text.resize(start + 4 * cells.len(), 0);
    let room = &mut text[start..];
    let mut len = 0;
    for cell in cells {
        if cell.flags() & FILLERS != 0 {
            continue;
        }
        len += encode(*cell, ascii_only, &mut room[len..]);
    }
    text.truncate(start + len);
    Layout::Compacted
}

/// Append to `columns` the column each byte [`append`] wrote for `cells` came from.
pub(super) fn columns(
    cells: &[Cell],
    layout: Layout,
    ascii_only: bool,
    line: u64,
    columns: &mut Vec<Option<(u64, usize)>>,
) {
    match layout {
        Layout::OneToOne => columns.extend((0..cells.len()).map(|col| Some((line, col)))),
        Layout::Compacted => {
            let mut room = [0; 4];
            for (col, cell) in cells.iter().enumerate() {
                if cell.flags() & FILLERS == 0 {
                    let len = encode(*cell, ascii_only, &mut room);
                    columns.extend(std::iter::repeat_n(Some((line, col)), len));
                }
            }
        }
    }
}

/// Write a cell's character at the start of `room` (at least four bytes): UTF-8, or 0xFF for
/// one that is not ASCII when every value is; how many bytes.
#[inline(always)]
fn encode(cell: Cell, ascii_only: bool, room: &mut [u8]) -> usize {
    match cell.code() {
        code @ 0..=0x7f => {
            room[0] = code as u8;
            1
        }
        _ if ascii_only => {
            room[0] = 0xff;
            1
        }
        _ => cell.ch().encode_utf8(room).len(),
    }
}

/// Where what a row shows ends: past its last cell that is not a blank (in any style).
pub(super) fn shown_end(cells: &[Cell]) -> usize {
    let shows = |c: &Cell| (c.code() != u32::from(b' ')) | c.has(Cell::MARKS);
    // Sixteen cells at a time without an early exit, which the compiler vectorizes: most of a
    // row past a log line's end is blank.
    let mut end = cells.len();
    while end >= 16 {
        let block = &cells[end - 16..end];
        if block.iter().fold(false, |any, c| any | shows(c)) {
            break;
        }
        end -= 16;
    }
    cells[..end].iter().rposition(shows).map_or(0, |n| n + 1)
}

#[cfg(test)]
mod tests {
    use super::{append, columns, Layout};
    use crate::term::cell::{Cell, StyleId};

    fn cells(spec: &[(char, u32)]) -> Vec<Cell> {
        spec.iter().map(|&(c, flags)| Cell::new(c, flags, StyleId::DEFAULT)).collect()
    }

    fn text(cells: &[Cell], ascii_only: bool) -> (Vec<u8>, Layout, Vec<usize>) {
        let mut text = Vec::new();
        let layout = append(cells, ascii_only, &mut text);
        let mut cols = Vec::new();
        columns(cells, layout, ascii_only, 0, &mut cols);
        assert_eq!(cols.len(), text.len(), "a column for every byte");
        (text, layout, cols.into_iter().map(|c| c.expect("a cell").1).collect())
    }

    #[test]
    fn rows_read_as_they_show() {
        let wide = Cell::WIDE;
        let spacer = Cell::WIDE_SPACER;
        // Plain text, a mark on one character, the wrap mark on the last.
        let row = cells(&[('a', 0), ('b', Cell::MARKS), ('c', Cell::WRAP)]);
        assert_eq!(text(&row, false), (b"abc".to_vec(), Layout::OneToOne, vec![0, 1, 2]));
        // A wide character: UTF-8 without its spacer, or one to one as 0xFF for ASCII values.
        let row = cells(&[('x', 0), ('日', wide), (' ', spacer), ('y', 0)]);
        let (bytes, layout, cols) = text(&row, false);
        assert_eq!((bytes.as_slice(), layout), ("x日y".as_bytes(), Layout::Compacted));
        assert_eq!(cols, [0, 1, 1, 1, 3]);
        assert_eq!(text(&row, true), (b"x\xff\xffy".to_vec(), Layout::OneToOne, vec![0, 1, 2, 3]));
        // A spacer left without its wide character (DCH) joins its neighbours, as it shows.
        let row = cells(&[('S', 0), (' ', spacer), ('E', 0)]);
        assert_eq!(text(&row, true), (b"SE".to_vec(), Layout::Compacted, vec![0, 2]));
        // So does the gap a wide character left at a row's end.
        let row = cells(&[('S', 0), (' ', Cell::LEADING_SPACER | Cell::WRAP)]);
        assert_eq!(text(&row, true), (b"S".to_vec(), Layout::Compacted, vec![0]));
    }
}
