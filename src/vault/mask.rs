//! Masking: the values of the secrets a pane was given never reach its terminal model. Each
//! occurrence in the program's output becomes as many `*` as the value has bytes, also when it
//! arrives split across reads or with escape sequences between its characters (a redraw that
//! colours or moves between them), and inside escape sequences' strings (a window title).
//!
//! Matching runs on the output's text: the bytes left once the syntax of escape sequences is
//! set aside (`scan`). A tail that could be the start of a value is held back until the next
//! read shows whether it is one; the pane's reader flushes it unmasked if nothing follows
//! within [`HOLD_DEADLINE`] (a program that prints a value slowly enough, byte by byte, is not
//! masked: the README says so).
//!
//! The multi-pattern search (aho-corasick) knows only each value's first [`PREFIX`] bytes;
//! every candidate is checked against the whole value, which lives only in wiped memory.

use std::time::Duration;

use aho_corasick::{AhoCorasick, MatchKind};
use zeroize::{Zeroize, Zeroizing};

use super::store::SecretBytes;

/// How many bytes of each value the search automaton holds.
const PREFIX: usize = 4;
/// Held-back bytes past this are passed on: only a flood of escape sequences after a partial
/// value gets here.
const MAX_HELD: usize = 16 * 1024;
/// How long a held-back tail waits for the rest of the output.
pub const HOLD_DEADLINE: Duration = Duration::from_millis(20);

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

/// Where the escape-sequence scanner is between two bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Scan {
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
    fn is_string(self) -> bool {
        matches!(self, Scan::Str | Scan::Dcs)
    }
}

/// A stretch of text in the raw output: `len` bytes at `raw` that are bytes `text..` of the
/// text, all read in `state` (Ground or Str).
#[derive(Clone, Copy, Debug)]
struct Run {
    raw: usize,
    text: usize,
    len: usize,
    state: Scan,
    /// Which string (counted from the read's start) a Str run belongs to.
    string: usize,
}

/// The first one, two and three bytes of the values longer than that.
struct ShortPrefixes {
    one: [bool; 256],
    two: Box<[u64; 1024]>,
    three: Vec<u32>,
}

impl ShortPrefixes {
    fn new(values: &[SecretBytes]) -> ShortPrefixes {
        let mut short =
            ShortPrefixes { one: [false; 256], two: Box::new([0; 1024]), three: Vec::new() };
        for v in values {
            if v.len() > 1 {
                short.one[v[0] as usize] = true;
            }
            if v.len() > 2 {
                let pair = (v[0] as usize) << 8 | v[1] as usize;
                short.two[pair / 64] |= 1 << (pair % 64);
            }
            if v.len() > 3 {
                short.three.push(u32::from_be_bytes([0, v[0], v[1], v[2]]));
            }
        }
        short
    }

    /// Whether `tail` (one to three bytes) is the start of a longer value.
    fn could_start(&self, tail: &[u8]) -> bool {
        match *tail {
            [a] => self.one[a as usize],
            [a, b] => {
                let pair = (a as usize) << 8 | b as usize;
                self.two[pair / 64] & (1 << (pair % 64)) != 0
            }
            [a, b, c] => self.three.contains(&u32::from_be_bytes([0, a, b, c])),
            _ => false,
        }
    }
}

impl Drop for ShortPrefixes {
    fn drop(&mut self) {
        self.one.zeroize();
        self.two.zeroize();
        self.three.zeroize();
    }
}

/// A value found whole: its first byte, the byte after its last, which value.
type Found = (usize, usize, usize);

/// Masks a fixed set of values in one pane's output stream.
pub struct Masker {
    values: Vec<SecretBytes>,
    finder: AhoCorasick,
    /// The values each search pattern (a value's first bytes) stands for.
    by_prefix: Vec<Vec<usize>>,
    /// Bytes that start some value.
    starts: [bool; 256],
    /// Proper prefixes of one, two and three bytes (of values longer than that), for the
    /// checks made at every escape sequence: the first two as bit sets, the third as a list.
    short: ShortPrefixes,
    /// Raw output not passed on yet, and the scanner's state at its start.
    held: Zeroizing<Vec<u8>>,
    held_state: Scan,
    /// The scanner's state after the last byte seen.
    end_state: Scan,
    /// How many times each value was masked.
    counts: Vec<u64>,
    runs: Vec<Run>,
    text: Zeroizing<Vec<u8>>,
}

