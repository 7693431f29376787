//! Data-driven tests of the model: bytes in, screen text (or replies, events) out. Each
//! deliberate difference from Alacritty listed in the differential suite is pinned here too.

use paddock::term::{
    Color, PromptMark, StyleFlags, TermConfig, TermEvent, TermSize, Terminal, UnderlineStyle,
};

fn term(cols: usize, lines: usize) -> Terminal {
    Terminal::new(TermSize::new(cols, lines), TermConfig { scrollback_lines: 100 })
}

fn run(cols: usize, lines: usize, input: &str) -> Terminal {
    let mut t = term(cols, lines);
    t.advance(input.as_bytes());
    t
}

/// The screen as `replay` prints it.
fn screen(cols: usize, lines: usize, input: &str) -> String {
    run(cols, lines, input).screen_text()
}

fn replies(input: &str) -> String {
    let mut t = run(20, 5, input);
    String::from_utf8_lossy(&t.take_replies()).into_owned()
}

fn events(input: &str) -> Vec<TermEvent> {
    run(20, 5, input).take_events()
}

#[test]
fn screens() {
    // (what, size, input, expected screen)
    let cases: &[(&str, (usize, usize), &str, &str)] = &[
        ("plain text and newline", (10, 3), "ab\r\ncd", "ab\ncd\n\ncursor 1 2\n"),
        ("autowrap at the edge", (4, 3), "abcdef", "abcd\nef\n\ncursor 1 2\n"),
        ("last column holds the cursor", (4, 2), "abcd", "abcd\n\ncursor 0 3\n"),
        ("no autowrap overwrites the edge", (4, 2), "\x1b[?7labcdef", "abcf\n\ncursor 0 3\n"),
        ("scrolling at the bottom", (3, 2), "a\r\nb\r\nc", "b\nc\ncursor 1 1\n"),
        ("wide characters take two cells", (6, 2), "你好x", "你好x\n\ncursor 0 5\n"),
        ("a wide char that does not fit wraps", (5, 2), "abcd你", "abcd\n你\ncursor 1 2\n"),
        ("combining marks follow their base", (5, 1), "e\u{301}x", "e\u{301}x\ncursor 0 2\n"),
        ("marks after a wide char", (5, 1), "你\u{301}", "你\u{301}\ncursor 0 2\n"),
        ("CUP and erase to end of line", (6, 2), "abcdef\x1b[1;3H\x1b[K", "ab\n\ncursor 0 2\n"),
        ("erase start of line", (6, 1), "abcdef\x1b[1;3H\x1b[1K", "   def\ncursor 0 2\n"),
        ("ECH blanks without moving", (6, 1), "abcdef\x1b[1;2H\x1b[2X", "a  def\ncursor 0 1\n"),
        ("ICH shifts right", (6, 1), "abcdef\x1b[1;2H\x1b[2@", "a  bcd\ncursor 0 1\n"),
        ("DCH shifts left", (6, 1), "abcdef\x1b[1;2H\x1b[2P", "adef\ncursor 0 1\n"),
        ("insert mode", (6, 1), "abc\x1b[1G\x1b[4hX", "Xabc\ncursor 0 1\n"),
        (
            "IL inside the region",
            (3, 4),
            "a\r\nb\r\nc\r\nd\x1b[2;3r\x1b[2;1H\x1b[L",
            "a\n\nb\nd\ncursor 1 0\n",
        ),
        (
            "DL inside the region",
            (3, 4),
            "a\r\nb\r\nc\r\nd\x1b[2;3r\x1b[2;1H\x1b[M",
            "a\nc\n\nd\ncursor 1 0\n",
        ),
        (
            "region scroll by LF",
            (3, 4),
            "a\r\nb\r\nc\r\nd\x1b[2;3r\x1b[3;1H\nX",
            "a\nc\nX\nd\ncursor 2 1\n",
        ),
        ("SU and SD", (3, 3), "a\r\nb\r\nc\x1b[S", "b\nc\n\ncursor 2 1\n"),
        ("reverse index at the top", (3, 3), "a\r\nb\x1b[H\x1bMX", "X\na\nb\ncursor 0 1\n"),
        ("tabs", (20, 1), "a\tb\tc", "a       b       c\ncursor 0 17\n"),
        ("set and clear tab stops", (20, 1), "\x1b[3g\x1b[5G\x1bH\r\tx", "    x\ncursor 0 5\n"),
        ("REP repeats the last char", (10, 1), "ab\x1b[3b", "abbbb\ncursor 0 5\n"),
        ("DEC line drawing", (5, 1), "\x1b(0lqk\x1b(Bq", "┌─┐q\ncursor 0 4\n"),
        ("shift out to G1", (5, 1), "\x1b)0\x0eq\x0fq", "─q\ncursor 0 2\n"),
        ("DECALN", (3, 2), "\x1b#8", "EEE\nEEE\ncursor 0 0\n"),
        ("save and restore cursor", (6, 2), "ab\x1b7\x1b[2;5Hx\x1b8y", "aby\n    x\ncursor 0 3\n"),
        (
            "origin mode addresses the region",
            (4, 4),
            "\x1b[2;3r\x1b[?6h\x1b[1;1HX",
            "\nX\n\n\ncursor 1 1\n",
        ),
        ("RIS clears everything", (4, 2), "abc\x1b[?1049h\x1bc", "\n\ncursor 0 0\n"),
        ("invalid UTF-8 becomes U+FFFD", (4, 1), "a\u{0}b", "ab\ncursor 0 2\n"),
        ("LNM: line feed returns the carriage", (5, 2), "\x1b[20hab\ncd", "ab\ncd\ncursor 1 2\n"),
    ];
    for (what, (cols, lines), input, expected) in cases {
        assert_eq!(screen(*cols, *lines, input), *expected, "{what}");
    }
}

