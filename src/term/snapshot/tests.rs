//! Snapshots restore the model exactly, wherever they are taken, and refuse bad bytes.

use super::SnapshotError;
use crate::term::{Hyperlink, Row, Style, TermConfig, TermSize, Terminal};

/// A stream that leaves most of the state away from its defaults: styles and links, modes,
/// tab stops, a scroll region, colors, titles, charsets, a saved cursor, marks, wide
/// characters, the alternate screen and back, a scrollback.
const RICH: &[u8] = b"\x1b]0;first\x07\x1b[22;0t\x1b]2;second\x07\x1b]7;file:///tmp/w\x07\
\x1b[1;31;4:3mred\x1b[0m \x1b]8;id=x;https://example.com\x07link\x1b]8;;\x07 \
\x1b[38;2;1;2;3;48;5;200mtrue\x1b[m\r\n\x1b(0lqk\x1b(B \xe4\xbd\xa0\xe5\xa5\xbd e\xcc\x81\r\n\
\x1b[?1h\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[4 q\x1b]4;1;rgb:10/20/30\x07\x1b]11;#102030\x07\
\x1b[3g\x1b[5G\x1bH\x1b[2;20r\x1b7\x1b[10;10Hsaved\x1b[?1049hALT\x1b[?1049l\
\x1b[r\x1b[99;1H\n\n\nline one\r\nline two\r\nline three\x1b[1;3rscrolled\r\n\r\n\r\n";

fn term(cols: usize, lines: usize) -> Terminal {
    Terminal::new(TermSize::new(cols, lines), TermConfig { scrollback_lines: 50 })
}

/// A cell as a user sees it: its character and flags, its style and the link it names (a
/// model's style ids are its own).
pub(crate) type Seen = (u32, Style, Option<Hyperlink>);

pub(crate) fn seen(term: &Terminal, row: &Row) -> Vec<Seen> {
    let cell = |c: &crate::term::Cell| {
        let mut style = *term.style(c.style());
        let link = style.hyperlink.take().and_then(|l| term.hyperlink(l).cloned());
        (c.bits(), style, link)
    };
    row.cells().iter().map(cell).collect()
}

/// The screen as a user sees it.
fn shown(term: &Terminal) -> Vec<Vec<Seen>> {
    term.rows().iter().map(|row| seen(term, row)).collect()
}

fn restored(bytes: &[u8]) -> Terminal {
    let (term, redacted) = Terminal::restore(bytes).expect("a snapshot restores");
    assert!(!redacted);
    term
}

#[test]
fn a_snapshot_restores_the_model_exactly() {
    let mut server = term(30, 8);
    server.advance(RICH);
    let bytes = server.snapshot(usize::MAX);
    let replica = restored(&bytes);
    assert_eq!(replica.snapshot(usize::MAX), bytes);
    assert_eq!(replica.title(), server.title());
    assert_eq!(replica.scrollback_len(), server.scrollback_len());
}

#[test]
fn a_replica_restored_anywhere_follows_the_server_byte_for_byte() {
    let stream =
        [RICH, b"\x1b[2J\x1b[H\x1b]0;t\xc3", b"\xa9tle\x07\x1b[38;5;", b"1mx\xf0\x9f"].concat();
    for cut in 0..=stream.len() {
        let mut server = term(24, 6);
        server.advance(&stream[..cut]);
        let mut replica = restored(&server.snapshot(8));
        for piece in stream[cut..].chunks(7) {
            server.advance(piece);
            replica.advance(piece);
            let held = replica.scrollback_len();
            assert_eq!(replica.snapshot(held), server.snapshot(held), "cut at {cut}");
        }
        assert_eq!(shown(&replica), shown(&server), "cut at {cut}");
    }
}

#[test]
fn a_long_history_in_many_styles_restores() {
    let mut server = term(100, 20);
    for i in 0..3000 {
        let line = format!(
            "\x1b[38;5;{}mline {i} \x1b[1;4mbold\x1b[m {}\r\n",
            i % 256,
            "x".repeat(i % 90)
        );
        server.advance(line.as_bytes());
    }
    for rows in [0, 10, usize::MAX] {
        let bytes = server.snapshot(rows);
        assert_eq!(restored(&bytes).snapshot(rows), bytes, "with {rows} rows");
    }
}

#[test]
fn older_scrollback_rows_stay_behind_with_their_numbers() {
    let mut server = term(10, 3);
    for i in 0..40 {
        server.advance(format!("row {i}\r\n").as_bytes());
    }
    let replica = restored(&server.snapshot(5));
    assert_eq!(replica.scrollback_len(), 5);
    assert_eq!(replica.screen_line(), server.screen_line());
    assert_eq!(replica.first_line(), server.screen_line() - 5);
    assert_eq!(replica.line(server.screen_line() - 1), server.line(server.screen_line() - 1));
    let newest = |t: &Terminal| t.scrollback_row(t.scrollback_len() - 1);
    assert_eq!(newest(&replica), newest(&server));
}

