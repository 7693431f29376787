//! Where the values stand in a pane's output: a multi-pattern search (aho-corasick) over each
//! value's first bytes, every candidate checked against the whole value, and the tails a later
//! read could complete.

use aho_corasick::{AhoCorasick, MatchKind};
use zeroize::{Zeroize, Zeroizing};

use super::scan::{end_state, needs_text, Scan, ESC};
use super::PREFIX;
use crate::vault::store::SecretBytes;

/// A value found whole: its first byte, the byte after its last, which value.
pub(super) type Found = (usize, usize, usize);

/// The values one pane's masker looks for, and how it finds them.
pub(super) struct Matcher {
    values: Vec<SecretBytes>,
    finder: AhoCorasick,
    /// The values each search pattern (a value's first bytes) stands for.
    by_prefix: Vec<Vec<usize>>,
    /// Bytes that start some value.
    starts: [bool; 256],
}

impl Drop for Matcher {
    fn drop(&mut self) {
        // Which bytes start a value says a little about the values.
        self.starts.zeroize();
    }
}

impl Matcher {
    /// A matcher for `values` (none empty); `None` when the search cannot be built.
    pub(super) fn new(values: Vec<SecretBytes>) -> Option<Matcher> {
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
            .match_kind(MatchKind::LeftmostFirst)
            .build(prefixes.iter().map(|p| p.as_slice()))
            .ok()?;
        Some(Matcher { values, finder, by_prefix, starts })
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

    /// Whether `tail` (not empty) is the start of a longer value.
    fn could_start(&self, tail: &[u8]) -> bool {
        self.starts[tail[0] as usize]
            && self.values.iter().any(|v| v.len() > tail.len() && v.starts_with(tail))
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

    /// Every value that stands whole in `raw` (start, end, which), and where a tail that a
    /// later read could make a value begins; `None` when the text of `raw` is more than its
    /// bytes (see [`needs_text`]), or a value runs into that tail: the text must be worked out
    /// then. An escape sequence breaks the text: a value drawn in pieces around one is the
    /// model's own check to find.
    pub(super) fn find_contiguous(
        &self,
        raw: &[u8],
        may_hold: bool,
        held_state: Scan,
    ) -> Option<(Vec<Found>, usize)> {
        // Inside a string (a title, a link) every control is ignored: the slow way.
        let opens_string = match held_state {
            Scan::Str | Scan::Dcs | Scan::StrEscape => true,
            Scan::Escape => matches!(raw.first(), Some(b']' | b'P' | b'X' | b'^' | b'_')),
            _ => false,
        };
        // A `c2` at the end may be the first half of a C1 control that a value goes on after.
        if opens_string || needs_text(raw) || raw.last() == Some(&0xc2) {
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
                    if end_state(&raw[..at], held_state) != Scan::Ground {
                        return None;
                    }
                    matches.push((at, at + value.len(), index));
                } else if same == rest.len() && may_hold {
                    cut = cut.min(at);
                }
            }
        }
        // The start of a value at the very end, shorter than the search's prefixes.
        let tail = raw.len().saturating_sub(PREFIX - 1)..raw.len();
        if let Some(at) = tail.into_iter().find(|&at| may_hold && self.could_start(&raw[at..])) {
            cut = cut.min(at);
        }
        // A value that runs into the held tail is left to the slow way.
        if matches.iter().any(|&(_, end, _)| end > cut) {
            return None;
        }
        Some((matches, cut))
    }

    /// Every whole value in `text` (start, end, which), and the starts of tails that a later
    /// read could make whole: tails ending at one of `open_ends`.
    pub(super) fn find(&self, text: &[u8], open_ends: &[usize]) -> (Vec<Found>, Vec<usize>) {
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
                if self.could_start(&text[at..end]) {
                    holds.push(at);
                    break;
                }
            }
        }
        (matches, holds)
    }
}
