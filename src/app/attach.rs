//! The windows attached to this server: every pane's model tells them each change as it
//! happens, and what they type goes to the panes.
//!
//! A pane's model has a follower (`PaneFeed`) that runs under the model's lock right after each
//! chunk, so a window that is sent a pane's snapshot under that same lock and then added to the
//! pane's list gets every later chunk exactly once, in order. Frames are encoded once per
//! change and queued to each window's writer thread; a window whose queue is full (it stopped
//! reading) is dropped rather than let hold the pane, and it attaches again from fresh
//! snapshots. A window's reader thread hands its input to the main loop; a bad frame closes
//! that window, never the server.

use std::collections::HashMap;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

use crate::ctl::protocol::{WindowAction, WindowInfo, WindowView};
use crate::ctl::wire::{read_frame, write_frames, ToServer, ToWindow, WireError, MAX_INPUT};
use crate::mux::PaneId;
use crate::pty::PaneSession;
use crate::term::{Follower, TermSize, Terminal};

/// Windows attached at once; one more is told so and closed.
const MOST_WINDOWS: usize = 64;
/// The largest area a window may lay panes out in, in cells (an 8K screen in a 4-pixel font).
const MOST_AREA: (u16, u16) = (2048, 1024);
/// Bytes queued for one window before it counts as not reading.
const QUEUED_BYTES: usize = 64 << 20;
/// Frames queued for one window before it counts as not reading.
const QUEUED_FRAMES: usize = 512;
/// Scrollback rows sent with a pane's snapshot; older ones stay on the server.
pub const SNAPSHOT_SCROLLBACK: usize = 1000;
/// The most scrollback rows one request gets.
const MOST_ROWS_ASKED: usize = 10_000;
/// A window that takes no frame for this long is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// What a window asks of the server, for the main loop.
pub enum FromWindow {
    /// Bytes for a pane's program.
    Input { from: WindowHandle, pane: PaneId, bytes: Vec<u8> },
    /// The cells the window lays tabs out in.
    Area { from: WindowHandle, size: TermSize },
    /// Scrollback rows its replica of `pane` does not hold.
    Scrollback { from: WindowHandle, pane: PaneId, before: u64, count: usize },
    /// What one of its key bindings asks.
    Act { from: WindowHandle, action: WindowAction },
}

/// One attached window, for the main loop to answer.
#[derive(Clone)]
pub struct WindowHandle(Arc<Window>);

impl WindowHandle {
    /// Tell the window's user something (why an action did not happen).
    pub fn say(&self, text: String) {
        self.0.send(&ToWindow::Said { text }.encode().into());
    }
}

/// One attached window, as the server sees it.
struct Window {
    /// Its process, where the system tells it (for `paddock ls`).
    pid: Option<u32>,
    frames: Sender<Arc<[u8]>>,
    /// It left, fell behind or sent a bad frame: nothing more is queued for it.
    gone: AtomicBool,
    /// Why the server ends it, said last (nothing when the window left).
    farewell: Mutex<Option<String>>,
    /// The cells it lays tabs out in, once it said.
    area: Mutex<Option<TermSize>>,
    /// Bytes queued for it and not yet written.
    queued_bytes: AtomicUsize,
}

impl Window {
    fn send(&self, frame: &Arc<[u8]>) {
        if self.gone.load(Ordering::Acquire) {
            return;
        }
        let queued = self.queued_bytes.fetch_add(frame.len(), Ordering::AcqRel) + frame.len();
        if queued > QUEUED_BYTES || self.frames.try_send(frame.clone()).is_err() {
            self.queued_bytes.fetch_sub(frame.len(), Ordering::AcqRel);
            self.end(Some("this window fell behind the server's output; attach again".into()));
        }
    }

    fn end(&self, reason: Option<String>) {
        let mut farewell = lock(&self.farewell);
        if farewell.is_none() && !self.gone.load(Ordering::Acquire) {
            *farewell = reason;
        }
        self.gone.store(true, Ordering::Release);
    }
}

type Subscribers = Arc<Mutex<Vec<Arc<Window>>>>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `pane`'s model as it stands, for a replica to start from.
fn pane_frame(pane: u32, term: &Terminal) -> Arc<[u8]> {
    ToWindow::Pane { pane, snapshot: term.snapshot(SNAPSHOT_SCROLLBACK) }.encode().into()
}

/// A pane's model's follower: each change, to the windows that hold its replica.
struct PaneFeed {
    pane: u32,
    subscribers: Subscribers,
}

impl PaneFeed {
    fn send(&self, frame: impl FnOnce() -> Arc<[u8]>) {
        let mut subscribers = lock(&self.subscribers);
        subscribers.retain(|w| !w.gone.load(Ordering::Acquire));
        if subscribers.is_empty() {
            return;
        }
        let frame = frame();
        for window in subscribers.iter() {
            window.send(&frame);
        }
    }
}

