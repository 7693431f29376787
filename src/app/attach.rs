//! The windows attached to this server: every pane's model tells them each change as it
//! happens, and what they type goes to the panes.
//!
//! A pane's model has a follower (`PaneFeed`) that runs under the model's lock right after each
//! chunk, so a window that is sent a pane's snapshot under that same lock and then added to the
//! pane's list gets every later chunk exactly once, in order. Frames are encoded once per
//! change and queued to each window's writer thread.
//!
//! A pane's flood of output is not parsed twice: once a pane has sent a window more than its
//! allowance (`FLOOD_BURST`, refilled at `FLOOD_RATE`), its chunks are skipped for that window
//! and the pane is marked behind; at most every `CATCH_UP_EVERY`, and once the window's queue
//! has drained, the window gets the pane's snapshot as it stands then (under the model's lock,
//! so later chunks follow on from it), as tmux redraws its clients from its own grid. Typing
//! and a program's redraws stay within the allowance and go as chunks, byte for byte. A window
//! slower than that (a software renderer) is paced the same way, never waited for: once a
//! megabyte is queued for it, every pane's chunks are skipped for it until it drains. The
//! writer says when it drained and a snapshot is due, so a pane that has gone quiet is caught
//! up then. A window whose queue still fills (it stopped reading) is dropped rather than let
//! hold the pane, and it attaches again from fresh snapshots. A window's reader thread hands
//! its input to the main loop; a bad frame closes that window, never the server.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};

use crate::ctl::protocol::{WindowAction, WindowInfo, WindowView};
use crate::ctl::wire::{read_frame, write_frames, ToServer, ToWindow, WireError, MAX_INPUT};
use crate::mux::PaneId;
use crate::pty::PaneSession;
use crate::term::{Follower, TermSize, Terminal};
use crate::vault::handed::Handed;

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
/// Row requests of one window waiting for the main loop: its reader reads no further until
/// they are served (a window that asks faster than rows are read out stalls itself, not the
/// server).
const MOST_ROWS_PENDING: usize = 16;
/// Threads a link may have sent secrets for and not yet asked to open.
const MOST_HANDED_PENDING: usize = 16;
/// Bytes queued for one window past which a pane's chunks are skipped for it (see the top).
const BEHIND_BYTES: usize = 1 << 20;
/// Frames queued for one window past which a pane's chunks are skipped for it.
const BEHIND_FRAMES: usize = QUEUED_FRAMES / 4;
/// Bytes of a pane's output a window is sent as chunks at once before the pane counts as a flood
/// for it (a full-screen redraw at 400x100 in truecolor is about 600 KiB).
const FLOOD_BURST: usize = 1 << 20;
/// Bytes per second that allowance refills at: what a person could read, many times over.
const FLOOD_RATE: usize = 4 << 20;
/// The least time between two snapshots of a pane that floods a window: about a frame.
const CATCH_UP_EVERY: Duration = Duration::from_millis(16);
/// Bytes still queued for a window when it counts as caught up: its panes behind get snapshots.
const CAUGHT_UP_BYTES: usize = 64 << 10;
/// Frames still queued for a window when it counts as caught up.
const CAUGHT_UP_FRAMES: usize = 8;
/// How long a stopping server waits for its windows to be sent what is queued for them.
const FAREWELL: Duration = Duration::from_secs(2);
/// How often a window's writer with nothing to send and no pane behind looks up.
const IDLE_WAKE: Duration = Duration::from_millis(200);
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
    /// What one of its key bindings asks; for a link's `OpenThread`, with the secrets it
    /// handed for that thread.
    Act { from: WindowHandle, action: WindowAction, handed: Option<Handed> },
    /// Its queue drained while panes were behind for it: they are owed snapshots.
    CaughtUp { from: WindowHandle },
}

/// One attached window, for the main loop to answer.
#[derive(Clone)]
pub struct WindowHandle(Arc<Window>);

impl WindowHandle {
    /// Tell the window's user something (why an action did not happen).
    pub fn say(&self, text: String) {
        self.tell(&ToWindow::Said { text });
    }

    /// Send the window `frame` (an answer to what it asked).
    pub fn tell(&self, frame: &ToWindow) {
        self.0.send(&frame.encode().into());
    }
}

