//! The fast path against vte alone: the same model, byte for byte, wherever the input is cut.

use super::super::test_redactor::Values;
use super::super::{TermConfig, TermSize, Terminal};

/// Everything a model shows and says: its whole state as a snapshot, its replies and events.
fn seen(mut term: Terminal) -> (Vec<u8>, Vec<u8>, String) {
    let replies = term.take_replies();
    let events = format!("{:?}", term.take_events());
    (term.snapshot(usize::MAX), replies, events)
}

fn fresh() -> Terminal {
    Terminal::new(TermSize::new(20, 6), TermConfig { scrollback_lines: 20 })
}

/// `bytes` fed to vte alone in one piece, and with the fast path cut at every offset, then
/// byte by byte.
fn assert_same_everywhere(bytes: &[u8]) {
    let mut reference = fresh().without_fast_path();
    reference.advance(bytes);
    let expected = seen(reference);
    for cut in 0..=bytes.len() {
        let mut term = fresh();
        term.advance(&bytes[..cut]);
        term.advance(&bytes[cut..]);
        assert!(seen(term) == expected, "{:?} cut at {cut}", String::from_utf8_lossy(bytes));
    }
    let mut term = fresh();
    for byte in bytes {
        term.advance(std::slice::from_ref(byte));
    }
    assert!(seen(term) == expected, "{:?} byte by byte", String::from_utf8_lossy(bytes));
}

#[test]
fn numeric_csi_between_text_matches_vte() {
    assert_same_everywhere(
        b"ab\x1b[1;31mred\x1b[0m\x1b[3;4Hx\x1b[K\x1b[2A\x1b[3Cy\x1b[38;2;1;2;3;48;5;200mz\x1b[m\
          \x1b[;7H\x1b[99999;99999Hw\x1b[2J\x1b[1;2;3;4;5;6;7;8;9;10;11;12;13;14;15;16;17m!\x1b[6n\
          \x1b[c\x1b[5b",
    );
}

#[test]
fn sequences_the_fast_path_leaves_to_vte_hand_back_in_step() {
    assert_same_everywhere(
        b"\x1b[?25l\x1b[1mA\x1b[?2026h\x1b[4:3mB\x1b[2 q\x1b[1;2\x08Hc\x1b[3\x7fCd\x1b[5\x18e\
          \x1b[6\x1af\x1b[12;1\x1b[2;2Hg\x1b]0;title\x07\x1b[3mh\x1b]2;t\x1b\\\x1b[7mi\x1bPq#0\x1b\\\
          \x1b[1mj\x1b(0lq\x1b(B\x1b[0mk\x1bXsos\x9c\x1b[4ml\x1b#8\x1b[H\x1b7\x1b[5;5H\x1b8m",
    );
    // Strings whose text looks like the ends of sequences, ended by an ESC that starts one.
    assert_same_everywhere(
        b"\x1b]0;title m H\x1b[1mX\x1bPq#0;1;2m;H\x1b[2mY\x1b_apc[1m\x1b[3mZ\x1b([1mW\x1b[\x1b[4mV\
          \x1bP1$r0m\x1b\\U\x1b]8;;http://x\x1b[5mT",
    );
}

#[test]
fn characters_around_the_fast_path_match_vte() {
    // Whole, cut by an ESC, invalid, and held across inputs.
    assert_same_everywhere("你\x1b[1m好\x1b[0m🎉\x1b[2Ce\u{301}\x1b[K│\x1b[H".as_bytes());
    // C0 and C1 controls (C1 as characters, which vte executes), DEL, a no-break space.
    assert_same_everywhere("é\u{85}\x1b[2bx\u{9b}1m\u{a0}\x7f\x00\x07\x1b[2mq\u{90}z".as_bytes());
    assert_same_everywhere(b"a\xe4\xbd\x1b[1mb\xff\x1b[2mc\xc3\x1b[0m\xe4\xbd\xa0\x1b[3m\xf0\x9f");
    assert_same_everywhere(b"\xf0\x9f\x98\x1b[1;1H\xe4\x1b[31mx\x80\x1b[m");
}

#[test]
fn text_between_sequences_matches_vte_with_clean_runs() {
    // A pane with secrets parses with `terminated` asked before each step (clean runs).
    let bytes = b"\r\nabc\x1b[1mdef\x1b[0m\r\nplain text line\r\n\x1b[2;1Hxyz\x1b[Kq";
    let run = |term: &mut Terminal| {
        term.set_redactor(Box::new(Values(vec![b"SECRET"])));
        term.advance_masked(bytes);
    };
    let mut reference = fresh().without_fast_path();
    run(&mut reference);
    let mut term = fresh();
    run(&mut term);
    assert!(seen(term) == seen(reference));
}
