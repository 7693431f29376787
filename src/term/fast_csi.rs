//! The fast path's reader: `ESC [`, decimal parameters separated by `;`, a final byte.
//!
//! That form is most of the escape sequences programs write (SGR, cursor positioning,
//! erasing), and here it is read in one tight loop instead of vte's state machine stepping a
//! byte at a time. The parameters are what vte 0.15 would give for the same bytes: each
//! saturated at `u16::MAX` as vte saturates it, an empty one 0, one group of one value per
//! parameter, no intermediates. Anything else returns `None` and goes to vte: a private marker
//! (`?`), an intermediate, a `:` sub-parameter, a control or DEL inside the sequence, more
//! parameters than [`MAX`], or a sequence cut off by the end of the input.

/// Most parameters read here. vte keeps 32; a longer sequence is rare and goes to vte, which
/// also decides when one has too many.
pub(super) const MAX: usize = 16;

/// A CSI sequence read by the fast path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Csi {
    values: [u16; MAX],
    len: usize,
    /// The final byte.
    pub(super) action: u8,
}

impl Csi {
    /// The parameters as vte's `Params` iterates them: one group of one value each.
    pub(super) fn groups(&self) -> std::slice::Chunks<'_, u16> {
        self.values[..self.len].chunks(1)
    }
}

impl Default for Csi {
    fn default() -> Self {
        Csi { values: [0; MAX], len: 0, action: 0 }
    }
}

/// Read the sequence at the start of `bytes` (which starts with ESC) into `csi` (whose
/// earlier contents do not matter): its length in bytes. The parser keeps one `Csi` to read
/// into, since copying one out of a return value cost the fast path a tenth of its time.
#[inline]
pub(super) fn read(bytes: &[u8], csi: &mut Csi) -> Option<usize> {
    if bytes.get(1) != Some(&b'[') {
        return None;
    }
    csi.len = 0;
    let mut value: u16 = 0;
    for (at, &byte) in bytes.iter().enumerate().skip(2) {
        match byte {
            b'0'..=b'9' => value = value.saturating_mul(10).saturating_add(u16::from(byte - b'0')),
            b';' => {
                if csi.len == MAX - 1 {
                    return None;
                }
                csi.values[csi.len] = value;
                csi.len += 1;
                value = 0;
            }
            0x40..=0x7e => {
                csi.values[csi.len] = value;
                csi.len += 1;
                csi.action = byte;
                return Some(at + 1);
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(csi: &Csi) -> Vec<u16> {
        csi.groups().map(|group| group[0]).collect()
    }

    /// What the parser gets: the length and the sequence, or nothing.
    fn fast(bytes: &[u8]) -> Option<(usize, Csi)> {
        // Left over from an earlier sequence: nothing of it may show.
        let mut csi = Csi { values: [7; MAX], len: 9, action: b'X' };
        read(bytes, &mut csi).map(|len| (len, csi))
    }

    #[test]
    fn reads_parameters_as_vte_gives_them() {
        let (len, csi) = fast(b"\x1b[38;2;1;22;255mX").expect("fast");
        assert_eq!((len, csi.action, values(&csi)), (16, b'm', vec![38, 2, 1, 22, 255]));
        let (_, csi) = fast(b"\x1b[H").expect("fast");
        assert_eq!((csi.action, values(&csi)), (b'H', vec![0]));
        let (_, csi) = fast(b"\x1b[;5;H").expect("fast");
        assert_eq!(values(&csi), vec![0, 5, 0]);
        // vte saturates: 99999 and a run of a hundred digits are both 65535.
        let long = format!("\x1b[99999;{}m", "9".repeat(100));
        assert_eq!(values(&fast(long.as_bytes()).expect("fast").1), vec![65535, 65535]);
    }

    #[test]
    fn leaves_everything_else_to_vte() {
        for bytes in [
            &b"\x1b[?25h"[..],
            b"\x1b[38:2:1:2:3m",
            b"\x1b[1\x08m",
            b"\x1b[1\x7fm",
            b"\x1b[2 q",
            b"\x1b[12;4",
            b"\x1b[",
            b"\x1b]0;t\x07",
            b"\x1bM",
            b"\x1b",
            b"\x1b[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17m",
        ] {
            assert_eq!(fast(bytes), None, "{bytes:?}");
        }
        assert!(fast(b"\x1b[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16m").is_some());
    }
}
