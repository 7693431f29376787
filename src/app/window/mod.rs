//! `paddock` with a window: the workspace drawn with wgpu, driven by the keyboard and, as a
//! headless instance is, by the control socket.
//!
//! Everything that happens elsewhere reaches the event loop as a `UserEvent` through one proxy:
//! pane output (coalesced: one wake-up per frame however many chunks arrive), control requests
//! and signals. Idle panes cost nothing: frames are drawn only when something asks for one.

mod actions;
mod clipboard;
mod frame;
mod keys;
mod mouse;
mod notify;
mod pacing;
mod panes;
mod remote;
mod surface;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use winit::application::ApplicationHandler;
use winit::event::{Ime, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop, EventLoopProxy};
use winit::keyboard::ModifiersState;
use winit::window::{Window, WindowId};

use super::server::{Server, ServerOptions};
use super::signals::{Signal, SignalListener};
use crate::config::watch::watch;
use crate::config::{ClipboardRule, Config};
use crate::ctl::Call;
use crate::input::InputModes;
use crate::mux::PaneId;
use crate::term::{Modes, TermEvent};
use crate::view::{ClipboardNote, PaneView};
use clipboard::{Board, Clipboard};
use frame::{FrameBuilder, FrameContext};
use pacing::FramePacer;
use panes::Panes;
use remote::{Remote, RemoteEvent, Took};
use surface::{FontLoad, Look, Surface};

enum UserEvent {
    /// A pane parsed output: draw a frame.
    Wake,
    Call(Call),
    Signal(Signal),
    /// The configuration file was edited.
    ConfigChanged,
    /// Another window attached to this instance, or typed into it.
    Attached(std::os::unix::net::UnixStream),
    WindowAsked(crate::app::attach::FromWindow),
    /// The server this window is attached to sent something.
    Remote(RemoteEvent),
    /// A link to another host said something (`--single-process` with a remote thread).
    LinkNews(crate::app::remote_threads::LinkNews),
}

/// The event loop, and the wake-up pane output sends it (one `Wake` until it is taken).
fn event_loop() -> anyhow::Result<(EventLoop<UserEvent>, Arc<AtomicBool>, Wake)> {
    let event_loop = EventLoop::<UserEvent>::with_user_event()
        .build()
        .context("cannot open a window (is a display available? try `paddock server`)")?;
    let proxy = event_loop.create_proxy();
    let pending = Arc::new(AtomicBool::new(false));
    let wake: Wake = {
        let pending = pending.clone();
        Arc::new(move || {
            if !pending.swap(true, Ordering::AcqRel) {
                let _ = proxy.send_event(UserEvent::Wake);
            }
        })
    };
    Ok((event_loop, pending, wake))
}

type Wake = Arc<dyn Fn() + Send + Sync>;
type Reattach = Box<dyn Fn() -> anyhow::Result<Remote>>;

/// At most this many fresh attaches in `REATTACH_WINDOW` before the window gives up.
const REATTACHES: usize = 30;
const REATTACH_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

/// Run with a window that owns the panes (`--single-process`) until it is closed or the
/// instance is stopped. Returns the exit code.
pub fn run(options: ServerOptions) -> anyhow::Result<u8> {
    let signals = SignalListener::start().context("cannot set up signal handling")?;
    let fonts = FontLoad::start();
    let (event_loop, pending, wake) = event_loop()?;
    let proxy = event_loop.create_proxy();
    let server = Server::start(&options, wake)?;
    forward(server.calls().clone(), proxy.clone(), UserEvent::Call);
    forward(signals.receiver().clone(), proxy.clone(), UserEvent::Signal);
    forward(server.config_changes(), proxy.clone(), |()| UserEvent::ConfigChanged);
    forward(server.windows(), proxy.clone(), UserEvent::Attached);
    forward(server.window_inputs(), proxy.clone(), UserEvent::WindowAsked);
    forward(server.workspace().link_news(), proxy.clone(), UserEvent::LinkNews);
    let app = WindowApp::new(
        &event_loop,
        Panes::Local(Box::new(server)),
        options.config.clone(),
        pending,
        fonts,
    );
    let code = drive(event_loop, app)?;
    Ok(code)
}

