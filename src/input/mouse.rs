//! Mouse events to the reports a program that turned on mouse tracking expects (xterm's
//! protocol: X10, UTF-8 (1005) and SGR (1006) encodings).

use super::encode::Modifiers;
use crate::term::{ModeState, MouseEncoding, MouseTracking};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseButton {
    Left,
    Middle,
    Right,
    WheelUp,
    WheelDown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseAction {
    Press(MouseButton),
    Release(MouseButton),
    /// The pointer moved to a new cell, with this button held (or none).
    Motion(Option<MouseButton>),
}

/// The report for `action` at cell (`col`, `row`) (0-based), or `None` when the program's
/// tracking mode does not ask for it. X10 and UTF-8 reports cannot say which button was
/// released, and X10 cannot reach past column or row 223: those report nothing there.
pub fn encode_mouse(
    action: MouseAction,
    col: usize,
    row: usize,
    mods: Modifiers,
    modes: ModeState,
) -> Option<Vec<u8>> {
    let wanted = match (modes.mouse, action) {
        (MouseTracking::Off, _) => false,
        (_, MouseAction::Press(_) | MouseAction::Release(_)) => true,
        (MouseTracking::Drag, MouseAction::Motion(held)) => held.is_some(),
        (MouseTracking::Motion, MouseAction::Motion(_)) => true,
        (MouseTracking::Clicks, MouseAction::Motion(_)) => false,
    };
    // Wheel "releases" are not events.
    if !wanted
        || matches!(action, MouseAction::Release(MouseButton::WheelUp | MouseButton::WheelDown))
    {
        return None;
    }
    let button_code = |b: MouseButton| match b {
        MouseButton::Left => 0,
        MouseButton::Middle => 1,
        MouseButton::Right => 2,
        MouseButton::WheelUp => 64,
        MouseButton::WheelDown => 65,
    };
    let mut code = match action {
        MouseAction::Press(b) | MouseAction::Release(b) => button_code(b),
        MouseAction::Motion(held) => 32 + held.map_or(3, button_code),
    };
    code += 4 * u32::from(mods.shift) + 8 * u32::from(mods.alt) + 16 * u32::from(mods.ctrl);
    let release = matches!(action, MouseAction::Release(_));
    let (x, y) = (col as u32 + 1, row as u32 + 1);
    match modes.mouse_encoding {
        MouseEncoding::Sgr => {
            let end = if release { 'm' } else { 'M' };
            Some(format!("\x1b[<{code};{x};{y}{end}").into_bytes())
        }
        MouseEncoding::X10 | MouseEncoding::Utf8 => {
            // These encodings say "a button was released" without saying which.
            let code = if release { 3 + (code & !3) } else { code };
            let mut out = b"\x1b[M".to_vec();
            let utf8 = modes.mouse_encoding == MouseEncoding::Utf8;
            for value in [code + 32, x + 32, y + 32] {
                if utf8 {
                    let c = char::from_u32(value).filter(|_| value < 2048)?;
                    let mut buf = [0; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                } else {
                    out.push(u8::try_from(value).ok()?);
                }
            }
            Some(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modes(mouse: MouseTracking, mouse_encoding: MouseEncoding) -> ModeState {
        ModeState { mouse, mouse_encoding, ..ModeState::default() }
    }

    #[test]
    fn sgr_reports_presses_releases_and_wheel() {
        let m = modes(MouseTracking::Clicks, MouseEncoding::Sgr);
        let none = Modifiers::NONE;
        let press = encode_mouse(MouseAction::Press(MouseButton::Left), 4, 2, none, m);
        assert_eq!(press.as_deref(), Some(&b"\x1b[<0;5;3M"[..]));
        let release = encode_mouse(MouseAction::Release(MouseButton::Right), 0, 0, none, m);
        assert_eq!(release.as_deref(), Some(&b"\x1b[<2;1;1m"[..]));
        let ctrl = Modifiers { ctrl: true, ..none };
        let wheel = encode_mouse(MouseAction::Press(MouseButton::WheelDown), 9, 9, ctrl, m);
        assert_eq!(wheel.as_deref(), Some(&b"\x1b[<81;10;10M"[..]));
        assert_eq!(encode_mouse(MouseAction::Release(MouseButton::WheelUp), 0, 0, none, m), None);
    }

    #[test]
    fn motion_is_reported_only_as_the_mode_asks() {
        let none = Modifiers::NONE;
        let held = MouseAction::Motion(Some(MouseButton::Left));
        let free = MouseAction::Motion(None);
        let clicks = modes(MouseTracking::Clicks, MouseEncoding::Sgr);
        assert_eq!(encode_mouse(held, 1, 1, none, clicks), None);
        let drag = modes(MouseTracking::Drag, MouseEncoding::Sgr);
        assert_eq!(encode_mouse(held, 1, 1, none, drag).as_deref(), Some(&b"\x1b[<32;2;2M"[..]));
        assert_eq!(encode_mouse(free, 1, 1, none, drag), None);
        let any = modes(MouseTracking::Motion, MouseEncoding::Sgr);
        assert_eq!(encode_mouse(free, 1, 1, none, any).as_deref(), Some(&b"\x1b[<35;2;2M"[..]));
        let off = modes(MouseTracking::Off, MouseEncoding::Sgr);
        assert_eq!(encode_mouse(MouseAction::Press(MouseButton::Left), 1, 1, none, off), None);
    }

    #[test]
    fn x10_and_utf8_encode_coordinates_as_characters() {
        let none = Modifiers::NONE;
        let x10 = modes(MouseTracking::Clicks, MouseEncoding::X10);
        let press = encode_mouse(MouseAction::Press(MouseButton::Left), 0, 1, none, x10);
        assert_eq!(press.as_deref(), Some(&b"\x1b[M !\""[..]));
        let release = encode_mouse(MouseAction::Release(MouseButton::Left), 0, 1, none, x10);
        assert_eq!(release.as_deref(), Some(&b"\x1b[M#!\""[..]));
        // Past column 223 X10 has no byte for it; UTF-8 does.
        assert_eq!(encode_mouse(MouseAction::Press(MouseButton::Left), 300, 0, none, x10), None);
        let utf8 = modes(MouseTracking::Clicks, MouseEncoding::Utf8);
        let far = encode_mouse(MouseAction::Press(MouseButton::Left), 300, 0, none, utf8).unwrap();
        assert_eq!(String::from_utf8(far).unwrap(), "\x1b[M \u{14d}!");
    }
}
