//! What key bindings do, and the search field: while a pane's search is open, typing edits
//! its query instead of going to the program.

use winit::event::{ElementState, KeyEvent};
use winit::keyboard::{Key as WinitKey, NamedKey};

use super::clipboard::Board;
use super::panes::Panes;
use super::surface::Look;
use super::WindowApp;
use crate::config::FONT_SIZES;
use crate::input::{encode_paste, Action};
use crate::mux::{Axis, Direction, PaneId};
use crate::term::Modes;
use crate::view::{ClipboardNote, Search};

impl WindowApp {
    fn focused(&self) -> Option<PaneId> {
        self.panes.mux().focused_pane()
    }

    /// Carry out a key binding's action; `Some(code)` when the instance should stop.
    pub(super) fn act(&mut self, action: Action) -> Option<u8> {
        let focused = self.focused();
        match action {
            Action::NewTab => self.panes.new_tab(focused),
            Action::ClosePane => {
                return focused.and_then(|pane| self.panes.close(pane));
            }
            Action::SplitRight | Action::SplitDown => {
                let axis = match action {
                    Action::SplitRight => Axis::Horizontal,
                    _ => Axis::Vertical,
                };
                if let Some(pane) = focused {
                    self.panes.split(pane, axis);
                }
            }
            Action::FocusLeft | Action::FocusRight | Action::FocusUp | Action::FocusDown => {
                let direction = match action {
                    Action::FocusLeft => Direction::Left,
                    Action::FocusRight => Direction::Right,
                    Action::FocusUp => Direction::Up,
                    _ => Direction::Down,
                };
                self.panes.focus_direction(direction);
            }
            Action::ZoomPane => {
                if let Some(pane) = focused {
                    self.panes.toggle_zoom(pane);
                }
                self.forget_positions();
            }
            Action::NextTab | Action::PreviousTab => {
                let step = if action == Action::NextTab { 1 } else { -1 };
                self.panes.cycle_tab(step);
            }
            Action::FontBigger | Action::FontSmaller | Action::FontReset => {
                let size = match action {
                    Action::FontBigger => self.font_size + 1.0,
                    Action::FontSmaller => self.font_size - 1.0,
                    _ => self.base_font_size,
                };
                self.set_font_size(size.clamp(*FONT_SIZES.start(), *FONT_SIZES.end()));
            }
            Action::Copy => {
                if let Some(pane) = focused {
                    self.copy_selection(pane, false);
                }
            }
            Action::Paste => {
                self.paste(Board::Clipboard);
            }
            Action::ScrollPageUp
            | Action::ScrollPageDown
            | Action::ScrollTop
            | Action::ScrollBottom => {
                self.scroll_focused(action);
            }
            Action::Search => {
                if let Some(pane) = focused {
                    let view = self.views.entry(pane).or_default();
                    view.search.get_or_insert_with(Search::default);
                    // A search looks through all of it: the rows the server still holds too.
                    if let Some(remote) = self.panes.remote() {
                        remote.ask_all_rows(pane);
                    }
                }
            }
            Action::AllowClipboard => {
                if let Some(pane) = focused {
                    self.allow_clipboard(pane);
                }
            }
            Action::AllowHost => {
                if let Some(pane) = focused {
                    self.panes.allow_host(pane);
                }
            }
            Action::MutePane => {
                if let Some(pane) = focused {
                    self.panes.toggle_mute(pane);
                    self.redraw();
                }
            }
            Action::NextWaiting => {
                if !self.panes.focus_longest_waiting() {
                    eprintln!("paddock: no pane waits for you");
                }
            }
            Action::ApproveProgram => {
                if let Some(pane) = focused {
                    self.views.remove(&pane);
                    self.panes.approve_program(pane);
                }
            }
            Action::RestartThread => {
                if let Some(pane) = focused {
                    // The old screen goes with the old program.
                    self.views.remove(&pane);
                    self.panes.restart(pane);
                }
            }
            Action::Detach => match &self.panes {
                Panes::Remote(_) => return Some(0),
                Panes::Local(_) => eprintln!(
                    "paddock: this window owns its panes (--single-process): there is no \
                     server to leave them with"
                ),
            },
            Action::NewWindow => {
                let socket = match &self.panes {
                    Panes::Remote(remote) => remote.socket().to_owned(),
                    Panes::Local(server) => server.attach_socket().to_owned(),
                };
                if let Err(why) = open_window(&socket) {
                    eprintln!("paddock: cannot open another window: {why}");
                }
            }
        }
        None
    }

    /// The configuration file changed: a good one takes effect now (look, keys; threads that
    /// changed are only marked), a broken one is shown in the `config` tab and changes nothing.
    pub(super) fn reload_config(&mut self) {
        let reloaded = match (&mut self.panes, &self.config_path) {
            (Panes::Local(server), _) => server.reload_config(),
            // The server reloads its threads itself, and shows the file's problems.
            (Panes::Remote(_), Some(path)) => {
                crate::config::load(path).ok().map(Option::unwrap_or_default)
            }
            (Panes::Remote(_), None) => None,
        };
        // A broken file changes nothing: the server shows what is wrong in the `config` tab.
        if let Some(config) = reloaded {
            if config.font.size != self.config.font.size {
                self.base_font_size = config.font.size;
                self.font_size = config.font.size;
            }
            if let Some(surface) = &mut self.surface {
                let mut look = Look::of(&config);
                look.font_size = self.font_size;
                surface.set_look(&look);
                surface.set_font_size(self.font_size);
            }
            self.config = config;
            self.fit();
        }
        self.redraw();
    }