/// The display a window opens on. A server started for the window may be starting meanwhile:
/// it opens nothing until the window has attached and said its size, and is stopped if the
/// display cannot open.
pub struct Display {
    event_loop: EventLoop<UserEvent>,
    pending: Arc<AtomicBool>,
    wake: Wake,
    signals: SignalListener,
    fonts: FontLoad,
}

/// Connect to the display (X11 or Wayland); the fonts are read meanwhile.
pub fn open_display() -> anyhow::Result<Display> {
    // Before any other thread exists: see `signals`.
    let signals = SignalListener::start().context("cannot set up signal handling")?;
    let fonts = FontLoad::start();
    let (event_loop, pending, wake) = event_loop()?;
    Ok(Display { event_loop, pending, wake, signals, fonts })
}

/// Run a window on `display` attached to the paddock server whose attach socket is `socket`,
/// until it is closed, detaches or the server stops. Returns the exit code. The process is
/// to end next: the window's GPU state is left for its end to free.
pub fn run_attached(
    display: Display,
    socket: &std::path::Path,
    config: Config,
    config_path: Option<std::path::PathBuf>,
) -> anyhow::Result<u8> {
    let Display { event_loop, pending, wake, signals, fonts } = display;
    let proxy = event_loop.create_proxy();
    // Attaching, and attaching again when the server ended this window but runs on (it fell
    // behind a flood of output, or a replica could not follow): fresh snapshots.
    let attach: Reattach = {
        let (socket, proxy) = (socket.to_owned(), proxy.clone());
        Box::new(move || {
            let proxy = proxy.clone();
            let tell = move |event| {
                let _ = proxy.send_event(UserEvent::Remote(event));
            };
            Remote::attach(&socket, tell, wake.clone())
        })
    };
    let remote = attach()?;
    forward(signals.receiver().clone(), proxy.clone(), UserEvent::Signal);
    // The window's look and keys follow the file, as the server's threads do.
    let watching = config_path.as_deref().and_then(|path| match watch(path) {
        Ok((watcher, changes)) => {
            forward(changes, proxy, |()| UserEvent::ConfigChanged);
            Some(watcher)
        }
        Err(e) => {
            // No configuration folder is the common case of no configuration at all.
            if path.parent().is_some_and(std::path::Path::is_dir) {
                eprintln!("paddock: cannot watch {} for changes ({e})", path.display());
            }
            None
        }
    });
    let mut app = WindowApp::new(&event_loop, Panes::Remote(remote), config, pending, fonts);
    app.config_path = config_path;
    app.reattach = Some(attach);
    let code = drive(event_loop, app);
    drop(watching);
    code
}

fn drive(event_loop: EventLoop<UserEvent>, mut app: WindowApp) -> anyhow::Result<u8> {
    event_loop.run_app(&mut app).context("the window's event loop failed")?;
    if let Some(error) = app.error {
        return Err(error);
    }
    let code = app.exit_code.unwrap_or(0);
    match app.panes {
        Panes::Local(mut server) => {
            server.stop_listening();
            server.shut_down(app.exit_code);
        }
        // Whatever ended the window, the server keeps the panes.
        Panes::Remote(remote) => {
            remote.detach();
            // Gone from the screen now, not when the process has ended (the clipboard's hand-over
            // below can take a moment).
            if let Some(surface) = &app.surface {
                surface.window().set_visible(false);
            }
            // The process ends next (`run_attached` is a process's last work), and its end
            // frees the GPU's device and the font database at once; freeing them piece by
            // piece held the window's process on llvmpipe for tens of milliseconds after its
            // program ended. The clipboard is still dropped: it hands what was copied to the
            // desktop's clipboard manager.
            std::mem::forget(app.surface);
            std::mem::forget(app.display);
        }
    }
    Ok(code)
}

