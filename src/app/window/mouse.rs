//! The pointer: clicks focus panes and switch tabs, drags select text (double click: words,
//! triple: lines) or move dividers, the wheel scrolls back; a program that turned on mouse
//! tracking gets the events instead (Shift keeps them for selection, as in xterm).

use std::time::{Duration, Instant};

use winit::dpi::PhysicalPosition;
use winit::event::{ElementState, MouseButton as WinitButton, MouseScrollDelta};

use super::clipboard::Board;
use super::frame::TAB_BAR_ROWS;
use super::WindowApp;
use crate::input::{
    encode_key, encode_mouse, InputModes, Key, Modifiers, MouseAction, MouseButton,
};
use crate::mux::{Axis, Divider, PaneId, Rect};
use crate::term::{Modes, MouseTracking};
use crate::view::{Point, Selection, SelectionKind};

/// Two clicks closer than this on the same cell count as a double (or triple) click.
const MULTI_CLICK: Duration = Duration::from_millis(400);
/// Lines scrolled per wheel notch.
const WHEEL_LINES: f64 = 3.0;

/// What a button press started.
#[derive(Clone, Copy, Debug)]
enum Press {
    /// Selecting text in a pane.
    Selecting(PaneId),
    /// Moving the active tab's divider with this index.
    Divider(usize, Divider),
    /// Reported to the program in the pane.
    Reported(PaneId, MouseButton),
}

#[derive(Default)]
pub struct Pointer {
    position: PhysicalPosition<f64>,
    press: Option<Press>,
    last_click: Option<(Instant, PaneId, Point, u8)>,
    /// The cell the last motion report was for (reports go out once per cell).
    reported_cell: Option<(usize, usize)>,
    /// Wheel movement not yet a whole line (touchpads scroll in pixels).
    wheel_rest: f64,
}

/// What is under the pointer.
enum Hit {
    TabBar {
        col: usize,
    },
    Divider(usize, Divider),
    /// A pane's title strip.
    Strip(PaneId),
    Pane {
        pane: PaneId,
        row: usize,
        col: usize,
    },
}

fn button_of(button: WinitButton) -> Option<MouseButton> {
    match button {
        WinitButton::Left => Some(MouseButton::Left),
        WinitButton::Middle => Some(MouseButton::Middle),
        WinitButton::Right => Some(MouseButton::Right),
        _ => None,
    }
}

impl WindowApp {
    fn modifiers(&self) -> Modifiers {
        let m = self.modifiers;
        Modifiers { shift: m.shift_key(), alt: m.alt_key(), ctrl: m.control_key() }
    }

    /// The cell under the pointer, in the grid below the tab bar (row may be -1: the tab bar).
    fn hit(&self) -> Option<Hit> {
        let surface = self.surface.as_ref()?;
        let cell = surface.cell_size();
        let (px, py) = (self.pointer.position.x as f32, self.pointer.position.y as f32);
        if py < TAB_BAR_ROWS as f32 * cell.height {
            return Some(Hit::TabBar { col: (px / cell.width).floor().max(0.0) as usize });
        }
        let [left, top] = surface.grid_origin();
        let (x, y) = ((px - left) / cell.width, (py - top) / cell.height);
        if x < 0.0 || y < 0.0 {
            // The padding.
            return None;
        }
        let (col, row) = (x.floor() as usize, y.floor() as usize);
        let grid = surface.grid();
        let tab = self.panes.mux().active_tab()?;
        let (panes, dividers) = tab.layout(Rect::new(0, 0, grid.cols, grid.lines));
        if let Some((index, divider)) =
            dividers.iter().enumerate().find(|(_, d)| d.rect.contains(col, row))
        {
            return Some(Hit::Divider(index, *divider));
        }
        let (pane, rect) = panes.iter().find(|(_, r)| r.contains(col, row))?;
        let header = self.panes.shown().header_rows();
        if row < rect.row + header {
            return Some(Hit::Strip(*pane));
        }
        Some(Hit::Pane { pane: *pane, row: row - rect.row - header, col: col - rect.col })
    }

    /// The pane's mouse modes when the program wants this event (and Shift is not held).
    fn reporting(&self, pane: PaneId) -> Option<crate::term::ModeState> {
        if self.modifiers.shift_key() {
            return None;
        }
        let modes = self.panes.shown().term(pane)?.modes();
        (modes.mouse != MouseTracking::Off).then_some(modes)
    }

    fn report(&self, pane: PaneId, action: MouseAction, row: usize, col: usize) -> bool {
        let Some(modes) = self.reporting(pane) else {
            return false;
        };
        if let Some(bytes) = encode_mouse(action, col, row, self.modifiers(), modes) {
            self.panes.type_into(pane, bytes);
        }
        true
    }

