//! A window attached to a paddock server: it draws replicas of the server's panes and sends
//! back what its user types and asks.
//!
//! A reader thread takes the server's frames into `ctl::Replicas` (parsing output off the event
//! loop, as a pane's reader thread does in the server) and tells the window what changed; a
//! writer thread sends the window's frames, so a server that stops reading never blocks the
//! event loop. The window keeps its own active tab and focus over the server's layout: two
//! windows may look at different tabs.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crossbeam_channel::Sender;

use super::frame::DrawnLook;
use crate::app::{PaneLook, Shown};
use crate::ctl::attach::connect;
use crate::ctl::protocol::{SplitDirection, WindowAction, WindowView};
use crate::ctl::replicas::{Applied, Replicas};
use crate::ctl::wire::{read_frame, write_frames, ToServer, MAX_FRAME};
use crate::mux::{Axis, Direction, Mux, PaneId, Rect};
use crate::pulse::PulseState;
use crate::term::{TermSize, Terminal};

/// Scrollback rows asked for at a time, when a view scrolls past what its replica holds.
pub const ROWS_PER_ASK: u32 = 1000;

/// What the reader thread tells the window.
pub enum RemoteEvent {
    /// A pane's replica (new, or started again after a resize).
    Pane(PaneId, Arc<Mutex<Terminal>>),
    Closed(PaneId),
    /// Scrollback rows the window asked for were added to a pane's replica.
    Rows(PaneId),
    View(Box<(WindowView, Mux)>),
    /// Something for the user: why an action did not happen.
    Said(String),
    /// The connection ended: the server stopped (`None`), or why it ended it.
    Ended(Option<String>),
}

/// What taking an event from the reader thread came to.
pub enum Took {
    /// Something the window draws changed.
    Changed,
    /// A view that changes nothing drawn (the pulse's clocks moved on): no frame is due.
    Unseen,
    /// Something for the user: why an action did not happen.
    Said(String),
}

/// This window's side of its connection to a server.
pub struct Remote {
    to_server: Sender<ToServer>,
    socket: PathBuf,
    terms: BTreeMap<PaneId, Arc<Mutex<Terminal>>>,
    looks: BTreeMap<u32, PaneLook>,
    /// The server's layout, with this window's active tab and focus.
    mux: Mux,
    /// The server's layout as it last sent it.
    layout: Option<crate::mux::LayoutInfo>,
    /// The cells this window lays tabs out in, as last said to the server.
    area: TermSize,
    header_rows: usize,
    /// This window asked for a new pane: it takes the focus the server gives it.
    take_new_focus: bool,
    /// The server's count of focus moves by control requests, as last seen.
    focus_moves: u64,
    /// The exit code of the program the server ended with (`--exit-with-child`).
    exit_code: Option<u8>,
}

