//! The model's redaction, with a plain redactor that knows its values: what a user would see
//! on screen, in the scrollback, in titles and notifications, and on the clipboard.

use crate::term::test_redactor::term;
use crate::term::{row_text, TermEvent, Terminal};

/// Every row kept, scrollback first, trailing blanks cut.
fn all_text(term: &Terminal) -> Vec<String> {
    let mut rows: Vec<String> = (0..term.scrollback_len())
        .filter_map(|i| term.scrollback_row(i))
        .map(|r| row_text(&r).trim_end().to_owned())
        .collect();
    rows.extend(term.rows().iter().map(|r| row_text(r).trim_end().to_owned()));
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows
}

#[test]
fn values_drawn_past_the_stream_are_starred_in_the_cells() {
    let cases: [(&str, &[u8]); 7] = [
        ("REP", b"xAAAA\x1b[3b1234 y"),
        ("backspace over a decoy", b"xSECXX\x08\x08RET y"),
        ("drawn back to front", b"\x1b[1;5HRET y\x1b[1;1HxSEC"),
        ("a partial redraw completing an old half", b"xSEC\x1b[1;5HRET y"),
        ("insert characters", b"xSECRT y\x1b[1;6H\x1b[@E"),
        ("a control the parser drops", b"xSE\xc2\x80CRET y"),
        (
            "a combining mark on each character",
            "xS\u{301}E\u{301}C\u{301}R\u{301}E\u{301}T y".as_bytes(),
        ),
    ];
    for (what, stream) in cases {
        let mut term = term(20, 3, vec![b"SECRET", b"AAAAAAA1234"]);
        term.advance(stream);
        let text = all_text(&term);
        assert!(!text.join("\n").contains("SECRET"), "{what}: {text:?}");
        assert!(!text.join("\n").contains("AAAAAAA"), "{what}: {text:?}");
        assert!(text[0].starts_with('x') && text[0].ends_with(" y"), "{what}: {text:?}");
        assert!(text[0].contains("******"), "{what}: {text:?}");
    }
}

#[test]
fn values_in_other_scripts_are_read_as_drawn() {
    // A value that is not ASCII is read back as UTF-8, beside wide characters and marks.
    let mut term = term(20, 3, vec!["ключ🔑".as_bytes()]);
    term.advance("x日\u{301}клю\x1b[1;7Hч🔑 y".as_bytes());
    // One star a cell: the wide key keeps its two columns.
    assert_eq!(all_text(&term)[0], "x日\u{301}***** y");
    // An ASCII value among other scripts, which are read as one byte a cell.
    let mut term = self::term(20, 3, vec![b"SECRET"]);
    term.advance("日SEC\x1b[1;6HRET本 é \x1b[1;14HSE\u{301}CRET".as_bytes());
    assert_eq!(all_text(&term)[0], "日******本 é ******");
}

#[test]
fn values_across_wrapped_rows_and_into_the_scrollback_are_starred() {
    let mut term = term(4, 2, vec![b"SECRETS!"]);
    // Drawn out of order across a wrap, then scrolled off in the same chunk.
    term.advance(b"xxSE\x1b[2;1HCRET\x1b[1;1H\x1b[2;4H\x1b[1;4H");
    term.advance(b"");
    // The first row did not wrap (the cursor moved): no value across it.
    assert_eq!(all_text(&term), ["xxSE", "CRET"]);
    let mut term = self::term(4, 2, vec![b"SECRETS!"]);
    term.advance(b"xxSECRETS!\r\n1\r\n2\r\n3\r\n4");
    assert_eq!(all_text(&term), ["xx**", "****", "**", "1", "2", "3", "4"]);
    // The first part already in the scrollback when the rest is drawn.
    let mut term = self::term(4, 2, vec![b"SECRETS!"]);
    term.advance(b"xxSECR");
    term.advance(b"ETS!");
    assert_eq!(term.scrollback_len(), 1);
    assert_eq!(all_text(&term), ["xx**", "****", "**"]);
}

#[test]
fn a_value_with_a_line_end_is_found_across_rows() {
    let mut term = term(20, 4, vec![b"line-one\nline-two"]);
    term.advance(b"line-one\r\nline-two\r\nline-one\r\nother");
    assert_eq!(all_text(&term), ["********", "********", "line-one", "other"]);
}

#[test]
fn the_same_text_split_by_a_line_end_is_no_value() {
    let mut term = term(20, 3, vec![b"SECRET"]);
    term.advance(b"SEC\r\nRET\r\n");
    assert_eq!(all_text(&term), ["SEC", "RET"]);
}