#[test]
fn invalid_utf8_is_replaced() {
    let mut t = term(4, 1);
    t.advance(b"a\xffb");
    assert_eq!(t.screen_text(), "a\u{fffd}b\ncursor 0 3\n");
}

#[test]
fn alternate_screens() {
    // 1049 saves the cursor, clears the alternate screen and restores the primary on exit.
    let t = run(6, 2, "main\x1b[?1049halt\x1b[?1049l");
    assert_eq!(t.screen_text(), "main\n\ncursor 0 4\n");
    assert!(!t.is_alt_screen());
    // 47 keeps the alternate screen's contents and shares the cursor.
    let t = run(6, 2, "ab\x1b[?47hX\x1b[?47lY\x1b[?47h");
    assert_eq!(t.screen_text(), "  X\n\ncursor 0 4\n");
    assert!(t.is_alt_screen());
    // 1047 clears the alternate screen when leaving it.
    let t = run(6, 2, "\x1b[?1047hX\x1b[?1047l\x1b[?47h");
    assert_eq!(t.screen_text(), "\n\ncursor 0 1\n");
}

/// Deliberate differences from Alacritty (see DELIBERATE in the differential suite).
#[test]
fn deliberate_differences_from_alacritty() {
    // DECSCA + DECSED: protected cells survive a selective erase.
    assert_eq!(screen(5, 1, "A\x1b[1\"qB\x1b[0\"qC\x1b[?2J"), " B\ncursor 0 3\n");
    assert_eq!(screen(5, 1, "A\x1b[1\"qB\x1b[0\"qC\x1b[?2K"), " B\ncursor 0 3\n");
    // SGR 21 is double underline.
    let t = run(5, 1, "\x1b[4:3;21mx");
    assert_eq!(t.style(t.rows()[0].cell(0).style()).underline, UnderlineStyle::Double);
    // CUU/CUD stop at the margins when they start inside the region.
    assert_eq!(run(3, 6, "\x1b[3;4r\x1b[4;1H\x1b[9A").cursor().row, 2);
    assert_eq!(run(3, 6, "\x1b[3;4r\x1b[3;1H\x1b[9B").cursor().row, 3);
    // Above the region CUU stops at the top of the screen; below it, at the top margin.
    assert_eq!(run(3, 6, "\x1b[3;4r\x1b[2;1H\x1b[9A").cursor().row, 0);
    assert_eq!(run(3, 6, "\x1b[3;4r\x1b[6;1H\x1b[9A").cursor().row, 2);
    // Leaving origin mode homes the cursor.
    assert_eq!(run(5, 5, "\x1b[?6h\x1b[3;3H\x1b[?6l").cursor().row, 0);
    // ED 1 on the second row clears the first row too.
    assert_eq!(screen(3, 3, "abc\r\ndef\x1b[2;2H\x1b[1J"), "\n  f\n\ncursor 1 1\n");
    // DCH never blanks cells left of the cursor.
    assert_eq!(screen(6, 1, "abcdef\x1b[1;5H\x1b[9P"), "abcd\ncursor 0 4\n");
    // At most 16 combining marks on one cell.
    let t = run(3, 1, &format!("e{}", "\u{301}".repeat(40)));
    assert_eq!(t.rows()[0].marks(0).count(), 16);
    // DL never feeds the scrollback; scrolling off the top does.
    let mut t = run(3, 2, "a\r\nb\x1b[H\x1b[M");
    assert_eq!(t.scrollback_len(), 0);
    t.advance(b"\x1b[2;1H\r\nc\r\nd");
    assert_eq!(t.scrollback_len(), 2);
}