impl Masker {
    /// A masker for `values` (empty values are ignored); `None` when there is nothing to mask.
    pub fn new(values: Vec<SecretBytes>) -> Option<Masker> {
        let values: Vec<SecretBytes> = values.into_iter().filter(|v| !v.is_empty()).collect();
        if values.is_empty() {
            return None;
        }
        let mut prefixes: Vec<Zeroizing<Vec<u8>>> = Vec::new();
        let mut by_prefix: Vec<Vec<usize>> = Vec::new();
        let mut starts = [false; 256];
        for (index, value) in values.iter().enumerate() {
            starts[value[0] as usize] = true;
            let prefix = &value[..value.len().min(PREFIX)];
            match prefixes.iter().position(|p| p.as_slice() == prefix) {
                Some(at) => by_prefix[at].push(index),
                None => {
                    prefixes.push(Zeroizing::new(prefix.to_vec()));
                    by_prefix.push(vec![index]);
                }
            }
        }
        let short = ShortPrefixes::new(&values);
        let finder = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(prefixes.iter().map(|p| p.as_slice()))
            .ok()?;
        let counts = vec![0; values.len()];
        Some(Masker {
            values,
            finder,
            by_prefix,
            starts,
            short,
            held: Zeroizing::new(Vec::new()),
            held_state: Scan::Ground,
            end_state: Scan::Ground,
            counts,
            runs: Vec::new(),
            text: Zeroizing::new(Vec::new()),
        })
    }

