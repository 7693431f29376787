//! Where the values stand in a pane's output: a multi-pattern search (aho-corasick) over each
//! value's first bytes, every candidate checked against the whole value, and tables of the
//! values' first one to three bytes for the tails a later read could complete.

use aho_corasick::{AhoCorasick, MatchKind};
use zeroize::{Zeroize, Zeroizing};

use super::scan::{
    end_state, ends_csi, has_c1_after_ascii, has_silent_but_bell, is_silent, text_after, Scan, BEL,
    ESC,
};
use super::PREFIX;
use crate::vault::store::SecretBytes;

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
pub(super) type Found = (usize, usize, usize);

/// The values one pane's masker looks for, and how it finds them.
pub(super) struct Matcher {
    values: Vec<SecretBytes>,
    finder: AhoCorasick,
    /// The values each search pattern (a value's first bytes) stands for.
    by_prefix: Vec<Vec<usize>>,
    /// Bytes that start some value.
    starts: [bool; 256],
    /// Proper prefixes of one, two and three bytes (of values longer than that), for the
    /// checks made at every escape sequence: the first two as bit sets, the third as a list.
    short: ShortPrefixes,
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
        let short = ShortPrefixes::new(&values);
        let finder = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .build(prefixes.iter().map(|p| p.as_slice()))
            .ok()?;
        Some(Matcher { values, finder, by_prefix, starts, short })
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
    pub(super) fn find_contiguous(
        &self,
        raw: &[u8],
        may_hold: bool,
        held_state: Scan,
    ) -> Option<(Vec<Found>, usize)> {
        // Inside a string (a title, a link) every control is ignored, so any of them could
        // stand inside a value: reads with strings go the slow way.
        let string_start =
            |byte: Option<&u8>| matches!(byte, Some(b']' | b'P' | b'X' | b'^' | b'_'));
        let opens_string = match held_state {
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
                        end_state(&raw[..at], held_state),
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
        let silent = has_silent_but_bell(raw) || has_c1_after_ascii(raw);
        // A value that runs into the held tail is left to the slow way.
        if silent || matches.iter().any(|&(_, end, _)| end > cut) {
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