    pub(super) fn on_cursor_moved(&mut self, position: PhysicalPosition<f64>) {
        self.pointer.position = position;
        match self.pointer.press {
            Some(Press::Divider(index, divider)) => self.drag_divider(index, divider),
            Some(Press::Selecting(pane)) => self.drag_selection(pane),
            Some(Press::Reported(pane, button)) => {
                if let Some(Hit::Pane { pane: under, row, col }) = self.hit() {
                    if under == pane && self.pointer.reported_cell != Some((row, col)) {
                        self.pointer.reported_cell = Some((row, col));
                        self.report(pane, MouseAction::Motion(Some(button)), row, col);
                    }
                }
            }
            None => {
                if let Some(Hit::Pane { pane, row, col }) = self.hit() {
                    let wants_motion =
                        self.reporting(pane).is_some_and(|m| m.mouse == MouseTracking::Motion);
                    if wants_motion && self.pointer.reported_cell != Some((row, col)) {
                        self.pointer.reported_cell = Some((row, col));
                        self.report(pane, MouseAction::Motion(None), row, col);
                    }
                }
            }
        }
    }

    pub(super) fn on_mouse_button(&mut self, state: ElementState, button: WinitButton) {
        let Some(button) = button_of(button) else {
            return;
        };
        match state {
            ElementState::Pressed => self.press(button),
            ElementState::Released => self.release(button),
        }
        self.redraw();
    }

