//! A replica follows a server whose model checks for values, without holding them.

use super::{ReplicaEdits, ReplicaError, RowPlace};
use crate::term::test_redactor::term;
use crate::term::{row_text, Terminal};

/// A replica of `server` as it stands, taking the server's checks.
fn replica_of(server: &Terminal) -> Terminal {
    let (mut replica, redacted) = Terminal::restore(&server.snapshot(usize::MAX)).unwrap();
    assert!(redacted);
    replica.replay_checks();
    replica
}

/// One chunk through both, as a pane and an attached window would.
fn both(server: &mut Terminal, replica: &mut Terminal, bytes: &[u8]) -> ReplicaEdits {
    server.advance(bytes);
    let edits = server.replica_edits();
    let wire = ReplicaEdits::decode(&edits.encode()).unwrap();
    assert_eq!(wire, edits);
    replica.advance_replica(bytes, false, &wire).unwrap();
    let held = replica.scrollback_len();
    same(&replica.snapshot(held), &server.snapshot(held));
    edits
}

/// Two snapshots alike, or where they part.
fn same(a: &[u8], b: &[u8]) {
    if let Some(at) = a.iter().zip(b).position(|(x, y)| x != y) {
        panic!(
            "snapshots differ from byte {at}: {:?} / {:?}",
            &a[at..a.len().min(at + 16)],
            &b[at..b.len().min(at + 16)]
        );
    }
    assert_eq!(a.len(), b.len());
}

