//! Arbitrary bytes and resizes through the terminal model: no panic, and the invariants hold.
//!
//! Input layout: two bytes pick the starting size; the rest is split into chunks, and a chunk
//! starting with 0xFF 0xFE is a resize to the sizes in its next two bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use paddock::term::{TermConfig, TermSize, Terminal};

fuzz_target!(|data: &[u8]| {
    let [cols, lines, rest @ ..] = data else { return };
    let size = TermSize::new(*cols as usize % 160 + 1, *lines as usize % 60 + 1);
    let mut term = Terminal::new(size, TermConfig { scrollback_lines: 64 });
    for chunk in rest.split(|&b| b == 0xFD) {
        match chunk {
            [0xFF, 0xFE, c, l, tail @ ..] => {
                term.resize(TermSize::new(*c as usize % 160 + 1, *l as usize % 60 + 1));
                term.advance(tail);
            }
            _ => term.advance(chunk),
        }
        let size = term.size();
        let cursor = term.cursor();
        assert!(cursor.row < size.lines && cursor.col < size.cols);
        assert!(term.rows().iter().all(|r| r.len() == size.cols));
        assert!(term.scrollback_len() <= 64);
    }
    let _ = term.take_replies();
    let _ = term.take_events();
    let _ = term.screen_text();
});
