//! The attach protocol's frames, and the model bytes they carry, from arbitrary input: an error
//! or a value, never a panic; a snapshot that restores is a model that works.
#![no_main]

use libfuzzer_sys::fuzz_target;
use paddock::ctl::wire::{read_frame, ToServer, ToWindow, MAX_FRAME};
use paddock::term::{ReplicaEdits, TermSize, Terminal};

fuzz_target!(|data: &[u8]| {
    let _ = ToServer::decode(data);
    let mut buf = Vec::new();
    let _ = read_frame(&mut &data[..], MAX_FRAME, &mut buf);
    match ToWindow::decode(data) {
        Ok(ToWindow::Pane { snapshot, .. }) => {
            if let Ok((mut term, replayed)) = Terminal::restore(&snapshot) {
                if replayed {
                    term.replay_checks();
                }
                term.advance(b"\x1b[2;3Hx\x1b[@\x1b[P\x1b]2;t\x07\r\n");
                term.resize(TermSize::new(9, 4));
            }
        }
        Ok(ToWindow::Chunk { bytes, edits, masked, .. }) => {
            if let Ok(edits) = ReplicaEdits::decode(&edits) {
                let mut term = Terminal::new(TermSize::new(10, 4), Default::default());
                term.replay_checks();
                let _ = term.advance_replica(&bytes, masked, &edits);
            }
        }
        Ok(ToWindow::Rows { first, rows, .. }) => {
            // A replica holding 2 of 6 scrollback rows: lines 4 and 5.
            let mut server = Terminal::new(TermSize::new(10, 4), Default::default());
            server.advance(&b"x\r\n".repeat(9));
            let Ok((mut term, _)) = Terminal::restore(&server.snapshot(2)) else { return };
            if term.prepend_scrollback(first, &rows).is_ok() {
                term.advance(b"\x1b[2;3Hx\r\n");
                term.resize(TermSize::new(9, 4));
            }
        }
        _ => {}
    }
});
