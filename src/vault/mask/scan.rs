//! The escape-sequence syntax of a pane's output, as far as masking needs it: which bytes are
//! text (what shows, and the strings of OSC, DCS, SOS, PM and APC sequences), split into runs
//! that map text positions back to raw ones. It knows no value.

pub(super) const ESC: u8 = 0x1b;
pub(super) const BEL: u8 = 0x07;
pub(super) const CAN: u8 = 0x18;
pub(super) const SUB: u8 = 0x1a;

/// Where the escape-sequence scanner is between two bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum Scan {
    /// Text.
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (ESC ( B).
    Intermediate,
    /// Inside a CSI sequence's parameters.
    Csi,
    /// Inside the string of an OSC sequence: text, as far as masking goes.
    Str,
    /// Inside the string of a DCS, SOS, PM or APC sequence (which BEL does not end).
    Dcs,
    /// After ESC inside such a string (ESC \ ends it).
    StrEscape,
}

impl Scan {
    pub(super) fn is_string(self) -> bool {
        matches!(self, Scan::Str | Scan::Dcs)
    }
}

/// A stretch of text in the raw output: `len` bytes at `raw` that are bytes `text..` of the
/// text, all read in `state` (Ground or Str).
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    pub(super) raw: usize,
    pub(super) text: usize,
    pub(super) len: usize,
    pub(super) state: Scan,
    /// Which string (counted from the read's start) a Str run belongs to.
    pub(super) string: usize,
    /// Which stretch of shown text between two escape sequences a Ground run belongs to: a
    /// sequence breaks the text, silent controls do not.
    pub(super) piece: usize,
}

/// The raw position of text byte `at`.
pub(super) fn raw_position(runs: &[Run], at: usize) -> usize {
    let index = runs.partition_point(|r| r.text + r.len <= at);
    let run = &runs[index];
    run.raw + (at - run.text)
}

/// Star the raw bytes of text bytes `from..to` in `out` (which holds the raw bytes from 0).
pub(super) fn mask(runs: &[Run], from: usize, to: usize, out: &mut [u8]) {
    let first = runs.partition_point(|r| r.text + r.len <= from);
    for run in &runs[first..] {
        if run.text >= to {
            break;
        }
        let a = from.max(run.text) - run.text + run.raw;
        let b = to.min(run.text + run.len) - run.text + run.raw;
        let b = b.min(out.len());
        out[a.min(b)..b].fill(b'*');
    }
}

/// Whether the text of `raw` is more than its bytes: a silent control (BEL too) or a C1
/// control between them, or a string sequence (OSC, DCS, SOS, PM, APC), whose text is read on
/// its own. Byte comparisons in one pass without an early exit, which the compiler turns into
/// vector code. (A read that starts with a byte 0x80 to 0x9F is most often a character cut by
/// the read before: the model's own check covers the rare C1 control there.)
pub(super) fn needs_text(raw: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, as just checked: the only requirement of a function
        // compiled for it.
        return unsafe { needs_text_avx2(raw) };
    }
    needs_text_portable(raw)
}

/// [`needs_text`] compiled for AVX2: twice the bytes a step of the same code.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn needs_text_avx2(raw: &[u8]) -> bool {
    needs_text_portable(raw)
}

#[inline(always)]
fn needs_text_portable(raw: &[u8]) -> bool {
    let Some(&last) = raw.last() else { return false };
    let silent = |b: u8| {
        u8::from(b < 0x08)
            | u8::from(b.wrapping_sub(0x0e) < 13)
            | u8::from(b.wrapping_sub(0x1c) < 4)
            | u8::from(b == 0x7f)
    };
    // Each byte with the next: two slices zipped, which vectorizes where `windows` may not.
    let pairs = raw.iter().zip(&raw[1..]).fold(0u8, |any, (&a, &b)| {
        let c1 = (u8::from(a < 0x80) | u8::from(a == 0xc2)) & u8::from(b.wrapping_sub(0x80) < 0x20);
        let intro = u8::from(b.wrapping_sub(b']') < 3) | u8::from(b == b'P') | u8::from(b == b'X');
        any | silent(a) | c1 | (u8::from(a == ESC) & intro)
    });
    pairs | silent(last) != 0
}

#[cfg(test)]
#[test]
fn the_text_check_matches_the_definitions() {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            let expected = is_silent(a)
                || is_silent(b)
                || (a == ESC && matches!(b, b']' | b'P' | b'X' | b'^' | b'_'))
                || c1_len(&[a, b], 1) > 0
                || (a == 0xc2 && c1_len(&[a, b], 0) > 0);
            assert_eq!(needs_text(&[a, b]), expected, "{a:#x} {b:#x}");
        }
    }
}

