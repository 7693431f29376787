//! The cursor: position, the pen that styles what is printed, and the character sets.

use super::cell::{Style, StyleId};

/// A designated character set (SCS: `ESC ( 0`, `ESC ( B`, …).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Charset {
    #[default]
    Ascii,
    /// DEC Special Graphics: the line-drawing set.
    DecSpecial,
}

impl Charset {
    #[inline]
    pub fn map(self, c: char) -> char {
        match self {
            Charset::Ascii => c,
            Charset::DecSpecial => match c {
                '_' => ' ',
                '`' => '◆',
                'a' => '▒',
                'b' => '␉',
                'c' => '␌',
                'd' => '␍',
                'e' => '␊',
                'f' => '°',
                'g' => '±',
                'h' => '␤',
                'i' => '␋',
                'j' => '┘',
                'k' => '┐',
                'l' => '┌',
                'm' => '└',
                'n' => '┼',
                'o' => '⎺',
                'p' => '⎻',
                'q' => '─',
                'r' => '⎼',
                's' => '⎽',
                't' => '├',
                'u' => '┤',
                'v' => '┴',
                'w' => '┬',
                'x' => '│',
                'y' => '≤',
                'z' => '≥',
                '{' => 'π',
                '|' => '≠',
                '}' => '£',
                '~' => '·',
                _ => c,
            },
        }
    }
}

/// G0–G3 and which of them is invoked into GL (SI/SO).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Charsets {
    pub slots: [Charset; 4],
    pub active: usize,
}

impl Charsets {
    #[inline]
    pub fn current(&self) -> Charset {
        self.slots[self.active]
    }
}

/// The style applied to printed characters, with its interned ids cached: `id` for printed
/// cells, `blank` for cells erased with this pen (only the background survives an erase),
/// each interned on first use: most pens never erase anything, and a pen that changes again
/// before anything is printed with it (`ESC[38;2;…m ESC[48;2;…m`, a truecolor cell's
/// foreground then background) never needs its first style in the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pen {
    pub style: Style,
    pub id: Option<StyleId>,
    pub blank: Option<StyleId>,
}

impl Default for Pen {
    fn default() -> Self {
        Pen { style: Style::default(), id: Some(StyleId::DEFAULT), blank: Some(StyleId::DEFAULT) }
    }
}

impl Pen {
    /// The id of the pen's style in `styles`, interned now if it is not yet.
    #[inline(always)]
    pub fn id_in(&mut self, styles: &mut super::styles::StyleTable) -> StyleId {
        match self.id {
            Some(id) => id,
            None => *self.id.insert(styles.intern(self.style)),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    pub row: usize,
    pub col: usize,
    /// The last column was just printed; the next printable character wraps first (DECAWM's
    /// "last column flag").
    pub pending_wrap: bool,
    pub pen: Pen,
    pub charsets: Charsets,
}

/// The cursor's look, as DECSCUSR sets it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CursorShape {
    #[default]
    Block,
    Underline,
    Beam,
}
