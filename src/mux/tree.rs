//! A tab's split tree: panes as leaves, splits as nodes with a direction and a ratio.
//!
//! Pure data keyed by `PaneId` (as Helix's tree is): no IO, no terminal, no window. Layout turns
//! the tree into one rectangle per pane for a given area, with a one-cell divider between the two
//! sides of every split. Invariants: every pane appears once; a split always has two children
//! (closing a pane collapses its split into the sibling); ratios stay in (0, 1).

use super::geometry::{Direction, Rect};
use super::PaneId;

/// How a split arranges its two children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    /// Side by side, a vertical divider between them ("split right").
    Horizontal,
    /// One above the other, a horizontal divider between them ("split down").
    Vertical,
}

#[derive(Clone, Debug, PartialEq)]
pub(super) enum Node {
    Pane(PaneId),
    Split { axis: Axis, ratio: f32, first: Box<Node>, second: Box<Node> },
}

#[derive(Clone, Debug, PartialEq)]
pub struct SplitTree {
    root: Node,
}

/// A divider between the two sides of a split, for drawing and for dragging.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divider {
    pub axis: Axis,
    /// The cells the divider covers (one column wide or one row tall).
    pub rect: Rect,
    /// The area of the split it divides (both sides and the divider), to turn a drag into a
    /// ratio.
    pub area: Rect,
}

impl SplitTree {
    pub fn new(pane: PaneId) -> SplitTree {
        SplitTree { root: Node::Pane(pane) }
    }

    pub(super) fn root(&self) -> &Node {
        &self.root
    }

    /// A tree from a checked root (`layout_info.rs`).
    pub(super) fn from_root(root: Node) -> SplitTree {
        SplitTree { root }
    }

    /// The panes in layout order (left to right, top to bottom).
    pub fn panes(&self) -> Vec<PaneId> {
        let mut out = Vec::new();
        collect(&self.root, &mut out);
        out
    }

    pub fn contains(&self, pane: PaneId) -> bool {
        self.panes().contains(&pane)
    }

    /// Split `pane` along `axis`, putting `new` second (right or below). False if `pane` is not
    /// in the tree or `new` already is.
    pub fn split(&mut self, pane: PaneId, axis: Axis, new: PaneId) -> bool {
        if self.contains(new) {
            return false;
        }
        let Some(leaf) = find_leaf(&mut self.root, pane) else {
            return false;
        };
        let old = std::mem::replace(leaf, Node::Pane(new));
        *leaf = Node::Split {
            axis,
            ratio: 0.5,
            first: Box::new(old),
            second: Box::new(Node::Pane(new)),
        };
        true
    }

    /// The pane that takes `pane`'s place when it closes: the first pane of its sibling.
    pub fn heir(&self, pane: PaneId) -> Option<PaneId> {
        fn find(node: &Node, pane: PaneId) -> Option<PaneId> {
            let Node::Split { first, second, .. } = node else {
                return None;
            };
            let first_leaf = |n: &Node| {
                let mut panes = Vec::new();
                collect(n, &mut panes);
                panes.first().copied()
            };
            match (&**first, &**second) {
                (Node::Pane(id), other) | (other, Node::Pane(id)) if *id == pane => {
                    first_leaf(other)
                }
                _ => find(first, pane).or_else(|| find(second, pane)),
            }
        }
        find(&self.root, pane)
    }

    /// Remove `pane`; its split collapses into the sibling. Returns false if `pane` is not in
    /// the tree or is the only pane (a tab always holds at least one).
    pub fn close(&mut self, pane: PaneId) -> bool {
        if matches!(self.root, Node::Pane(_)) {
            return false;
        }
        remove(&mut self.root, pane)
    }

    /// Set the ratio of the split that `pane` is a direct side of (what dragging the divider
    /// next to it does), clamped so both sides keep room.
    pub fn set_ratio(&mut self, pane: PaneId, ratio: f32) -> bool {
        match parent_split(&mut self.root, pane) {
            Some(Node::Split { ratio: r, .. }) => {
                *r = ratio.clamp(0.05, 0.95);
                true
            }
            _ => false,
        }
    }

    /// Set the ratio of the split whose divider is `index` in `layout`'s list (dividers are
    /// listed in the tree's pre-order, which this walks too).
    pub fn set_divider_ratio(&mut self, index: usize, ratio: f32) -> bool {
        fn walk(node: &mut Node, index: &mut usize, ratio: f32) -> bool {
            let Node::Split { ratio: r, first, second, .. } = node else {
                return false;
            };
            if *index == 0 {
                *r = ratio.clamp(0.05, 0.95);
                return true;
            }
            *index -= 1;
            walk(first, index, ratio) || walk(second, index, ratio)
        }
        walk(&mut self.root, &mut { index }, ratio)
    }

    /// One rectangle per pane inside `area`, and the dividers between them.
    pub fn layout(&self, area: Rect) -> (Vec<(PaneId, Rect)>, Vec<Divider>) {
        let (mut panes, mut dividers) = (Vec::new(), Vec::new());
        lay_out(&self.root, area, &mut panes, &mut dividers);
        (panes, dividers)
    }