#[test]
fn clear_screen_moves_the_screen_into_the_scrollback() {
    let t = run(3, 3, "a\r\nb\x1b[2J");
    assert_eq!(t.screen_text(), "\n\n\ncursor 1 1\n");
    let history: Vec<char> =
        (0..t.scrollback_len()).map(|i| t.scrollback_row(i).unwrap().cell(0).ch()).collect();
    assert_eq!(history, ['a', 'b']);
    let mut t = t;
    t.advance(b"\x1b[3J");
    assert_eq!(t.scrollback_len(), 0);
}

#[test]
fn scrollback_is_bounded() {
    let mut t = Terminal::new(TermSize::new(10, 5), TermConfig { scrollback_lines: 50 });
    for i in 0..1000 {
        t.advance(format!("line {i}\r\n").as_bytes());
    }
    assert_eq!(t.scrollback_len(), 50);
    assert_eq!(paddock::term::row_text(&t.scrollback_row(49).unwrap()), "line 995");
}

#[test]
fn sgr_attributes_and_colors() {
    let t = run(10, 1, "\x1b[1;3;4:3;7;9;38;2;1;2;3;48;5;200;58:2::9:8:7mx\x1b[0my");
    let style = *t.style(t.rows()[0].cell(0).style());
    assert!(style.flags.contains(StyleFlags::BOLD.union(StyleFlags::ITALIC)));
    assert!(style.flags.contains(StyleFlags::INVERSE.union(StyleFlags::STRIKE)));
    assert_eq!(style.underline, UnderlineStyle::Curly);
    assert_eq!(style.fg, Color::Rgb(1, 2, 3));
    assert_eq!(style.bg, Color::Indexed(200));
    assert_eq!(style.underline_color, Color::Rgb(9, 8, 7));
    assert_eq!(*t.style(t.rows()[0].cell(1).style()), Default::default());
    // Erasing keeps only the background (BCE).
    let t = run(4, 1, "\x1b[1;31;44m\x1b[2K");
    let erased = *t.style(t.rows()[0].cell(3).style());
    assert_eq!(
        (erased.bg, erased.fg, erased.flags),
        (Color::Indexed(4), Color::Default, StyleFlags::empty())
    );
}

