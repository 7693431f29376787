//! Where vte's parser stands between two chunks, as bytes that put a fresh parser there.
//!
//! A replica of a pane's model (a window attached to the server) starts from a snapshot taken
//! between two chunks, which may fall inside an escape sequence; vte's state is private. So the
//! terminal follows vte's state machine beside it (the same transitions, byte for byte, as
//! vte 0.15's `Parser`) and keeps the sequence in progress as the shortest bytes that lead a
//! fresh parser to a state that behaves the same for this model's `Perform`:
//!
//! - C0 controls vte executes inside a sequence already happened: they are left out (replayed,
//!   they would happen twice), as are the bytes vte ignores there.
//! - A CSI parameter keeps its value, saturated as vte saturates it (a run of a million digits
//!   is five); a CSI or escape sequence vte would dispatch as ignored (too many parameters or
//!   intermediates) becomes one that is ignored the same way.
//! - DCS strings and SOS/PM/APC strings have no effect here (`perform.rs`), so only their state
//!   is kept, never their content.
//! - An OSC string is kept whole: the OSC guard upstream bounds it at 1 MiB.
//!
//! An ESC leads vte to the same state whatever came before it, so each piece of input is
//! followed from its last ESC (one `memrchr`), and bytewise only where a piece holds none and
//! a sequence or string goes on through it.

/// vte's states (`vte::Parser`'s private `State`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum At {
    #[default]
    Ground,
    Escape,
    EscapeIntermediate,
    CsiEntry,
    CsiParam,
    CsiIntermediate,
    CsiIgnore,
    DcsEntry,
    DcsParam,
    DcsIntermediate,
    DcsIgnore,
    DcsPassthrough,
    OscString,
    SosPmApcString,
}

const ESC: u8 = 0x1b;
/// vte's limits: parameters (and subparameters) per sequence, intermediates kept.
const MAX_PARAMS: usize = 32;
const MAX_INTERMEDIATES: usize = 2;

/// The sequence in progress, as bytes for a fresh parser.
#[derive(Debug, Default)]
pub struct SequenceTail {
    at: At,
    bytes: Vec<u8>,
    /// CSI: parameters closed so far (`;` and `:`), intermediates collected.
    separators: usize,
    collected: usize,
    /// CSI: where the current run of digits starts in `bytes`, and its saturated value.
    digits: Option<(usize, u16)>,
}

impl SequenceTail {
    /// Follow `input`, the bytes vte is about to read.
    pub fn feed(&mut self, input: &[u8]) {
        if input.is_empty() {
            return;
        }
        // A character vte held from the last input is finished (or replaced) by this one.
        if self.at == At::Ground {
            self.bytes.clear();
        }
        // An ESC leads vte to its escape state from any state, with nothing kept from before:
        // only the bytes after the last one matter.
        let from = match memchr::memrchr(ESC, input) {
            Some(at) => {
                self.go(At::Escape, b"\x1b");
                at + 1
            }
            None => 0,
        };
        let mut ground_from = from;
        for (i, &byte) in input.iter().enumerate().skip(from) {
            if self.at == At::Ground {
                // No ESC follows: the rest is text, and vte stays in ground.
                break;
            }
            self.step(byte);
            ground_from = i + 1;
        }
        if self.at == At::Ground {
            self.bytes.extend_from_slice(held_character(&input[ground_from..]));
        }
    }