/// One attached window, as the server sees it.
struct Window {
    /// Its process, where the system tells it (for `paddock ls`).
    pid: Option<u32>,
    /// Frames for its writer, each with whether the window asked for it (`Rows`).
    frames: Sender<(Arc<[u8]>, bool)>,
    /// It left, fell behind or sent a bad frame: nothing more is queued for it.
    gone: AtomicBool,
    /// Why the server ends it, said last (nothing when the window left).
    farewell: Mutex<Option<String>>,
    /// The cells it lays tabs out in, once it said.
    area: Mutex<Option<TermSize>>,
    /// Bytes queued for it and not yet written.
    queued_bytes: AtomicUsize,
    /// The part of those in frames it asked for: rows it scrolled to do not mean it is slow.
    asked_bytes: AtomicUsize,
    /// Panes whose chunks it is skipped, until it is sent their snapshots, with when each went
    /// behind; and each pane's allowance of chunks (`Allowance`).
    behind: Mutex<Behind>,
    /// Its writer asked the main loop to catch it up, and that is not done yet.
    catch_up_asked: AtomicBool,
    /// Its row requests the main loop has not served yet (`MOST_ROWS_PENDING`).
    rows_pending: AtomicUsize,
}

/// What a pane's next chunk means for one window.
enum Pace {
    Send,
    Skip,
    /// It was behind and has drained: the pane's snapshot instead of the chunk.
    CatchUp,
}

impl Window {
    fn new(pid: Option<u32>, frames: Sender<(Arc<[u8]>, bool)>) -> Window {
        Window {
            pid,
            frames,
            gone: AtomicBool::new(false),
            farewell: Mutex::new(None),
            area: Mutex::new(None),
            queued_bytes: AtomicUsize::new(0),
            asked_bytes: AtomicUsize::new(0),
            behind: Mutex::new(Behind::default()),
            catch_up_asked: AtomicBool::new(false),
            rows_pending: AtomicUsize::new(0),
        }
    }

    fn send(&self, frame: &Arc<[u8]>) {
        self.queue(frame, false);
    }

    fn queue(&self, frame: &Arc<[u8]>, asked: bool) {
        if self.gone.load(Ordering::Acquire) {
            return;
        }
        let queued = self.queued_bytes.fetch_add(frame.len(), Ordering::AcqRel) + frame.len();
        if asked {
            self.asked_bytes.fetch_add(frame.len(), Ordering::AcqRel);
        }
        if queued > QUEUED_BYTES || self.frames.try_send((frame.clone(), asked)).is_err() {
            self.queued_bytes.fetch_sub(frame.len(), Ordering::AcqRel);
            if asked {
                self.asked_bytes.fetch_sub(frame.len(), Ordering::AcqRel);
            }
            self.end(Some("this window fell behind the server's output; attach again".into()));
        }
    }

    /// Whether `pane`'s chunk of `len` bytes goes to it, is skipped, or gives way to the pane's
    /// snapshot.
    fn pace(&self, pane: u32, len: usize, now: Instant) -> Pace {
        let mut behind = lock(&self.behind);
        let Behind { since, allowances } = &mut *behind;
        let within = allowances.entry(pane).or_insert_with(|| Allowance::full(now)).spend(len, now);
        if let Some(&went) = since.get(&pane) {
            if self.drained() && snapshot_due(went, now) {
                since.remove(&pane);
                Pace::CatchUp
            } else {
                Pace::Skip
            }
        } else if !within
            || self.unasked_bytes() > BEHIND_BYTES
            || self.frames.len() > BEHIND_FRAMES
        {
            since.insert(pane, now);
            Pace::Skip
        } else {
            Pace::Send
        }
    }

    /// Whether a pane it is behind on is owed its snapshot now, were the window drained.
    fn catch_up_due(&self, now: Instant) -> bool {
        self.next_catch_up().is_some_and(|due| due <= now)
    }

    /// When the first snapshot of a pane it is behind on falls due.
    fn next_catch_up(&self) -> Option<Instant> {
        lock(&self.behind).since.values().min().map(|&went| went + CATCH_UP_EVERY)
    }

    fn drained(&self) -> bool {
        self.unasked_bytes() <= CAUGHT_UP_BYTES && self.frames.len() <= CAUGHT_UP_FRAMES
    }

