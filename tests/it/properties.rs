//! Property tests: arbitrary byte streams and resizes never panic and never break the model's
//! invariants (cursor in bounds, every row exactly `cols` wide, scrollback within its limit).

use paddock::term::{Cell, TermConfig, TermSize, Terminal};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Action {
    Bytes(Vec<u8>),
    Resize(usize, usize),
}

/// Bytes that reach the interesting states: escape sequences from the vocabulary programs use,
/// spliced with arbitrary bytes.
fn fragment() -> impl Strategy<Value = Vec<u8>> {
    let vocabulary = prop::sample::select(vec![
        "\x1b[",
        "\x1b]",
        "\x1bP",
        "\x07",
        "\x1b\\",
        ";",
        "?",
        "1049h",
        "1049l",
        "47h",
        "1047l",
        "r",
        "H",
        "J",
        "K",
        "@",
        "P",
        "L",
        "M",
        "S",
        "T",
        "X",
        "b",
        "m",
        "38;2;1;2;3",
        "4:3",
        "\r\n",
        "\t",
        "\x08",
        "你好",
        "🎉",
        "e\u{301}",
        "\u{301}",
        "\x1b(0",
        "\x1b(B",
        "\x0e",
        "\x0f",
        "\x1b#8",
        "\x1b7",
        "\x1b8",
        "\x1bc",
        "\x1bM",
        "?6h",
        "?7l",
        "4h",
        "20h",
        "3;5r",
        "99999",
        "0",
        "8;;http://x",
        "52;c;aGk=",
        "133;A",
        "7;file:///tmp",
        "?2026h",
        // What the parser's fast path reads (`ESC [`, digits and `;`, a final byte), whole
        // and in pieces that join with the rest.
        "\x1b[1;31m",
        "\x1b[38;2;10;200;30;48;5;17m",
        "\x1b[m",
        "\x1b[12;40H",
        "\x1b[2K",
        "\x1b[3A",
        "\x1b[;5H",
        "\x1b[6n",
        "\x1b[5b",
        "\x1b[2",
        "38;2",
        "abc",
        "\x18",
        "\x1a",
        "\x1bX",
        "\x1b_",
        "\x1b(",
        "\u{9c}",
        "\x7f",
    ]);
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        prop::collection::vec(vocabulary, 1..24).prop_map(|parts| parts.concat().into_bytes()),
        "[ -~]{0,200}".prop_map(String::into_bytes),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        8 => fragment().prop_map(Action::Bytes),
        1 => (1usize..120, 1usize..50).prop_map(|(c, l)| Action::Resize(c, l)),
    ]
}

fn check_invariants(term: &Terminal, scrollback_limit: usize) -> Result<(), TestCaseError> {
    let size = term.size();
    let cursor = term.cursor();
    prop_assert!(cursor.row < size.lines, "cursor row {} of {}", cursor.row, size.lines);
    prop_assert!(cursor.col < size.cols, "cursor col {} of {}", cursor.col, size.cols);
    prop_assert_eq!(term.rows().len(), size.lines);
    for row in term.rows() {
        prop_assert_eq!(row.len(), size.cols);
    }
    prop_assert!(term.scrollback_len() <= scrollback_limit);
    for i in 0..term.scrollback_len() {
        let row = term.scrollback_row(i).expect("row in range");
        prop_assert_eq!(row.len(), size.cols, "scrollback row {} width", i);
    }
    // Every cell's style resolves, and marks are only where the flag says.
    for row in term.rows() {
        for (col, cell) in row.cells().iter().enumerate() {
            let _ = term.style(cell.style());
            prop_assert_eq!(row.marks(col).next().is_some(), cell.has(Cell::MARKS));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_streams_and_resizes_keep_the_invariants(
        cols in 1usize..100,
        lines in 1usize..40,
        limit in 0usize..50,
        actions in prop::collection::vec(action(), 1..40),
    ) {
        let mut term = Terminal::new(TermSize::new(cols, lines), TermConfig { scrollback_lines: limit });
        for action in actions {
            match action {
                Action::Bytes(bytes) => term.advance(&bytes),
                Action::Resize(c, l) => term.resize(TermSize::new(c, l)),
            }
            check_invariants(&term, limit)?;
        }
    }

    /// The parser's fast path against vte alone (`Terminal::without_fast_path`): the same
    /// model (everything a snapshot holds), replies and events, with the stream cut at every
    /// byte offset.
    #[test]
    fn the_fast_path_reads_as_vte_alone_wherever_the_stream_is_cut(
        bytes in prop::collection::vec(fragment(), 1..10).prop_map(|f| f.concat()),
    ) {
        let size = TermSize::new(24, 6);
        let config = TermConfig { scrollback_lines: 8 };
        let look = |mut term: Terminal| {
            let replies = term.take_replies();
            (term.snapshot(usize::MAX), replies, format!("{:?}", term.take_events()))
        };
        let mut reference = Terminal::new(size, config).without_fast_path();
        reference.advance(&bytes);
        let expected = look(reference);
        for cut in 0..=bytes.len() {
            let mut term = Terminal::new(size, config);
            term.advance(&bytes[..cut]);
            term.advance(&bytes[cut..]);
            prop_assert!(look(term) == expected, "cut at {}", cut);
        }
    }

    #[test]
    fn splitting_a_stream_anywhere_gives_the_same_screen(
        bytes in prop::collection::vec(fragment(), 1..12).prop_map(|f| f.concat()),
        cut in any::<prop::sample::Index>(),
    ) {
        let size = TermSize::new(30, 8);
        let mut whole = Terminal::new(size, TermConfig::default());
        whole.advance(&bytes);
        let mut split = Terminal::new(size, TermConfig::default());
        let at = cut.index(bytes.len() + 1);
        split.advance(&bytes[..at]);
        split.advance(&bytes[at..]);
        prop_assert_eq!(whole.screen_text(), split.screen_text());
    }
}
