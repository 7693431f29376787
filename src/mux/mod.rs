//! The multiplexer's model: tabs, each a split tree of panes, with focus and zoom.
//!
//! Pure: no PTY, no terminal, no window. Panes are ids here; what runs in them lives elsewhere.
//! A thread (one agent) is a named tab; a tab may hold several panes. Invariants: every tab has
//! at least one pane and its focus is one of them; pane ids are never reused within a `Mux`; the
//! active tab index is valid whenever there is a tab.

mod geometry;
mod layout_info;
mod tree;

pub use geometry::{Direction, Rect};
pub use layout_info::{AxisInfo, LayoutInfo, TabInfo, TreeInfo};
pub use tree::{Axis, Divider, SplitTree};

/// A pane, unique for the life of the multiplexer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PaneId(pub u32);

/// A tab, unique for the life of the multiplexer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TabId(pub u32);

#[derive(Clone, Debug)]
pub struct Tab {
    pub id: TabId,
    pub name: String,
    /// The agent thread this tab runs, if it was started as one.
    pub thread: Option<String>,
    tree: SplitTree,
    focus: PaneId,
    zoomed: bool,
}

impl Tab {
    pub fn panes(&self) -> Vec<PaneId> {
        self.tree.panes()
    }

    pub fn focus(&self) -> PaneId {
        self.focus
    }

    pub fn is_zoomed(&self) -> bool {
        self.zoomed
    }

    /// Each visible pane's rectangle in `area`, and the dividers: only the focused pane, filling
    /// the area, while zoomed.
    pub fn layout(&self, area: Rect) -> (Vec<(PaneId, Rect)>, Vec<Divider>) {
        if self.zoomed {
            return (vec![(self.focus, area)], Vec::new());
        }
        self.tree.layout(area)
    }
}

/// What closing a pane did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Closed {
    pub tab: TabId,
    /// The tab went with its last pane.
    pub tab_closed: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Mux {
    tabs: Vec<Tab>,
    active: usize,
    next_pane: u32,
    next_tab: u32,
}

impl Mux {
    pub fn new() -> Mux {
        Mux::default()
    }

    pub fn tabs(&self) -> &[Tab] {
        &self.tabs
    }

    pub fn active_tab(&self) -> Option<&Tab> {
        self.tabs.get(self.active)
    }

    pub fn focused_pane(&self) -> Option<PaneId> {
        self.active_tab().map(Tab::focus)
    }

    pub fn tab_of(&self, pane: PaneId) -> Option<&Tab> {
        self.tabs.iter().find(|t| t.tree.contains(pane))
    }

    fn tab_index_of(&self, pane: PaneId) -> Option<usize> {
        self.tabs.iter().position(|t| t.tree.contains(pane))
    }

    fn new_pane_id(&mut self) -> PaneId {
        self.next_pane += 1;
        PaneId(self.next_pane)
    }

    /// Open a tab with one pane and make it active.
    pub fn new_tab(&mut self, name: impl Into<String>, thread: Option<String>) -> (TabId, PaneId) {
        let pane = self.new_pane_id();
        self.next_tab += 1;
        let id = TabId(self.next_tab);
        let tree = SplitTree::new(pane);
        self.tabs.push(Tab { id, name: name.into(), thread, tree, focus: pane, zoomed: false });
        self.active = self.tabs.len() - 1;
        (id, pane)
    }

    /// Split `pane` (right with `Axis::Horizontal`, down with `Axis::Vertical`); the new pane
    /// gets the focus and its tab leaves zoom.
    pub fn split(&mut self, pane: PaneId, axis: Axis) -> Option<PaneId> {
        let index = self.tab_index_of(pane)?;
        let new = self.new_pane_id();
        let tab = &mut self.tabs[index];
        if !tab.tree.split(pane, axis, new) {
            return None;
        }
        tab.focus = new;
        tab.zoomed = false;
        self.active = index;
        Some(new)
    }

    /// Close `pane`; its tab goes too when it was the last one there. If it had the focus, the
    /// focus goes to the pane that takes its space.
    pub fn close(&mut self, pane: PaneId) -> Option<Closed> {
        let index = self.tab_index_of(pane)?;
        let tab = &mut self.tabs[index];
        let id = tab.id;
        let order = tab.tree.panes();
        if order.len() == 1 {
            self.tabs.remove(index);
            if self.active >= index && self.active > 0 {
                self.active -= 1;
            }
            return Some(Closed { tab: id, tab_closed: true });
        }
        let heir = tab.tree.heir(pane);
        tab.tree.close(pane);
        if tab.focus == pane {
            tab.focus = heir.unwrap_or(order[0]);
            tab.zoomed = false;
        }
        Some(Closed { tab: id, tab_closed: false })
    }

    /// Focus `pane` and activate its tab.
    pub fn focus(&mut self, pane: PaneId) -> bool {
        let Some(index) = self.tab_index_of(pane) else {
            return false;
        };
        self.active = index;
        let tab = &mut self.tabs[index];
        if tab.focus != pane {
            tab.zoomed = false;
        }
        tab.focus = pane;
        true
    }

    /// Move focus to the neighbour of the focused pane in `direction`, as laid out in `area`.
    pub fn focus_direction(&mut self, direction: Direction, area: Rect) -> bool {
        let Some(tab) = self.tabs.get_mut(self.active) else {
            return false;
        };
        if tab.zoomed {
            return false;
        }
        match tab.tree.neighbour(tab.focus, direction, area) {
            Some(next) => {
                tab.focus = next;
                true
            }
            None => false,
        }
    }

    /// Zoom the focused pane to the whole tab, or back.
    pub fn toggle_zoom(&mut self) {
        if let Some(tab) = self.tabs.get_mut(self.active) {
            tab.zoomed = !tab.zoomed && tab.tree.panes().len() > 1;
        }
    }

    /// Activate the next tab (`step` 1) or the previous one (`step` -1), wrapping around.
    pub fn cycle_tab(&mut self, step: isize) {
        if !self.tabs.is_empty() {
            let len = self.tabs.len() as isize;
            self.active = (self.active as isize + step).rem_euclid(len) as usize;
        }
    }

    /// Set the ratio of the split `pane` is a side of (dragging the divider beside it).
    pub fn set_ratio(&mut self, pane: PaneId, ratio: f32) -> bool {
        match self.tab_index_of(pane) {
            Some(index) => self.tabs[index].tree.set_ratio(pane, ratio),
            None => false,
        }
    }

    /// Set the ratio of the active tab's split whose divider is `index` in its layout.
    pub fn set_divider_ratio(&mut self, index: usize, ratio: f32) -> bool {
        let active = self.active;
        self.tabs.get_mut(active).is_some_and(|t| t.tree.set_divider_ratio(index, ratio))
    }

    /// Activate the tab at `index` (in the tab bar's order).
    pub fn activate_tab(&mut self, index: usize) -> bool {
        let valid = index < self.tabs.len();
        if valid {
            self.active = index;
        }
        valid
    }

    /// Every pane with its tab, tabs in order.
    pub fn all_panes(&self) -> Vec<(TabId, PaneId)> {
        self.tabs.iter().flat_map(|t| t.panes().into_iter().map(move |p| (t.id, p))).collect()
    }
}

#[cfg(test)]
mod tests;
