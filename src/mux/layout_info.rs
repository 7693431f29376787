//! The layout as data another process can take: a window attached to the server draws the
//! server's tabs and splits from it (`ctl::protocol::WindowView`).
//!
//! [`Mux::from_layout`] checks what [`Mux`] keeps true (every tab has a pane and its focus is
//! one of them, every pane appears once, ratios inside (0, 1), the active tab exists), so a bad
//! layout is an error, never a broken model.

use serde::{Deserialize, Serialize};

use super::tree::{Node, SplitTree};
use super::{Axis, Mux, PaneId, Tab, TabId};

/// A whole layout: its tabs in order and which is active.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LayoutInfo {
    pub tabs: Vec<TabInfo>,
    pub active: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TabInfo {
    pub id: u32,
    pub name: String,
    pub thread: Option<String>,
    pub tree: TreeInfo,
    pub focus: u32,
    pub zoomed: bool,
}

/// A split tree: a pane, or a split in two.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TreeInfo {
    Pane(u32),
    Split { axis: AxisInfo, ratio: f32, first: Box<TreeInfo>, second: Box<TreeInfo> },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AxisInfo {
    Horizontal,
    Vertical,
}

/// Deeper than this a tree is refused: no layout a person makes comes near it.
const MOST_DEPTH: usize = 64;

fn tree_info(node: &Node) -> TreeInfo {
    match node {
        Node::Pane(PaneId(id)) => TreeInfo::Pane(*id),
        Node::Split { axis, ratio, first, second } => TreeInfo::Split {
            axis: match axis {
                Axis::Horizontal => AxisInfo::Horizontal,
                Axis::Vertical => AxisInfo::Vertical,
            },
            ratio: *ratio,
            first: Box::new(tree_info(first)),
            second: Box::new(tree_info(second)),
        },
    }
}

fn node(info: &TreeInfo, depth: usize, seen: &mut Vec<u32>) -> Result<Node, String> {
    if depth > MOST_DEPTH {
        return Err("a split tree is too deep".into());
    }
    Ok(match info {
        TreeInfo::Pane(id) => {
            if seen.contains(id) {
                return Err(format!("pane {id} appears twice"));
            }
            seen.push(*id);
            Node::Pane(PaneId(*id))
        }
        TreeInfo::Split { axis, ratio, first, second } => {
            if !(*ratio > 0.0 && *ratio < 1.0) {
                return Err(format!("a split's ratio {ratio} is not between 0 and 1"));
            }
            let axis = match axis {
                AxisInfo::Horizontal => Axis::Horizontal,
                AxisInfo::Vertical => Axis::Vertical,
            };
            let first = Box::new(node(first, depth + 1, seen)?);
            let second = Box::new(node(second, depth + 1, seen)?);
            Node::Split { axis, ratio: *ratio, first, second }
        }
    })
}

impl Mux {
    /// The layout as data.
    pub fn layout_info(&self) -> LayoutInfo {
        let tabs = self
            .tabs
            .iter()
            .map(|tab| TabInfo {
                id: tab.id.0,
                name: tab.name.clone(),
                thread: tab.thread.clone(),
                tree: tree_info(tab.tree.root()),
                focus: tab.focus.0,
                zoomed: tab.zoomed,
            })
            .collect();
        LayoutInfo { tabs, active: self.active }
    }

    /// The layout `info` describes, checked.
    pub fn from_layout(info: &LayoutInfo) -> Result<Mux, String> {
        let mut seen = Vec::new();
        let mut tabs = Vec::with_capacity(info.tabs.len());
        for tab in &info.tabs {
            let start = seen.len();
            let tree = SplitTree::from_root(node(&tab.tree, 0, &mut seen)?);
            if !seen[start..].contains(&tab.focus) {
                return Err(format!("tab {} has its focus on a pane it does not hold", tab.id));
            }
            if tabs.iter().any(|t: &Tab| t.id.0 == tab.id) {
                return Err(format!("tab {} appears twice", tab.id));
            }
            tabs.push(Tab {
                id: TabId(tab.id),
                name: tab.name.clone(),
                thread: tab.thread.clone(),
                tree,
                focus: PaneId(tab.focus),
                zoomed: tab.zoomed,
            });
        }
        if info.active >= tabs.len().max(1) {
            return Err("the active tab is not there".into());
        }
        let next_pane = seen.iter().copied().max().unwrap_or(0);
        let next_tab = tabs.iter().map(|t| t.id.0).max().unwrap_or(0);
        Ok(Mux { tabs, active: info.active, next_pane, next_tab })
    }
}