    pub(super) fn set_font_size(&mut self, size: f32) {
        self.font_size = size;
        if let Some(surface) = &mut self.surface {
            surface.set_font_size(size);
        }
        self.fit();
    }

    fn scroll_focused(&mut self, action: Action) {
        let Some(pane) = self.focused() else {
            return;
        };
        let Some(term) = self.panes.shown().term(pane) else {
            return;
        };
        let page = term.size().lines.saturating_sub(1).max(1) as i64;
        let view = self.views.entry(pane).or_default();
        match action {
            Action::ScrollPageUp => view.scroll(&term, -page),
            Action::ScrollPageDown => view.scroll(&term, page),
            Action::ScrollTop => view.scroll(&term, i64::MIN / 2),
            _ => view.follow(),
        }
        drop(term);
        self.scrolled(pane);
    }

    /// `pane`'s replica started again from a snapshot (the server caught this window up after
    /// a flood it could not keep pace with): the rows its search or scroll position needs from
    /// the server are asked for again.
    pub(super) fn reask_rows(&mut self, pane: PaneId) {
        let searching = self.views.get(&pane).is_some_and(|v| v.search.is_some());
        match self.panes.remote() {
            Some(remote) if searching => remote.ask_all_rows(pane),
            Some(_) => self.scrolled(pane),
            None => {}
        }
    }

    /// A view scrolled: past the oldest row its replica holds, the server is asked for more.
    pub(super) fn scrolled(&mut self, pane: PaneId) {
        let Some(remote) = self.panes.remote() else { return };
        let at_top = {
            let Some(term) = crate::app::Shown::term(remote, pane) else { return };
            let top = self.views.get(&pane).map(|v| v.top_line(&term));
            top.is_some_and(|top| top <= term.first_line())
        };
        if at_top {
            remote.ask_rows(pane);
        }
    }

    /// Let `pane`'s held clipboard write through, if it has one.
    fn allow_clipboard(&mut self, pane: PaneId) {
        let Some(view) = self.views.get_mut(&pane) else { return };
        if let Some(ClipboardNote::Asking { text, primary }) = view.clipboard.take() {
            self.clipboard.set(Board::of(primary), text);
        }
    }

    /// Paste `board`'s text into the focused pane, bracketed when the program asked for it.
    pub(super) fn paste(&mut self, board: Board) {
        let Some(text) = self.clipboard.get(board) else {
            return;
        };
        let Some(pane) = self.focused() else {
            return;
        };
        self.views.entry(pane).or_default().follow();
        let Some(term) = self.panes.shown().term(pane) else {
            return;
        };
        let bracketed = term.modes().flags.contains(Modes::BRACKETED_PASTE);
        drop(term);
        self.panes.type_into(pane, encode_paste(&text, bracketed));
    }

    /// Feed a key press to the focused pane's open search. Returns false when no search is
    /// open (the key goes to the program).
    pub(super) fn search_key(&mut self, event: &KeyEvent) -> bool {
        let Some(pane) = self.focused() else {
            return false;
        };
        if self.views.get(&pane).is_none_or(|v| v.search.is_none()) {
            return false;
        }
        if event.state != ElementState::Pressed {
            return true;
        }
        let older = !self.modifiers.shift_key();
        match &event.logical_key {
            WinitKey::Named(NamedKey::Escape) => {
                if let Some(view) = self.views.get_mut(&pane) {
                    view.search = None;
                    view.follow();
                }
            }
            WinitKey::Named(NamedKey::Enter) => self.jump(pane, older),
            WinitKey::Named(NamedKey::Backspace) => {
                self.edit_search(pane, |query| {
                    query.pop();
                });
            }
            _ => {
                let text: String = event
                    .text
                    .as_deref()
                    .unwrap_or_default()
                    .chars()
                    .filter(|c| !c.is_control())
                    .collect();
                if !text.is_empty() {
                    self.edit_search(pane, |query| query.push_str(&text));
                }
            }
        }
        self.redraw();
        true
    }

    /// Text committed by an input method, for the search field or the program.
    pub(super) fn commit_text(&mut self, text: &str) {
        let Some(pane) = self.focused() else {
            return;
        };
        if self.views.get(&pane).is_some_and(|v| v.search.is_some()) {
            self.edit_search(pane, |query| query.push_str(text));
            return;
        }
        self.views.entry(pane).or_default().follow();
        self.panes.type_into(pane, text.as_bytes().to_vec());
    }

    /// Change the query and look again from the bottom: the newest match is current.
    fn edit_search(&mut self, pane: PaneId, edit: impl FnOnce(&mut String)) {
        if let Some(search) = self.views.get_mut(&pane).and_then(|v| v.search.as_mut()) {
            edit(&mut search.query);
            search.current = None;
        }
        self.jump(pane, true);
    }

    /// Move to the next older (or newer) match and bring it into view.
    fn jump(&mut self, pane: PaneId, older: bool) {
        let Some(term) = self.panes.shown().term(pane) else {
            return;
        };
        let Some(view) = self.views.get_mut(&pane) else {
            return;
        };
        let found = view.search.as_mut().and_then(|s| s.jump(&term, older));
        if let Some(found) = found {
            view.reveal(&term, found.start.line);
        }
    }
}

/// Start another window on the server at `socket`, on its own: it outlives this one.
fn open_window(socket: &std::path::Path) -> std::io::Result<()> {
    let exe = std::env::current_exe()?;
    let mut child = std::process::Command::new(exe)
        .arg("attach")
        .arg("--socket")
        .arg(socket)
        .stdin(std::process::Stdio::null())
        .spawn()?;
    // Reaped when it ends, so it never lingers as a zombie of this window.
    std::thread::spawn(move || child.wait());
    Ok(())
}
