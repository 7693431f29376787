//! The parser: vte, with a fast path in front of it for the sequences that dominate output.
//!
//! Most escape sequences programs write are CSI with decimal parameters (SGR, cursor
//! positioning, erasing). vte reads them a byte at a time through its state machine; here,
//! while vte stands in its ground state, a whole `ESC [ params final` is read in one loop
//! (`fast_csi.rs`) and dispatched with the parameters vte would have given, and text is
//! decoded and printed in one pass (`text.rs`) up to the first byte that is not a whole valid
//! character. Everything else goes to vte, unchanged: the model sees the same calls in the
//! same order either way, which the tests check byte for byte (`parser_tests.rs`,
//! `tests/it/fast_path.rs`).
//!
//! vte's state is private, so the parser follows it. Having handed vte an ESC it did not
//! read itself, it steps a coarse copy of vte's state machine over what it hands on, and
//! takes the fast path again only once that copy is back in ground, which it reaches only
//! where vte surely is: a CSI's or an escape's final byte, an OSC's BEL, CAN or SUB. Where it
//! cannot tell (DCS and other strings, a character vte holds unfinished) it waits for the
//! next ESC, which puts vte in its escape state whatever came before.

use super::fast_csi;
use super::perform;
use super::sequence_tail::held_character;
use super::state::State;
use super::text::read as read_text;

const ESC: u8 = 0x1b;

/// Where vte stands, coarsely: enough to know when it is surely back in ground.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Follow {
    /// In ground, holding no unfinished character.
    #[default]
    Ground,
    Escape,
    EscapeIntermediate,
    /// Any CSI state, ignoring or not: each ends at a final byte.
    Csi,
    Osc,
    /// A DCS or SOS/PM/APC string, or ground with an unfinished character held: only CAN, SUB
    /// or an ESC say where vte is next.
    Other,
}

#[derive(Default)]
pub struct Parser {
    vte: vte::Parser,
    at: Follow,
    /// What the fast path read last.
    csi: fast_csi::Csi,
    /// Every byte to vte: the reference the fast path is held to (`Terminal::without_fast_path`).
    vte_only: bool,
}

impl Parser {
    /// A parser that hands every byte to vte.
    pub fn vte_only() -> Parser {
        Parser { vte_only: true, ..Parser::default() }
    }

    /// Parse `bytes` into `state`. With the state's clean runs enabled, vte asks
    /// `Perform::terminated` before each of its steps, as it does without the fast path.
    pub fn advance(&mut self, state: &mut State, mut bytes: &[u8]) {
        if self.vte_only {
            return hand(&mut self.vte, state, bytes);
        }
        while !bytes.is_empty() {
            if self.at != Follow::Ground {
                let read = self.follow(bytes);
                hand(&mut self.vte, state, &bytes[..read]);
                bytes = &bytes[read..];
                continue;
            }
            // Sequences often follow one another: no search for those.
            let next = if bytes[0] == ESC { Some(0) } else { memchr::memchr(ESC, bytes) };
            let Some(esc) = next else {
                let read = ground_text(state, bytes);
                if read < bytes.len() {
                    hand(&mut self.vte, state, &bytes[read..]);
                    if !ends_whole(&bytes[read..]) {
                        self.at = Follow::Other;
                    }
                }
                return;
            };
            let (text, sequence) = bytes.split_at(esc);
            let read = ground_text(state, text);
            match fast_csi::read(sequence, &mut self.csi) {
                Some(len) if read == text.len() => {
                    // What vte's `terminated` before each of the sequence's bytes would do.
                    state.clean_runs.end();
                    perform::csi(state, &self.csi);
                    bytes = &sequence[len..];
                }
                _ => {
                    // The rest of the text (from a byte that is not a whole character) and the
                    // ESC: vte is in its escape state after them, whatever they held.
                    hand(&mut self.vte, state, &bytes[read..=esc]);
                    self.at = Follow::Escape;
                    bytes = &sequence[1..];
                }
            }
        }
    }

    /// Step the copy of vte's state over `bytes` until it is back in ground: how many bytes
    /// that took, or all of them.
    fn follow(&mut self, bytes: &[u8]) -> usize {
        for (at, &byte) in bytes.iter().enumerate() {
            self.at = match (self.at, byte) {
                (_, ESC) => Follow::Escape,
                (_, 0x18 | 0x1a) => Follow::Ground,
                (Follow::Escape, 0x20..=0x2f) => Follow::EscapeIntermediate,
                (Follow::Escape, b'[') => Follow::Csi,
                (Follow::Escape, b']') => Follow::Osc,
                (Follow::Escape, b'P' | b'X' | b'^' | b'_') => Follow::Other,
                (Follow::Escape | Follow::EscapeIntermediate, 0x30..=0x7e) => Follow::Ground,
                (Follow::Csi, 0x40..=0x7e) | (Follow::Osc, 0x07) => Follow::Ground,
                (same, _) => same,
            };
            if self.at == Follow::Ground {
                return at + 1;
            }
        }
        bytes.len()
    }
}

/// Text in ground (no ESC in it): the whole valid characters from its start, read here
/// (`text.rs`); how many bytes they were. vte reads the rest.
#[inline(always)]
fn ground_text(state: &mut State, text: &[u8]) -> usize {
    if text.is_empty() {
        return 0;
    }
    // vte asks `terminated` once before a stretch of text, then reads it.
    state.clean_runs.end();
    read_text(state, text)
}

/// Whether vte, given `text` from ground, ends it holding no unfinished character.
#[inline(always)]
fn ends_whole(text: &[u8]) -> bool {
    text.last().is_none_or(|&last| last < 0x80) || held_character(text).is_empty()
}

/// Bytes for vte itself.
#[inline(never)]
fn hand(vte: &mut vte::Parser, state: &mut State, bytes: &[u8]) {
    if state.clean_runs.enabled {
        with_runs(vte, state, bytes);
    } else {
        vte.advance(state, bytes);
    }
}

/// Parse with `terminated` (perform.rs) telling clean runs where text breaks. Apart from the
/// plain path, so that a pane without secrets runs the same code as ever.
#[inline(never)]
fn with_runs(vte: &mut vte::Parser, state: &mut State, bytes: &[u8]) {
    let read = vte.advance_until_terminated(state, bytes);
    if read < bytes.len() {
        // Never with vte 0.15 (`terminated` is never true); were it to stop, the rest is read
        // as usual, with clean runs off.
        state.clean_runs.enabled = false;
        vte.advance(state, &bytes[read..]);
    }
}

#[cfg(test)]
#[path = "parser_tests.rs"]
mod tests;