impl Follower for PaneFeed {
    fn parsed(&mut self, bytes: &[u8], masked: bool, term: &Terminal) {
        let pane = self.pane;
        self.send(|| {
            let edits = term.replica_edits().encode();
            ToWindow::Chunk { pane, masked, bytes: bytes.to_vec(), edits }.encode().into()
        });
    }

    fn restarted(&mut self, term: &Terminal) {
        let pane = self.pane;
        self.send(|| pane_frame(pane, term));
    }
}

/// Every attached window, and each pane's list of them.
pub struct Attached {
    windows: Vec<Arc<Window>>,
    /// The window that typed or said its size last: the panes take their sizes from it.
    active: Option<Arc<Window>>,
    /// The view last sent (`ctl::protocol::WindowView` as JSON), sent again only when it changes.
    view: Arc<[u8]>,
    panes: HashMap<PaneId, Subscribers>,
    input: Sender<FromWindow>,
    inputs: Receiver<FromWindow>,
}

impl Default for Attached {
    fn default() -> Self {
        let (input, inputs) = crossbeam_channel::bounded(256);
        Attached {
            windows: Vec::new(),
            active: None,
            view: Arc::from([]),
            panes: HashMap::new(),
            input,
            inputs,
        }
    }
}

impl Attached {
    /// What the windows ask, for the main loop.
    pub fn inputs(&self) -> &Receiver<FromWindow> {
        &self.inputs
    }

    /// `from` typed into a pane: it is the active window now. The area the panes should be
    /// laid out in, when that changed it.
    pub fn typed(&mut self, from: &WindowHandle) -> Option<TermSize> {
        let before = self.active.replace(from.0.clone());
        let changed = before.is_none_or(|w| !Arc::ptr_eq(&w, &from.0));
        changed.then(|| *lock(&from.0.area)).flatten()
    }

    /// `from` said the cells it lays tabs out in: the area the panes should be laid out in,
    /// when it is the active window (or none is).
    pub fn sized(&mut self, from: &WindowHandle, size: TermSize) -> Option<TermSize> {
        *lock(&from.0.area) = Some(size);
        let active = self.active.as_ref().filter(|w| !w.gone.load(Ordering::Acquire));
        match active {
            Some(window) if !Arc::ptr_eq(window, &from.0) => None,
            _ => {
                self.active = Some(from.0.clone());
                Some(size)
            }
        }
    }

    /// Answer `from`'s request for `pane`'s scrollback rows before line `before`.
    pub fn send_rows(
        &self,
        from: &WindowHandle,
        pane: PaneId,
        session: &PaneSession,
        before: u64,
        count: usize,
    ) {
        let (first, rows) = lock(session.terminal()).scrollback_rows(before, count);
        from.0.send(&ToWindow::Rows { pane: pane.0, first, rows }.encode().into());
    }

    /// The windows attached now, as `paddock ls` shows them.
    pub fn describe(&self) -> Vec<WindowInfo> {
        let here = self.windows.iter().filter(|w| !w.gone.load(Ordering::Acquire));
        here.map(|w| WindowInfo { pid: w.pid }).collect()
    }

    /// Follow `pane`'s model from now on; windows attached now get its snapshot.
    pub fn follow(&mut self, pane: PaneId, session: &PaneSession) {
        self.windows.retain(|w| !w.gone.load(Ordering::Acquire));
        let subscribers: Subscribers = Arc::new(Mutex::new(Vec::new()));
        let mut term = lock(session.terminal());
        let feed = PaneFeed { pane: pane.0, subscribers: subscribers.clone() };
        term.set_follower(Some(Box::new(feed)));
        if !self.windows.is_empty() {
            let frame = pane_frame(pane.0, &term);
            let mut list = lock(&subscribers);
            for window in &self.windows {
                window.send(&frame);
                list.push(window.clone());
            }
        }
        drop(term);
        // A pane started again in the same place: its old model (closing) tells no one.
        if let Some(old) = self.panes.insert(pane, subscribers) {
            lock(&old).clear();
        }
    }

    /// Whether any window is attached (then the view is worth working out).
    pub fn any(&self) -> bool {
        self.windows.iter().any(|w| !w.gone.load(Ordering::Acquire))
    }

    /// The tabs, splits and panes' descriptions as they are now: sent when they changed.
    pub fn show(&mut self, view: &WindowView) {
        let Ok(json) = serde_json::to_vec(view) else { return };
        if *json == *self.view {
            return;
        }
        let frame: Arc<[u8]> = ToWindow::View { json: json.clone() }.encode().into();
        self.view = json.into();
        self.windows.iter().for_each(|w| w.send(&frame));
    }

