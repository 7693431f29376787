//! Where a window's panes live: in this process (`Local`, the window owns them) or in a
//! paddock server it is attached to (`Remote`, the window draws replicas). The window asks
//! the same things of both.

use crate::app::server::Server;
use crate::app::Shown;
use crate::config::ClipboardRule;
use crate::ctl::protocol::WindowAction;
use crate::mux::{Axis, Direction, Mux, PaneId};
use crate::term::TermSize;

use super::remote::Remote;

pub enum Panes {
    // Boxed: the window holds one for its whole life, and the two differ much in size.
    Local(Box<Server>),
    Remote(Remote),
}

impl Panes {
    pub fn shown(&self) -> &dyn Shown {
        match self {
            Panes::Local(server) => server.workspace(),
            Panes::Remote(remote) => remote,
        }
    }

    pub fn mux(&self) -> &Mux {
        self.shown().mux()
    }

    /// The server in this process, if the panes live here.
    pub fn local(&mut self) -> Option<&mut Server> {
        match self {
            Panes::Local(server) => Some(server),
            Panes::Remote(_) => None,
        }
    }

    pub fn remote(&mut self) -> Option<&mut Remote> {
        match self {
            Panes::Local(_) => None,
            Panes::Remote(remote) => Some(remote),
        }
    }

    /// Bytes for `pane`'s program, as typed or pasted. A pane that stopped reading says so in
    /// its status; typing goes nowhere.
    pub fn type_into(&self, pane: PaneId, bytes: Vec<u8>) {
        match self {
            Panes::Local(server) => {
                if let Some(session) = server.workspace().session(pane) {
                    let _ = session.send(bytes);
                }
            }
            Panes::Remote(remote) => remote.type_into(pane, bytes),
        }
    }

    pub fn area(&self) -> TermSize {
        match self {
            Panes::Local(server) => server.workspace().area_size(),
            Panes::Remote(remote) => remote.area(),
        }
    }

    pub fn set_area(&mut self, area: TermSize) {
        match self {
            Panes::Local(server) => server.workspace_mut().set_area(area),
            Panes::Remote(remote) => remote.set_area(area),
        }
    }

    pub fn set_header_rows(&mut self, rows: usize) {
        match self {
            Panes::Local(server) => server.workspace_mut().set_header_rows(rows),
            Panes::Remote(remote) => remote.set_header_rows(rows),
        }
    }

    /// A tab with the user's shell; opened from a locked pane, it is locked the same way.
    pub fn new_tab(&mut self, from: Option<PaneId>) {
        match self {
            Panes::Local(server) => {
                if let Err(why) = server.workspace_mut().open_tab_from(from) {
                    eprintln!("paddock: cannot open a tab: {why}");
                }
            }
            Panes::Remote(remote) => remote.act(WindowAction::NewTab { from: from.map(|p| p.0) }),
        }
    }

    /// Close `pane`; `Some(code)` when that ends the instance.
    pub fn close(&mut self, pane: PaneId) -> Option<u8> {
        match self {
            Panes::Local(server) => server.close_pane(pane),
            Panes::Remote(remote) => {
                remote.act(WindowAction::Close { pane: pane.0 });
                None
            }
        }
    }

    pub fn split(&mut self, pane: PaneId, axis: Axis) {
        match self {
            Panes::Local(server) => {
                if let Err(why) = server.workspace_mut().split(pane, axis, vec![]) {
                    eprintln!("paddock: cannot split the pane: {why}");
                }
            }
            Panes::Remote(remote) => remote.split(pane, axis),
        }
    }

    pub fn focus(&mut self, pane: PaneId) {
        match self {
            Panes::Local(server) => server.workspace_mut().focus(pane),
            Panes::Remote(remote) => remote.focus(pane),
        }
    }

    pub fn focus_direction(&mut self, direction: Direction) {
        match self {
            Panes::Local(server) => {
                server.workspace_mut().focus_direction(direction);
            }
            Panes::Remote(remote) => remote.focus_direction(direction),
        }
    }

    pub fn cycle_tab(&mut self, step: isize) {
        match self {
            Panes::Local(server) => server.workspace_mut().cycle_tab(step),
            Panes::Remote(remote) => remote.cycle_tab(step),
        }
    }

    pub fn activate_tab(&mut self, index: usize) {
        match self {
            Panes::Local(server) => server.workspace_mut().activate_tab(index),
            Panes::Remote(remote) => remote.activate_tab(index),
        }
    }

    /// Zoom `pane` (focused) to its whole tab, or back.
    pub fn toggle_zoom(&mut self, pane: PaneId) {
        match self {
            Panes::Local(server) => server.workspace_mut().toggle_zoom(),
            Panes::Remote(remote) => remote.act(WindowAction::Zoom { pane: pane.0 }),
        }
    }

    /// Move divider `index` of focused `pane`'s tab.
    pub fn set_divider_ratio(&mut self, pane: PaneId, index: usize, ratio: f32) {
        match self {
            Panes::Local(server) => server.workspace_mut().set_divider_ratio(index, ratio),
            Panes::Remote(remote) => {
                remote.act(WindowAction::Divider { pane: pane.0, index, ratio })
            }
        }
    }

    pub fn toggle_mute(&mut self, pane: PaneId) {
        match self {
            Panes::Local(server) => {
                server.workspace_mut().toggle_mute_focused();
            }
            Panes::Remote(remote) => remote.act(WindowAction::ToggleMute { pane: pane.0 }),
        }
    }

    /// Focus the pane that has waited longest; false when none waits.
    pub fn focus_longest_waiting(&mut self) -> bool {
        match self {
            Panes::Local(server) => server.workspace_mut().focus_longest_waiting().is_some(),
            Panes::Remote(remote) => remote.focus_longest_waiting().is_some(),
        }
    }

    pub fn allow_host(&mut self, pane: PaneId) {
        match self {
            Panes::Local(server) => {
                if let Some(host) = server.workspace_mut().allow_refused_host(pane) {
                    eprintln!("paddock: {host} allowed for this pane until it closes");
                }
            }
            Panes::Remote(remote) => remote.act(WindowAction::AllowHost { pane: pane.0 }),
        }
    }

    /// Approve `pane`'s changed pinned program and start it again.
    pub fn approve_program(&mut self, pane: PaneId) {
        match self {
            Panes::Local(server) => match server.workspace_mut().approve_changed_program(pane) {
                Ok(done) => {
                    eprintln!("paddock: {done}");
                    server.restart_pane(pane);
                }
                Err(why) => eprintln!("paddock: {why}"),
            },
            Panes::Remote(remote) => remote.act(WindowAction::ApproveProgram { pane: pane.0 }),
        }
    }

    pub fn restart(&mut self, pane: PaneId) {
        match self {
            Panes::Local(server) => server.restart_pane(pane),
            Panes::Remote(remote) => remote.act(WindowAction::Restart { pane: pane.0 }),
        }
    }

    /// What `pane`'s clipboard writes do (a pane the window knows nothing of may not write).
    pub fn clipboard_rule(&self, pane: PaneId) -> ClipboardRule {
        match self {
            Panes::Local(server) => server.workspace().clipboard_rule(pane),
            Panes::Remote(remote) => {
                remote.look(pane).map_or(ClipboardRule::Deny, |look| look.clipboard)
            }
        }
    }
}
