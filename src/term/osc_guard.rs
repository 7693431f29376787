//! Bound the length of OSC strings before vte sees them.
//!
//! vte (with `std`) buffers an OSC string without limit until its terminator, so a program that
//! starts `ESC ]` and never ends it would grow memory forever. The guard follows just enough of
//! vte's state machine to know when an OSC string is open (`ESC ]` always opens one, from any
//! state), counts its bytes, and past `MAX_OSC_BYTES` ends it with CAN, tells the handler to
//! ignore that dispatch (it would see a truncated string), and drops the rest of the string up
//! to its terminator. Every other byte passes through unchanged and in order.

/// Longest OSC string passed on: room for a large OSC 52 clipboard write.
pub const MAX_OSC_BYTES: usize = 1 << 20;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Track {
    #[default]
    Outside,
    /// Just after an ESC (and any C0 vte executes in its escape state).
    AfterEsc,
    /// Inside an OSC string, with this many bytes so far.
    InOsc(usize),
    /// Dropping the rest of an oversized string.
    Dropping,
    /// Dropping, and just saw an ESC: `\` ends the string; anything else starts a new sequence.
    DroppingEsc,
}

/// What to do with the next piece of input.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    Bytes(&'a [u8]),
    /// The OSC string in progress was too long: ignore its dispatch (CAN follows).
    AbortOsc,
}

#[derive(Debug, Default)]
pub struct OscGuard {
    track: Track,
}

const CAN: &[u8] = b"\x18";
const ESC: u8 = 0x1b;

impl OscGuard {
    /// Where the guard stands, as (kind, bytes of the string so far), for a snapshot.
    pub(super) fn parts(&self) -> (u8, usize) {
        match self.track {
            Track::Outside => (0, 0),
            Track::AfterEsc => (1, 0),
            Track::InOsc(n) => (2, n),
            Track::Dropping => (3, 0),
            Track::DroppingEsc => (4, 0),
        }
    }

    pub(super) fn from_parts(kind: u8, n: usize) -> Option<OscGuard> {
        let track = match (kind, n) {
            (0, 0) => Track::Outside,
            (1, 0) => Track::AfterEsc,
            (2, n) if n <= MAX_OSC_BYTES => Track::InOsc(n),
            (3, 0) => Track::Dropping,
            (4, 0) => Track::DroppingEsc,
            _ => return None,
        };
        Some(OscGuard { track })
    }

