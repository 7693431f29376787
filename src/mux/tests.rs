//! Layout and focus, as a user of splits would see them.

use super::*;

fn area(cols: usize, rows: usize) -> Rect {
    Rect::new(0, 0, cols, rows)
}

/// The rectangles of the active tab as (pane, col, row, cols, rows).
fn rects(mux: &Mux, cols: usize, rows: usize) -> Vec<(u32, usize, usize, usize, usize)> {
    let (panes, _) = mux.active_tab().expect("a tab").layout(area(cols, rows));
    panes.into_iter().map(|(p, r)| (p.0, r.col, r.row, r.cols, r.rows)).collect()
}

#[test]
fn splits_lay_out_with_one_cell_dividers() {
    let mut mux = Mux::new();
    let (_, a) = mux.new_tab("agent", Some("agent".into()));
    assert_eq!(rects(&mux, 81, 24), [(1, 0, 0, 81, 24)]);
    let b = mux.split(a, Axis::Horizontal).expect("split right");
    assert_eq!(rects(&mux, 81, 24), [(1, 0, 0, 40, 24), (2, 41, 0, 40, 24)]);
    let c = mux.split(b, Axis::Vertical).expect("split down");
    assert_eq!(rects(&mux, 81, 24), [(1, 0, 0, 40, 24), (2, 41, 0, 40, 12), (3, 41, 13, 40, 11)]);
    let (_, dividers) = mux.active_tab().unwrap().layout(area(81, 24));
    let (horizontal, vertical) = (Rect::new(40, 0, 1, 24), Rect::new(41, 12, 40, 1));
    assert_eq!(
        dividers[0],
        Divider { axis: Axis::Horizontal, rect: horizontal, area: area(81, 24) }
    );
    let right = Rect::new(41, 0, 40, 24);
    assert_eq!(dividers[1], Divider { axis: Axis::Vertical, rect: vertical, area: right });
    assert_eq!(mux.focused_pane(), Some(c));
}

#[test]
fn dragging_a_divider_sets_its_own_split_ratio() {
    let mut mux = Mux::new();
    let (_, a) = mux.new_tab("t", None);
    let b = mux.split(a, Axis::Horizontal).unwrap();
    mux.split(b, Axis::Vertical).unwrap();
    // The second divider (the right side's) moves; the first stays.
    assert!(mux.set_divider_ratio(1, 0.25));
    assert_eq!(rects(&mux, 81, 25)[1..], [(2, 41, 0, 40, 6), (3, 41, 7, 40, 18)]);
    assert!(mux.set_divider_ratio(0, 0.75));
    assert_eq!(rects(&mux, 81, 25)[0], (1, 0, 0, 60, 25));
    assert!(!mux.set_divider_ratio(2, 0.5), "there is no third divider");
    assert!(mux.activate_tab(0));
    assert!(!mux.activate_tab(1));
}

#[test]
fn every_cell_belongs_to_one_pane_or_divider() {
    let mut mux = Mux::new();
    let (_, a) = mux.new_tab("t", None);
    let b = mux.split(a, Axis::Horizontal).unwrap();
    let c = mux.split(a, Axis::Vertical).unwrap();
    mux.split(b, Axis::Vertical).unwrap();
    mux.split(c, Axis::Horizontal).unwrap();
    mux.set_ratio(c, 0.3);
    for (cols, rows) in [(80, 24), (7, 5), (200, 60), (3, 3)] {
        let (panes, dividers) = mux.active_tab().unwrap().layout(area(cols, rows));
        let mut covered = vec![0u8; cols * rows];
        let rects = panes.iter().map(|(_, r)| *r).chain(dividers.iter().map(|d| d.rect));
        for r in rects {
            for row in r.row..r.row + r.rows {
                for col in r.col..r.col + r.cols {
                    covered[row * cols + col] += 1;
                }
            }
        }
        assert!(covered.iter().all(|&n| n == 1), "{cols}x{rows}: {covered:?}");
    }
}

#[test]
fn focus_moves_to_the_neighbour_in_a_direction() {
    // +---+---+
    // | a | b |
    // |   +---+
    // |   | c |
    // +---+---+
    let mut mux = Mux::new();
    let (_, a) = mux.new_tab("t", None);
    let b = mux.split(a, Axis::Horizontal).unwrap();
    let c = mux.split(b, Axis::Vertical).unwrap();
    let screen = area(81, 25);
    assert!(mux.focus_direction(Direction::Up, screen));
    assert_eq!(mux.focused_pane(), Some(b));
    assert!(mux.focus_direction(Direction::Left, screen));
    assert_eq!(mux.focused_pane(), Some(a));
    assert!(!mux.focus_direction(Direction::Left, screen), "nothing left of a");
    assert!(mux.focus_direction(Direction::Right, screen));
    assert_eq!(mux.focused_pane(), Some(b), "ties go to the pane nearest the top");
    assert!(mux.focus_direction(Direction::Down, screen));
    assert_eq!(mux.focused_pane(), Some(c));
}

