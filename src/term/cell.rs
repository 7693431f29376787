//! Compact cells and the styles they point at.
//!
//! A [`Cell`] is 8 bytes: the character and a few layout flags packed in one `u32`, and a
//! [`StyleId`] into the terminal's [`StyleTable`](super::styles::StyleTable). Everything that is
//! the same for a run of cells (colors, bold, underline style, hyperlink) lives once in the table,
//! so a screen of truecolor text costs no more per cell than plain ASCII.

/// A color as the program asked for it; the renderer resolves it against the theme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Color {
    /// The theme's default foreground or background (whichever slot this is in).
    #[default]
    Default,
    /// An entry of the 256-color palette (0–15 are the theme's ANSI colors).
    Indexed(u8),
    /// A 24-bit color.
    Rgb(u8, u8, u8),
}

/// How a run of text is underlined (SGR 4 and its `4:n` sub-parameters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum UnderlineStyle {
    #[default]
    None,
    Single,
    Double,
    Curly,
    Dotted,
    Dashed,
}

/// Boolean text attributes, as a small bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StyleFlags(u16);

impl StyleFlags {
    pub(super) fn bits(self) -> u16 {
        self.0
    }

    pub(super) fn from_bits(bits: u16) -> StyleFlags {
        StyleFlags(bits)
    }

    pub const BOLD: Self = Self(1);
    pub const DIM: Self = Self(1 << 1);
    pub const ITALIC: Self = Self(1 << 2);
    pub const BLINK: Self = Self(1 << 3);
    pub const INVERSE: Self = Self(1 << 4);
    pub const HIDDEN: Self = Self(1 << 5);
    pub const STRIKE: Self = Self(1 << 6);
    /// DECSCA: protected from selective erase (DECSED/DECSEL).
    pub const PROTECTED: Self = Self(1 << 7);

    pub const fn empty() -> Self {
        Self(0)
    }

    pub const fn contains(self, other: Self) -> bool {
        self.0 & other.0 == other.0
    }

    pub const fn union(self, other: Self) -> Self {
        Self(self.0 | other.0)
    }

    pub fn insert(&mut self, other: Self) {
        self.0 |= other.0;
    }

    pub fn remove(&mut self, other: Self) {
        self.0 &= !other.0;
    }

    pub fn set(&mut self, other: Self, on: bool) {
        if on {
            self.insert(other)
        } else {
            self.remove(other)
        }
    }
}

/// Index of a hyperlink (OSC 8) in the style table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HyperlinkId(pub(crate) u32);

/// Everything about how a cell looks, except its character.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Style {
    pub fg: Color,
    pub bg: Color,
    /// `Color::Default` means "same as the foreground".
    pub underline_color: Color,
    pub underline: UnderlineStyle,
    pub flags: StyleFlags,
    pub hyperlink: Option<HyperlinkId>,
}

impl Color {
    /// An injective packing into 26 bits, for hashing.
    #[inline]
    fn packed(self) -> u64 {
        match self {
            Color::Default => 0,
            Color::Indexed(i) => 1 << 24 | i as u64,
            Color::Rgb(r, g, b) => 2 << 24 | (r as u64) << 16 | (g as u64) << 8 | b as u64,
        }
    }
}

/// Styles are hashed on every SGR sequence: three words instead of a dozen small writes.
impl std::hash::Hash for Style {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.fg.packed() << 32 | self.bg.packed());
        state.write_u64(
            self.underline_color.packed() << 32
                | (self.underline as u64) << 16
                | self.flags.0 as u64,
        );
        state.write_u64(self.hyperlink.map_or(0, |l| l.0 as u64 + 1));
    }
}

impl Style {
    /// The style of a cell erased with this style as the pen: only the background survives
    /// (background color erase, as xterm and Alacritty do).
    pub fn erased(&self) -> Style {
        Style { bg: self.bg, ..Style::default() }
    }
}

/// Index of a [`Style`] in the style table. Id 0 is always the default style.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StyleId(pub(crate) u32);

impl StyleId {
    pub const DEFAULT: StyleId = StyleId(0);

    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One grid cell: a character, its layout flags and its style.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    bits: u32,
    style: StyleId,
}

const CHAR_MASK: u32 = 0x1F_FFFF;