#[test]
fn replies_to_queries() {
    let cases: &[(&str, &str)] = &[
        ("\x1b[c", "\x1b[?62;22c"),
        ("\x1b[>c", "\x1b[>1;100;0c"),
        ("\x1b[5n", "\x1b[0n"),
        ("ab\x1b[6n", "\x1b[1;3R"),
        ("\x1b[2;4r\x1b[?6h\x1b[6n", "\x1b[1;1R"),
        ("\x1b[?2004h\x1b[?2004$p", "\x1b[?2004;1$y"),
        ("\x1b[?1049$p", "\x1b[?1049;2$y"),
        ("\x1b[?1002h\x1b[?1000$p\x1b[?1002$p", "\x1b[?1000;2$y\x1b[?1002;1$y"),
        ("\x1b[?2026$p", "\x1b[?2026;2$y"),
        ("\x1b[?9999$p", "\x1b[?9999;0$y"),
        ("\x1b[4h\x1b[4$p", "\x1b[4;1$y"),
        ("\x1b[>q", "\x1bP>|paddock 0.1.0\x1b\\"),
        ("\x1b[18t", "\x1b[8;5;20t"),
        ("\x1b]4;1;?\x07", "\x1b]4;1;rgb:cdcd/0000/0000\x07"),
        ("\x1b]4;1;#102030\x1b\\\x1b]4;1;?\x1b\\", "\x1b]4;1;rgb:1010/2020/3030\x1b\\"),
        ("\x1b]11;?\x07", "\x1b]11;rgb:1818/1818/1818\x07"),
        ("\x1b]10;rgb:ff/ff/ff\x07\x1b]10;?\x07", "\x1b]10;rgb:ffff/ffff/ffff\x07"),
        // Never answered: clipboard reads, unknown sequences, DCS strings.
        ("\x1b]52;c;?\x07", ""),
        ("\x1b[?u\x1b[>0u\x1bP$qm\x1b\\", ""),
    ];
    for (input, expected) in cases {
        assert_eq!(replies(input), *expected, "{input:?}");
    }
}

#[test]
fn events_for_the_app_and_the_pulse() {
    let cases: Vec<(&str, Vec<TermEvent>)> = vec![
        ("\x07", vec![TermEvent::Bell]),
        ("\x1b]0;hello\x07", vec![TermEvent::Title(Some("hello".into()))]),
        ("\x1b]2;a;b\x1b\\", vec![TermEvent::Title(Some("a;b".into()))]),
        (
            "\x1b]52;c;aGVsbG8=\x07",
            vec![TermEvent::ClipboardStore { selection: "c".into(), data: b"hello".to_vec() }],
        ),
        ("\x1b]52;p;?\x07", vec![TermEvent::ClipboardLoadRequest { selection: "p".into() }]),
        ("\x1b]52;c;!!\x07", vec![]),
        (
            "\x1b]9;build done\x07",
            vec![TermEvent::Notification { title: None, body: "build done".into() }],
        ),
        ("\x1b]9;4;1;50\x07", vec![]),
        (
            "\x1b]777;notify;Agent;needs input\x07",
            vec![TermEvent::Notification {
                title: Some("Agent".into()),
                body: "needs input".into(),
            }],
        ),
        ("\x1b]99;;hi\x07", vec![TermEvent::Notification { title: None, body: "hi".into() }]),
        (
            "\x1b]133;A\x07\x1b]133;B\x07\x1b]133;C\x07\x1b]133;D;2\x07",
            vec![
                TermEvent::Prompt(PromptMark::PromptStart),
                TermEvent::Prompt(PromptMark::CommandStart),
                TermEvent::Prompt(PromptMark::CommandExecuted),
                TermEvent::Prompt(PromptMark::CommandFinished { exit_code: Some(2) }),
            ],
        ),
        ("\x1b]7;file://host/tmp/a%20b\x07", vec![TermEvent::WorkingDirectory("/tmp/a b".into())]),
        (
            "\x1b[22t\x1b]2;x\x07\x1b[23t",
            vec![TermEvent::Title(Some("x".into())), TermEvent::Title(None)],
        ),
        // BEL inside an OSC terminates it; it is not a bell.
        ("\x1b]2;t\x07", vec![TermEvent::Title(Some("t".into()))]),
    ];
    for (input, expected) in cases {
        assert_eq!(events(input), expected, "{input:?}");
    }
    assert_eq!(run(20, 5, "\x1b]7;file:///srv/x\x07").working_directory(), Some("/srv/x"));
}