#[test]
fn close_collapses_and_moves_focus() {
    let mut mux = Mux::new();
    let (tab, a) = mux.new_tab("t", None);
    let b = mux.split(a, Axis::Horizontal).unwrap();
    let c = mux.split(b, Axis::Vertical).unwrap();
    assert_eq!(mux.close(c), Some(Closed { tab, tab_closed: false }));
    assert_eq!(mux.focused_pane(), Some(b), "b takes c's space");
    // Closing the focused b in [a | [b / d]] gives the focus to d, which grows into b's space.
    let d = mux.split(b, Axis::Vertical).unwrap();
    mux.focus(b);
    mux.close(b);
    assert_eq!(mux.focused_pane(), Some(d));
    mux.focus(a);
    let b = d;
    assert_eq!(rects(&mux, 81, 24), [(1, 0, 0, 40, 24), (b.0, 41, 0, 40, 24)]);
    mux.close(b);
    assert_eq!(rects(&mux, 81, 24), [(1, 0, 0, 81, 24)]);
    assert_eq!(mux.close(a), Some(Closed { tab, tab_closed: true }));
    assert!(mux.tabs().is_empty());
    assert_eq!(mux.close(a), None, "already gone");
}

#[test]
fn zoom_shows_the_focused_pane_alone() {
    let mut mux = Mux::new();
    let (_, a) = mux.new_tab("t", None);
    let b = mux.split(a, Axis::Horizontal).unwrap();
    mux.toggle_zoom();
    assert_eq!(rects(&mux, 80, 24), [(b.0, 0, 0, 80, 24)]);
    assert!(!mux.focus_direction(Direction::Left, area(80, 24)), "no neighbours while zoomed");
    mux.focus(a);
    assert!(!mux.active_tab().unwrap().is_zoomed(), "focusing another pane unzooms");
    mux.split(a, Axis::Vertical);
    mux.toggle_zoom();
    mux.toggle_zoom();
    assert_eq!(rects(&mux, 80, 24).len(), 3);
}

#[test]
fn tabs_cycle_and_ids_are_never_reused() {
    let mut mux = Mux::new();
    let (t1, p1) = mux.new_tab("one", None);
    let (t2, p2) = mux.new_tab("two", Some("agent-2".into()));
    assert_eq!(mux.active_tab().map(|t| t.id), Some(t2));
    mux.cycle_tab(1);
    assert_eq!(mux.active_tab().map(|t| t.id), Some(t1));
    mux.cycle_tab(-1);
    assert_eq!(mux.active_tab().map(|t| t.id), Some(t2));
    mux.close(p2);
    let (_, p3) = mux.new_tab("three", None);
    assert!(p3 > p2 && p2 > p1);
    assert_eq!(mux.all_panes(), [(t1, p1), (mux.tabs()[1].id, p3)]);
    assert!(mux.focus(p1));
    assert_eq!(mux.active_tab().map(|t| t.id), Some(t1));
    assert_eq!(mux.tab_of(p3).map(|t| t.name.as_str()), Some("three"));
}

#[test]
fn a_layout_as_data_comes_back_the_same_and_bad_ones_are_refused() {
    let mut mux = Mux::new();
    let (_, a) = mux.new_tab("one", Some("agent".into()));
    let b = mux.split(a, Axis::Horizontal).unwrap();
    mux.split(b, Axis::Vertical).unwrap();
    mux.set_ratio(b, 0.3);
    mux.new_tab("two", None);
    mux.toggle_zoom();
    let info = mux.layout_info();
    let json = serde_json::to_string(&info).unwrap();
    let back = Mux::from_layout(&serde_json::from_str(&json).unwrap()).unwrap();
    assert_eq!(back.layout_info(), info);
    assert_eq!(back.tabs()[0].layout(area(80, 24)), mux.tabs()[0].layout(area(80, 24)));
    // Ids go on after the ones in the layout.
    let mut back = back;
    assert_eq!(back.new_tab("three", None).1, PaneId(5));

    let mut twice = info.clone();
    twice.tabs[1].tree = twice.tabs[0].tree.clone();
    assert!(Mux::from_layout(&twice).is_err());
    let mut lost_focus = info.clone();
    lost_focus.tabs[0].focus = 99;
    assert!(Mux::from_layout(&lost_focus).is_err());
    let mut no_tab = info.clone();
    no_tab.active = 2;
    assert!(Mux::from_layout(&no_tab).is_err());
    let mut bad_ratio = info;
    if let TreeInfo::Split { ratio, .. } = &mut bad_ratio.tabs[0].tree {
        *ratio = f32::NAN;
    }
    assert!(Mux::from_layout(&bad_ratio).is_err());
}