    /// The pane next to `from` in `direction`: of the panes that touch its side, the one that
    /// overlaps it most along that side (ties: the one nearest its top-left).
    pub fn neighbour(&self, from: PaneId, direction: Direction, area: Rect) -> Option<PaneId> {
        let (panes, _) = self.layout(area);
        let origin = panes.iter().find(|(id, _)| *id == from)?.1;
        panes
            .iter()
            .filter(|(id, rect)| *id != from && origin.is_beside(rect, direction))
            .max_by_key(|(_, rect)| {
                let overlap = origin.overlap_along(rect, direction);
                // Prefer more overlap, then the topmost (or leftmost) pane.
                (overlap, std::cmp::Reverse(rect.start_along(direction)))
            })
            .map(|(id, _)| *id)
    }
}

fn collect(node: &Node, out: &mut Vec<PaneId>) {
    match node {
        Node::Pane(id) => out.push(*id),
        Node::Split { first, second, .. } => {
            collect(first, out);
            collect(second, out);
        }
    }
}

fn find_leaf(node: &mut Node, pane: PaneId) -> Option<&mut Node> {
    match node {
        Node::Pane(id) if *id == pane => Some(node),
        Node::Pane(_) => None,
        Node::Split { first, second, .. } => {
            if let Some(found) = find_leaf(first, pane) {
                return Some(found);
            }
            find_leaf(second, pane)
        }
    }
}

fn parent_split(node: &mut Node, pane: PaneId) -> Option<&mut Node> {
    let Node::Split { first, second, .. } = node else {
        return None;
    };
    let is_leaf = |n: &Node| matches!(n, Node::Pane(id) if *id == pane);
    if is_leaf(first) || is_leaf(second) {
        return Some(node);
    }
    let Node::Split { first, second, .. } = node else {
        return None;
    };
    if let Some(found) = parent_split(first, pane) {
        return Some(found);
    }
    parent_split(second, pane)
}

/// Remove the leaf `pane` below `node` (which is a split), collapsing its parent split.
fn remove(node: &mut Node, pane: PaneId) -> bool {
    let Node::Split { first, second, .. } = node else {
        return false;
    };
    let survivor = if matches!(**first, Node::Pane(id) if id == pane) {
        Some(std::mem::replace(&mut **second, Node::Pane(pane)))
    } else if matches!(**second, Node::Pane(id) if id == pane) {
        Some(std::mem::replace(&mut **first, Node::Pane(pane)))
    } else {
        None
    };
    match survivor {
        Some(survivor) => {
            *node = survivor;
            true
        }
        None => remove(first, pane) || remove(second, pane),
    }
}

fn lay_out(node: &Node, area: Rect, panes: &mut Vec<(PaneId, Rect)>, dividers: &mut Vec<Divider>) {
    match node {
        Node::Pane(id) => panes.push((*id, area)),
        Node::Split { axis, ratio, first, second } => {
            let span = match axis {
                Axis::Horizontal => area.cols,
                Axis::Vertical => area.rows,
            };
            let (a, b, divider) = divide(span, *ratio);
            let (first_area, line, second_area) = match axis {
                Axis::Horizontal => (
                    Rect { cols: a, ..area },
                    Rect { col: area.col + a, cols: divider, ..area },
                    Rect { col: area.col + a + divider, cols: b, ..area },
                ),
                Axis::Vertical => (
                    Rect { rows: a, ..area },
                    Rect { row: area.row + a, rows: divider, ..area },
                    Rect { row: area.row + a + divider, rows: b, ..area },
                ),
            };
            if divider > 0 {
                dividers.push(Divider { axis: *axis, rect: line, area });
            }
            lay_out(first, first_area, panes, dividers);
            lay_out(second, second_area, panes, dividers);
        }
    }
}

/// Split `span` cells into (first, second, divider): a one-cell divider when there is room for
/// it and a cell on each side; each side gets at least one cell when the span allows.
fn divide(span: usize, ratio: f32) -> (usize, usize, usize) {
    if span < 3 {
        let first = span.min(1);
        return (first, span - first, 0);
    }
    let room = span - 1;
    let first = ((room as f32 * ratio).round() as usize).clamp(1, room - 1);
    (first, room - first, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(n: u32) -> PaneId {
        PaneId(n)
    }

    #[test]
    fn divide_keeps_a_cell_on_each_side_and_a_divider() {
        assert_eq!(divide(81, 0.5), (40, 40, 1));
        assert_eq!(divide(80, 0.5), (40, 39, 1));
        assert_eq!(divide(10, 0.01), (1, 8, 1));
        assert_eq!(divide(10, 0.99), (8, 1, 1));
        assert_eq!(divide(2, 0.5), (1, 1, 0));
        assert_eq!(divide(1, 0.5), (1, 0, 0));
        assert_eq!(divide(0, 0.5), (0, 0, 0));
    }

    #[test]
    fn split_close_and_collapse() {
        let mut tree = SplitTree::new(p(1));
        assert!(tree.split(p(1), Axis::Horizontal, p(2)));
        assert!(tree.split(p(2), Axis::Vertical, p(3)));
        assert_eq!(tree.panes(), [p(1), p(2), p(3)]);
        assert!(!tree.split(p(9), Axis::Vertical, p(4)), "no such pane");
        assert!(!tree.split(p(1), Axis::Vertical, p(3)), "ids are unique");
        assert!(tree.close(p(2)));
        assert_eq!(tree.panes(), [p(1), p(3)]);
        assert!(tree.close(p(1)));
        assert_eq!(tree, SplitTree::new(p(3)));
        assert!(!tree.close(p(3)), "the last pane stays");
    }
}
