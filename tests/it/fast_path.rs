//! The parser's fast path (`src/term/parser.rs`) against vte alone, on every stream the
//! differential suite feeds: the recordings shipped with alacritty_terminal, the recordings of
//! real programs, the generated streams. The same model with every byte read by vte
//! (`Terminal::without_fast_path`) is the reference; the model with the fast path must match
//! it in everything a snapshot holds (both screens, scrollback, cursor, modes, styles, titles),
//! in its replies and in its events, wherever the input is cut: after every piece in steps,
//! and at the end fed one byte at a time, so that every byte offset of every sequence is a cut
//! between the fast path and vte.

use std::path::Path;

use paddock::term::{TermConfig, TermSize, Terminal};

use crate::generated::Generator;

struct Model(Terminal);

impl Model {
    fn new(cols: usize, lines: usize, history: usize, fast: bool) -> Model {
        let term =
            Terminal::new(TermSize::new(cols, lines), TermConfig { scrollback_lines: history });
        Model(if fast { term } else { term.without_fast_path() })
    }

    /// The screens (scrollback rows: `rows`), replies and events since the last look.
    fn look(&mut self, rows: usize) -> (Vec<u8>, Vec<u8>, String) {
        let replies = self.0.take_replies();
        let events = format!("{:?}", self.0.take_events());
        (self.0.snapshot(rows), replies, events)
    }
}

/// How many pieces go by between two comparisons of the screens.
const LOOK_EVERY: usize = 8;

/// `bytes` through both, compared after every few of `pieces` and the last, then fed to the fast path a byte at
/// a time and compared whole. The first difference, if any.
fn differs<'a>(
    bytes: &[u8],
    pieces: impl IntoIterator<Item = &'a [u8]>,
    (cols, lines, history): (usize, usize, usize),
) -> Option<String> {
    let mut fast = Model::new(cols, lines, history, true);
    let mut reference = Model::new(cols, lines, history, false);
    let mut fed = 0;
    let pieces: Vec<&[u8]> = pieces.into_iter().collect();
    for (n, piece) in pieces.iter().enumerate() {
        fast.0.advance(piece);
        reference.0.advance(piece);
        fed += piece.len();
        // A look costs far more than a piece: one every few pieces, and after the last.
        if (n % LOOK_EVERY == 0 || n + 1 == pieces.len()) && fast.look(0) != reference.look(0) {
            return Some(format!("after {fed} bytes fed in pieces"));
        }
    }
    let mut whole = Model::new(cols, lines, history, false);
    whole.0.advance(bytes);
    let mut bytewise = Model::new(cols, lines, history, true);
    for byte in bytes {
        bytewise.0.advance(std::slice::from_ref(byte));
    }
    (bytewise.look(usize::MAX) != whole.look(usize::MAX)).then(|| "fed byte by byte".into())
}

/// Pieces of 1 to 13 bytes in turn, so that cuts fall everywhere in the sequences.
fn ragged(bytes: &[u8]) -> Vec<&[u8]> {
    let mut pieces = Vec::new();
    let (mut at, mut size) = (0, 1);
    while at < bytes.len() {
        let end = (at + size).min(bytes.len());
        pieces.push(&bytes[at..end]);
        at = end;
        size = size % 13 + 1;
    }
    pieces
}

#[test]
fn the_fast_path_reads_alacrittys_recordings_as_vte_does() {
    let mut failures = Vec::new();
    let recordings = crate::alacritty_corpus::recordings();
    assert!(recordings.len() >= 40, "alacritty_terminal ships its recordings");
    for r in &recordings {
        // The largest (tens of MiB of the same output) in 64 KiB pieces, as a PTY reader reads;
        // every other one cut everywhere.
        let pieces = if r.bytes.len() > 1 << 20 {
            r.bytes.chunks(64 << 10).collect()
        } else {
            ragged(&r.bytes)
        };
        if let Some(at) = differs(&r.bytes, pieces, (r.cols, r.lines, r.history)) {
            failures.push(format!("{}: {at}", r.name));
        }
    }
    assert!(failures.is_empty(), "the fast path differs from vte:\n{}", failures.join("\n"));
}

#[test]
fn the_fast_path_reads_recordings_of_real_programs_as_vte_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/recordings");
    let mut failures = Vec::new();
    for entry in crate::own_recordings::manifest() {
        let bytes = std::fs::read(dir.join(format!("{}.bin", entry.name))).expect("recording");
        if let Some(at) = differs(&bytes, ragged(&bytes), (entry.cols, entry.lines, 10_000)) {
            failures.push(format!("{}: {at}", entry.name));
        }
    }
    assert!(failures.is_empty(), "the fast path differs from vte:\n{}", failures.join("\n"));
}

#[test]
fn the_fast_path_reads_generated_streams_as_vte_does() {
    let mut failures = Vec::new();
    for seed in 0..150u64 {
        let ops = Generator::new(seed).ops(300);
        let bytes = ops.concat().into_bytes();
        let (cols, lines) = (20 + (seed as usize * 7) % 70, 5 + (seed as usize * 3) % 20);
        let pieces = ops.iter().map(|op| op.as_bytes());
        if let Some(at) = differs(&bytes, pieces, (cols, lines, 100)) {
            failures.push(format!("seed {seed}: {at}"));
        }
    }
    assert!(failures.is_empty(), "the fast path differs from vte:\n{}", failures.join("\n"));
}