impl WindowApp {
    fn new(
        event_loop: &EventLoop<UserEvent>,
        panes: Panes,
        config: Config,
        pending: Arc<AtomicBool>,
        fonts: FontLoad,
    ) -> WindowApp {
        WindowApp {
            panes,
            display: event_loop.owned_display_handle(),
            fonts,
            surface: None,
            pending,
            modifiers: ModifiersState::empty(),
            exit_code: None,
            error: None,
            views: HashMap::new(),
            flashes: HashMap::new(),
            frames: FrameBuilder::default(),
            pacer: FramePacer::new(None, false),
            pointer: mouse::Pointer::default(),
            clipboard: Clipboard::new(),
            font_size: config.font.size,
            base_font_size: config.font.size,
            config,
            notifier: notify::Notifier::default(),
            window_focused: true,
            occluded: false,
            seen_tabs: false,
            early_keys: Vec::new(),
            config_path: None,
            timing_from: std::env::var_os("PADDOCK_TIMINGS").map(|_| Instant::now()),
            reattach: None,
            reattached: Vec::new(),
        }
    }
}

/// Move messages from a channel into the event loop.
fn forward<T: Send + 'static>(
    from: crossbeam_channel::Receiver<T>,
    proxy: EventLoopProxy<UserEvent>,
    wrap: fn(T) -> UserEvent,
) {
    std::thread::spawn(move || {
        for message in from {
            if proxy.send_event(wrap(message)).is_err() {
                return;
            }
        }
    });
}

/// The most keys an attached window holds until the server's first layout arrives.
const EARLY_KEYS: usize = 256;

struct WindowApp {
    panes: Panes,
    /// The display the window's GPU instances are made for.
    display: winit::event_loop::OwnedDisplayHandle,
    /// The fonts, until the surface takes them.
    fonts: FontLoad,
    surface: Option<Surface>,
    pending: Arc<AtomicBool>,
    modifiers: ModifiersState,
    exit_code: Option<u8>,
    error: Option<anyhow::Error>,
    /// Each pane's scroll position, selection and search.
    views: HashMap<PaneId, PaneView>,
    /// When each pane's bell last rang.
    flashes: HashMap<PaneId, Instant>,
    frames: FrameBuilder,
    /// At most a frame per refresh of the display.
    pacer: FramePacer,
    pointer: mouse::Pointer,
    clipboard: Clipboard,
    font_size: f32,
    base_font_size: f32,
    /// The configuration in force (the last good one).
    config: Config,
    /// Which waiting panes were announced on the desktop.
    notifier: notify::Notifier,
    window_focused: bool,
    /// Whether the window is hidden (minimized, or covered, where the system says so).
    occluded: bool,
    /// An attached window has shown the server's tabs: when none are left, it closes.
    seen_tabs: bool,
    /// Keys pressed before an attached window had the server's first layout (winit hands the
    /// display's events over before the reader's): pressed again once it has, not lost.
    early_keys: Vec<(winit::event::KeyEvent, ModifiersState)>,
    /// The configuration file an attached window follows (the server's own window reloads
    /// through the server).
    config_path: Option<std::path::PathBuf>,
    /// With `PADDOCK_TIMINGS` set: when the window started, until its first full frame (every
    /// pane of its tab drawn) is told on stderr.
    timing_from: Option<Instant>,
    /// How an attached window attaches again, and when it last did.
    reattach: Option<Reattach>,
    reattached: Vec<Instant>,
}

impl WindowApp {
    fn fail(&mut self, event_loop: &ActiveEventLoop, error: anyhow::Error) {
        self.error = Some(error);
        event_loop.exit();
    }

    fn redraw(&self) {
        if let Some(surface) = &self.surface {
            surface.window().request_redraw();
        }
    }

    /// Hold frames to the refresh of the display the window is on (asked again when the window
    /// moves or resizes: a Wayland surface is on no output until it is first shown).
    fn pace_to_display(&mut self) {
        if let Some(surface) = &self.surface {
            let monitor = surface.window().current_monitor();
            let rate = monitor.and_then(|m| m.refresh_rate_millihertz());
            self.pacer.set_rate(rate, surface.is_software());
        }
    }

    /// Lay the workspace out in the window's grid.
    fn fit(&mut self) {
        if let Some(grid) = self.surface.as_ref().map(Surface::grid) {
            self.set_grid(grid);
        }
    }

