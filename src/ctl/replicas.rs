//! A window's replicas of the server's panes: the server's frames in, models to draw out.
//!
//! Each pane's replica is a `Terminal` restored from the server's snapshot and fed the chunks
//! the server's model parsed, with what its redactor did (`term::replica`), so it stays equal to
//! the server's model. It never answers the program: its replies are dropped (the server's
//! model answered already); its events (bells, clipboard writes) stay for the window. A frame the replica cannot follow is an error: the window
//! attaches again and starts from fresh snapshots.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::protocol::WindowView;
use super::wire::ToWindow;
use crate::mux::Mux;
use crate::term::{ReplicaEdits, ReplicaError, SnapshotError, Terminal};

/// What a frame changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Applied {
    /// A pane's replica was made (new, or started again after a resize).
    Pane(u32),
    /// A pane's replica took a chunk of output.
    Output(u32),
    Closed(u32),
    /// The tabs, splits or panes' descriptions changed.
    View,
    /// Scrollback rows it asked for were put before what a replica held (`added` of them;
    /// none when they came too late to fit).
    Rows {
        pane: u32,
        added: usize,
    },
    /// The server will not go on with this window.
    Refused(String),
    /// Something for the window's user (why an action did not happen).
    Said(String),
    /// The thread a link asked to open runs in `pane`.
    Opened {
        request: u32,
        pane: u32,
        withheld: Vec<(String, String)>,
    },
    /// The thread a link asked to open was not opened, and why.
    NotOpened {
        request: u32,
        reason: String,
    },
    /// A program on the host, fingerprinted for an approval.
    Program {
        request: u32,
        found: Result<(String, String), String>,
    },
    /// A frame a window does not act on.
    Nothing,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplicaFault {
    #[error("pane {pane}'s snapshot cannot be read: {source}")]
    Snapshot { pane: u32, source: SnapshotError },
    #[error("pane {pane}'s edits cannot be read: {source}")]
    Edits { pane: u32, source: SnapshotError },
    #[error("pane {pane}'s replica fell out of step: {source}")]
    Step { pane: u32, source: ReplicaError },
    #[error("output for pane {0}, which this window has no replica of")]
    UnknownPane(u32),
    #[error("the server's view cannot be read: {0}")]
    View(String),
}

/// Every pane's replica, by the server's pane id.
#[derive(Default)]
pub struct Replicas {
    panes: BTreeMap<u32, Arc<Mutex<Terminal>>>,
    /// The server's latest view, and its layout as a model.
    view: Option<(WindowView, Mux)>,
}

impl Replicas {
    pub fn get(&self, pane: u32) -> Option<&Arc<Mutex<Terminal>>> {
        self.panes.get(&pane)
    }

    pub fn panes(&self) -> impl Iterator<Item = u32> + '_ {
        self.panes.keys().copied()
    }

    /// The server's tabs, splits and panes' descriptions, once it has sent them.
    pub fn view(&self) -> Option<&WindowView> {
        self.view.as_ref().map(|(view, _)| view)
    }

    /// The server's layout as a model, once it has sent it.
    pub fn layout(&self) -> Option<&Mux> {
        self.view.as_ref().map(|(_, mux)| mux)
    }

    /// Take one frame from the server.
    pub fn apply(&mut self, frame: ToWindow) -> Result<Applied, ReplicaFault> {
        match frame {
            ToWindow::Pane { pane, snapshot } => {
                let (mut term, replayed) = Terminal::restore(&snapshot)
                    .map_err(|source| ReplicaFault::Snapshot { pane, source })?;
                if replayed {
                    term.replay_checks();
                }
                match self.panes.get(&pane) {
                    // The drawer may hold the old one: swap the model inside it.
                    Some(shared) => {
                        shared.lock().unwrap_or_else(PoisonError::into_inner).replace_with(term)
                    }
                    None => {
                        self.panes.insert(pane, Arc::new(Mutex::new(term)));
                    }
                }
                Ok(Applied::Pane(pane))
            }
            ToWindow::Chunk { pane, masked, bytes, edits } => {
                let edits = ReplicaEdits::decode(&edits)
                    .map_err(|source| ReplicaFault::Edits { pane, source })?;
                let shared = self.panes.get(&pane).ok_or(ReplicaFault::UnknownPane(pane))?;
                let mut term = shared.lock().unwrap_or_else(PoisonError::into_inner);
                term.advance_replica(&bytes, masked, &edits)
                    .map_err(|source| ReplicaFault::Step { pane, source })?;
                // Only the server answers the program.
                drop(term.take_replies());
                Ok(Applied::Output(pane))
            }
            ToWindow::Closed { pane } => {
                self.panes.remove(&pane);
                Ok(Applied::Closed(pane))
            }
            ToWindow::View { json } => {
                let view: WindowView =
                    serde_json::from_slice(&json).map_err(|e| ReplicaFault::View(e.to_string()))?;
                let mux = Mux::from_layout(&view.layout).map_err(ReplicaFault::View)?;
                self.view = Some((view, mux));
                Ok(Applied::View)
            }
            ToWindow::Rows { pane, first, rows } => {
                let shared = self.panes.get(&pane).ok_or(ReplicaFault::UnknownPane(pane))?;
                let mut term = shared.lock().unwrap_or_else(PoisonError::into_inner);
                let added = term
                    .prepend_scrollback(first, &rows)
                    .map_err(|source| ReplicaFault::Edits { pane, source })?;
                Ok(Applied::Rows { pane, added })
            }
            ToWindow::Refused { reason } => Ok(Applied::Refused(reason)),
            ToWindow::Said { text } => Ok(Applied::Said(text)),
            ToWindow::Opened { request, pane, withheld } => {
                Ok(Applied::Opened { request, pane, withheld })
            }
            ToWindow::Program { request, found } => Ok(Applied::Program { request, found }),
            ToWindow::NotOpened { request, reason } => Ok(Applied::NotOpened { request, reason }),
            ToWindow::Hello { .. } => Ok(Applied::Nothing),
        }
    }
}