impl Remote {
    /// Attach to the server at `socket`. `tell` hears what the reader thread takes in; `wake`
    /// is called after output (the window coalesces it into one frame).
    pub fn attach(
        socket: &Path,
        tell: impl Fn(RemoteEvent) + Send + 'static,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> anyhow::Result<Remote> {
        let (stream, _server_pid) = connect(socket)?;
        let (to_server, outgoing) = crossbeam_channel::unbounded::<ToServer>();
        let writing = stream.try_clone()?;
        std::thread::Builder::new().name("server-writer".into()).spawn(move || {
            let mut writing = writing;
            for frame in outgoing {
                let detach = frame == ToServer::Detach;
                if write_frames(&mut writing, &[&frame.encode()]).is_err() || detach {
                    break;
                }
            }
            let _ = writing.shutdown(std::net::Shutdown::Write);
        })?;
        std::thread::Builder::new()
            .name("server-reader".into())
            .spawn(move || read_from(stream, &tell, &*wake))?;
        Ok(Remote {
            to_server,
            socket: socket.to_owned(),
            terms: BTreeMap::new(),
            looks: BTreeMap::new(),
            mux: Mux::new(),
            layout: None,
            area: TermSize::new(0, 0),
            header_rows: 0,
            take_new_focus: true,
            focus_moves: 0,
            exit_code: None,
        })
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Take what the reader thread said. `Err` when the connection ended, with why.
    pub fn take(&mut self, event: RemoteEvent) -> Result<Took, Option<String>> {
        match event {
            RemoteEvent::Pane(pane, term) => {
                self.terms.insert(pane, term);
            }
            RemoteEvent::Closed(pane) => {
                self.terms.remove(&pane);
            }
            RemoteEvent::View(view) => {
                if !self.show(*view) {
                    return Ok(Took::Unseen);
                }
            }
            RemoteEvent::Rows(_) => {}
            RemoteEvent::Said(text) => return Ok(Took::Said(text)),
            RemoteEvent::Ended(why) => return Err(why),
        }
        Ok(Took::Changed)
    }

    /// Whether the server's first layout has arrived (keys have a pane to go to).
    pub fn has_layout(&self) -> bool {
        self.layout.is_some()
    }

    /// The server's new layout, keeping this window's active tab and each tab's focus where
    /// they still are. False when nothing a frame draws changed.
    fn show(&mut self, (view, mut mux): (WindowView, Mux)) -> bool {
        let drawn = |looks: &BTreeMap<u32, PaneLook>| -> Vec<(u32, DrawnLook)> {
            looks.iter().map(|(id, look)| (*id, DrawnLook::of(look))).collect()
        };
        let before = (self.layout.take(), drawn(&self.looks), self.exit_code);
        self.layout = Some(view.layout.clone());
        let known: Vec<PaneId> = self.mux.all_panes().into_iter().map(|(_, p)| p).collect();
        let server_focus = mux.focused_pane();
        let moved = std::mem::replace(&mut self.focus_moves, view.focus_moves) != view.focus_moves;
        let taken =
            moved || self.take_new_focus && server_focus.is_some_and(|p| !known.contains(&p));
        if !taken {
            let active = self.mux.focused_pane();
            for tab in self.mux.tabs() {
                mux.focus(tab.focus());
            }
            match active.filter(|p| mux.tab_of(*p).is_some()) {
                Some(pane) => {
                    mux.focus(pane);
                }
                None => {
                    if let Some(pane) = server_focus {
                        mux.focus(pane);
                    }
                }
            }
        }
        if taken {
            self.take_new_focus = false;
        }
        // A look this window cannot read (a server of another build) leaves its strip bare.
        let looks = view.looks.into_iter();
        self.looks =
            looks.filter_map(|(id, look)| Some((id, serde_json::from_value(look).ok()?))).collect();
        self.mux = mux;
        self.exit_code = view.exit_code.or(self.exit_code);
        taken || moved || before != (self.layout.clone(), drawn(&self.looks), self.exit_code)
    }

    /// The code of the program the server ended with (`--exit-with-child`), once it said so.
    pub fn exit_code(&self) -> Option<u8> {
        self.exit_code
    }

    fn send(&self, frame: ToServer) {
        // The reader thread says when the connection is gone.
        let _ = self.to_server.send(frame);
    }

    pub fn act(&mut self, action: WindowAction) {
        if matches!(action, WindowAction::NewTab { .. } | WindowAction::Split { .. }) {
            self.take_new_focus = true;
        }
        self.send(ToServer::Act(action));
    }

    pub fn type_into(&self, pane: PaneId, bytes: Vec<u8>) {
        self.send(ToServer::Input { pane: pane.0, bytes });
    }

    pub fn detach(&self) {
        self.send(ToServer::Detach);
    }

    pub fn area(&self) -> TermSize {
        self.area
    }

    pub fn set_area(&mut self, area: TermSize) {
        self.area = area;
        let clamp = |n: usize| u16::try_from(n).unwrap_or(u16::MAX).max(1);
        self.send(ToServer::Area { cols: clamp(area.cols), rows: clamp(area.lines) });
    }

    pub fn set_header_rows(&mut self, rows: usize) {
        self.header_rows = rows;
    }

    /// Focus `pane` here; the server's focus follows.
    pub fn focus(&mut self, pane: PaneId) {
        if self.mux.focus(pane) {
            self.act(WindowAction::Focus { pane: pane.0 });
        }
    }

    pub fn focus_direction(&mut self, direction: Direction) {
        let area = Rect::new(0, 0, self.area.cols, self.area.lines);
        if self.mux.focus_direction(direction, area) {
            if let Some(pane) = self.mux.focused_pane() {
                self.act(WindowAction::Focus { pane: pane.0 });
            }
        }
    }

    pub fn cycle_tab(&mut self, step: isize) {
        self.mux.cycle_tab(step);
        if let Some(pane) = self.mux.focused_pane() {
            self.act(WindowAction::Focus { pane: pane.0 });
        }
    }

    pub fn activate_tab(&mut self, index: usize) {
        if self.mux.activate_tab(index) {
            if let Some(pane) = self.mux.focused_pane() {
                self.act(WindowAction::Focus { pane: pane.0 });
            }
        }
    }

    pub fn split(&mut self, pane: PaneId, axis: Axis) {
        let direction = match axis {
            Axis::Horizontal => SplitDirection::Right,
            Axis::Vertical => SplitDirection::Down,
        };
        self.act(WindowAction::Split { pane: pane.0, direction });
    }

    /// Focus the pane that has waited for its user longest (a muted one never counts).
    pub fn focus_longest_waiting(&mut self) -> Option<PaneId> {
        let waiting = self.looks.iter().filter_map(|(id, look)| {
            let pulse = look.pulse.as_ref().filter(|p| !p.muted)?;
            matches!(pulse.state, PulseState::NeedsYou(_)).then_some((PaneId(*id), pulse.since))
        });
        let (pane, _) = waiting.max_by_key(|(_, since)| *since)?;
        self.focus(pane);
        Some(pane)
    }

    /// Ask for `pane`'s scrollback rows before the oldest its replica holds, if the server
    /// has more.
    pub fn ask_rows(&self, pane: PaneId) {
        let Some(term) = self.term(pane) else { return };
        let oldest = term.first_line();
        if oldest > 0 {
            self.send(ToServer::Scrollback { pane: pane.0, before: oldest, count: ROWS_PER_ASK });
        }
    }

    /// Ask for all of `pane`'s scrollback (a search looks through it).
    pub fn ask_all_rows(&self, pane: PaneId) {
        let Some(term) = self.term(pane) else { return };
        let oldest = term.first_line();
        if oldest > 0 {
            let count = u32::try_from(oldest).unwrap_or(u32::MAX);
            self.send(ToServer::Scrollback { pane: pane.0, before: oldest, count });
        }
    }
}

impl Shown for Remote {
    fn mux(&self) -> &Mux {
        &self.mux
    }