    fn set_grid(&mut self, grid: crate::term::TermSize) {
        if grid != self.panes.area() {
            self.panes.set_area(grid);
            self.forget_positions();
        }
    }

    /// Resizing reflows the panes' lines: scroll positions and selections no longer point at
    /// the same text, so they go (searches stay, and find their matches again).
    fn forget_positions(&mut self) {
        for view in self.views.values_mut() {
            view.follow();
            view.selection = None;
            if let Some(search) = &mut view.search {
                search.current = None;
            }
        }
    }

    /// Take what the panes' programs raised: bells flash their pane, OSC 52 writes set the
    /// clipboard as the pane's rule says (allowed, held for the user, or refused; reads are
    /// always refused: a program may not read what the user copied elsewhere).
    fn take_events(&mut self) {
        let shown = self.panes.shown();
        let mut events = Vec::new();
        for (_, pane) in shown.mux().all_panes() {
            if let Some(mut term) = shown.term(pane) {
                events.extend(term.take_events().into_iter().map(|e| (pane, e)));
            }
        }
        let now = Instant::now();
        for (pane, event) in events {
            match event {
                TermEvent::Bell => {
                    self.flashes.insert(pane, now);
                }
                TermEvent::ClipboardStore { selection, data } => {
                    let primary = selection.contains('p') && !selection.contains('c');
                    let text = String::from_utf8_lossy(&data).into_owned();
                    let note = match self.panes.clipboard_rule(pane) {
                        ClipboardRule::Allow => {
                            self.clipboard.set(Board::of(primary), text);
                            continue;
                        }
                        ClipboardRule::Ask => ClipboardNote::Asking { text, primary },
                        ClipboardRule::Deny => ClipboardNote::Refused { at: now },
                    };
                    self.views.entry(pane).or_default().clipboard = Some(note);
                }
                TermEvent::ClipboardWithheld { selection } => {
                    // Never asked about: the payload holds one of the pane's secrets.
                    eprintln!(
                        "paddock: pane {} tried to copy one of its secrets to the clipboard \
                         ({selection}); refused",
                        pane.0
                    );
                    let note = ClipboardNote::Refused { at: now };
                    self.views.entry(pane).or_default().clipboard = Some(note);
                }
                _ => {}
            }
        }
    }

    fn draw(&mut self, event_loop: &ActiveEventLoop) {
        // A redraw asked for before the window was told to close is still delivered: a frame
        // nobody will see (on llvmpipe a full screen of truecolor cells is 13 ms of CPU).
        if event_loop.exiting() {
            return;
        }
        let now = Instant::now();
        if let Some(due) = self.pacer.held_until(now) {
            // Drawn when this refresh is over: `new_events` asks for the frame then.
            event_loop.set_control_flow(ControlFlow::WaitUntil(due));
            return;
        }
        let Some(surface) = &mut self.surface else {
            return;
        };
        let live = self.panes.mux().all_panes();
        self.views.retain(|pane, _| live.iter().any(|(_, p)| p == pane));
        self.flashes.retain(|_, at| now < *at + frame::FLASH);
        let cx = FrameContext {
            cell: surface.cell_size(),
            grid: surface.grid(),
            origin: surface.grid_origin(),
            restart_chord: self.config.keys.chord_of(crate::input::Action::RestartThread),
            allow_clipboard_chord: self.config.keys.chord_of(crate::input::Action::AllowClipboard),
            allow_host_chord: self.config.keys.chord_of(crate::input::Action::AllowHost),
            approve_chord: self.config.keys.chord_of(crate::input::Action::ApproveProgram),
            theme: surface.theme(),
            software: surface.is_software(),
            views: &self.views,
            flashes: &self.flashes,
            glow: self.config.pulse_glow,
            now,
        };
        let frame = self.frames.build(self.panes.shown(), &cx);
        let shown = self.panes.shown();
        // Only while timing: it locks each shown pane's model once more.
        let full = self.timing_from.is_some()
            && shown
                .mux()
                .active_tab()
                .is_some_and(|tab| tab.panes().into_iter().all(|pane| shown.term(pane).is_some()));
        self.pacer.drawn(now);
        if let Err(e) = surface.draw(&frame) {
            if let crate::render::RenderError::Surface(_) = e {
                return self.fail(event_loop, e.into());
            }
            eprintln!("paddock: cannot draw: {e}");
        } else if let Some(from) = self.timing_from.filter(|_| full) {
            eprintln!("paddock: first full frame {:.1} ms after the window started", ms(from));
            self.timing_from = None;
        }
        // A flash to end, a held picture to release or a glow to move: wake up for it, not
        // before. A window nobody can see waits for the next event instead.
        match frame.next.filter(|_| !self.occluded) {
            Some(at) => event_loop.set_control_flow(ControlFlow::WaitUntil(at)),
            None => event_loop.set_control_flow(ControlFlow::Wait),
        }
    }