    /// Bytes that lead a fresh parser to where this one stands: in ground, empty or the start
    /// of a character vte holds for the next input. Fed to a parser they call nothing on its
    /// `Perform` but, for a DCS string, `hook`.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn go(&mut self, at: At, canonical: &[u8]) {
        self.at = at;
        self.bytes.clear();
        self.bytes.extend_from_slice(canonical);
        self.separators = 0;
        self.collected = 0;
        self.digits = None;
    }

    fn ground(&mut self) {
        self.go(At::Ground, b"");
    }

    /// CAN, SUB and ESC end any sequence (vte's `anywhere`).
    fn anywhere(&mut self, byte: u8) {
        match byte {
            0x18 | 0x1a => self.ground(),
            ESC => self.go(At::Escape, b"\x1b"),
            _ => {}
        }
    }

    fn step(&mut self, byte: u8) {
        match self.at {
            At::Ground => {
                if byte == ESC {
                    self.go(At::Escape, b"\x1b");
                }
            }
            At::Escape => self.escape(byte),
            At::EscapeIntermediate => match byte {
                0x20..=0x2f => self.collect_escape(byte),
                0x30..=0x7e => self.ground(),
                0x00..=0x17 | 0x19 | 0x1c..=0x1f | 0x7f => {}
                _ => self.anywhere(byte),
            },
            At::CsiEntry | At::CsiParam | At::CsiIntermediate => self.csi(byte),
            At::CsiIgnore => match byte {
                0x40..=0x7e => self.ground(),
                _ => self.anywhere(byte),
            },
            At::DcsEntry | At::DcsParam | At::DcsIntermediate => self.dcs(byte),
            At::DcsIgnore | At::SosPmApcString => self.anywhere(byte),
            At::DcsPassthrough => match byte {
                0x18 | 0x1a | 0x9c => self.ground(),
                ESC => self.go(At::Escape, b"\x1b"),
                _ => {}
            },
            At::OscString => match byte {
                0x07 | 0x18 | 0x1a => self.ground(),
                ESC => self.go(At::Escape, b"\x1b"),
                0x00..=0x06 | 0x08..=0x17 | 0x19 | 0x1c..=0x1f => {}
                _ => self.bytes.push(byte),
            },
        }
    }

    fn escape(&mut self, byte: u8) {
        match byte {
            0x20..=0x2f => {
                self.at = At::EscapeIntermediate;
                self.collect_escape(byte);
            }
            b'P' => self.go(At::DcsEntry, b"\x1bP"),
            b'X' | b'^' | b'_' => self.go(At::SosPmApcString, b"\x1bX"),
            b'[' => self.go(At::CsiEntry, b"\x1b["),
            b']' => self.go(At::OscString, b"\x1b]"),
            0x30..=0x7e => self.ground(),
            0x18 | 0x1a => self.ground(),
            // ESC again, executed C0 controls, DEL and high bytes leave vte where it is.
            _ => {}
        }
    }

    /// An escape sequence's intermediate: past vte's two it sets `ignoring`, which a third
    /// kept byte reproduces; more change nothing.
    fn collect_escape(&mut self, byte: u8) {
        if self.collected <= MAX_INTERMEDIATES {
            self.bytes.push(byte);
            self.collected += 1;
        }
    }

    fn csi(&mut self, byte: u8) {
        match byte {
            b'0'..=b'9' if self.at != At::CsiIntermediate => {
                self.at = At::CsiParam;
                self.digit(byte - b'0');
            }
            b':' | b';' if self.at != At::CsiIntermediate => {
                self.at = At::CsiParam;
                self.separators += 1;
                self.digits = None;
                self.bytes.push(byte);
                if self.separators >= MAX_PARAMS {
                    // Full: vte ignores whatever this sequence dispatches.
                    self.ignore_csi();
                }
            }
            0x3c..=0x3f if self.at == At::CsiEntry => {
                self.at = At::CsiParam;
                self.collect_csi(byte);
            }
            0x20..=0x2f => {
                self.at = At::CsiIntermediate;
                self.digits = None;
                self.collect_csi(byte);
            }
            0x30..=0x3f => self.ignore_csi(),
            0x40..=0x7e => self.ground(),
            0x00..=0x17 | 0x19 | 0x1c..=0x1f | 0x7f => {}
            _ => self.anywhere(byte),
        }
    }

    fn digit(&mut self, digit: u8) {
        let (start, so_far) = *self.digits.get_or_insert((self.bytes.len(), 0));
        let value = so_far.saturating_mul(10).saturating_add(u16::from(digit));
        self.digits = Some((start, value));
        self.bytes.push(b'0' + digit);
        // Five digits hold any value vte keeps: a longer run is written again as its value.
        if self.bytes.len() - start > 5 {
            self.bytes.truncate(start);
            let mut decimal = [0u8; 5];
            let mut rest = value;
            let mut at = decimal.len();
            loop {
                at -= 1;
                decimal[at] = b'0' + (rest % 10) as u8;
                rest /= 10;
                if rest == 0 {
                    break;
                }
            }
            self.bytes.extend_from_slice(&decimal[at..]);
        }
    }

    fn collect_csi(&mut self, byte: u8) {
        if self.collected == MAX_INTERMEDIATES {
            self.ignore_csi();
        } else {
            self.collected += 1;
            self.bytes.push(byte);
        }
    }

    /// A CSI sequence vte will consume without effect: any final byte ends it silently.
    fn ignore_csi(&mut self) {
        self.go(At::CsiIgnore, b"\x1b[0?");
    }

    fn dcs(&mut self, byte: u8) {
        match (self.at, byte) {
            (_, 0x40..=0x7e) => self.go(At::DcsPassthrough, b"\x1bPq"),
            (At::DcsEntry | At::DcsParam, 0x30..=0x3b) => self.go(At::DcsParam, b"\x1bP0"),
            (At::DcsEntry, 0x3c..=0x3f) => self.go(At::DcsParam, b"\x1bP0"),
            (_, 0x30..=0x3f) => self.go(At::DcsIgnore, b"\x1bP0<"),
            (_, 0x20..=0x2f) => self.go(At::DcsIntermediate, b"\x1bP "),
            (_, 0x00..=0x17 | 0x19 | 0x1c..=0x1f | 0x7f) => {}
            _ => self.anywhere(byte),
        }
    }
}

/// The start of a character at the end of text that vte keeps for its next input (its
/// `partial_utf8`): a lead byte and its continuations that are valid so far but incomplete.
/// The terminal's `Utf8Carry` holds such a tail back itself, unless what follows it is no
/// continuation: then vte keeps it, and the next input makes it one replacement character.
pub(super) fn held_character(text: &[u8]) -> &[u8] {
    let from = text.len().saturating_sub(3);
    let Some(lead) = text[from..].iter().rposition(|&b| b & 0xc0 != 0x80) else { return &[] };
    let tail = &text[from + lead..];
    match std::str::from_utf8(tail) {
        Err(e) if e.valid_up_to() == 0 && e.error_len().is_none() => tail,
        _ => &[],
    }
}

#[cfg(test)]
#[path = "sequence_tail_tests.rs"]
mod tests;