    fn press(&mut self, button: MouseButton) {
        match self.hit() {
            Some(Hit::TabBar { col }) if button == MouseButton::Left => {
                let spans = &self.frames.tab_spans;
                if let Some(index) = spans.iter().position(|s| s.contains(&col)) {
                    self.panes.activate_tab(index);
                }
            }
            Some(Hit::Divider(index, divider)) if button == MouseButton::Left => {
                self.pointer.press = Some(Press::Divider(index, divider));
            }
            Some(Hit::Strip(pane)) => self.panes.focus(pane),
            Some(Hit::Pane { pane, row, col }) => {
                self.panes.focus(pane);
                if self.report(pane, MouseAction::Press(button), row, col) {
                    self.pointer.press = Some(Press::Reported(pane, button));
                    self.pointer.reported_cell = Some((row, col));
                    return;
                }
                match button {
                    MouseButton::Left => self.start_selection(pane, row, col),
                    MouseButton::Middle => self.paste(Board::Primary),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn release(&mut self, button: MouseButton) {
        match self.pointer.press.take() {
            Some(Press::Reported(pane, pressed)) if pressed == button => {
                if let Some(Hit::Pane { row, col, .. }) = self.hit() {
                    self.report(pane, MouseAction::Release(button), row, col);
                }
            }
            Some(Press::Selecting(pane)) => {
                let view = self.views.entry(pane).or_default();
                // A plain click selects nothing: it only clears what was selected.
                let empty = view.selection.is_none_or(|s| s.is_empty());
                if empty {
                    view.selection = None;
                } else {
                    self.copy_selection(pane, true);
                }
            }
            _ => {}
        }
    }

    fn start_selection(&mut self, pane: PaneId, row: usize, col: usize) {
        let Some(term) = self.panes.shown().term(pane) else {
            return;
        };
        let view = self.views.entry(pane).or_default();
        let point = view.point_at(&term, row, col);
        let now = Instant::now();
        let clicks = match self.pointer.last_click {
            Some((at, p, last, n)) if p == pane && last == point && now - at < MULTI_CLICK => {
                n % 3 + 1
            }
            _ => 1,
        };
        self.pointer.last_click = Some((now, pane, point, clicks));
        let kind = match clicks {
            1 => SelectionKind::Cells,
            2 => SelectionKind::Words,
            _ => SelectionKind::Lines,
        };
        view.selection = Some(Selection::new(point, kind));
        self.pointer.press = Some(Press::Selecting(pane));
    }

    /// The pane's rectangle in the grid below the tab bar, and the pointer's cell relative
    /// to its terminal's top-left (negative or past the end when outside it).
    fn pointer_in(&self, pane: PaneId) -> Option<(Rect, isize, isize)> {
        let surface = self.surface.as_ref()?;
        let cell = surface.cell_size();
        let grid = surface.grid();
        let tab = self.panes.mux().tab_of(pane)?;
        let (panes, _) = tab.layout(Rect::new(0, 0, grid.cols, grid.lines));
        let (_, rect) = panes.into_iter().find(|(p, _)| *p == pane)?;
        let [left, top] = surface.grid_origin();
        let x = ((self.pointer.position.x as f32 - left) / cell.width).floor() as isize;
        let y = ((self.pointer.position.y as f32 - top) / cell.height).floor() as isize;
        let header = self.panes.shown().header_rows();
        let row = y - (rect.row + header) as isize;
        Some((rect, row, x - rect.col as isize))
    }

    /// Extend the selection to the pointer, kept inside the pane; past its top or bottom edge
    /// the view scrolls a line for each move, so a drag can reach text out of view.
    fn drag_selection(&mut self, pane: PaneId) {
        let Some((rect, row, col)) = self.pointer_in(pane) else {
            return;
        };
        let Some(term) = self.panes.shown().term(pane) else {
            return;
        };
        let lines = term.size().lines as isize;
        let view = self.views.entry(pane).or_default();
        if row < 0 {
            view.scroll(&term, -1);
        } else if row >= lines {
            view.scroll(&term, 1);
        }
        let row = row.clamp(0, lines - 1) as usize;
        let col = col.clamp(0, rect.cols as isize - 1) as usize;
        let point = view.point_at(&term, row, col);
        let moved = view.selection.as_mut().is_some_and(|selection| {
            let moved = selection.head != point;
            selection.head = point;
            moved
        });
        drop(term);
        self.scrolled(pane);
        if moved {
            self.redraw();
        }
    }

    /// Copy the pane's selection to the clipboard (and the primary selection).
    pub(super) fn copy_selection(&mut self, pane: PaneId, primary: bool) {
        let Some(selection) = self.views.get(&pane).and_then(|v| v.selection) else {
            return;
        };
        let Some(text) = self.panes.shown().term(pane).map(|term| selection.text(&term)) else {
            return;
        };
        if text.is_empty() {
            return;
        }
        if primary {
            self.clipboard.set(Board::Primary, text.clone());
        }
        self.clipboard.set(Board::Clipboard, text);
    }

    fn drag_divider(&mut self, index: usize, divider: Divider) {
        let Some(surface) = &self.surface else {
            return;
        };
        let cell = surface.cell_size();
        let [left, top] = surface.grid_origin();
        let x = (self.pointer.position.x as f32 - left) / cell.width;
        let y = (self.pointer.position.y as f32 - top) / cell.height;
        let area = divider.area;
        let (at, start, span) = match divider.axis {
            Axis::Horizontal => (x, area.col, area.cols),
            Axis::Vertical => (y, area.row, area.rows),
        };
        if span < 3 {
            return;
        }
        let ratio = (at - start as f32) / (span - 1) as f32;
        if let Some(pane) = self.panes.mux().focused_pane() {
            self.panes.set_divider_ratio(pane, index, ratio);
        }
        self.redraw();
    }

    pub(super) fn on_wheel(&mut self, delta: MouseScrollDelta) {
        let lines = match delta {
            MouseScrollDelta::LineDelta(_, y) => f64::from(y) * WHEEL_LINES,
            MouseScrollDelta::PixelDelta(position) => {
                let height = self.surface.as_ref().map_or(20.0, |s| s.cell_size().height);
                position.y / f64::from(height)
            }
        } + self.pointer.wheel_rest;
        let whole = lines.trunc();
        self.pointer.wheel_rest = lines - whole;
        let (Some(Hit::Pane { pane, row, col }), true) = (self.hit(), whole != 0.0) else {
            return;
        };
        let up = whole > 0.0;
        let count = whole.abs() as usize;
        let wheel = if up { MouseButton::WheelUp } else { MouseButton::WheelDown };
        if self.reporting(pane).is_some() {
            for _ in 0..count {
                self.report(pane, MouseAction::Press(wheel), row, col);
            }
            return;
        }
        let Some(term) = self.panes.shown().term(pane) else {
            return;
        };
        let flags = term.modes().flags;
        if term.is_alt_screen() && flags.contains(Modes::ALTERNATE_SCROLL) {
            // A full-screen program without mouse tracking (less, man): the wheel is arrows.
            let modes = InputModes { app_cursor: flags.contains(Modes::APP_CURSOR) };
            let key = if up { Key::Up } else { Key::Down };
            let bytes = encode_key(key, Modifiers::NONE, modes).repeat(count);
            drop(term);
            self.panes.type_into(pane, bytes);
            return;
        }
        let view = self.views.entry(pane).or_default();
        let lines = count as i64;
        view.scroll(&term, if up { -lines } else { lines });
        drop(term);
        self.scrolled(pane);
        self.redraw();
    }
}
