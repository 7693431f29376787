//! Character widths, remembered: the Unicode width table's answer for the characters a
//! screen prints again and again.
//!
//! Every character outside printable ASCII needs its width (0, 1, 2 or none) before it lands,
//! and unicode-width's lookup walks a three-level table for it: on text in CJK scripts or with
//! emoji that was a tenth of the parse time. Real output repeats a small set of characters
//! (box drawing, a spinner's frames, one script's common letters), so a small direct-mapped
//! memo answers most lookups with one load and one compare, and asks the table otherwise. It
//! is exact by construction: an entry holds the table's own answer for the character it names.

use unicode_width::UnicodeWidthChar;

const SLOTS: usize = 256;
/// An entry's low bits: the width, or this for "no width" (a control).
const NONE: u32 = 3;
const WIDTH_BITS: u32 = 2;

/// Each slot holds a character (shifted up) and its width in the low bits; 0 is empty, so NUL
/// is never stored (it is asked of the table each time).
#[derive(Clone, Debug)]
pub struct Widths {
    slots: Box<[u32; SLOTS]>,
}

impl Default for Widths {
    fn default() -> Self {
        Widths { slots: Box::new([0; SLOTS]) }
    }
}

impl Widths {
    /// `c.width()`, as unicode-width gives it.
    #[inline]
    pub fn of(&mut self, c: char) -> Option<usize> {
        let code = c as u32;
        let slot = &mut self.slots[code as usize % SLOTS];
        if *slot >> WIDTH_BITS == code && *slot != 0 {
            return match *slot & NONE {
                NONE => None,
                width => Some(width as usize),
            };
        }
        let width = c.width();
        match width {
            _ if code == 0 => {}
            None => *slot = code << WIDTH_BITS | NONE,
            Some(w @ 0..=2) => *slot = code << WIDTH_BITS | w as u32,
            Some(_) => {}
        }
        width
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_answer_is_the_tables_whatever_came_before() {
        let mut widths = Widths::default();
        // Twice over a range that collides in every slot: the second pass reads remembered
        // entries, and each must be the character's own.
        let samples = (0u32..0x3400).chain(0x1F300..0x1F700).chain([0x4E00, 0xAC00, 0xFF21]);
        for _ in 0..2 {
            for code in samples.clone() {
                let Some(c) = char::from_u32(code) else { continue };
                assert_eq!(widths.of(c), c.width(), "U+{code:04X}");
            }
        }
    }
}
