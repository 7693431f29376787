//! Masking, the first line: the values of the secrets a pane was given are starred in its
//! output stream before its terminal model sees them. Each occurrence becomes as many `*` as
//! the value has bytes, also when it arrives split across reads, with controls the terminal
//! ignores between its characters (C0 and C1), and inside escape sequences' strings (a window
//! title). An escape sequence breaks the text: a value drawn in pieces around one (a colour
//! change, a cursor move) is found by the second line, the model's check of what it drew
//! (`term::redact`, with [`ScreenRedactor`]), which catches every drawing order. Looking into
//! escape sequences here as well cost a third of the parse time of escape-heavy output.
//!
//! Matching runs on the output's text: the bytes left once the syntax of escape sequences is
//! set aside (`scan`). A tail that could be the start of a value is held back until the next
//! read shows whether it is one; the pane's reader flushes it unmasked if nothing follows
//! within [`HOLD_DEADLINE`] (a program that prints a value slowly enough, byte by byte, is not
//! masked: the README says so).
//!
//! The multi-pattern search (aho-corasick) knows only each value's first `PREFIX` bytes;
//! every candidate is checked against the whole value, which lives only in wiped memory.
//!
//! Three parts: `scan` (the escape-sequence syntax: which bytes are text), `matcher` (where
//! the values stand), and the [`Masker`] here (one pane's stream: what is held back, what is
//! starred, how often).

use std::time::Duration;

use zeroize::{Zeroize, Zeroizing};

use super::store::SecretBytes;
use matcher::Matcher;
use scan::{end_state, mask, raw_position, scan, Run, Scan, ESC};

mod matcher;
mod scan;
mod screen;

pub use screen::ScreenRedactor;

/// How many bytes of each value the search automaton holds.
const PREFIX: usize = 4;
/// Held-back bytes past this are passed on: only a long value, or a flood of escape sequences
/// after a partial one, gets here.
const MAX_HELD: usize = 16 * 1024;
/// A held tail is looked at again with every read: it may be at most this many times the new
/// read's size (plus `HOLD_FLOOR`), so that a program writing a byte at a time costs little
/// per byte. A longer start of a value passes on; the model's own check (`screen`) stars the
/// value once its end arrives.
const HOLD_PER_READ_BYTE: usize = 16;
const HOLD_FLOOR: usize = 512;
/// How long a held-back tail waits for the rest of the output.
pub const HOLD_DEADLINE: Duration = Duration::from_millis(20);

/// Masks a fixed set of values in one pane's output stream.
pub struct Masker {
    matcher: Matcher,
    /// Raw output not passed on yet, and the scanner's state at its start.
    held: Zeroizing<Vec<u8>>,
    held_state: Scan,
    /// The scanner's state after the last byte seen.
    end_state: Scan,
    /// How many times each value was masked.
    counts: Vec<u64>,
    /// The value each search pattern is: a value with a line end is also looked for with the
    /// `\r\n` a terminal's ONLCR makes of it.
    owner: Vec<usize>,
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
        let counts = vec![0; values.len()];
        let mut owner: Vec<usize> = (0..values.len()).collect();
        let mut patterns = values;
        for index in 0..counts.len() {
            if patterns[index].contains(&b'\n') {
                let mut crlf = Zeroizing::new(Vec::with_capacity(patterns[index].len() + 8));
                for &byte in patterns[index].iter() {
                    if byte == b'\n' {
                        crlf.push(b'\r');
                    }
                    crlf.push(byte);
                }
                patterns.push(SecretBytes::new(&crlf));
                owner.push(index);
            }
        }
        let matcher = Matcher::new(patterns)?;
        Some(Masker {
            matcher,
            held: Zeroizing::new(Vec::new()),
            held_state: Scan::Ground,
            end_state: Scan::Ground,
            counts,
            owner,
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
        self.process(&raw, out, false, 0);
    }

    /// Append to `out` what of `input` (after anything held back) the terminal may see, with
    /// every value masked; hold back a tail that could be the start of one.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        let limit = MAX_HELD.min(HOLD_FLOOR + HOLD_PER_READ_BYTE * input.len());
        if self.held.is_empty() {
            self.process(input, out, true, limit);
        } else {
            let mut raw = std::mem::take(&mut self.held);
            raw.extend_from_slice(input);
            self.process(&raw, out, true, limit);
        }
    }

    /// Mask `raw` into `out`; with `may_hold`, keep back a tail that could start a value, of
    /// at most `limit` bytes.
    fn process(&mut self, raw: &[u8], out: &mut Vec<u8>, may_hold: bool, limit: usize) {
        // Most output holds no value and nothing that could be the start of one: it is masked
        // where a value stands whole, without working out its text.
        if let Some((matches, cut)) = self.matcher.find_contiguous(raw, may_hold, self.held_state) {
            let cut = if raw.len() - cut > limit { raw.len() } else { cut };
            let start = out.len();
            out.extend_from_slice(&raw[..cut]);
            for (from, to, value) in matches {
                out[start + from..start + to].fill(b'*');
                self.counts[self.owner[value]] += 1;
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
        // The text: what shows on screen (text between escape sequences, each stretch on its
        // own, joined across silent controls), then each string (a title, a link) on its own;
        // an ESC (in no value) between two parts keeps values from spanning them.
        let mut offset = 0;
        let mut last_piece = None;
        for run in self.runs.iter_mut().filter(|r| !r.state.is_string()) {
            if last_piece.is_some_and(|piece| piece != run.piece) {
                offset += 1;
            }
            last_piece = Some(run.piece);
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
        // Where a later read could continue the text: the end of what shows unless an escape
        // sequence follows it, and the end of a string that has not ended yet.
        let last_shown = self.runs.iter().rfind(|r| !r.state.is_string());
        let mut open_ends = Vec::new();
        if let Some(run) = last_shown {
            let after = &raw[run.raw + run.len..];
            if !after.contains(&ESC) {
                open_ends.push(run.text + run.len);
            }
        }
        if matches!(self.end_state, Scan::Str | Scan::Dcs | Scan::StrEscape) {
            open_ends
                .extend(self.runs.last().filter(|r| r.state.is_string()).map(|r| r.text + r.len));
        }
        let open_ends = if may_hold { open_ends } else { Vec::new() };
        let (matches, holds) = self.matcher.find(text, &open_ends);
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
        if raw.len() - cut > limit {
            cut = raw.len();
        }
        let start = out.len();
        out.extend_from_slice(&raw[..cut]);
        for &(from, to, value) in &matches {
            if raw_range(from, to).1 > cut {
                continue;
            }
            self.counts[self.owner[value]] += 1;
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
}

impl Drop for Masker {
    fn drop(&mut self) {
        self.text.zeroize();
    }
}

#[cfg(test)]
mod tests;