/// The length of a C1 control at `at`, as the parser reads one after text: U+0080 to U+009F
/// encoded (`c2 80` to `c2 9f`), or a raw byte 0x80 to 0x9F after an ASCII byte (not part of a
/// character); 0 when there is none. The parser drops both, so they do not break a value's
/// text. (A stray byte after other non-ASCII bytes is left to the model's own check.)
pub(super) fn c1_len(raw: &[u8], at: usize) -> usize {
    match raw.get(at) {
        Some(0xc2) if raw.get(at + 1).is_some_and(|b| (0x80..=0x9f).contains(b)) => 2,
        Some(0x80..=0x9f) if at == 0 || raw[at - 1] < 0x80 => 1,
        _ => 0,
    }
}

/// A control character that neither shows nor moves the cursor (a terminal ignores it, or
/// rings the bell): it does not break the text a value is read in.
pub(super) fn is_silent(byte: u8) -> bool {
    matches!(byte, 0x00..=0x07 | 0x0e..=0x1a | 0x1c..=0x1f | 0x7f)
}

/// The scanner's state after `raw`, read from `state`: only the last escape sequence matters.
pub(super) fn end_state(raw: &[u8], state: Scan) -> Scan {
    let mut ignored = Vec::new();
    match memchr::memrchr(ESC, raw) {
        Some(last) => scan(&raw[last + 1..], Scan::Escape, &mut ignored),
        None if state == Scan::Ground => Scan::Ground,
        None => scan(raw, state, &mut ignored),
    }
}

/// Split `raw` into runs of text, starting in `state`; the state after its last byte.
pub(super) fn scan(raw: &[u8], mut state: Scan, runs: &mut Vec<Run>) -> Scan {
    let mut i = 0;
    let mut string = 0;
    let mut piece = 0;
    let push = |runs: &mut Vec<Run>, from: usize, to: usize, state: Scan, string: usize, piece| {
        if to > from {
            // Where it falls in the text is worked out once the read is split (`process`).
            runs.push(Run { raw: from, text: 0, len: to - from, state, string, piece });
        }
    };
    while i < raw.len() {
        match state {
            Scan::Ground => {
                // Controls that show nothing are no text: "SE<BEL>CRET" shows as SECRET, and so
                // does "SE<C1>CRET" (the parser drops C1 controls). A `c2` that ends the read
                // may be the first half of one: not text either, until the next read says.
                let end = (i..raw.len())
                    .find(|&j| {
                        raw[j] == ESC
                            || is_silent(raw[j])
                            || c1_len(raw, j) > 0
                            || (raw[j] == 0xc2 && j + 1 == raw.len())
                    })
                    .unwrap_or(raw.len());
                push(runs, i, end, state, string, piece);
                if end < raw.len() && raw[end] == ESC {
                    state = Scan::Escape;
                    piece += 1;
                }
                i = end + c1_len(raw, end).max(1);
            }
            Scan::Str | Scan::Dcs => {
                // Other controls inside a string are ignored: not part of it, not its end (BEL
                // ends an OSC string only).
                let end = raw[i..]
                    .iter()
                    .position(|&b| b < 0x20 || b == 0x7f)
                    .map_or(raw.len(), |n| i + n);
                push(runs, i, end, state, string, piece);
                if end < raw.len() {
                    state = match raw[end] {
                        ESC => Scan::StrEscape,
                        BEL if state == Scan::Str => Scan::Ground,
                        CAN | SUB => Scan::Ground,
                        _ => state,
                    };
                }
                i = end + 1;
            }
            Scan::StrEscape if raw[i] == b'\\' => {
                state = Scan::Ground;
                i += 1;
            }
            // ESC and anything but `\` inside a string: the string is over, a new sequence
            // begins with this byte.
            Scan::StrEscape => state = Scan::Escape,
            Scan::Escape => {
                state = match raw[i] {
                    CAN | SUB => Scan::Ground,
                    // Other controls inside a sequence are carried out without ending it.
                    0x00..=0x1a | 0x1c..=0x1f | 0x7f => Scan::Escape,
                    b'[' => Scan::Csi,
                    b']' => {
                        string += 1;
                        Scan::Str
                    }
                    b'P' | b'X' | b'^' | b'_' => {
                        string += 1;
                        Scan::Dcs
                    }
                    0x20..=0x2f => Scan::Intermediate,
                    ESC => Scan::Escape,
                    _ => Scan::Ground,
                };
                i += 1;
            }
            Scan::Intermediate | Scan::Csi => {
                let ends: &[u8] = if state == Scan::Csi { b"\x40\x7e" } else { b"\x30\x7e" };
                state = match raw[i] {
                    ESC => Scan::Escape,
                    CAN | SUB => Scan::Ground,
                    0x00..=0x1f | 0x7f => state,
                    b if (ends[0]..=ends[1]).contains(&b) => Scan::Ground,
                    _ => state,
                };
                i += 1;
            }
        }
    }
    state
}
