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

/// Append to `joined` (which holds `len` bytes) the text that follows the escape sequences
/// starting at `at`, across more of them, while `fits` says it could still be a value and
/// until `joined` is full, a control moves the cursor, a string begins or the read ends; the
/// length, and whether the read ended (or a string began) before it was clear.
pub(super) fn text_after(
    raw: &[u8],
    mut at: usize,
    joined: &mut [u8],
    mut len: usize,
    fits: impl Fn(&[u8]) -> bool,
) -> (usize, bool) {
    while len < joined.len() {
        let Some(start) = skip_controls(raw, at) else {
            return (len, true);
        };
        let run = raw[start..]
            .iter()
            .position(|&b| b < 0x20 || b == 0x7f)
            .map_or(raw.len(), |n| start + n);
        let take = (run - start).min(joined.len() - len);
        joined[len..len + take].copy_from_slice(&raw[start..start + take]);
        len += take;
        if !fits(&joined[..len]) {
            return (len, false);
        }
        match raw.get(run) {
            None => return (len, len < joined.len()),
            Some(&b) if b == ESC || is_silent(b) => at = run,
            Some(_) => return (len, false),
        }
    }
    (len, false)
}

/// Whether the byte before `at` is the final byte of a CSI sequence that `raw` holds whole:
/// part of the sequence, not text. Anything unusual in it (a control, a missing start) says
/// no, which only means the bytes are looked at as if they were text.
pub(super) fn ends_csi(raw: &[u8], at: usize) -> bool {
    let Some(last) = at.checked_sub(1) else {
        return false;
    };
    if !(0x40..=0x7e).contains(&raw[last]) {
        return false;
    }
    let mut start = last;
    while start > 0 && (0x20..=0x3f).contains(&raw[start - 1]) {
        start -= 1;
    }
    start >= 2 && raw[start - 1] == b'[' && raw[start - 2] == ESC
}

/// Where the text goes on after the escape sequences (and bells) starting at `at`: `None` when
/// the read ends first or a string begins.
fn skip_controls(raw: &[u8], mut at: usize) -> Option<usize> {
    // Whole CSI sequences one after another (cursor moves, colors) are most of what is
    // skipped; anything else, or a sequence cut short, is left to the general scanner.
    while raw.get(at) == Some(&ESC) && raw.get(at + 1) == Some(&b'[') {
        let mut end = at + 2;
        while raw.get(end).is_some_and(|b| (0x20..=0x3f).contains(b)) {
            end += 1;
        }
        match raw.get(end) {
            Some(0x40..=0x7e) => at = end + 1,
            _ => break,
        }
    }
    let mut state = Scan::Ground;
    loop {
        let byte = *raw.get(at)?;
        state = match (state, byte) {
            (_, ESC) => Scan::Escape,
            (_, CAN | SUB) => Scan::Ground,
            (Scan::Ground, b) if is_silent(b) => Scan::Ground,
            (Scan::Ground, _) => return Some(at),
            (Scan::Escape, b'[') => Scan::Csi,
            (Scan::Escape, b']' | b'P' | b'X' | b'^' | b'_') => return None,
            (_, 0x00..=0x1f | 0x7f) => state,
            (Scan::Escape | Scan::Intermediate, 0x20..=0x2f) => Scan::Intermediate,
            (Scan::Csi, 0x40..=0x7e) | (Scan::Escape | Scan::Intermediate, _) => Scan::Ground,
            _ => state,
        };
        at += 1;
    }
}

/// Whether `raw` holds a silent control other than BEL: byte comparisons only, in one pass
/// without an early exit, which the compiler turns into vector code.
pub(super) fn has_silent_but_bell(raw: &[u8]) -> bool {
    raw.iter().fold(0u8, |any, &b| {
        any | u8::from(b < 0x07)
            | u8::from(b.wrapping_sub(0x0e) < 13)
            | u8::from(b.wrapping_sub(0x1c) < 4)
            | u8::from(b == 0x7f)
    }) != 0
}

#[cfg(test)]
#[test]
fn the_silent_check_matches_the_definition() {
    for b in 0..=255u8 {
        assert_eq!(has_silent_but_bell(&[b'x', b]), b != BEL && is_silent(b), "{b:#x}");
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

/// Whether `raw` holds a C1 control (see [`c1_len`]): a byte 0x80 to 0x9F after an ASCII byte
/// or after `c2`. Byte comparisons in one pass, which valid UTF-8 text passes unless it holds
/// U+0080 to U+009F (a continuation byte never follows ASCII).
/// (A read that starts with such a byte is most often a character cut by the read before: the
/// model's own check covers the rare C1 control there.)
pub(super) fn has_c1_after_ascii(raw: &[u8]) -> bool {
    raw.windows(2).fold(false, |any, w| {
        any | ((w[0] < 0x80) | (w[0] == 0xc2)) & (w[1].wrapping_sub(0x80) < 0x20)
    })
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
    let push = |runs: &mut Vec<Run>, from: usize, to: usize, state: Scan, string: usize| {
        if to > from {
            // Where it falls in the text is worked out once the read is split (`process`).
            runs.push(Run { raw: from, text: 0, len: to - from, state, string });
        }
    };
    while i < raw.len() {
        match state {
            Scan::Ground => {
                // Controls that show nothing are no text: "SE<BEL>CRET" shows as SECRET, and so
                // does "SE<C1>CRET" (the parser drops C1 controls).
                let end = (i..raw.len())
                    .find(|&j| raw[j] == ESC || is_silent(raw[j]) || c1_len(raw, j) > 0)
                    .unwrap_or(raw.len());
                push(runs, i, end, state, string);
                if end < raw.len() && raw[end] == ESC {
                    state = Scan::Escape;
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
                push(runs, i, end, state, string);
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