    pub fn feed(&mut self, input: &[u8], mut sink: impl FnMut(Piece<'_>)) {
        let mut start = 0; // first byte not yet handed on
        let mut i = 0;
        while i < input.len() {
            let byte = input[i];
            match self.track {
                Track::Outside => {
                    // `ESC ]` opens an OSC string, with any C0 controls vte executes in between.
                    // Look for the rare `]` and check behind it, rather than stopping at every
                    // ESC of a TUI's output.
                    let rest = &input[i..];
                    let opens = memchr::memchr_iter(b']', rest).find(|&at| {
                        let before = rest[..at].iter().rposition(|&b| !executed_in_escape(b));
                        before.is_some_and(|k| rest[k] == ESC)
                    });
                    match opens {
                        Some(at) => {
                            i += at + 1;
                            self.track = Track::InOsc(0);
                        }
                        None => {
                            // An ESC at the very end (C0s aside) may open one in the next chunk.
                            let last = rest.iter().rposition(|&b| !executed_in_escape(b));
                            if last.is_some_and(|k| rest[k] == ESC) {
                                self.track = Track::AfterEsc;
                            }
                            i = input.len();
                        }
                    }
                }
                Track::AfterEsc => {
                    self.track = match byte {
                        b']' => Track::InOsc(0),
                        ESC => Track::AfterEsc,
                        b if executed_in_escape(b) => Track::AfterEsc,
                        _ => Track::Outside,
                    };
                    i += 1;
                }
                Track::InOsc(len) => {
                    self.track = match byte {
                        0x07 | 0x18 | 0x1a => Track::Outside,
                        ESC => Track::AfterEsc,
                        _ if len + 1 > MAX_OSC_BYTES => {
                            sink(Piece::Bytes(&input[start..i]));
                            sink(Piece::AbortOsc);
                            sink(Piece::Bytes(CAN));
                            start = i + 1;
                            Track::Dropping
                        }
                        _ => Track::InOsc(len + 1),
                    };
                    i += 1;
                }
                Track::Dropping | Track::DroppingEsc => {
                    let was_esc = self.track == Track::DroppingEsc;
                    self.track = match byte {
                        b'\\' if was_esc => Track::Outside,
                        ESC => Track::DroppingEsc,
                        0x07 | 0x18 | 0x1a => Track::Outside,
                        _ if was_esc => {
                            // A new sequence began: hand on the ESC we held back, and look at
                            // this byte again as the byte after an ESC.
                            sink(Piece::Bytes(&[ESC]));
                            start = i;
                            self.track = Track::AfterEsc;
                            continue;
                        }
                        _ => Track::Dropping,
                    };
                    i += 1;
                    start = i;
                }
            }
        }
        if start < input.len() {
            sink(Piece::Bytes(&input[start..]));
        }
    }
}

/// Bytes vte executes (or ignores) in its escape state without leaving it.
fn executed_in_escape(byte: u8) -> bool {
    matches!(byte, 0x00..=0x17 | 0x19 | 0x1c..=0x1f | 0x7f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&[u8]]) -> (Vec<u8>, usize) {
        let mut guard = OscGuard::default();
        let (mut out, mut aborts) = (Vec::new(), 0);
        for chunk in chunks {
            guard.feed(chunk, |piece| match piece {
                Piece::Bytes(b) => out.extend_from_slice(b),
                Piece::AbortOsc => aborts += 1,
            });
        }
        (out, aborts)
    }

    #[test]
    fn ordinary_input_passes_unchanged() {
        let input: &[u8] = b"text\x1b[1mbold\x1b]0;title\x07\x1b]8;;u\x1b\\x\x1b\x00]2;t\x07";
        assert_eq!(run(&[input]), (input.to_vec(), 0));
        assert_eq!(run(&[&input[..7], &input[7..20], &input[20..]]), (input.to_vec(), 0));
    }

    #[test]
    fn c0_controls_between_esc_and_bracket_do_not_hide_an_osc() {
        let mut input = b"a\x1b".to_vec();
        let mut tail = b"\x00]0;".to_vec();
        tail.extend(std::iter::repeat_n(b'x', MAX_OSC_BYTES + 1));
        let (_, aborts) = run(&[&input, &tail]);
        assert_eq!(aborts, 1);
        input.extend_from_slice(&tail);
        let (_, aborts) = run(&[&input]);
        assert_eq!(aborts, 1);
    }

    #[test]
    fn an_oversized_osc_is_cut_and_the_rest_dropped() {
        let mut input = b"a\x1b]52;c;".to_vec();
        input.extend(std::iter::repeat_n(b'A', MAX_OSC_BYTES + 10));
        input.extend_from_slice(b"\x07after");
        let (out, aborts) = run(&[&input]);
        assert_eq!(aborts, 1);
        assert_eq!(out.len(), 1 + 2 + MAX_OSC_BYTES + 1 + 5);
        assert!(out.ends_with(b"\x18after"));
        // Terminated by ESC \ instead, split across chunks.
        let mut input = b"\x1b]0;".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_OSC_BYTES + 3));
        input.extend_from_slice(b"\x1b");
        let (out, aborts) = run(&[&input, b"\\ok"]);
        assert_eq!(aborts, 1);
        assert!(out.ends_with(b"\x18ok"));
        // Ended by the start of another sequence: that sequence survives.
        let mut input = b"\x1b]0;".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_OSC_BYTES + 3));
        input.extend_from_slice(b"\x1b[31mred");
        let (out, _) = run(&[&input]);
        assert!(out.ends_with(b"\x18\x1b[31mred"));
    }
}