    /// `pane` is gone: tell the windows.
    pub fn closed(&mut self, pane: PaneId) {
        if let Some(old) = self.panes.remove(&pane) {
            // Its last output while it closes goes to no one.
            lock(&old).clear();
            let frame: Arc<[u8]> = ToWindow::Closed { pane: pane.0 }.encode().into();
            self.windows.iter().for_each(|w| w.send(&frame));
        }
    }

    /// Serve a window that said hello on `stream`: every pane's snapshot, then every change.
    pub fn attach<'a>(
        &mut self,
        stream: UnixStream,
        panes: impl Iterator<Item = (PaneId, &'a PaneSession)>,
    ) -> std::io::Result<()> {
        self.windows.retain(|w| !w.gone.load(Ordering::Acquire));
        if self.windows.len() >= MOST_WINDOWS {
            let reason = format!("{MOST_WINDOWS} windows are attached already");
            let mut stream = stream;
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = write_frames(&mut stream, &[&ToWindow::Refused { reason }.encode()]);
            return Ok(());
        }
        let (frames, queued) = crossbeam_channel::bounded(QUEUED_FRAMES);
        let window = Arc::new(Window {
            pid: crate::ctl::connected_pid(&stream),
            frames,
            gone: AtomicBool::new(false),
            farewell: Mutex::new(None),
            area: Mutex::new(None),
            queued_bytes: AtomicUsize::new(0),
        });
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        let (reading, writing) = (stream.try_clone()?, stream);
        let writer = window.clone();
        std::thread::Builder::new()
            .name("window-writer".into())
            .spawn(move || write_to(writing, &writer, &queued))?;
        let reader = window.clone();
        let input = self.input.clone();
        std::thread::Builder::new()
            .name("window-reader".into())
            .spawn(move || read_from(reading, &reader, &input))?;
        for (pane, session) in panes {
            let Some(subscribers) = self.panes.get(&pane) else { continue };
            let term = lock(session.terminal());
            window.send(&pane_frame(pane.0, &term));
            lock(subscribers).push(window.clone());
        }
        if !self.view.is_empty() {
            window.send(&ToWindow::View { json: self.view.to_vec() }.encode().into());
        }
        self.windows.push(window);
        Ok(())
    }
}

/// A window's writer thread: its queued frames, in order, until it goes.
fn write_to(mut stream: UnixStream, window: &Window, queued: &Receiver<Arc<[u8]>>) {
    loop {
        match queued.recv_timeout(Duration::from_millis(200)) {
            Ok(frame) => {
                let written = write_frames(&mut stream, &[&frame]);
                window.queued_bytes.fetch_sub(frame.len(), Ordering::AcqRel);
                drop(frame);
                if written.is_err() {
                    window.end(None);
                    break;
                }
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        }
        if window.gone.load(Ordering::Acquire) && queued.is_empty() {
            if let Some(reason) = lock(&window.farewell).take() {
                let _ = write_frames(&mut stream, &[&ToWindow::Refused { reason }.encode()]);
            }
            break;
        }
    }
    // What it will never be sent goes now, not when the pane next prunes its list.
    while queued.try_recv().is_ok() {}
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// A window's reader thread: what it asks, for the main loop, until it detaches or errs.
fn read_from(stream: UnixStream, window: &Arc<Window>, input: &Sender<FromWindow>) {
    let from = || WindowHandle(window.clone());
    let mut buf = Vec::new();
    let mut reading = &stream;
    let reason = loop {
        let frame = match read_frame(&mut reading, MAX_INPUT + 16, &mut buf) {
            Ok(frame) => frame,
            Err(WireError::Closed) => break None,
            Err(e) => break Some(e.to_string()),
        };
        let asked = match ToServer::decode(frame) {
            Ok(ToServer::Input { pane, bytes }) => {
                FromWindow::Input { from: from(), pane: PaneId(pane), bytes }
            }
            Ok(ToServer::Area { cols, rows }) => {
                // No window is wider or taller than this many cells; the panes' models would
                // cost the server what a window cannot show.
                let (cols, rows) = (cols.clamp(1, MOST_AREA.0), rows.clamp(1, MOST_AREA.1));
                let size = TermSize::new(usize::from(cols), usize::from(rows));
                FromWindow::Area { from: from(), size }
            }
            Ok(ToServer::Scrollback { pane, before, count }) => FromWindow::Scrollback {
                from: from(),
                pane: PaneId(pane),
                before,
                count: (count as usize).min(MOST_ROWS_ASKED),
            },
            Ok(ToServer::Act(action)) => FromWindow::Act { from: from(), action },
            Ok(ToServer::Detach) => break None,
            Ok(ToServer::Hello { .. }) => break Some("a second hello".into()),
            Err(e) => break Some(e.to_string()),
        };
        if input.send(asked).is_err() {
            break None;
        }
    };
    window.end(reason);
}
