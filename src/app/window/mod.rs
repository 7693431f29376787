//! `paddock` with a window: the workspace drawn with wgpu, driven by the keyboard and, as a
//! headless instance is, by the control socket.
//!
//! Everything that happens elsewhere reaches the event loop as a `UserEvent` through one proxy:
//! pane output (coalesced: one wake-up per frame however many chunks arrive), control requests
//! and signals. Idle panes cost nothing: frames are drawn only when something asks for one.

mod keys;
mod surface;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Context;
use winit::application::ApplicationHandler;
use winit::event::WindowEvent;
use winit::event_loop::{ActiveEventLoop, EventLoop, EventLoopProxy};
use winit::keyboard::ModifiersState;
use winit::window::{Window, WindowId};

use super::headless::{HeadlessOptions, Instance};
use super::signals::{Signal, SignalListener};
use crate::ctl::protocol::{Request, SplitDirection};
use crate::ctl::Call;
use crate::input::Action;
use crate::input::InputModes;
use crate::mux::Direction;
use crate::term::Modes;
use surface::Surface;

/// The font size in logical pixels until the configuration sets it.
const FONT_SIZE: f32 = 15.0;

enum UserEvent {
    /// A pane parsed output: draw a frame.
    Wake,
    Call(Call),
    Signal(Signal),
}

/// Run with a window until it is closed or the instance is stopped. Returns the exit code.
pub fn run(options: HeadlessOptions) -> anyhow::Result<u8> {
    let signals = SignalListener::start().context("cannot set up signal handling")?;
    let event_loop = EventLoop::<UserEvent>::with_user_event()
        .build()
        .context("cannot open a window (is a display available? try --headless)")?;
    let proxy = event_loop.create_proxy();
    let pending = Arc::new(AtomicBool::new(false));
    let wake = {
        let (proxy, pending) = (proxy.clone(), pending.clone());
        Arc::new(move || {
            if !pending.swap(true, Ordering::AcqRel) {
                let _ = proxy.send_event(UserEvent::Wake);
            }
        })
    };
    let instance = Instance::start(&options, wake)?;
    forward(instance.calls().clone(), proxy.clone(), UserEvent::Call);
    forward(signals.receiver().clone(), proxy.clone(), UserEvent::Signal);
    let gpu_instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle(
        Box::new(event_loop.owned_display_handle()),
    ));
    let mut app = WindowApp {
        instance,
        gpu: gpu_instance,
        surface: None,
        pending,
        modifiers: ModifiersState::empty(),
        exit_code: None,
        error: None,
    };
    event_loop.run_app(&mut app).context("the window's event loop failed")?;
    if let Some(error) = app.error {
        return Err(error);
    }
    let code = app.exit_code.unwrap_or(0);
    app.instance.shut_down();
    Ok(code)
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

struct WindowApp {
    instance: Instance,
    gpu: wgpu::Instance,
    surface: Option<Surface>,
    pending: Arc<AtomicBool>,
    modifiers: ModifiersState,
    exit_code: Option<u8>,
    error: Option<anyhow::Error>,
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

    /// Lay the workspace out in the window's grid.
    fn fit(&mut self) {
        if let Some(surface) = &self.surface {
            self.instance.workspace_mut().set_area(surface.grid());
        }
    }

    /// Carry out a key binding's action; `Some(code)` when the instance should stop.
    fn act(&mut self, action: Action) -> Option<u8> {
        let focused = self.instance.workspace().mux().focused_pane().map(|p| p.0);
        let split =
            |direction| focused.map(|pane| Request::Split { pane, direction, command: vec![] });
        let request = match action {
            Action::NewTab => Some(Request::New { thread: None, cwd: None, command: vec![] }),
            Action::ClosePane => focused.map(|pane| Request::Close { pane }),
            Action::SplitRight => split(SplitDirection::Right),
            Action::SplitDown => split(SplitDirection::Down),
            Action::FocusLeft | Action::FocusRight | Action::FocusUp | Action::FocusDown => {
                let direction = match action {
                    Action::FocusLeft => Direction::Left,
                    Action::FocusRight => Direction::Right,
                    Action::FocusUp => Direction::Up,
                    _ => Direction::Down,
                };
                self.instance.workspace_mut().focus_direction(direction);
                None
            }
            Action::ZoomPane => {
                self.instance.workspace_mut().toggle_zoom();
                None
            }
            Action::NextTab | Action::PreviousTab => {
                let step = if action == Action::NextTab { 1 } else { -1 };
                self.instance.workspace_mut().cycle_tab(step);
                None
            }
        };
        request.and_then(|request| self.instance.perform(request))
    }

    fn stop(&mut self, event_loop: &ActiveEventLoop, code: u8) {
        self.exit_code = Some(code);
        event_loop.exit();
    }
}

impl ApplicationHandler<UserEvent> for WindowApp {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.surface.is_some() {
            return;
        }
        let attributes = Window::default_attributes().with_title("paddock");
        let window = match event_loop.create_window(attributes) {
            Ok(window) => Arc::new(window),
            Err(e) => return self.fail(event_loop, anyhow::anyhow!("cannot open a window: {e}")),
        };
        match Surface::new(&self.gpu, window, FONT_SIZE) {
            Ok(surface) => self.surface = Some(surface),
            Err(e) => return self.fail(event_loop, e.into()),
        }
        self.fit();
        if let Err(e) = self.instance.open_first_tab() {
            return self.fail(event_loop, e);
        }
        self.redraw();
    }

    fn user_event(&mut self, event_loop: &ActiveEventLoop, event: UserEvent) {
        match event {
            UserEvent::Wake => {
                self.pending.store(false, Ordering::Release);
                self.redraw();
            }
            UserEvent::Call(call) => {
                if let Some(code) = self.instance.answer(call) {
                    return self.stop(event_loop, code);
                }
                self.redraw();
            }
            UserEvent::Signal(Signal::Stop(_)) => self.stop(event_loop, 0),
            UserEvent::Signal(Signal::Child) => {
                if let Some(code) = self.instance.first_exit() {
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
                self.redraw();
            }
            WindowEvent::ModifiersChanged(modifiers) => self.modifiers = modifiers.state(),
            WindowEvent::KeyboardInput { event, .. } => {
                let bound = keys::chord_of(&event, self.modifiers)
                    .and_then(|(key, mods)| crate::input::action_for(key, mods));
                if let Some(action) = bound {
                    if let Some(code) = self.act(action) {
                        return self.stop(event_loop, code);
                    }
                    if self.instance.workspace().mux().tabs().is_empty() {
                        // The last pane closed: so does the window.
                        return self.stop(event_loop, 0);
                    }
                    self.redraw();
                    return;
                }
                let workspace = self.instance.workspace_mut();
                let Some(pane) = workspace.mux().focused_pane() else {
                    return;
                };
                let Some(session) = workspace.session(pane) else {
                    return;
                };
                let modes = {
                    let term = session.terminal().lock().unwrap_or_else(|e| e.into_inner());
                    InputModes { app_cursor: term.modes().flags.contains(Modes::APP_CURSOR) }
                };
                if let Some(bytes) = keys::key_bytes(&event, self.modifiers, modes) {
                    // A pane that stopped reading says so in its status; typing goes nowhere.
                    let _ = session.send(bytes);
                }
            }
            WindowEvent::RedrawRequested => {
                if let Some(surface) = &mut self.surface {
                    if let Err(e) = surface.draw(self.instance.workspace()) {
                        eprintln!("paddock: cannot draw: {e}");
                    }
                }
            }
            _ => {}
        }
    }
}