fn screen(term: &Terminal) -> String {
    term.rows().iter().map(|r| row_text(r).trim_end().to_owned()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_value_drawn_out_of_order_is_starred_in_the_replica_too() {
    let mut server = term(20, 4, vec![b"SECRET"]);
    let mut replica = replica_of(&server);
    let edits = both(&mut server, &mut replica, b"\x1b[1;5HRET y\x1b[1;1HxSEC");
    assert!(!edits.rows.is_empty());
    assert_eq!(screen(&replica).lines().next(), Some("x****** y"));
    // Plain output after it needs nothing but its bytes.
    let edits = both(&mut server, &mut replica, b"\r\nplain text\r\n");
    assert!(edits.is_empty());
}

#[test]
fn a_value_starred_as_it_scrolls_away_is_starred_in_the_replica_scrollback() {
    let mut server = term(12, 2, vec![b"SECRET"]);
    let mut replica = replica_of(&server);
    both(&mut server, &mut replica, b"\x1b[1;4HRET\x1b[1;1HSEC\r\n\n\n\nafter");
    let top = replica.scrollback_row(replica.scrollback_len() - 3).unwrap();
    assert_eq!(row_text(&top).trim_end(), "******");
}

#[test]
fn titles_links_and_clipboard_writes_take_the_servers_findings() {
    let mut server = term(30, 3, vec![b"SECRET"]);
    let mut replica = replica_of(&server);
    let edits = both(
        &mut server,
        &mut replica,
        b"\x1b]2;key SECRET here\x07\x1b]8;;https://h/SECRET\x07l\x1b]8;;\x07\x1b]52;c;U0VDUkVU\x07",
    );
    assert_eq!(edits.text_finds.iter().filter(|found| !found.is_empty()).count(), 3);
    assert_eq!(replica.title(), Some("key ****** here"));
    assert!(edits.rows.is_empty());
}

#[test]
fn a_replica_out_of_step_says_so() {
    let mut server = term(20, 3, vec![b"SECRET"]);
    let mut replica = replica_of(&server);
    server.advance(b"\x1b]2;SECRET\x07");
    let edits = server.replica_edits();
    assert_eq!(
        replica.advance_replica(b"no title here", false, &edits),
        Err(ReplicaError::ChecksLeft)
    );
    assert_eq!(
        replica.advance_replica(b"\x1b]2;x\x07", false, &ReplicaEdits::default()),
        Err(ReplicaError::ChecksShort)
    );
    let bad = ReplicaEdits {
        rows: vec![(RowPlace::Shown(99), Default::default())],
        ..ReplicaEdits::default()
    };
    assert!(replica.advance_replica(b"", false, &bad).is_err());
}

#[test]
fn bad_edits_are_errors_never_panics() {
    let mut server = term(10, 3, vec![b"SECRET"]);
    server.advance(b"\x1b[1;4HRET\x1b[1;1HSEC\x1b]2;SECRET\x07");
    let bytes = server.replica_edits().encode();
    for len in 0..bytes.len() {
        assert!(ReplicaEdits::decode(&bytes[..len]).is_err(), "cut to {len}");
    }
    for at in 0..bytes.len() {
        let mut bad = bytes.clone();
        bad[at] ^= 0xff;
        if let Ok(edits) = ReplicaEdits::decode(&bad) {
            let mut replica = replica_of(&term(10, 3, vec![b"SECRET"]));
            let _ = replica.advance_replica(b"\x1b]2;x\x07abc", false, &edits);
        }
    }
}

#[test]
fn scrollback_left_on_the_server_is_fetched_before_what_the_replica_holds() {
    let mut server = term(12, 3, vec![b"SECRET"]);
    for i in 0..80 {
        server.advance(format!("row {i}\r\n").as_bytes());
    }
    let (mut replica, _) = Terminal::restore(&server.snapshot(10)).unwrap();
    let held_from = replica.first_line();
    let (first, rows) = server.scrollback_rows(held_from, 25);
    assert_eq!(first, held_from - 25);
    assert_eq!(replica.prepend_scrollback(first, &rows), Ok(25));
    assert_eq!(replica.first_line(), first);
    for line in first..server.screen_line() {
        assert_eq!(replica.line(line), server.line(line), "line {line}");
    }
    // Rows that no longer end where the replica's begin are left out.
    let (first, rows) = server.scrollback_rows(held_from, 5);
    assert_eq!(replica.prepend_scrollback(first, &rows), Ok(0));
    assert!(replica.prepend_scrollback(first, &rows[..rows.len() - 1]).is_err());
}

/// The server and the replica compact their style tables over different rows (the replica
/// holds few of the scrollback's), so their ids part; rows fetched afterwards still show the
/// server's styles, since rows cross with their styles by value.
#[test]
fn rows_fetched_after_both_tables_were_compacted_show_the_servers_styles() {
    use crate::term::snapshot::tests::{painted, seen};
    use crate::term::{TermConfig, TermSize};
    let size = TermSize::new(40, 4);
    let mut server = Terminal::new(size, TermConfig { scrollback_lines: 2000 });
    server.advance(&painted(0..300, 40));
    let (mut replica, _) = Terminal::restore(&server.snapshot(10)).unwrap();
    for lines in [300..400, 400..500] {
        let bytes = painted(lines, 40);
        server.advance(&bytes);
        replica.advance_replica(&bytes, false, &server.replica_edits()).unwrap();
    }
    assert!(replica.style_count() < server.style_count(), "the replica compacted its own");
    let (first, rows) = server.scrollback_rows(replica.first_line(), 150);
    assert_eq!(replica.prepend_scrollback(first, &rows), Ok(150));
    for line in replica.first_line()..server.screen_line() + 4 {
        let (ours, theirs) = (replica.line(line).unwrap(), server.line(line).unwrap());
        assert_eq!(seen(&replica, &ours), seen(&server, &theirs), "line {line}");
    }
}

/// Rows past a frame's budget stay on the server: the newest are sent, and the window asks
/// for the ones before them.
#[test]
fn rows_past_the_budget_stay_behind_the_newest_are_sent() {
    use crate::term::snapshot::tests::{painted, seen};
    use crate::term::{TermConfig, TermSize};
    let size = TermSize::new(40, 4);
    let mut server = Terminal::new(size, TermConfig { scrollback_lines: 2000 });
    server.advance(&painted(0..300, 40));
    let (mut replica, _) = Terminal::restore(&server.snapshot_within(250, 30_000)).unwrap();
    let held = replica.scrollback_len();
    assert!(held > 10 && held < 250, "the snapshot holds {held} rows");
    assert_eq!(replica.first_line(), server.screen_line() - held as u64);
    let mut asks = 0;
    while replica.first_line() > server.first_line() {
        let (first, rows) = server.scrollback_rows_within(replica.first_line(), 100, 30_000);
        let added = replica.prepend_scrollback(first, &rows).unwrap();
        assert!(added > 10 && added < 100, "an answer of {added} rows");
        asks += 1;
    }
    assert!(asks > 2);
    for line in server.first_line()..server.screen_line() {
        let (ours, theirs) = (replica.line(line).unwrap(), server.line(line).unwrap());
        assert_eq!(seen(&replica, &ours), seen(&server, &theirs), "line {line}");
    }
}
