use super::*;
use crate::term::{TermConfig, TermSize, Terminal};

fn term(cols: usize, lines: usize, text: &str) -> Terminal {
    let mut term = Terminal::new(TermSize::new(cols, lines), TermConfig { scrollback_lines: 100 });
    term.advance(text.replace('\n', "\r\n").as_bytes());
    term
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[test]
fn a_scrolled_back_view_stays_on_its_text_while_output_continues() {
    let mut t = term(20, 4, &numbered(10));
    let mut view = PaneView::default();
    view.scroll(&t, -3);
    assert_eq!(view.scrolled_back(&t), 3);
    let top = view.top_line(&t);
    let shown = crate::term::row_text(&t.line(top).unwrap());
    t.advance(b"more 1\r\nmore 2\r\n");
    assert_eq!(crate::term::row_text(&t.line(view.top_line(&t)).unwrap()), shown);
    assert_eq!(view.scrolled_back(&t), 5);
    // Scrolling past either end stops there.
    view.scroll(&t, -1000);
    assert_eq!(view.top_line(&t), t.first_line());
    view.scroll(&t, 1000);
    assert_eq!(view.scrolled_back(&t), 0);
    view.scroll(&t, -2);
    view.follow();
    assert_eq!(view.top_line(&t), t.screen_line());
}

#[test]
fn the_alternate_screen_does_not_scroll_back() {
    let t = term(20, 4, &(numbered(10) + "\x1b[?1049h"));
    let mut view = PaneView::default();
    view.scroll(&t, -3);
    assert_eq!(view.scrolled_back(&t), 0);
}

#[test]
fn reveal_brings_a_line_into_view() {
    let t = term(20, 4, &numbered(30));
    let mut view = PaneView::default();
    view.reveal(&t, t.first_line() + 2);
    let row = view.row_of(&t, t.first_line() + 2);
    assert!(row.is_some(), "line not in view");
}

#[test]
fn cell_selection_copies_text_across_rows_and_from_the_scrollback() {
    let t = term(20, 3, "alpha beta\ngamma delta\nepsilon\nzeta");
    // "alpha beta" scrolled off; select from "beta" to "gam".
    let first = t.first_line();
    let mut selection = Selection::new(Point { line: first, col: 6 }, SelectionKind::Cells);
    selection.head = Point { line: first + 1, col: 2 };
    assert_eq!(selection.text(&t), "beta\ngam");
    // Dragged backwards: the same text.
    std::mem::swap(&mut selection.anchor, &mut selection.head);
    assert_eq!(selection.text(&t), "beta\ngam");
}

#[test]
fn words_and_lines_grow_to_their_edges() {
    let t = term(12, 4, "see /usr/local/bin now\nnext");
    let line = t.screen_line();
    // "see /usr/loc" then "al/bin now" wrapped: a double click on "usr" takes the path
    // up to the row's end (words are found within a row).
    let word = Selection::new(Point { line, col: 6 }, SelectionKind::Words);
    assert_eq!(word.text(&t), "/usr/loc");
    let blank = Selection::new(Point { line, col: 3 }, SelectionKind::Words);
    assert_eq!(blank.text(&t), "");
    // A triple click on the wrapped second row takes the whole logical line.
    let whole = Selection::new(Point { line: line + 1, col: 0 }, SelectionKind::Lines);
    assert_eq!(whole.text(&t), "see /usr/local/bin now");
    let span = whole.span(&t);
    assert!(Selection::contains(span, line, 0));
    assert!(!Selection::contains(span, line + 2, 0));
}

#[test]
fn wide_characters_are_copied_once() {
    let t = term(20, 2, "a漢字b");
    let mut selection =
        Selection::new(Point { line: t.screen_line(), col: 0 }, SelectionKind::Cells);
    selection.head.col = 5;
    assert_eq!(selection.text(&t), "a漢字b");
}

#[test]
fn search_is_smart_case_and_covers_wide_cells() {
    let t = term(30, 3, "Error: x\nan error here\n漢字 error");
    let search = Search { query: "error".into(), current: None };
    let lines = t.screen_line()..t.screen_line() + 3;
    let found: Vec<Match> = lines.clone().flat_map(|l| search.matches_in_line(&t, l)).collect();
    assert_eq!(found.len(), 3);
    assert_eq!(found[2].start.col, 5, "after two wide characters");
    let strict = Search { query: "Error".into(), current: None };
    let found: usize = lines.map(|l| strict.matches_in_line(&t, l).len()).sum();
    assert_eq!(found, 1);
}

#[test]
fn jumps_walk_matches_older_and_newer_through_the_scrollback() {
    let t = term(20, 3, "hit 1\nmiss\nhit 2\nmiss\nhit 3\nend");
    let mut search = Search { query: "hit".into(), current: None };
    let text_at = |m: Match| crate::term::row_text(&t.line(m.start.line).unwrap());
    assert_eq!(text_at(search.jump(&t, true).unwrap()), "hit 3");
    assert_eq!(text_at(search.jump(&t, true).unwrap()), "hit 2");
    assert_eq!(text_at(search.jump(&t, true).unwrap()), "hit 1");
    assert_eq!(search.jump(&t, true), None, "nothing older");
    assert_eq!(text_at(search.current.unwrap()), "hit 1");
    assert_eq!(text_at(search.jump(&t, false).unwrap()), "hit 2");
}
