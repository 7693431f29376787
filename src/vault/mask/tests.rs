use super::Masker;

fn masker(values: &[&str]) -> Masker {
    let values = values.iter().map(|v| crate::vault::SecretBytes::new(v.as_bytes())).collect();
    Masker::new(values).expect("values to mask")
}

/// Feed `chunks` one by one and flush at the end, as a reader would.
fn run(values: &[&str], chunks: &[&[u8]]) -> (String, Vec<u64>) {
    let mut m = masker(values);
    let mut out = Vec::new();
    for chunk in chunks {
        m.feed(chunk, &mut out);
    }
    m.flush(&mut out);
    (String::from_utf8_lossy(&out).into_owned(), m.counts().to_vec())
}

fn whole(values: &[&str], input: &str) -> String {
    run(values, &[input.as_bytes()]).0
}

/// The same output for every way of cutting `input` into two reads and into three.
fn same_for_every_split(values: &[&str], input: &str, expected: &str) {
    let bytes = input.as_bytes();
    assert_eq!(whole(values, input), expected, "in one read");
    for i in 0..=bytes.len() {
        let (out, _) = run(values, &[&bytes[..i], &bytes[i..]]);
        assert_eq!(out, expected, "split at {i}");
        for j in i..=bytes.len() {
            let (out, _) = run(values, &[&bytes[..i], &bytes[i..j], &bytes[j..]]);
            assert_eq!(out, expected, "split at {i} and {j}");
        }
    }
}

#[test]
fn a_value_becomes_as_many_stars_as_it_has_bytes() {
    let (out, counts) = run(&["sk-live-42"], &[b"key=sk-live-42; again sk-live-42\r\n"]);
    assert_eq!(out, "key=**********; again **********\r\n");
    assert_eq!(counts, [2]);
    assert_eq!(whole(&["sk-live-42"], "sk-live-4 is not it"), "sk-live-4 is not it");
}

#[test]
fn a_value_split_across_reads_is_masked_at_every_split_point() {
    same_for_every_split(&["hunter2!"], "pw: hunter2! ok", "pw: ******** ok");
    same_for_every_split(&["hunter2!"], "hunter2!hunter2!", "****************");
}

/// A terminal model with the pane's second line, the model's own check, for `values`.
fn model_with_check(values: &[&str], cols: usize) -> crate::term::Terminal {
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;
    let secrets: Vec<_> =
        values.iter().map(|v| crate::vault::SecretBytes::new(v.as_bytes())).collect();
    let counts: Arc<[AtomicU64]> = values.iter().map(|_| AtomicU64::new(0)).collect();
    let mut term = crate::term::Terminal::new(
        crate::term::TermSize::new(cols, 5),
        crate::term::TermConfig { scrollback_lines: 100 },
    );
    let redactor = super::ScreenRedactor::new(&secrets, counts).expect("redactor");
    term.set_redactor(Box::new(redactor));
    term
}

#[test]
fn escape_sequences_between_its_characters_break_the_text_and_the_model_finds_the_value() {
    // Colour changes and a cursor move in the middle of the value, as a redraw writes them:
    // the stream passes the pieces on (the same for every split), and the model's check finds
    // the value in what it drew.
    let drawn = "a TOK\x1b[1;31mEN\x1b[0m9\x1b[1;9H9 b";
    same_for_every_split(&["TOKEN99"], drawn, drawn);
    let mut term = model_with_check(&["TOKEN99"], 40);
    term.advance_masked(whole(&["TOKEN99"], drawn).as_bytes());
    assert_eq!(term.screen_text().lines().next(), Some("a ******* b"));
    // A character set switch between characters, and a title between two halves.
    let drawn = "TO\x1b(BKEN99 \x1b]0;TOK\x07EN99";
    same_for_every_split(&["TOKEN99"], drawn, drawn);
    let mut term = model_with_check(&["TOKEN99"], 40);
    term.advance_masked(whole(&["TOKEN99"], drawn).as_bytes());
    assert_eq!(term.screen_text().lines().next(), Some("******* EN99"));
    assert_eq!(term.title(), Some("TOK"));
    // Controls the terminal ignores do not break the text: the stream stars the value.
    same_for_every_split(&["TOKEN99"], "TO\x07KEN\u{85}99", "**\x07***\u{85}**");
}

