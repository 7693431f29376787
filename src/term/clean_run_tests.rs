//! Clean runs (`clean_run.rs`): rows of text the stream masker read whole skip the model's
//! check, and every way of drawing a value around that is still caught. No masker stands in
//! front here: each stream shows a value the masker would not see whole, fed as its output
//! (`advance_masked`), and the screen must not show it.

use crate::term::test_redactor::term;
use crate::term::{row_text, Terminal};

/// The text as a user reads it: scrollback then screen, wrapped rows joined.
fn shown(term: &Terminal) -> String {
    let rows = (0..term.scrollback_len())
        .filter_map(|i| term.scrollback_row(i))
        .chain(term.rows().iter().cloned())
        .collect::<Vec<_>>();
    let mut text = String::new();
    for row in &rows {
        let line = row_text(row);
        if row.wrapped() {
            text.push_str(&line);
        } else {
            text.push_str(line.trim_end());
            text.push('\n');
        }
    }
    text
}

#[test]
fn plain_text_from_the_masker_is_not_read_again_but_paddocks_own_is() {
    // With no masker in front, a value in plain text shows: proof that the rows were skipped.
    let mut term = term(20, 4, vec![b"SECRET"]);
    term.advance_masked(b"\r\nplain SECRET\r\n");
    assert!(shown(&term).contains("plain SECRET"), "{}", shown(&term));
    // paddock's own notes in a pane (`advance`) are read whatever they hold.
    term.advance(b"note SECRET\r\n");
    assert!(shown(&term).contains("note ******"), "{}", shown(&term));
    // A value that holds a line end turns clean runs off: every row is read.
    let mut term = self::term(20, 4, vec![b"SECRET", b"a\nb"]);
    term.advance_masked(b"\r\nplain SECRET\r\n");
    assert!(shown(&term).contains("plain ******"), "{}", shown(&term));
}

#[test]
fn values_the_stream_did_not_see_whole_are_still_found() {
    let cases: [(&str, &[u8]); 9] = [
        ("a colour change", b"\r\nxSEC\x1b[1mRET y\r\n"),
        ("a malformed sequence ignored without a call", b"\r\nxSEC\x1b[1<mRET y\r\n"),
        ("an intermediate then a parameter, ignored", b"\r\nxSEC\x1b[ 1mRET y\r\n"),
        ("a doubled ESC", b"\r\nxSEC\x1b\x1b[mRET y\r\n"),
        ("an SOS string", b"\r\nxSEC\x1bXjunk\x1b\\RET y\r\n"),
        ("a bell", b"\r\nxSEC\x07RET y\r\n"),
        ("a C1 control", b"\r\nxSEC\xc2\x85RET y\r\n"),
        ("a raw C1 byte", b"\r\nxSEC\x9bRET y\r\n"),
        ("DEL", b"\r\nxSEC\x7fRET y\r\n"),
    ];
    for (what, stream) in cases {
        let mut term = term(20, 4, vec![b"SECRET"]);
        term.advance_masked(stream);
        assert!(shown(&term).contains("x****** y"), "{what}: {}", shown(&term));
    }
}

#[test]
fn a_run_never_joins_what_was_there_before() {
    // The start of a run on a row that is not blank: old text completes the value.
    let mut term = term(20, 4, vec![b"SECRET"]);
    term.advance_masked(b"\r\nxxxxRET y\r");
    term.advance_masked(b"\x1b[2;1HxSEC");
    assert!(shown(&term).contains("x****** y"), "{}", shown(&term));
    // The rest of a run in the next chunk (the masker passed the first half on early).
    let mut term = self::term(20, 4, vec![b"SECRET"]);
    term.advance_masked(b"\r\nxSEC");
    term.advance_masked(b"RET y\r\n");
    assert!(shown(&term).contains("x****** y"), "{}", shown(&term));
    // REP repeating the last character from column 0 of a blank row.
    let mut term = self::term(20, 4, vec![b"xxxx"]);
    term.advance_masked(b"\r\nx\r\n\x1b[4b\r\n");
    assert!(!shown(&term).contains("xxxx"), "{}", shown(&term));
}

#[test]
fn a_run_never_starts_where_a_wrapped_row_goes_on() {
    // A row that wraps into one erased whole, which a run writes in a later chunk (both rows
    // checked and unmarked by then): the value spans the wrap.
    let mut term = term(6, 4, vec![b"SECRET"]);
    term.advance_masked(b"\r\nxxxxSE\x1b[mZ\x1b[3;1H\x1b[2K");
    term.advance_masked(b"CRET\r\n");
    assert!(!shown(&term).contains("SECRET"), "{}", shown(&term));
    assert!(shown(&term).contains("xxxx******"), "{}", shown(&term));
    // The same across the scrollback and the screen's first row.
    let mut term = self::term(6, 3, vec![b"SECRET"]);
    term.advance_masked(b"xxxxSE\x1b[mZ\r\n\r\n\x1b[1;1H\x1b[2K");
    term.advance_masked(b"CRET");
    assert!(!shown(&term).contains("SECRET"), "{}", shown(&term));
    // Whole-row erases make a row blank again: a run there is clean, and still no value across.
    let mut term = self::term(6, 4, vec![b"SECRET"]);
    term.advance_masked(b"\r\nxxxxSE\r\n\x1b[2KCRET\r\n");
    assert!(shown(&term).contains("xxxxSE\nCRET\n"), "{}", shown(&term));
}