    /// Bytes queued for it that it did not ask for: how far behind the panes' output it is.
    fn unasked_bytes(&self) -> usize {
        let asked = self.asked_bytes.load(Ordering::Acquire);
        self.queued_bytes.load(Ordering::Acquire).saturating_sub(asked)
    }

    /// Send `pane`'s snapshot: whatever it was behind on, it is not now.
    fn send_pane(&self, pane: u32, frame: &Arc<[u8]>) {
        lock(&self.behind).since.remove(&pane);
        self.send(frame);
    }

    /// `pane` is followed afresh or gone: nothing is owed for it, and its allowance is full.
    fn forget(&self, pane: u32) {
        let mut behind = lock(&self.behind);
        behind.since.remove(&pane);
        behind.allowances.remove(&pane);
    }

    /// Send each pane it is behind on its snapshot, of those due one `now` (all with `None`); a
    /// pane closed meanwhile was told of.
    fn send_behind<'a>(
        &self,
        now: Option<Instant>,
        model: &impl Fn(PaneId) -> Option<&'a Mutex<Terminal>>,
    ) {
        let due = |went: Instant| now.is_none_or(|now| snapshot_due(went, now));
        let behind: Vec<u32> = lock(&self.behind)
            .since
            .iter()
            .filter_map(|(&pane, &went)| due(went).then_some(pane))
            .collect();
        for pane in behind {
            let Some(term) = model(PaneId(pane)) else { continue };
            // Under the model's lock, as a chunk would be, so later chunks follow on from it;
            // its chunk may have caught the window up first.
            let term = lock(term);
            if lock(&self.behind).since.contains_key(&pane) {
                self.send_pane(pane, &catch_up_frame(pane, &term));
            }
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

/// The panes one window is behind on, and how much more of each pane's output it may be sent
/// as chunks.
#[derive(Default)]
struct Behind {
    since: BTreeMap<u32, Instant>,
    allowances: HashMap<u32, Allowance>,
}

/// A token bucket of bytes: `FLOOD_BURST` at most, refilled at `FLOOD_RATE`.
struct Allowance {
    bytes: usize,
    at: Instant,
}

impl Allowance {
    fn full(now: Instant) -> Allowance {
        Allowance { bytes: FLOOD_BURST, at: now }
    }

    /// Take `len` bytes: whether they were there. A flood empties it rather than running it
    /// into debt, so the output that follows the flood is sent as chunks again soon after.
    fn spend(&mut self, len: usize, now: Instant) -> bool {
        let earned = now.saturating_duration_since(self.at).as_secs_f64() * FLOOD_RATE as f64;
        // Whole bytes only: the remainder's time stays with the next refill.
        let earned = earned as usize;
        if earned > 0 {
            self.bytes = self.bytes.saturating_add(earned).min(FLOOD_BURST);
            self.at = now;
        }
        match self.bytes.checked_sub(len) {
            Some(left) => {
                self.bytes = left;
                true
            }
            None => {
                self.bytes = 0;
                false
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether a pane that went behind at `went` is owed its snapshot at `now`.
fn snapshot_due(went: Instant, now: Instant) -> bool {
    now.duration_since(went) >= CATCH_UP_EVERY
}

/// `pane`'s model as it stands, for a replica to start from.
fn pane_frame(pane: u32, term: &Terminal) -> Arc<[u8]> {
    ToWindow::Pane { pane, snapshot: term.snapshot(SNAPSHOT_SCROLLBACK) }.encode().into()
}

/// `pane`'s model as it stands, for a replica that fell behind it, with one page of
/// scrollback: during a flood of output this is sent again and again, and each row's styles
/// are numbered for the wire (a screen of truecolor cells has thousands), so it carries a
/// page, enough that a view at the bottom has rows above it and a page up needs no request;
/// the window asks for older rows when they are scrolled to, as it does past
/// `SNAPSHOT_SCROLLBACK`. (An 88x31 screen of truecolor cells encodes in 0.38 ms with a page,
/// against 1.26 ms with 100 rows.)
fn catch_up_frame(pane: u32, term: &Terminal) -> Arc<[u8]> {
    ToWindow::Pane { pane, snapshot: term.snapshot(term.size().lines) }.encode().into()
}

/// A pane's model's follower: each change, to the windows that hold its replica.
struct PaneFeed {
    pane: u32,
    subscribers: Subscribers,
}

impl Follower for PaneFeed {
    fn parsed(&mut self, bytes: &[u8], masked: bool, term: &Terminal) {
        let pane = self.pane;
        let mut subscribers = lock(&self.subscribers);
        subscribers.retain(|w| !w.gone.load(Ordering::Acquire));
        // Each encoded once, and only when some window takes it.
        let (mut chunk, mut snapshot) = (None, None);
        let now = Instant::now();
        for window in subscribers.iter() {
            match window.pace(pane, bytes.len(), now) {
                Pace::Send => window.send(chunk.get_or_insert_with(|| {
                    let edits = term.replica_edits().encode();
                    let bytes = bytes.to_vec();
                    ToWindow::Chunk { pane, masked, bytes, edits }.encode().into()
                })),
                Pace::Skip => {}
                Pace::CatchUp => {
                    window.send(snapshot.get_or_insert_with(|| catch_up_frame(pane, term)))
                }
            }
        }
    }

    fn restarted(&mut self, term: &Terminal) {
        let mut subscribers = lock(&self.subscribers);
        subscribers.retain(|w| !w.gone.load(Ordering::Acquire));
        if !subscribers.is_empty() {
            let frame = pane_frame(self.pane, term);
            subscribers.iter().for_each(|w| w.send_pane(self.pane, &frame));
        }
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
    /// Each window's writer thread, for a stopping server to see them through.
    writers: Vec<std::thread::JoinHandle<()>>,
    input: Sender<FromWindow>,
    inputs: Receiver<FromWindow>,
    /// When the first window attached, if one has.
    first_attached: Option<std::time::Instant>,
    /// A window has said the area it lays tabs out in since the server started.
    ever_sized: bool,
}

impl Default for Attached {
    fn default() -> Self {
        let (input, inputs) = crossbeam_channel::bounded(256);
        Attached {
            windows: Vec::new(),
            active: None,
            view: Arc::from([]),
            panes: HashMap::new(),
            writers: Vec::new(),
            input,
            inputs,
            first_attached: None,
            ever_sized: false,
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
        self.ever_sized = true;
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
        session: Option<&PaneSession>,
        before: u64,
        count: usize,
    ) {
        let window = &from.0;
        window.rows_pending.fetch_sub(1, Ordering::AcqRel);
        // Asked by a window gone meanwhile, nobody reads them; of a pane gone, there are none.
        let Some(session) = session.filter(|_| !window.gone.load(Ordering::Acquire)) else {
            return;
        };
        let (first, rows) = lock(session.terminal()).scrollback_rows(before, count);
        window.queue(&ToWindow::Rows { pane: pane.0, first, rows }.encode().into(), true);
    }

    /// Send each pane `from` is behind on its snapshot, once `from` has drained (on its
    /// writer's word, and on every tick for a word that did not fit the main loop's queue).
    pub fn catch_up<'a>(
        &self,
        from: Option<&WindowHandle>,
        model: impl Fn(PaneId) -> Option<&'a Mutex<Terminal>>,
    ) {
        let windows: Vec<&Arc<Window>> = match from {
            Some(from) => vec![&from.0],
            None => self.windows.iter().collect(),
        };
        let now = Instant::now();
        for window in windows {
            window.catch_up_asked.store(false, Ordering::Release);
            if window.gone.load(Ordering::Acquire) || !window.drained() {
                continue;
            }
            window.send_behind(Some(now), &model);
        }
    }

    /// The server stops: each window is sent what is queued for it, with every pane it was
    /// behind on as it ends, for at most `FAREWELL`. Then its connection closes.
    pub fn farewell<'a>(&mut self, model: impl Fn(PaneId) -> Option<&'a Mutex<Terminal>>) {
        for window in &self.windows {
            window.send_behind(None, &model);
            window.end(None);
        }
        let deadline = std::time::Instant::now() + FAREWELL;
        for writer in std::mem::take(&mut self.writers) {
            while !writer.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
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
        for window in &self.windows {
            window.forget(pane.0);
        }
    }

    /// Whether a window has attached since the server started.
    pub fn ever_attached(&self) -> bool {
        self.first_attached.is_some()
    }

    /// When the first window attached, if one has.
    pub fn first_attached(&self) -> Option<std::time::Instant> {
        self.first_attached
    }

    /// Whether a window has said the area it lays tabs out in since the server started.
    pub fn ever_sized(&self) -> bool {
        self.ever_sized
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

    /// Tell every attached window's user something (why the server is ending).
    pub fn say(&self, text: &str) {
        let frame: Arc<[u8]> = ToWindow::Said { text: text.to_owned() }.encode().into();
        self.windows.iter().for_each(|w| w.send(&frame));
    }

    /// `pane` is gone: tell the windows.
    pub fn closed(&mut self, pane: PaneId) {
        if let Some(old) = self.panes.remove(&pane) {
            // Its last output while it closes goes to no one.
            lock(&old).clear();
            let frame: Arc<[u8]> = ToWindow::Closed { pane: pane.0 }.encode().into();
            for window in &self.windows {
                window.forget(pane.0);
                window.send(&frame);
            }
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
        let window = Arc::new(Window::new(crate::ctl::connected_pid(&stream), frames));
        stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
        let (reading, writing) = (stream.try_clone()?, stream);
        let writer = window.clone();
        let caught_up = self.input.clone();
        self.writers.retain(|w| !w.is_finished());
        self.writers.push(
            std::thread::Builder::new()
                .name("window-writer".into())
                .spawn(move || write_to(writing, &writer, &queued, &caught_up))?,
        );
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
        self.first_attached.get_or_insert_with(std::time::Instant::now);
        Ok(())
    }
}

/// A window's writer thread: its queued frames, in order, until it goes.
fn write_to(
    mut stream: UnixStream,
    window: &Arc<Window>,
    queued: &Receiver<(Arc<[u8]>, bool)>,
    caught_up: &Sender<FromWindow>,
) {
    loop {
        // With panes behind, it wakes when their snapshots fall due, queue or no queue.
        let wait = window.next_catch_up().map_or(IDLE_WAKE, |due| {
            due.saturating_duration_since(Instant::now()).clamp(Duration::from_millis(1), IDLE_WAKE)
        });
        match queued.recv_timeout(wait) {
            Ok((frame, asked)) => {
                let written = write_frames(&mut stream, &[&frame]);
                if asked {
                    window.asked_bytes.fetch_sub(frame.len(), Ordering::AcqRel);
                }
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
        // Drained with a pane's snapshot due: the main loop sends it (once asked; a full queue
        // leaves it to the next tick). A pane still flooding is caught up by its next chunk.
        if window.drained()
            && window.catch_up_due(Instant::now())
            && !window.catch_up_asked.swap(true, Ordering::AcqRel)
        {
            let from = WindowHandle(window.clone());
            if caught_up.try_send(FromWindow::CaughtUp { from }).is_err() {
                window.catch_up_asked.store(false, Ordering::Release);
            }
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
    // Secrets a link sent for a thread it is about to open, by its request.
    let mut handed: HashMap<u32, Handed> = HashMap::new();
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
            Ok(ToServer::Scrollback { pane, before, count }) => {
                while window.rows_pending.load(Ordering::Acquire) >= MOST_ROWS_PENDING {
                    if window.gone.load(Ordering::Acquire) {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                window.rows_pending.fetch_add(1, Ordering::AcqRel);
                FromWindow::Scrollback {
                    from: from(),
                    pane: PaneId(pane),
                    before,
                    count: (count as usize).min(MOST_ROWS_ASKED),
                }
            }
            Ok(ToServer::Secrets { request, handed: secrets }) => {
                // The frame's copy of the values goes now; they live on in locked memory.
                buf.fill(0);
                if handed.len() >= MOST_HANDED_PENDING {
                    break Some("secrets sent for more threads than were opened".into());
                }
                handed.insert(request, secrets);
                continue;
            }
            Ok(ToServer::Act(action)) => {
                let secrets = match &action {
                    WindowAction::OpenThread { request, .. } => handed.remove(request),
                    _ => None,
                };
                FromWindow::Act { from: from(), action, handed: secrets }
            }
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

#[cfg(test)]
#[path = "attach_tests.rs"]
mod tests;