#[test]
fn values_inside_escape_sequence_strings_are_masked() {
    // A window title and a hyperlink's target, ended by BEL and by ST.
    same_for_every_split(&["TOKEN99"], "\x1b]0;x TOKEN99\x07", "\x1b]0;x *******\x07");
    same_for_every_split(
        &["TOKEN99"],
        "\x1b]8;;https://h/?k=TOKEN99\x1b\\link\x1b]8;;\x1b\\",
        "\x1b]8;;https://h/?k=*******\x1b\\link\x1b]8;;\x1b\\",
    );
}

#[test]
fn overlapping_and_prefix_sharing_values_are_all_masked() {
    let values = ["abcd", "abcdefgh", "cdXY"];
    same_for_every_split(&values, "abcdefgh|abcdefg|abcdXY|abcz", "********|****efg|******|abcz");
    let (_, counts) = run(&values, &[b"abcdefgh abcd cdXY"]);
    // abcdefgh holds abcd too.
    assert_eq!(counts, [2, 1, 1]);
}

#[test]
fn utf8_values_are_masked_byte_for_byte() {
    same_for_every_split(&["пароль"], "«пароль»", "«************»");
    same_for_every_split(&["ключ🔑"], "x ключ🔑 y", "x ************ y");
}

#[test]
fn a_tail_that_could_start_a_value_is_held_until_the_rest_shows() {
    let mut m = masker(&["SECRET"]);
    let mut out = Vec::new();
    m.feed(b"prompt SEC", &mut out);
    assert_eq!(out, b"prompt ");
    assert!(m.holding());
    m.feed(b"OND", &mut out);
    assert_eq!(out, b"prompt SECOND");
    assert!(!m.holding());
    // Nothing more comes: the held tail is passed on as it is.
    m.feed(b" S", &mut out);
    assert!(m.holding());
    m.flush(&mut out);
    assert_eq!(out, b"prompt SECOND S");
    assert_eq!(m.counts(), [0]);
}

#[test]
fn text_without_values_passes_unchanged() {
    let input: Vec<u8> = (0u8..=255).cycle().take(70_000).collect();
    let mut m = masker(&["zz-not-in-it"]);
    let mut out = Vec::new();
    for chunk in input.chunks(4096) {
        m.feed(chunk, &mut out);
    }
    m.flush(&mut out);
    assert_eq!(out, input);
}

#[test]
fn nothing_to_mask_makes_no_masker() {
    assert!(Masker::new(vec![crate::vault::SecretBytes::new(b"")]).is_none());
    assert!(Masker::new(Vec::new()).is_none());
}

mod properties {
    use proptest::prelude::*;

    use super::run;

    const PIECES: &[&str] = &[
        "SECRET", "SEC", "RET", "S", "x", " ", "\x1b[31m", "\x1b[0m", "\x1b]0;", "\x07", "\x1b\\",
        "\x1b", "m", "\r\n", "\x1bP", "\x00", "E", "T", "\x1b(B", "\u{85}",
        // Sequences whose final byte could start a value: it is not text.
        "\x1b[2S", "\x1b[1R", "\x1bS",
    ];

    proptest! {
        /// However the output is cut into reads, the screen gets the same bytes, and a value
        /// never stands whole in them.
        #[test]
        fn reads_never_change_what_is_masked(
            picks in proptest::collection::vec(0..PIECES.len(), 0..40),
            cuts in proptest::collection::vec(0usize..200, 0..6),
        ) {
            let input: String = picks.iter().map(|&i| PIECES[i]).collect();
            let bytes = input.as_bytes();
            let (whole, _) = run(&["SECRET", "RETx"], &[bytes]);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort();
            let mut chunks = Vec::new();
            let mut from = 0;
            for cut in cuts {
                chunks.push(&bytes[from..cut]);
                from = cut;
            }
            chunks.push(&bytes[from..]);
            let (split, _) = run(&["SECRET", "RETx"], &chunks);
            prop_assert_eq!(&split, &whole);
            // What the terminal shows (screen, scrollback, title) with the model's own check
            // behind the stream never holds a value. Wide enough that nothing wraps: a value
            // is shown on one row or not at all.
            let mut term = super::model_with_check(&["SECRET", "RETx"], 400);
            term.advance_masked(whole.as_bytes());
            let shown = format!(
                "{}{}{}",
                term.scrollback_text(),
                term.screen_text(),
                term.title().unwrap_or_default()
            );
            prop_assert!(!shown.contains("SECRET") && !shown.contains("RETx"), "{:?} {:?}", whole, shown);
            prop_assert_eq!(whole.len(), input.len());
        }
    }