    /// Whether some output is held back, waiting to see if it is a value.
    pub fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// How many times each value (in the order given) has been masked so far.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Pass the held-back tail on: nothing more came in time. Whole values in it are masked;
    /// the start of one is passed on as it is.
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        if self.held.is_empty() {
            return;
        }
        let raw = std::mem::take(&mut self.held);
        self.process(&raw, out, false);
    }

    /// Append to `out` what of `input` (after anything held back) the terminal may see, with
    /// every value masked; hold back a tail that could be the start of one.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.held.is_empty() {
            self.process(input, out, true);
        } else {
            let mut raw = std::mem::take(&mut self.held);
            raw.extend_from_slice(input);
            self.process(&raw, out, true);
        }
    }

    /// Mask `raw` into `out`; with `may_hold`, keep back a tail that could start a value.
    fn process(&mut self, raw: &[u8], out: &mut Vec<u8>, may_hold: bool) {
        // Most output holds no value and nothing that could be the start of one: it is masked
        // where a value stands whole, without working out its text.
        if let Some((matches, cut)) = self.find_contiguous(raw, may_hold) {
            let start = out.len();
            out.extend_from_slice(&raw[..cut]);
            for (from, to, value) in matches {
                out[start + from..start + to].fill(b'*');
                self.counts[value] += 1;
            }
            let before = self.held_state;
            self.end_state = end_state(raw, before);
            self.held_state =
                if cut == raw.len() { self.end_state } else { end_state(&raw[..cut], before) };
            self.held.clear();
            self.held.extend_from_slice(&raw[cut..]);
            return;
        }
        self.runs.clear();
        self.end_state = scan(raw, self.held_state, &mut self.runs);
        // The text: what shows on screen (text between escape sequences, joined), then each
        // string (a title, a link) on its own, after an ESC (in no value) that keeps values
        // from spanning two of them.
        let mut offset = 0;
        for run in self.runs.iter_mut().filter(|r| !r.state.is_string()) {
            run.text = offset;
            offset += run.len;
        }
        let mut last_string = None;
        for run in self.runs.iter_mut().filter(|r| r.state.is_string()) {
            if last_string != Some(run.string) {
                offset += 1;
                last_string = Some(run.string);
            }
            run.text = offset;
            offset += run.len;
        }
        let mut by_text = self.runs.clone();
        by_text.sort_by_key(|r| r.text);
        self.text.clear();
        for run in &by_text {
            if run.text > self.text.len() {
                self.text.push(ESC);
            }
            self.text.extend_from_slice(&raw[run.raw..run.raw + run.len]);
        }
        let text: &[u8] = &self.text;
        // Where a later read could continue the text: the end of what shows, and the end of a
        // string that has not ended yet.
        let shown_end =
            self.runs.iter().filter(|r| !r.state.is_string()).map(|r| r.text + r.len).max();
        let mut open_ends = vec![shown_end.unwrap_or(0)];
        if matches!(self.end_state, Scan::Str | Scan::Dcs | Scan::StrEscape) {
            open_ends
                .extend(self.runs.last().filter(|r| r.state.is_string()).map(|r| r.text + r.len));
        }
        let open_ends = if may_hold { open_ends } else { Vec::new() };
        let (matches, holds) = self.find(text, &open_ends);
        // Raw ranges: a value read across runs spans from its first byte's to its last's.
        let raw_range = |from: usize, to: usize| {
            (raw_position(&by_text, from), raw_position(&by_text, to - 1) + 1)
        };
        let mut cut = holds.iter().map(|&h| raw_position(&by_text, h)).min().unwrap_or(raw.len());
        // A whole value that runs into the held tail is held with it, so that the next read
        // sees it whole again.
        while let Some(start) = matches
            .iter()
            .map(|&(from, to, _)| raw_range(from, to))
            .filter(|&(start, end)| start < cut && end > cut)
            .map(|(start, _)| start)
            .min()
        {
            cut = start;
        }
        if raw.len() - cut > MAX_HELD {
            cut = raw.len();
        }
        let start = out.len();
        out.extend_from_slice(&raw[..cut]);
        for &(from, to, value) in &matches {
            if raw_range(from, to).1 > cut {
                continue;
            }
            self.counts[value] += 1;
            mask(&by_text, from, to, &mut out[start..]);
        }
        self.held_state = if cut == raw.len() {
            self.end_state
        } else {
            let run = self.runs.partition_point(|r| r.raw + r.len <= cut);
            self.runs.get(run).map_or(self.end_state, |r| r.state)
        };
        self.held.clear();
        self.held.extend_from_slice(&raw[cut..]);
        self.text.zeroize();
    }

    /// Every position in `hay` where some value's first bytes stand (overlapping ones too).
    fn candidates<'h>(&'h self, hay: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
        let mut from = 0;
        std::iter::from_fn(move || {
            let input = aho_corasick::Input::new(hay).range(from..);
            let found = self.finder.find(input)?;
            from = found.start() + 1;
            Some(found.start())
        })
    }

    /// The values whose first bytes `rest` starts with.
    fn values_at<'a>(&'a self, rest: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
        self.by_prefix
            .iter()
            .filter(move |group| {
                let prefix = &self.values[group[0]][..self.values[group[0]].len().min(PREFIX)];
                rest.starts_with(prefix)
            })
            .flatten()
            .copied()
    }

    /// Every value that stands whole in `raw` (start, end, which); `None` when `raw` may hold
    /// one broken by an escape sequence, or end with the start of one: the text must be worked
    /// out then.
    fn find_contiguous(&self, raw: &[u8], may_hold: bool) -> Option<(Vec<Found>, usize)> {
        // Inside a string (a title, a link) every control is ignored, so any of them could
        // stand inside a value: reads with strings go the slow way.
        let string_start =
            |byte: Option<&u8>| matches!(byte, Some(b']' | b'P' | b'X' | b'^' | b'_'));
        let opens_string = match self.held_state {
            Scan::Str | Scan::Dcs | Scan::StrEscape => true,
            Scan::Escape => string_start(raw.first()),
            _ => false,
        };
        if opens_string {
            return None;
        }
        let mut matches = Vec::new();
        // Where a tail that a later read could make a value begins: held back from there.
        let mut cut = raw.len();
        for at in self.candidates(raw) {
            let rest = &raw[at..];
            for index in self.values_at(rest) {
                let value = self.values[index].as_slice();
                let same = rest.iter().zip(value).take_while(|(a, b)| a == b).count();
                if same == value.len() {
                    // Bytes that read as text only: not an escape sequence's final byte.
                    if !matches!(
                        end_state(&raw[..at], self.held_state),
                        Scan::Ground | Scan::Str | Scan::Dcs
                    ) {
                        return None;
                    }
                    matches.push((at, at + value.len(), index));
                } else if same == rest.len() && may_hold {
                    cut = cut.min(at);
                } else if rest.get(same).is_some_and(|&b| b == ESC || is_silent(b)) {
                    return None;
                }
            }
        }
        // The start of a value at the very end, shorter than the search's prefixes.
        let could_start = |tail: &[u8]| self.short.could_start(tail);
        let tail = raw.len().saturating_sub(PREFIX - 1)..raw.len();
        if let Some(at) = tail.into_iter().find(|&at| may_hold && could_start(&raw[at..])) {
            cut = cut.min(at);
        }
        // An escape sequence or a bell within a value's first bytes, which the search does not
        // see; other silent controls are rare enough to send the whole read the slow way.
        for esc in memchr::memchr2_iter(ESC, BEL, raw) {
            if raw[esc] == ESC && string_start(raw.get(esc + 1)) {
                return None;
            }
            // Most escape sequences follow text that starts no value, or another sequence
            // (whose final byte, the `A` of a cursor move, is not text): nothing to look at.
            let window = &raw[esc.saturating_sub(PREFIX - 1)..esc];
            // One branch for the three bytes, not one each: which way it goes is hard to guess.
            let near_start = window.iter().fold(false, |any, &b| any | self.starts[b as usize]);
            if !near_start || ends_csi(raw, esc) {
                continue;
            }
            for k in 1..PREFIX.min(esc + 1) {
                let before = &raw[esc - k..esc];
                if !could_start(before) {
                    continue;
                }
                // Does the text after the escape sequences go on with the value? Read on, across
                // more of them, until it is clear.
                let mut joined = [0u8; 2 * PREFIX];
                joined[..k].copy_from_slice(before);
                let fits = |joined: &[u8]| {
                    // Short ones by the tables (most reads stop here), longer ones by the values.
                    let whole = || self.values.iter().any(|v| v.as_slice() == joined);
                    if joined.len() <= 3 {
                        return self.short.could_start(joined) || whole();
                    }
                    self.values.iter().any(|v| {
                        let n = v.len().min(joined.len());
                        v[..n] == joined[..n]
                    })
                };
                let (len, open) = text_after(raw, esc, &mut joined, k, fits);
                let goes_on = len > k && fits(&joined[..len]);
                if open && may_hold {
                    // The read ends before it is clear: hold from here.
                    cut = cut.min(esc - k);
                } else if goes_on || open {
                    return None;
                }
            }
        }
        let silent = has_silent_but_bell(raw);
        // A value that runs into the held tail is left to the slow way.
        if silent || matches.iter().any(|&(_, end, _)| end > cut) {
            return None;
        }
        Some((matches, cut))
    }

    /// Every whole value in `text` (start, end, which), and the starts of tails that a later
    /// read could make whole: tails ending at one of `open_ends`.
    fn find(&self, text: &[u8], open_ends: &[usize]) -> (Vec<Found>, Vec<usize>) {
        let mut matches = Vec::new();
        let mut holds = Vec::new();
        for at in self.candidates(text) {
            // A value never spans two parts of the text (they are apart by an ESC).
            let end = memchr::memchr(ESC, &text[at..]).map_or(text.len(), |n| at + n);
            let rest = &text[at..end];
            for index in self.values_at(&text[at..]) {
                let value = self.values[index].as_slice();
                if rest.len() >= value.len() {
                    if &rest[..value.len()] == value {
                        matches.push((at, at + value.len(), index));
                    }
                } else if open_ends.contains(&end) && value.starts_with(rest) {
                    holds.push(at);
                }
            }
        }
        // Tails shorter than the search's prefixes.
        for &end in open_ends {
            for at in end.saturating_sub(PREFIX - 1)..end {
                let rest = &text[at..end];
                let could = self.starts[rest[0] as usize]
                    && self.values.iter().any(|v| v.len() > rest.len() && v.starts_with(rest));
                if could {
                    holds.push(at);
                    break;
                }
            }
        }
        (matches, holds)
    }
}