#[test]
fn bad_snapshots_are_errors_never_panics() {
    let mut server = term(20, 5);
    server.advance(RICH);
    let bytes = server.snapshot(usize::MAX);
    for len in 0..bytes.len() {
        assert!(Terminal::restore(&bytes[..len]).is_err(), "cut to {len} bytes");
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(Terminal::restore(&longer).err(), Some(SnapshotError::Trailing));
    let mut other = bytes.clone();
    other[0] = 9;
    assert_eq!(Terminal::restore(&other).err(), Some(SnapshotError::Version(9)));
    // Every byte changed in turn: an error, or a model that still works.
    for at in 0..bytes.len() {
        for value in [0x00, 0x7f, 0xff] {
            let mut bad = bytes.clone();
            bad[at] = value;
            if let Ok((mut term, _)) = Terminal::restore(&bad) {
                term.advance(RICH);
                term.resize(TermSize::new(7, 3));
                term.advance(b"\x1b[3;3H\x1b[@\x1b[P\x1b[L\x1b[M\x1b[2J");
            }
        }
    }
}

/// `lines` lines of `cols` cells, each cell in a truecolor no other cell has.
pub(crate) fn painted(lines: std::ops::Range<usize>, cols: usize) -> Vec<u8> {
    let mut out = String::new();
    for line in lines {
        for col in 0..cols {
            let n = line * cols + col;
            out += &format!("\x1b[38;2;{};{};{}m{}", n >> 16, (n >> 8) & 0xff, n & 0xff, col % 10);
        }
        out += "\x1b[m\r\n";
    }
    out.into_bytes()
}

#[test]
fn a_snapshot_carries_only_the_styles_of_what_it_sends() {
    let big = || Terminal::new(TermSize::new(40, 5), TermConfig { scrollback_lines: 2000 });
    let (mut many, mut plain) = (big(), big());
    many.advance(&painted(0..2000, 40));
    plain.advance(&b"plain line\r\n".repeat(2000));
    for term in [&mut many, &mut plain] {
        term.advance(b"\x1b[2J\x1b[H\x1b[1;32msame screen\x1b[m");
    }
    assert!(many.style_count() > 40_000, "the model holds its scrollback's styles");
    let (a, b) = (many.snapshot(0), plain.snapshot(0));
    assert_eq!(a.len(), b.len(), "a snapshot without scrollback costs the same either way");
    let replica = restored(&a);
    assert_eq!(replica.style_count(), 2, "the default and the one on screen");
    assert_eq!(shown(&replica), shown(&many));
    // Rows sent carry their own styles, and only theirs.
    let with_rows = many.snapshot(10);
    assert!(with_rows.len() < a.len() + 10 * 40 * 16, "{} bytes", with_rows.len());
    let replica = restored(&with_rows);
    assert_eq!(replica.style_count(), 2 + 10 * 40);
    for i in 0..10 {
        let row = |t: &Terminal| seen(t, &t.scrollback_row(t.scrollback_len() - 1 - i).unwrap());
        assert_eq!(row(&replica), row(&many), "scrollback row {i} from the newest");
    }
}

#[test]
fn a_snapshot_carries_at_most_eight_mebibytes_of_links() {
    let mut server = term(40, 28);
    let link = |n: usize| format!("https://example.com/{n:04}/{}", "x".repeat(7970));
    let mut screen = String::new();
    for n in 0..40 * 28 - 1 {
        screen += &format!("\x1b]8;;{}\x07L", link(n));
    }
    server.advance(screen.as_bytes());
    let bytes = server.snapshot(0);
    assert!(bytes.len() < (8 << 20) + 64 * 1024, "{} bytes", bytes.len());
    let replica = restored(&bytes);
    let linked: Vec<bool> = replica
        .rows()
        .iter()
        .flat_map(|row| seen(&replica, row))
        .filter(|(bits, ..)| bits & 0x1F_FFFF == u32::from('L'))
        .map(|(_, _, link)| link.is_some())
        .collect();
    let kept = linked.iter().take_while(|&&l| l).count();
    assert_eq!(kept, (8 << 20) / link(0).len(), "the first cells keep their links");
    assert!(linked[kept..].iter().all(|&l| !l), "cells past the budget show without theirs");
    let first = replica.rows()[0].cells()[0];
    let uri = replica.hyperlink(replica.style(first.style()).hyperlink.expect("a link"));
    assert_eq!(uri.map(|l| l.uri.clone()), Some(link(0)));
}