    /// Drawing the model can be made to do: cursor moves, REP, backspace, insert and delete,
    /// C1 controls, line ends, a narrow screen that wraps and scrolls, OSC strings.
    const DRAWING: &[&[u8]] = &[
        b"SECRET",
        b"SEC",
        b"RET",
        b"S",
        b"E",
        b"C",
        b"R",
        b"T",
        b"x",
        b" ",
        b"\r\n",
        b"\n",
        b"\r",
        b"\x08",
        b"\x1b[D",
        b"\x1b[3D",
        b"\x1b[C",
        b"\x1b[A",
        b"\x1b[B",
        b"\x1b[1;1H",
        b"\x1b[2b",
        b"\x1b[@",
        b"\x1b[P",
        b"\x1b[L",
        b"\x1b[M",
        b"\x1b[2S",
        b"\x1b[T",
        b"\x9b",
        b"\xc2\x85",
        b"\x07",
        b"\x1b[31m",
        b"\x1b]2;",
        b"\x1b]9;",
        b"\x1b]52;c;",
        b"U0VDUkVU",
        b"\x1b\\",
        b"ab",
        b"cd",
        b"\x1b7",
        b"\x1b8",
        b"\x1b[?1049h",
        b"\x1b[?1049l",
        b"\x1b[2K",
        b"\x1b[4h",
        b"\x1b[4l",
        b"\x1bc",
        // What could make a row look written by plain text: malformed sequences the parser
        // ignores without a call, a doubled ESC, an SOS string, whole-row erases, DEL, bytes
        // that print U+FFFD, a charset whose characters differ from the bytes.
        b"\x1b[5b",
        b"\x1b[1<m",
        b"\x1b[ 1m",
        b"\x1b\x1b",
        b"\x1bXs\x1b\\",
        b"\x1b[K",
        b"\r\x1b[K",
        b"\x7f",
        b"\xff",
        b"\x1b(0",
        b"\x1b(B",
    ];

    proptest! {
        /// With the pane's masker in front and the model's own check behind it, no value ever
        /// reaches the screen, the scrollback, the title, a notification or the clipboard.
        #[test]
        fn no_drawing_puts_a_value_where_the_user_sees_it(
            picks in proptest::collection::vec(0..DRAWING.len(), 0..60),
            cuts in proptest::collection::vec(0usize..300, 0..6),
            cols in 3usize..12,
            line_end in any::<bool>(),
        ) {
            use std::sync::atomic::AtomicU64;
            use std::sync::Arc;
            use crate::term::{TermConfig, TermSize, Terminal};
            // Without a value that holds a line end, rows of plain text skip the model's check
            // (clean runs); with one, every changed row is read.
            let values: &[&str] =
                if line_end { &["SECRET", "RETx", "ab\ncd"] } else { &["SECRET", "RETx", "xxxx"] };
            let input: Vec<u8> = picks.iter().flat_map(|&i| DRAWING[i].iter().copied()).collect();
            let secrets: Vec<_> =
                values.iter().map(|v| crate::vault::SecretBytes::new(v.as_bytes())).collect();
            let counts: Arc<[AtomicU64]> = values.iter().map(|_| AtomicU64::new(0)).collect();
            let mut term = Terminal::new(TermSize::new(cols, 4), TermConfig { scrollback_lines: 50 });
            let redactor = super::super::ScreenRedactor::new(&secrets, counts).expect("redactor");
            term.set_redactor(Box::new(redactor));
            let mut masker = super::super::Masker::new(secrets).expect("masker");
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(input.len())).collect();
            cuts.sort();
            cuts.push(input.len());
            let mut from = 0;
            let mut out = Vec::new();
            for cut in cuts {
                masker.feed(&input[from..cut], &mut out);
                term.advance_masked(&out);
                out.clear();
                from = cut;
            }
            masker.flush(&mut out);
            term.advance_masked(&out);
            // The text as a user reads it: wrapped rows joined, other rows one line each. The
            // scrollback goes on into the primary screen, never into the alternate one.
            let mut rows: Vec<crate::term::Row> =
                (0..term.scrollback_len()).filter_map(|i| term.scrollback_row(i)).collect();
            let apart = term.is_alt_screen() as usize;
            rows.extend(
                std::iter::repeat_n(crate::term::Row::new(cols, crate::term::Cell::default()), apart)
                    .chain(term.rows().iter().cloned()),
            );
            let mut shown = String::new();
            for row in &rows {
                let text = crate::term::row_text(row);
                if row.wrapped() {
                    let cells: String = row.cells().iter().filter(|c| !c.is_filler()).map(|c| c.ch()).collect();
                    shown.push_str(&cells);
                } else {
                    shown.push_str(&text);
                    shown.push('\n');
                }
            }
            let title = format!("{:?}", term.title());
            let events = format!("{:?}", term.take_events());
            for value in values {
                prop_assert!(!shown.contains(value), "{:?} {}", String::from_utf8_lossy(&input), shown);
                prop_assert!(!title.contains(value) && !events.contains(value), "{} {}", title, events);
            }
            prop_assert!(!shown.contains("[83, 69, 67, 82, 69, 84]"), "{}", shown);
        }
    }
}