    fn header_rows(&self) -> usize {
        self.header_rows
    }

    fn term(&self, pane: PaneId) -> Option<MutexGuard<'_, Terminal>> {
        let term = self.terms.get(&pane)?;
        Some(term.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn look(&self, pane: PaneId) -> Option<Cow<'_, PaneLook>> {
        self.looks.get(&pane.0).map(Cow::Borrowed)
    }
}

/// The reader thread: the server's frames into replicas, until the connection ends.
fn read_from(stream: UnixStream, tell: &dyn Fn(RemoteEvent), wake: &dyn Fn()) {
    let mut replicas = Replicas::default();
    let mut buf = Vec::new();
    let mut reading = &stream;
    let why = loop {
        let frame = match read_frame(&mut reading, MAX_FRAME, &mut buf) {
            Ok(frame) => frame,
            Err(crate::ctl::wire::WireError::Closed) => break None,
            Err(e) => break Some(format!("the connection to the server failed: {e}")),
        };
        let frame = match crate::ctl::wire::ToWindow::decode(frame) {
            Ok(frame) => frame,
            Err(e) => break Some(format!("the server sent a frame this window cannot read: {e}")),
        };
        match replicas.apply(frame) {
            Ok(Applied::Pane(pane)) => {
                if let Some(term) = replicas.get(pane) {
                    tell(RemoteEvent::Pane(PaneId(pane), term.clone()));
                }
                wake();
            }
            Ok(Applied::Output(_) | Applied::Rows { added: 0, .. }) => wake(),
            // An answer is cut to fit a frame: the window may want the rows before it too.
            Ok(Applied::Rows { pane, .. }) => tell(RemoteEvent::Rows(PaneId(pane))),
            Ok(Applied::Closed(pane)) => tell(RemoteEvent::Closed(PaneId(pane))),
            Ok(Applied::View) => {
                if let (Some(view), Some(mux)) = (replicas.view(), replicas.layout()) {
                    tell(RemoteEvent::View(Box::new((view.clone(), mux.clone()))));
                }
            }
            Ok(Applied::Said(text)) => tell(RemoteEvent::Said(text)),
            Ok(Applied::Refused(why)) => break Some(why),
            // A window asks nothing a link asks.
            Ok(
                Applied::Nothing
                | Applied::Opened { .. }
                | Applied::NotOpened { .. }
                | Applied::Program { .. },
            ) => {}
            Err(fault) => break Some(format!("{fault}; attach again")),
        }
    };
    tell(RemoteEvent::Ended(why));
}