#[test]
fn event_and_reply_queues_are_bounded() {
    let mut t = term(10, 2);
    t.advance("\x07".repeat(100_000).as_bytes());
    t.advance("\x1b[5n".repeat(100_000).as_bytes());
    assert!(t.take_events().len() <= 1024);
    assert!(t.take_replies().len() <= 64 * 1024);
    assert!(t.dropped_outputs() > 0);
}

#[test]
fn hyperlinks_span_their_text() {
    let t = run(20, 1, "\x1b]8;id=x;https://example.com\x1b\\link\x1b]8;;\x1b\\ no");
    let link_of = |col: usize| {
        let style = t.style(t.rows()[0].cell(col).style());
        style.hyperlink.and_then(|id| t.hyperlink(id)).map(|l| (l.uri.clone(), l.id.clone()))
    };
    assert_eq!(link_of(0), Some(("https://example.com".into(), Some("x".into()))));
    assert_eq!(link_of(3), link_of(0));
    assert_eq!(link_of(5), None);
}

#[test]
fn modes_are_tracked_as_state() {
    use paddock::term::{Modes, MouseEncoding, MouseTracking};
    let t = run(
        10,
        2,
        "\x1b[?1h\x1b=\x1b[?2004h\x1b[?1004h\x1b[?1003h\x1b[?1006h\x1b[?25l\x1b[?2026h\x1b[5 q",
    );
    let modes = t.modes();
    for flag in [Modes::APP_CURSOR, Modes::APP_KEYPAD, Modes::BRACKETED_PASTE, Modes::FOCUS_EVENTS]
    {
        assert!(modes.flags.contains(flag));
    }
    assert!(modes.flags.contains(Modes::SYNCHRONIZED_OUTPUT));
    assert_eq!((modes.mouse, modes.mouse_encoding), (MouseTracking::Motion, MouseEncoding::Sgr));
    let cursor = t.cursor();
    assert!(!cursor.visible);
    assert_eq!((cursor.shape, cursor.blinking), (Some(paddock::term::CursorShape::Beam), true));
}

#[test]
fn reflow_rewraps_and_keeps_the_cursor_on_its_line() {
    let mut t = term(10, 4);
    t.advance(b"$ abcdefghijklmnop\r\n$ ");
    assert_eq!(t.screen_text(), "$ abcdefgh\nijklmnop\n$\n\ncursor 2 2\n");
    t.resize(TermSize::new(6, 4));
    assert_eq!(t.screen_text(), "$ abcd\nefghij\nklmnop\n$\ncursor 3 2\n");
    t.resize(TermSize::new(20, 4));
    assert_eq!(t.screen_text(), "$ abcdefghijklmnop\n$\n\n\ncursor 1 2\n");
    // Shrinking the height drops blank rows below the cursor before scrolling.
    t.resize(TermSize::new(20, 2));
    assert_eq!(t.screen_text(), "$ abcdefghijklmnop\n$\ncursor 1 2\n");
    t.resize(TermSize::new(20, 1));
    assert_eq!(t.screen_text(), "$\ncursor 0 2\n");
    assert_eq!(t.scrollback_len(), 1);
    // Growing pulls the scrollback back down.
    t.resize(TermSize::new(20, 3));
    assert_eq!(t.screen_text(), "$ abcdefghijklmnop\n$\n\ncursor 1 2\n");
}

#[test]
fn reflow_keeps_wide_characters_and_marks_whole() {
    let mut t = term(6, 3);
    t.advance("ab你好e\u{301}x".as_bytes());
    t.resize(TermSize::new(3, 4));
    assert_eq!(t.screen_text(), "ab\n你\n好e\u{301}\nx\ncursor 3 1\n");
    t.resize(TermSize::new(8, 3));
    assert_eq!(t.screen_text(), "ab你好e\u{301}x\n\n\ncursor 0 7\n");
}

#[test]
fn the_alternate_screen_is_cut_not_reflowed() {
    let mut t = term(6, 3);
    t.advance(b"\x1b[?1049habcdef\x1b[3;1Hxy");
    t.resize(TermSize::new(3, 2));
    assert_eq!(t.screen_text(), "\nxy\ncursor 1 2\n");
}