    /// The server ended this window but runs on: attach again, from fresh snapshots, unless
    /// that keeps happening.
    fn attach_again(&mut self) -> bool {
        let now = Instant::now();
        self.reattached.retain(|at| now.duration_since(*at) < REATTACH_WINDOW);
        let Some(attach) = self.reattach.as_ref().filter(|_| self.reattached.len() < REATTACHES)
        else {
            return false;
        };
        let Ok(remote) = attach() else { return false };
        self.reattached.push(now);
        self.panes = Panes::Remote(remote);
        self.panes.set_header_rows(1);
        if let Some(surface) = &self.surface {
            self.panes.set_area(surface.grid());
        }
        true
    }

    /// Take what the server sent; close when it stopped, or when its last pane is gone.
    fn take_from_server(&mut self, event_loop: &ActiveEventLoop, event: RemoteEvent) {
        let Some(remote) = self.panes.remote() else { return };
        // A pane started again, or rows added before what its replica held: a search or a
        // view at the top wants the rows before those.
        let reask = match &event {
            RemoteEvent::Pane(pane, _) | RemoteEvent::Rows(pane) => Some(*pane),
            _ => None,
        };
        let mut seen = true;
        match remote.take(event) {
            Ok(Took::Said(said)) => eprintln!("paddock: {said}"),
            Ok(Took::Changed) => {}
            Ok(Took::Unseen) => seen = false,
            Err(None) => {
                eprintln!("paddock: the paddock server stopped");
                let code = remote.exit_code().unwrap_or(0);
                return self.stop(event_loop, code);
            }
            Err(Some(why)) => {
                if self.attach_again() {
                    return self.redraw();
                }
                eprintln!("paddock: {why}");
                return self.stop(event_loop, 1);
            }
        }
        if let Some(pane) = reask {
            self.reask_rows(pane);
        }
        if !self.early_keys.is_empty() && self.panes.remote().is_some_and(|r| r.has_layout()) {
            let now = self.modifiers;
            for (key, modifiers) in std::mem::take(&mut self.early_keys) {
                self.modifiers = modifiers;
                self.on_key(event_loop, &key);
            }
            self.modifiers = now;
        }
        if !self.panes.mux().tabs().is_empty() {
            self.seen_tabs = true;
        } else if self.seen_tabs {
            let code = self.panes.remote().and_then(|r| r.exit_code()).unwrap_or(0);
            return self.stop(event_loop, code);
        }
        // The view carries the panes' pulses.
        if self.config.desktop_notifications {
            self.announce();
        }
        if seen {
            self.redraw();
        }
    }

    fn stop(&mut self, event_loop: &ActiveEventLoop, code: u8) {
        self.exit_code = Some(code);
        event_loop.exit();
    }
}