#[test]
fn a_value_with_a_line_end_is_masked_after_the_tty_made_it_crlf() {
    let value = "-----BEGIN KEY-----\nMIIEabc\n-----END KEY-----";
    let printed = "x -----BEGIN KEY-----\r\nMIIEabc\r\n-----END KEY----- y";
    let (out, counts) = run(&[value], &[printed.as_bytes()]);
    assert!(!out.contains("MIIEabc"), "{out:?}");
    assert_eq!(counts, [1]);
    let (out, _) = run(&[value], &[value.as_bytes()]);
    assert!(!out.contains("MIIEabc"), "{out:?}");
}

#[test]
fn a_large_value_costs_bounded_work_per_read() {
    // 64 KiB of a value with no repeats to speak of, printed in 4 KiB reads with a slow
    // drip around it: the work per read must not grow with what was held before.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let value: String = (0..64 * 1024)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            char::from(b'!' + (state % 90) as u8)
        })
        .collect();
    let mut m = masker(&[&value]);
    let mut out = Vec::new();
    let printed = format!("a{value}b{value}");
    let started = std::time::Instant::now();
    for chunk in printed.as_bytes().chunks(4096) {
        m.feed(chunk, &mut out);
    }
    m.flush(&mut out);
    eprintln!("64 KiB value, 128 KiB printed in 4 KiB reads: {:?}", started.elapsed());
    assert_eq!(out.len(), printed.len());
    // A byte at a time: what was held is looked at again with every read, so it stays short.
    let mut m = masker(&[&value]);
    let mut out = Vec::new();
    let started = std::time::Instant::now();
    for byte in printed.as_bytes().chunks(1) {
        m.feed(byte, &mut out);
        assert!(m.held.len() <= super::HOLD_FLOOR + super::HOLD_PER_READ_BYTE);
    }
    m.flush(&mut out);
    eprintln!("the same a byte at a time: {:?}", started.elapsed());
    // The stream masker holds at most MAX_HELD: a value longer than that passes on (the model's
    // own check stars it there); the output is whole and in order either way.
    assert_eq!(out.len(), printed.len());
}

#[test]
fn c1_controls_the_parser_drops_do_not_hide_a_value() {
    for input in [&b"a SE\x9bCRET b"[..], b"a SE\xc2\x80CRET b", b"a S\x85ECRET b", b"x\x9bSECRET"]
    {
        let (out, counts) = run(&["SECRET"], &[input]);
        assert!(!out.contains("CRET"), "{input:?}: {out:?}");
        assert_eq!(counts, [1], "{input:?}");
    }
    // Valid text around a value is left as it is.
    let (out, _) = run(&["SECRET"], &["— SECRET — é".as_bytes()]);
    assert_eq!(out, "— ****** — é");
}