/// `cells` characters, each in a truecolor of its own.
fn truecolor_flood(cells: u32) -> String {
    let mut flood = String::new();
    for i in 0..cells {
        flood.push_str(&format!("\x1b[38;2;{};{};{}mx", i & 255, (i >> 8) & 255, i >> 16));
    }
    flood
}

#[test]
fn style_table_stays_bounded_under_a_truecolor_flood() {
    let mut t = Terminal::new(TermSize::new(100, 10), TermConfig { scrollback_lines: 100 });
    // All in one call, as `paddock replay` does with a whole file.
    t.advance(truecolor_flood(200_000).as_bytes());
    // The grid plus scrollback hold 11,000 cells, so at most that many styles are live; the
    // table is compacted at twice that, checked every 64 KiB (about 2,700 new styles here).
    assert!(t.style_count() <= 2 * 11_000 + 4096, "style table holds {}", t.style_count());
    let peak = t.peak_style_count();
    assert!(peak <= 2 * 11_000 + 4096 + 3_000, "style table peaked at {peak}");
    let last = t.style(t.rows()[9].cell(99).style());
    assert_eq!(
        last.fg,
        Color::Rgb(
            ((199_999u32) & 255) as u8,
            ((199_999u32 >> 8) & 255) as u8,
            (199_999u32 >> 16) as u8
        )
    );
}

#[test]
fn clearing_the_scrollback_lets_its_styles_go() {
    let mut t = Terminal::new(TermSize::new(100, 10), TermConfig { scrollback_lines: 1_000 });
    t.advance(truecolor_flood(50_000).as_bytes());
    assert!(t.style_count() > 20_000, "the flood's styles are held: {}", t.style_count());
    // ED 3 and a screen cleared: what is left uses one style; the table follows at once,
    // not once it has doubled again.
    t.advance(b"\x1b[0m\x1b[3J\x1b[2J\x1b[3J\x1b[Hok");
    assert!(t.style_count() <= 4096, "styles held after the clear: {}", t.style_count());
}

#[test]
fn a_style_replaced_before_anything_is_printed_never_enters_the_table() {
    let mut t = term(10, 2);
    let before = t.style_count();
    // A truecolor cell as programs write it: the foreground, then the background.
    t.advance(b"\x1b[38;2;1;2;3m\x1b[48;2;4;5;6m\x1b[1mx");
    assert_eq!(t.style_count(), before + 1, "only the style printed with is in the table");
    let style = t.style(t.rows()[0].cell(0).style());
    assert_eq!((style.fg, style.bg), (Color::Rgb(1, 2, 3), Color::Rgb(4, 5, 6)));
    assert!(style.flags.contains(StyleFlags::BOLD));
}

#[test]
fn a_saved_pens_link_survives_compactions_before_it_prints() {
    // A link on the pen, saved (DECSC) before anything is printed with it; a flood of styles
    // then compacts the table, and an earlier link that scrolled away makes the saved one's
    // number change. Restored (DECRC), the pen still prints its own link.
    let mut t = term(100, 10);
    t.advance(b"\x1b]8;;https://gone\x07d\x1b]8;;https://kept\x07\x1b[31m\x1b7\x1b]8;;\x07");
    t.advance(truecolor_flood(30_000).as_bytes());
    t.advance(b"\x1b8y");
    let cell = t.rows()[0].cell(1);
    assert_eq!(cell.ch(), 'y');
    let style = t.style(cell.style());
    assert_eq!(style.fg, Color::Indexed(1));
    let link = style.hyperlink.and_then(|id| t.hyperlink(id)).map(|l| l.uri.as_str());
    assert_eq!(link, Some("https://kept"));
}