#[test]
fn titles_notifications_links_and_the_clipboard_never_carry_a_value() {
    let mut term = term(20, 3, vec![b"SECRET"]);
    term.advance(b"\x1b]2;t SE\xc2\x80CRET\x07");
    term.advance(b"\x1b]9;n SECRET\x07");
    term.advance(b"\x1b]777;notify;SECRET;b\x07");
    term.advance(b"\x1b]777;notify;SEC;RET\x07");
    term.advance(b"\x1b]99;e=1;U0VDUkVU\x07");
    term.advance(b"\x1b]99;i=7:d=0;SEC\x07\x1b]99;i=7:d=0;R\x07\x1b]99;i=7;ET\x07");
    term.advance("\x1b]9;S\u{301}E\u{200d}C\u{fe0f}R\u{200b}ET!\x07".as_bytes());
    term.advance("\x1b]2;t S\u{301}E\u{301}CRET\x07".as_bytes());
    term.advance(b"\x1b]52;c;U0VDUkVU\x07"); // "SECRET"
    term.advance(b"\x1b]52;c;b2s=\x07"); // "ok"
    term.advance(b"\x1b]8;;https://x/?k=SECRET\x07link\x1b]8;;\x07");
    term.advance(b"\x1b]7;file://h/home/SECRET\x07");
    assert_eq!(term.title(), Some("t **********"));
    assert_eq!(term.working_directory(), Some("/home/******"));
    let link = term.rows()[0].cell(0).style();
    let uri = term.style(link).hyperlink.and_then(|id| term.hyperlink(id)).map(|l| l.uri.clone());
    assert_eq!(uri.as_deref(), Some("https://x/?k=******"));
    let events = term.take_events();
    let shown = format!("{events:?}");
    assert!(!shown.contains("SECRET"), "{shown}");
    assert!(events.contains(&TermEvent::ClipboardWithheld { selection: "c".into() }));
    assert!(
        events.contains(&TermEvent::ClipboardStore { selection: "c".into(), data: b"ok".to_vec() })
    );
    assert_eq!(
        term.signals().last_notification.as_deref(),
        Some(format!("{}!", "*".repeat(17)).as_str())
    );
    assert!(shown.contains(r#"title: Some("***"), body: "***""#), "{shown}");
}

#[test]
fn characters_a_title_may_draw_as_nothing_do_not_hide_a_value() {
    // Found by an outside attack: each of these takes a cell on screen (a gap there), but a
    // line of text such as the title strip may draw it as nothing.
    for between in ["\u{2028}", "\u{2029}", "\u{600}", "\u{115f}", "\u{110bd}", "\u{e0001}"] {
        let mut term = term(20, 3, vec![b"SECRET"]);
        term.advance(format!("\x1b]2;t SEC{between}RET\x07").as_bytes());
        let title = term.title().unwrap_or_default().to_owned();
        assert!(title.starts_with("t ***") && !title.contains("RET"), "{between:?}: {title:?}");
    }
}

#[test]
fn a_reset_keeps_the_redactor() {
    let mut term = term(20, 3, vec![b"SECRET"]);
    term.advance(b"\x1bcSEC\x1b[3DXXX\x1b[3DSECRET");
    assert_eq!(all_text(&term), ["******"]);
}

/// Notifications from a program under tmux inside a pane come wrapped in tmux's DCS
/// passthrough (`ESC P tmux;` … `ESC \`, the inner ESCs doubled): raised and counted as direct
/// ones are, values starred, and nothing of them drawn.
#[test]
fn notifications_through_tmux_passthrough_are_raised_counted_and_masked() {
    let mut term = term(20, 3, vec![b"SECRET"]);
    term.advance(b"\x1bPtmux;\x1b\x1b]9;done SECRET\x07\x1b\\");
    term.advance(b"\x1bPtmux;\x1b\x1b]777;notify;SECRET;body\x1b\x1b\\\x1b\\");
    term.advance(b"\x1bPtmux;\x1b\x1b]99;;waiting for you\x1b\x1b\\\x1b\\");
    assert_eq!(term.signals().notifications, 3);
    assert_eq!(term.signals().last_notification.as_deref(), Some("waiting for you"));
    let shown = format!("{:?}", term.take_events());
    assert!(shown.contains("done ******") && !shown.contains("SECRET"), "{shown}");
    assert!(shown.contains(r#"title: Some("******"), body: "body""#), "{shown}");
    assert!(all_text(&term).is_empty(), "{:?}", all_text(&term));
}