impl Cell {
    /// The left half of a double-width character.
    pub const WIDE: u32 = 1 << 21;
    /// The right half of a double-width character (holds a space).
    pub const WIDE_SPACER: u32 = 1 << 22;
    /// An empty last column left because a wide character wrapped to the next row.
    pub const LEADING_SPACER: u32 = 1 << 23;
    /// Combining marks follow this cell's character (stored in the row).
    pub const MARKS: u32 = 1 << 24;
    /// Text wrapped after this cell (meaningful on a row's last cell).
    pub const WRAP: u32 = 1 << 25;

    const LAYOUT: u32 =
        Self::WIDE | Self::WIDE_SPACER | Self::LEADING_SPACER | Self::MARKS | Self::WRAP;

    /// The character and flags as one word, for a snapshot.
    pub(super) fn bits(self) -> u32 {
        self.bits
    }

    /// A cell from a snapshot's word: a valid character and known flags only.
    pub(super) fn from_bits(bits: u32, style: StyleId) -> Option<Cell> {
        let known = bits & !(CHAR_MASK | Self::LAYOUT) == 0;
        (known && char::from_u32(bits & CHAR_MASK).is_some()).then_some(Cell { bits, style })
    }

    /// The whole cell as one word, for comparing many cells without a branch each.
    #[inline(always)]
    pub(super) fn raw(self) -> u64 {
        u64::from(self.bits) | u64::from(self.style.0) << 32
    }

    /// A blank cell in the given style.
    #[inline]
    pub const fn blank(style: StyleId) -> Cell {
        Cell { bits: ' ' as u32, style }
    }

    #[inline]
    pub const fn new(c: char, flags: u32, style: StyleId) -> Cell {
        Cell { bits: c as u32 | flags, style }
    }

    #[inline]
    pub fn ch(self) -> char {
        char::from_u32(self.bits & CHAR_MASK).unwrap_or(' ')
    }

    /// The character's code point, unchecked: cheaper than [`Cell::ch`] where only ASCII is
    /// looked at.
    #[inline]
    pub(crate) fn code(self) -> u32 {
        self.bits & CHAR_MASK
    }

    /// The whole cell as one word, for digests of the screen.
    #[inline]
    pub(crate) fn digest_word(self) -> u64 {
        (u64::from(self.bits) << 32) | u64::from(self.style.0)
    }

    #[inline]
    pub fn style(self) -> StyleId {
        self.style
    }

    #[inline]
    pub fn flags(self) -> u32 {
        self.bits & Self::LAYOUT
    }

    #[inline]
    pub fn has(self, flag: u32) -> bool {
        self.bits & flag != 0
    }

    #[inline]
    pub fn set_flag(&mut self, flag: u32, on: bool) {
        if on {
            self.bits |= flag
        } else {
            self.bits &= !flag
        }
    }

    #[inline]
    pub(crate) fn set_style(&mut self, style: StyleId) {
        self.style = style;
    }

    /// The right half of a wide character, or the filler before a wrapped one: a renderer and a
    /// text extractor skip these.
    #[inline]
    pub fn is_filler(self) -> bool {
        self.bits & (Self::WIDE_SPACER | Self::LEADING_SPACER) != 0
    }

    /// True for a space in the default style: what an untouched cell looks like.
    #[inline]
    pub fn is_default_blank(self) -> bool {
        self.bits == ' ' as u32 && self.style == StyleId::DEFAULT
    }
}

impl Default for Cell {
    fn default() -> Self {
        Cell::blank(StyleId::DEFAULT)
    }
}

impl std::fmt::Debug for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cell({:?}, flags={:#x}, style={})", self.ch(), self.flags(), self.style.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_is_eight_bytes() {
        assert_eq!(std::mem::size_of::<Cell>(), 8);
    }

    #[test]
    fn flags_do_not_disturb_the_character() {
        let mut cell = Cell::new('\u{10FFFF}', Cell::WIDE, StyleId(7));
        cell.set_flag(Cell::MARKS, true);
        assert_eq!(cell.ch(), '\u{10FFFF}');
        assert!(cell.has(Cell::WIDE) && cell.has(Cell::MARKS));
        cell.set_flag(Cell::WIDE, false);
        assert!(!cell.has(Cell::WIDE));
        assert_eq!(cell.style(), StyleId(7));
    }
}