impl WindowApp {
    fn on_key(&mut self, event_loop: &ActiveEventLoop, event: &winit::event::KeyEvent) {
        if self.panes.remote().is_some_and(|remote| !remote.has_layout()) {
            if self.early_keys.len() < EARLY_KEYS {
                self.early_keys.push((event.clone(), self.modifiers));
            }
            return;
        }
        let bound = keys::chord_of(event, self.modifiers)
            .and_then(|(key, mods)| self.config.keys.action_for(key, mods));
        if let Some(action) = bound {
            if let Some(code) = self.act(action) {
                return self.stop(event_loop, code);
            }
            if self.panes.local().is_some() && self.panes.mux().tabs().is_empty() {
                // The last pane closed: so does the window.
                return self.stop(event_loop, 0);
            }
            self.redraw();
            return;
        }
        if self.search_key(event) {
            return;
        }
        let shown = self.panes.shown();
        let Some(pane) = shown.mux().focused_pane() else {
            return;
        };
        let Some(term) = shown.term(pane) else {
            return;
        };
        let modes = InputModes { app_cursor: term.modes().flags.contains(Modes::APP_CURSOR) };
        let scrolled = self.views.get(&pane).is_some_and(|v| v.scrolled_back(&term) > 0);
        drop(term);
        if let Some(bytes) = keys::key_bytes(event, self.modifiers, modes) {
            self.panes.type_into(pane, bytes);
            // Typing brings a scrolled-back view back to the program.
            if scrolled {
                self.views.entry(pane).or_default().follow();
                self.redraw();
            }
        }
    }

    /// Announce on the desktop each pane that has just turned needs-you out of sight.
    fn announce(&mut self) {
        if let Panes::Local(server) = &self.panes {
            // A pane turns needs-you only in a new sample; most wake-ups are output between two.
            let pulses = server.workspace().pulses();
            if !pulses.is_some_and(|pulses| self.notifier.is_new(pulses)) {
                return;
            }
        }
        let panes = self.panes.shown();
        let mux = panes.mux();
        let shown: Vec<PaneId> = mux.active_tab().map(|t| t.panes()).unwrap_or_default();
        let panes: Vec<(PaneId, String, Option<crate::pulse::PanePulse>)> = mux
            .all_panes()
            .into_iter()
            .filter_map(|(_, pane)| {
                let look = panes.look(pane)?;
                let name = look.name.clone().unwrap_or_else(|| look.program.clone());
                Some((pane, name, look.pulse.clone()))
            })
            .collect();
        let seen: Vec<notify::Seen<'_>> = panes
            .iter()
            .map(|(pane, name, pulse)| notify::Seen {
                pane: *pane,
                name,
                visible: self.window_focused && shown.contains(pane),
                // A muted pane is never announced.
                state: pulse.as_ref().filter(|p| !p.muted).map(|p| &p.state),
            })
            .collect();
        for (title, body) in self.notifier.due(&seen) {
            notify::send(&title, &body);
        }
    }

    /// Tell the focused pane's program that the window gained or lost focus (mode 1004).
    fn report_focus(&mut self, focused: bool) {
        self.window_focused = focused;
        let shown = self.panes.shown();
        let Some(pane) = shown.mux().focused_pane() else {
            return;
        };
        let wants = shown.term(pane).is_some_and(|t| t.modes().flags.contains(Modes::FOCUS_EVENTS));
        if wants {
            self.panes
                .type_into(pane, if focused { b"\x1b[I".to_vec() } else { b"\x1b[O".to_vec() });
        }
        self.redraw();
    }
}

