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
use memchr::{memchr, memchr3};
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
    /// Inside the string of an OSC, DCS, SOS, PM or APC sequence: text, as far as masking goes.
    Str,
    /// After ESC inside such a string (ESC \ ends it).
    StrEscape,
}

/// A stretch of text in the raw output: `len` bytes at `raw` that are bytes `text..` of the
/// text, all read in `state` (Ground or Str).
#[derive(Clone, Copy, Debug)]
struct Run {
    raw: usize,
    text: usize,
    len: usize,
    state: Scan,
}

/// Masks a fixed set of values in one pane's output stream.
pub struct Masker {
    values: Vec<SecretBytes>,
    finder: AhoCorasick,
    /// The values each search pattern (a value's first bytes) stands for.
    by_prefix: Vec<Vec<usize>>,
    /// Bytes that start some value.
    starts: [bool; 256],
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
        let finder = AhoCorasick::builder()
            .match_kind(MatchKind::Standard)
            .build(prefixes.iter().map(|p| p.as_slice()))
            .ok()?;
        let counts = vec![0; values.len()];
        Some(Masker {
            values,
            finder,
            by_prefix,
            starts,
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

    /// Pass the held-back tail on as it is: nothing more came in time.
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.held);
        self.held.zeroize();
        self.held.clear();
        self.held_state = self.end_state;
    }

    /// Append to `out` what of `input` (after anything held back) the terminal may see, with
    /// every value masked; hold back a tail that could be the start of one.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.held.is_empty() {
            self.process(input, out);
        } else {
            let mut raw = std::mem::take(&mut self.held);
            raw.extend_from_slice(input);
            self.process(&raw, out);
        }
    }

    fn process(&mut self, raw: &[u8], out: &mut Vec<u8>) {
        self.runs.clear();
        self.end_state = scan(raw, self.held_state, &mut self.runs);
        // Most output is plain text: one run, the raw bytes themselves.
        let whole = matches!(self.runs.as_slice(), [run] if run.len == raw.len());
        if !whole {
            self.text.clear();
            for run in &self.runs {
                self.text.extend_from_slice(&raw[run.raw..run.raw + run.len]);
            }
        }
        let text: &[u8] = if whole { raw } else { &self.text };
        let (matches, hold) = self.find(text);
        let cut = match hold {
            Some(at) => raw_position(&self.runs, at),
            None => raw.len(),
        };
        let cut = if raw.len() - cut > MAX_HELD { raw.len() } else { cut };
        let hold_text = if cut == raw.len() { text.len() } else { hold.unwrap_or(text.len()) };
        let start = out.len();
        out.extend_from_slice(&raw[..cut]);
        for &(from, to, value) in &matches {
            if from >= hold_text {
                continue;
            }
            self.counts[value] += 1;
            mask(&self.runs, from, to, &mut out[start..]);
        }
        self.held_state = if cut == raw.len() {
            self.end_state
        } else {
            let run = self.runs.partition_point(|r| r.text + r.len <= hold_text);
            self.runs[run].state
        };
        self.held.clear();
        self.held.extend_from_slice(&raw[cut..]);
        if !whole {
            self.text.zeroize();
        }
    }

    /// Every whole value in `text` (start, end, which), and where the earliest tail that could
    /// still become one starts.
    fn find(&self, text: &[u8]) -> (Vec<(usize, usize, usize)>, Option<usize>) {
        let mut matches = Vec::new();
        let mut hold: Option<usize> = None;
        let earliest = |at: usize, hold: &mut Option<usize>| {
            *hold = Some(hold.map_or(at, |h: usize| h.min(at)));
        };
        for found in self.finder.find_overlapping_iter(text) {
            let at = found.start();
            let rest = &text[at..];
            for &index in &self.by_prefix[found.pattern().as_usize()] {
                let value = self.values[index].as_slice();
                if rest.len() >= value.len() {
                    if &rest[..value.len()] == value {
                        matches.push((at, at + value.len(), index));
                    }
                } else if value.starts_with(rest) {
                    earliest(at, &mut hold);
                }
            }
        }
        // Tails shorter than the search's prefixes.
        for at in text.len().saturating_sub(PREFIX - 1)..text.len() {
            let rest = &text[at..];
            let could = self.starts[rest[0] as usize]
                && self.values.iter().any(|v| v.len() > rest.len() && v.starts_with(rest));
            if could {
                earliest(at, &mut hold);
                break;
            }
        }
        // A whole value that runs into the held tail is held with it, so that the next read
        // sees it whole again.
        while let Some(h) = hold {
            match matches
                .iter()
                .map(|m| m.0)
                .filter(|&from| from < h)
                .find(|&from| matches.iter().any(|m| m.0 == from && m.1 > h))
            {
                Some(from) => hold = Some(from),
                None => break,
            }
        }
        (matches, hold)
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

/// Split `raw` into runs of text, starting in `state`; the state after its last byte.
fn scan(raw: &[u8], mut state: Scan, runs: &mut Vec<Run>) -> Scan {
    let mut text = 0;
    let mut i = 0;
    let mut push = |runs: &mut Vec<Run>, from: usize, to: usize, state: Scan| {
        if to > from {
            runs.push(Run { raw: from, text, len: to - from, state });
            text += to - from;
        }
    };
    while i < raw.len() {
        match state {
            Scan::Ground => {
                let end = memchr(ESC, &raw[i..]).map_or(raw.len(), |n| i + n);
                push(runs, i, end, state);
                if end < raw.len() {
                    state = Scan::Escape;
                }
                i = end + 1;
            }
            Scan::Str => {
                let end = memchr3(ESC, BEL, CAN, &raw[i..]).map_or(raw.len(), |n| i + n);
                push(runs, i, end, state);
                if end < raw.len() {
                    state = if raw[end] == ESC { Scan::StrEscape } else { Scan::Ground };
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
                    b'[' => Scan::Csi,
                    b']' | b'P' | b'X' | b'^' | b'_' => Scan::Str,
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
