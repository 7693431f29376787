use zeroize::Zeroizing;

use super::Masker;

fn masker(values: &[&str]) -> Masker {
    let values = values.iter().map(|v| Zeroizing::new(v.as_bytes().to_vec())).collect();
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

#[test]
fn escape_sequences_between_its_characters_do_not_hide_a_value() {
    // Colour changes and a cursor move in the middle of the value, as a redraw writes them.
    same_for_every_split(
        &["TOKEN99"],
        "a TOK\x1b[1;31mEN\x1b[0m9\x1b[3;7H9 b",
        "a ***\x1b[1;31m**\x1b[0m*\x1b[3;7H* b",
    );
    // A character set switch and a string sequence between characters.
    same_for_every_split(&["TOKEN99"], "TO\x1b(BKEN\x1b]0;t\x07N99", "TO\x1b(BKEN\x1b]0;t\x07N99");
    same_for_every_split(&["TOKEN99"], "TO\x1b(BKEN99", "**\x1b(B*****");
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
    assert!(Masker::new(vec![Zeroizing::new(Vec::new())]).is_none());
    assert!(Masker::new(Vec::new()).is_none());
}

mod properties {
    use proptest::prelude::*;

    use super::run;

    const PIECES: &[&str] = &[
        "SECRET", "SEC", "RET", "S", "x", " ", "\x1b[31m", "\x1b[0m", "\x1b]0;", "\x07", "\x1b\\",
        "\x1b", "m", "\r\n", "\x1bP", "\x00", "E", "T", "\x1b(B",
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
            // What the terminal shows (screen, scrollback, title) never holds a value.
            let mut term = crate::term::Terminal::new(
                // Wide enough that nothing wraps: a value is shown on one row or not at all.
                crate::term::TermSize::new(400, 5),
                crate::term::TermConfig { scrollback_lines: 100 },
            );
            term.advance(whole.as_bytes());
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
}