impl Drop for Masker {
    fn drop(&mut self) {
        self.text.zeroize();
    }
}

/// The raw position of text byte `at`.
fn raw_position(runs: &[Run], at: usize) -> usize {
    let index = runs.partition_point(|r| r.text + r.len <= at);
    let run = &runs[index];
    run.raw + (at - run.text)
}

/// Star the raw bytes of text bytes `from..to` in `out` (which holds the raw bytes from 0).
fn mask(runs: &[Run], from: usize, to: usize, out: &mut [u8]) {
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
fn text_after(
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
fn ends_csi(raw: &[u8], at: usize) -> bool {
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
fn has_silent_but_bell(raw: &[u8]) -> bool {
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

/// A control character that neither shows nor moves the cursor (a terminal ignores it, or
/// rings the bell): it does not break the text a value is read in.
fn is_silent(byte: u8) -> bool {
    matches!(byte, 0x00..=0x07 | 0x0e..=0x1a | 0x1c..=0x1f | 0x7f)
}

/// The scanner's state after `raw`, read from `state`: only the last escape sequence matters.
fn end_state(raw: &[u8], state: Scan) -> Scan {
    let mut ignored = Vec::new();
    match memchr::memrchr(ESC, raw) {
        Some(last) => scan(&raw[last + 1..], Scan::Escape, &mut ignored),
        None if state == Scan::Ground => Scan::Ground,
        None => scan(raw, state, &mut ignored),
    }
}

/// Split `raw` into runs of text, starting in `state`; the state after its last byte.
fn scan(raw: &[u8], mut state: Scan, runs: &mut Vec<Run>) -> Scan {
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
                // Controls that show nothing are no text: "SE<BEL>CRET" shows as SECRET.
                let end = raw[i..]
                    .iter()
                    .position(|&b| b == ESC || is_silent(b))
                    .map_or(raw.len(), |n| i + n);
                push(runs, i, end, state, string);
                if end < raw.len() && raw[end] == ESC {
                    state = Scan::Escape;
                }
                i = end + 1;
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

#[cfg(test)]
#[path = "mask_tests.rs"]
mod tests;