#[test]
fn scrollback_costs_about_a_byte_per_cell_of_text() {
    let mut t = Terminal::new(TermSize::new(80, 24), TermConfig { scrollback_lines: 10_000 });
    for i in 0..20_000 {
        t.advance(format!("\x1b[3{}mline {i} of colored output\x1b[0m\r\n", i % 8).as_bytes());
    }
    let cells = t.scrollback_len() * 80;
    let per_cell = t.scrollback_bytes() as f64 / cells as f64;
    // The peer's cell alone, before its row headers and per-cell extras.
    let alacritty_cell = std::mem::size_of::<alacritty_terminal::term::cell::Cell>();
    println!(
        "scrollback: {} rows, {per_cell:.2} bytes per cell (alacritty_terminal: {alacritty_cell})",
        t.scrollback_len()
    );
    // Rows are packed: about 30 characters and one style run per 80-column row here.
    assert!(per_cell <= 1.0, "{per_cell:.2} bytes per cell");
    assert!(per_cell < alacritty_cell as f64 / 20.0);
    // Full rows of text cost a little over a byte per cell, the row header included.
    let mut full = Terminal::new(TermSize::new(200, 10), TermConfig { scrollback_lines: 1_000 });
    let line: String = (0..200).map(|i| char::from(b'!' + (i % 94) as u8)).collect();
    for _ in 0..2_000 {
        full.advance(format!("{line}\r\n").as_bytes());
    }
    let per_cell = full.scrollback_bytes() as f64 / (full.scrollback_len() * 200) as f64;
    assert!(per_cell <= 1.25, "{per_cell:.2} bytes per cell at 200 columns");
}

#[test]
fn wide_characters_survive_edits_at_the_edge() {
    // ICH pushing a wide character into the last column blanks it (its right half fell off),
    // so a later write there does not disturb its neighbour.
    assert_eq!(screen(4, 1, "xy中\r\x1b[@\x1b[1;4Hz"), " xyz\ncursor 0 3\n");
    // Cutting the alternate screen through a wide character drops its marks with it.
    let mut t = term(10, 3);
    t.advance("\x1b[?1049h\x1b[1;9H中\u{301}".as_bytes());
    t.resize(TermSize::new(9, 3));
    t.advance("\x1b[1;9Hx\u{300}".as_bytes());
    assert_eq!(t.rows()[0].marks(8).collect::<String>(), "\u{300}");
}

#[test]
fn resize_edge_cases() {
    // A height-only resize keeps the last-column flag: the next character wraps.
    let mut t = term(10, 5);
    t.advance(b"0123456789");
    t.resize(TermSize::new(10, 6));
    t.advance(b"X");
    assert_eq!(t.screen_text(), "0123456789\nX\n\n\n\n\ncursor 1 1\n");
    // One column cannot hold a wide character: it becomes a blank, and nothing else is lost.
    let mut t = term(6, 4);
    t.advance("中文ab".as_bytes());
    t.resize(TermSize::new(1, 4));
    assert_eq!(t.screen_text(), "\n\na\nb\ncursor 3 0\n");
    // The saved cursor moves with its text.
    let mut t = term(10, 4);
    t.advance(b"0123456789abcdef\x1b7\r\n");
    t.resize(TermSize::new(20, 4));
    t.advance(b"\x1b8X");
    assert_eq!(paddock::term::row_text(&t.rows()[0]), "0123456789abcdefX");
    // Narrowing a long scrollback a lot keeps only what the scrollback can hold.
    let mut t = Terminal::new(TermSize::new(200, 10), TermConfig { scrollback_lines: 100 });
    for _ in 0..100 {
        t.advance(&[b'x'; 200]);
        t.advance(b"\r\n");
    }
    t.resize(TermSize::new(1, 10));
    assert_eq!(t.scrollback_len(), 100);
    assert_eq!(t.screen_text().lines().count(), 11);
}

#[test]
fn hostile_streams_stay_bounded() {
    // REP of a combining mark piles nothing onto the cell.
    let t = run(5, 1, "e\u{301}\x1b[65535b");
    assert_eq!(t.rows()[0].marks(0).count(), 1);
    // An OSC string longer than 1 MiB is cut: no event, and the text after it prints.
    let mut t = term(10, 2);
    t.advance(b"\x1b]52;c;");
    for _ in 0..20 {
        t.advance(&[b'A'; 64 * 1024]);
    }
    t.advance(b"\x07ok");
    assert!(t.take_events().is_empty());
    assert_eq!(t.screen_text(), "ok\n\ncursor 0 2\n");
}