impl ApplicationHandler<UserEvent> for WindowApp {
    fn new_events(&mut self, _: &ActiveEventLoop, cause: winit::event::StartCause) {
        // A flash ended or a held picture expired.
        if let winit::event::StartCause::ResumeTimeReached { .. } = cause {
            self.redraw();
        }
    }

    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.surface.is_some() {
            return;
        }
        // Shown once it can be drawn on: the GPU is made ready after the size is told.
        let attributes = Window::default_attributes().with_title("paddock").with_visible(false);
        let window = match event_loop.create_window(attributes) {
            Ok(window) => Arc::new(window),
            Err(e) => return self.fail(event_loop, anyhow::anyhow!("cannot open a window: {e}")),
        };
        let mut look = Look::of(&self.config);
        look.font_size = self.font_size;
        let scale = window.scale_factor();
        let typeface = self.fonts.typeface(&look, scale as f32);
        // The grid is told before the GPU is ready (tens of milliseconds on a software
        // renderer): a server started for this window opens its tabs once it knows it, so
        // their programs start at the size they are shown at.
        self.panes.set_header_rows(1);
        let size = window.inner_size();
        let padding = surface::padding_px(look.padding, scale);
        let grid = surface::grid_in(size.width, size.height, typeface.cell_size(), padding);
        self.set_grid(grid);
        match Surface::new(&self.display, window, &look, typeface) {
            Ok(surface) => self.surface = Some(surface),
            Err(e) => return self.fail(event_loop, e.into()),
        }
        if let Some(surface) = &self.surface {
            surface.window().set_ime_allowed(true);
            surface.window().set_visible(true);
        }
        self.pace_to_display();
        self.fit();
        if let Some(server) = self.panes.local() {
            if let Err(e) = server.open_first_tab() {
                return self.fail(event_loop, e);
            }
            server.workspace_mut().refresh_config_notice();
        }
        self.redraw();
    }

    fn user_event(&mut self, event_loop: &ActiveEventLoop, event: UserEvent) {
        match event {
            UserEvent::Wake => {
                self.pending.store(false, Ordering::Release);
                self.take_events();
                if self.config.desktop_notifications {
                    self.announce();
                }
                self.redraw();
            }
            UserEvent::Call(call) => {
                let Some(server) = self.panes.local() else { return };
                if let Some(code) = server.answer(call) {
                    return self.stop(event_loop, code);
                }
                self.redraw();
            }
            UserEvent::Remote(event) => self.take_from_server(event_loop, event),
            UserEvent::Signal(Signal::Stop(_)) => self.stop(event_loop, 0),
            UserEvent::ConfigChanged => self.reload_config(),
            UserEvent::Attached(stream) => {
                let Some(server) = self.panes.local() else { return };
                server.attach_window(stream);
                server.workspace_mut().sync_windows();
            }
            UserEvent::WindowAsked(asked) => {
                let Some(server) = self.panes.local() else { return };
                if let Some(code) = server.window_asked(asked) {
                    return self.stop(event_loop, code);
                }
                server.workspace_mut().sync_windows();
                self.redraw();
            }
            UserEvent::LinkNews(news) => {
                let Some(server) = self.panes.local() else { return };
                server.workspace_mut().take_link_news(news);
                server.workspace_mut().sync_windows();
                self.redraw();
            }
            UserEvent::Signal(Signal::Child) => {
                let Some(server) = self.panes.local() else { return };
                server.workspace_mut().check_ended_locks();
                if let Some(code) = server.first_exit() {
                    return self.stop(event_loop, code);
                }
                self.redraw();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _id: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => self.stop(event_loop, 0),
            WindowEvent::Resized(size) => {
                if let Some(surface) = &mut self.surface {
                    surface.resize(size.width, size.height);
                }
                self.fit();
                self.pace_to_display();
                self.redraw();
            }
            WindowEvent::Moved(_) => self.pace_to_display(),
            WindowEvent::ScaleFactorChanged { .. } => {
                // The font keeps its size in logical pixels; the Resized that follows refits.
                self.set_font_size(self.font_size);
                self.pace_to_display();
                self.redraw();
            }
            WindowEvent::ModifiersChanged(modifiers) => self.modifiers = modifiers.state(),
            WindowEvent::KeyboardInput { event, .. } => self.on_key(event_loop, &event),
            WindowEvent::Ime(Ime::Commit(text)) => {
                self.commit_text(&text);
                self.redraw();
            }
            WindowEvent::Focused(focused) => self.report_focus(focused),
            WindowEvent::Occluded(occluded) => {
                self.occluded = occluded;
                self.redraw();
            }
            WindowEvent::CursorMoved { position, .. } => self.on_cursor_moved(position),
            WindowEvent::MouseInput { state, button, .. } => self.on_mouse_button(state, button),
            WindowEvent::MouseWheel { delta, .. } => self.on_wheel(delta),
            WindowEvent::RedrawRequested => self.draw(event_loop),
            _ => {}
        }
    }
}

fn ms(from: Instant) -> f64 {
    from.elapsed().as_secs_f64() * 1000.0
}
