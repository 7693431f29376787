//! What key bindings do, and the search field: while a pane's search is open, typing edits
//! its query instead of going to the program.

use winit::event::{ElementState, KeyEvent};
use winit::keyboard::{Key as WinitKey, NamedKey};

use super::clipboard::Board;
use super::surface::Look;
use super::WindowApp;
use crate::config::FONT_SIZES;
use crate::input::{encode_paste, Action};
use crate::mux::{Axis, Direction, PaneId};
use crate::term::Modes;
use crate::view::{ClipboardNote, Search};

impl WindowApp {
    fn focused(&self) -> Option<PaneId> {
        self.server.workspace().mux().focused_pane()
    }

    /// Carry out a key binding's action; `Some(code)` when the instance should stop.
    pub(super) fn act(&mut self, action: Action) -> Option<u8> {
        let focused = self.focused();
        match action {
            Action::NewTab => {
                // Opened from a locked pane, it is locked the same way.
                if let Err(why) = self.server.workspace_mut().open_tab_from(focused) {
                    eprintln!("paddock: cannot open a tab: {why}");
                }
            }
            Action::ClosePane => {
                return focused.and_then(|pane| self.server.close_pane(pane));
            }
            Action::SplitRight | Action::SplitDown => {
                let axis = match action {
                    Action::SplitRight => Axis::Horizontal,
                    _ => Axis::Vertical,
                };
                let split =
                    focused.map(|pane| self.server.workspace_mut().split(pane, axis, vec![]));
                if let Some(Err(why)) = split {
                    eprintln!("paddock: cannot split the pane: {why}");
                }
            }
            Action::FocusLeft | Action::FocusRight | Action::FocusUp | Action::FocusDown => {
                let direction = match action {
                    Action::FocusLeft => Direction::Left,
                    Action::FocusRight => Direction::Right,
                    Action::FocusUp => Direction::Up,
                    _ => Direction::Down,
                };
                self.server.workspace_mut().focus_direction(direction);
            }
            Action::ZoomPane => {
                self.server.workspace_mut().toggle_zoom();
                self.forget_positions();
            }
            Action::NextTab | Action::PreviousTab => {
                let step = if action == Action::NextTab { 1 } else { -1 };
                self.server.workspace_mut().cycle_tab(step);
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
                }
            }
            Action::AllowClipboard => {
                if let Some(pane) = focused {
                    self.allow_clipboard(pane);
                }
            }
            Action::AllowHost => {
                let allowed =
                    focused.and_then(|p| self.server.workspace_mut().allow_refused_host(p));
                if let Some(host) = allowed {
                    eprintln!("paddock: {host} allowed for this pane until it closes");
                }
            }
            Action::MutePane => {
                if self.server.workspace_mut().toggle_mute_focused().is_some() {
                    self.redraw();
                }
            }
            Action::NextWaiting => {
                if self.server.workspace_mut().focus_longest_waiting().is_none() {
                    eprintln!("paddock: no pane waits for you");
                }
            }
            Action::ApproveProgram => {
                if let Some(pane) = focused {
                    match self.server.workspace_mut().approve_changed_program(pane) {
                        Ok(done) => {
                            eprintln!("paddock: {done}");
                            self.views.remove(&pane);
                            self.server.restart_pane(pane);
                        }
                        Err(why) => eprintln!("paddock: {why}"),
                    }
                }
            }
            Action::RestartThread => {
                if let Some(pane) = focused {
                    // The old screen goes with the old program.
                    self.views.remove(&pane);
                    self.server.restart_pane(pane);
                }
            }
        }
        None
    }

    /// The configuration file changed: a good one takes effect now (look, keys; threads that
    /// changed are only marked), a broken one is shown in the `config` tab and changes nothing.
    pub(super) fn reload_config(&mut self) {
        match self.server.reload_config() {
            Some(config) => {
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
                self.show_config_problems(None);
                self.fit();
            }
            None => {
                let problems = self.server.workspace().config_problems().map(str::to_owned);
                self.show_config_problems(problems);
            }
        }
        self.redraw();
    }

    /// Show the configuration's problems in the `config` tab (opened, or refreshed), or close
    /// the tab when there are none. The focus stays where it is.
    pub(super) fn show_config_problems(&mut self, problems: Option<String>) {
        let workspace = self.server.workspace_mut();
        if let Some(pane) = self.config_notice.take() {
            drop(workspace.take(pane));
        }
        let Some(problems) = problems else {
            return;
        };
        let text = format!(
            "paddock's configuration has problems. Until they are fixed paddock keeps the last \
             good configuration (or its defaults). Check with `paddock config check`.\n\n{problems}\n"
        );
        let focused = workspace.mux().focused_pane();
        let notice = workspace.open_notice("config", &text);
        workspace.focus(focused.unwrap_or(notice));
        self.config_notice = Some(notice);
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
        let Some(session) = self.server.workspace().session(pane) else {
            return;
        };
        let term = session.term();
        let page = term.size().lines.saturating_sub(1).max(1) as i64;
        let view = self.views.entry(pane).or_default();
        match action {
            Action::ScrollPageUp => view.scroll(&term, -page),
            Action::ScrollPageDown => view.scroll(&term, page),
            Action::ScrollTop => view.scroll(&term, i64::MIN / 2),
            _ => view.follow(),
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
        let Some(session) = self.server.workspace().session(pane) else {
            return;
        };
        let bracketed = {
            let term = session.term();
            term.modes().flags.contains(Modes::BRACKETED_PASTE)
        };
        let _ = session.send(encode_paste(&text, bracketed));
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
        if let Some(session) = self.server.workspace().session(pane) {
            let _ = session.send(text.as_bytes().to_vec());
        }
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
        let Some(session) = self.server.workspace().session(pane) else {
            return;
        };
        let term = session.term();
        let Some(view) = self.views.get_mut(&pane) else {
            return;
        };
        let found = view.search.as_mut().and_then(|s| s.jump(&term, older));
        if let Some(found) = found {
            view.reveal(&term, found.start.line);
        }
    }
}
