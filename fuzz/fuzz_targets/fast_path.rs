//! The parser's fast path against vte alone: arbitrary bytes, cut into pieces where the input
//! says, give the same model (everything a snapshot holds), replies and events as the same
//! bytes read by vte in one piece.
//!
//! Input layout: two bytes pick the size; the rest is the stream, cut into pieces at each
//! 0xFD (which stays in the stream: it is a byte the model must read either way).

#![no_main]

use libfuzzer_sys::fuzz_target;
use paddock::term::{TermConfig, TermSize, Terminal};

fn look(mut term: Terminal) -> (Vec<u8>, Vec<u8>, String) {
    let replies = term.take_replies();
    (term.snapshot(usize::MAX), replies, format!("{:?}", term.take_events()))
}

fuzz_target!(|data: &[u8]| {
    let [cols, lines, stream @ ..] = data else { return };
    let size = TermSize::new(*cols as usize % 100 + 1, *lines as usize % 40 + 1);
    let config = TermConfig { scrollback_lines: 32 };
    let mut reference = Terminal::new(size, config).without_fast_path();
    reference.advance(stream);
    let mut fast = Terminal::new(size, config);
    for piece in stream.split_inclusive(|&b| b == 0xFD) {
        fast.advance(piece);
    }
    assert!(look(fast) == look(reference), "the fast path and vte differ");
});
