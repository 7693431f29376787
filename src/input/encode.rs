//! Keys to bytes, as xterm sends them, and bracketed paste.
//!
//! Pure: a key with its modifiers and the terminal's input modes in, bytes for the PTY out.
//! Modified special keys use xterm's `CSI 1 ; m X` / `CSI n ; m ~` forms, where
//! m = 1 + shift + 2·alt + 4·ctrl.

/// A key, independent of any windowing library.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Tab,
    Backspace,
    Escape,
    Up,
    Down,
    Right,
    Left,
    Home,
    End,
    Insert,
    Delete,
    PageUp,
    PageDown,
    /// F1–F12.
    F(u8),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Modifiers {
    pub shift: bool,
    pub alt: bool,
    pub ctrl: bool,
}

impl Modifiers {
    pub const NONE: Modifiers = Modifiers { shift: false, alt: false, ctrl: false };

    /// xterm's modifier parameter, or `None` without modifiers.
    fn param(self) -> Option<u8> {
        let m = u8::from(self.shift) + 2 * u8::from(self.alt) + 4 * u8::from(self.ctrl);
        (m > 0).then_some(m + 1)
    }
}

/// The input modes of the terminal that change what keys send.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InputModes {
    /// DECCKM: cursor keys send `ESC O x`.
    pub app_cursor: bool,
}

/// The bytes `key` sends; empty for keys that send nothing (F13 and up).
pub fn encode_key(key: Key, mods: Modifiers, modes: InputModes) -> Vec<u8> {
    let m = mods.param();
    let cursor = |letter: u8| match m {
        Some(m) => format!("\x1b[1;{m}{}", letter as char).into_bytes(),
        None if modes.app_cursor => vec![0x1b, b'O', letter],
        None => vec![0x1b, b'[', letter],
    };
    let tilde = |n: u8| match m {
        Some(m) => format!("\x1b[{n};{m}~").into_bytes(),
        None => format!("\x1b[{n}~").into_bytes(),
    };
    let alt = |bytes: Vec<u8>| if mods.alt { [&[0x1b][..], &bytes].concat() } else { bytes };
    match key {
        Key::Up => cursor(b'A'),
        Key::Down => cursor(b'B'),
        Key::Right => cursor(b'C'),
        Key::Left => cursor(b'D'),
        Key::Home => cursor(b'H'),
        Key::End => cursor(b'F'),
        Key::Insert => tilde(2),
        Key::Delete => tilde(3),
        Key::PageUp => tilde(5),
        Key::PageDown => tilde(6),
        Key::F(n @ 1..=4) => {
            let letter = b"PQRS"[n as usize - 1];
            match m {
                Some(m) => format!("\x1b[1;{m}{}", letter as char).into_bytes(),
                None => vec![0x1b, b'O', letter],
            }
        }
        Key::F(n @ 5..=12) => tilde([15, 17, 18, 19, 20, 21, 23, 24][n as usize - 5]),
        Key::F(_) => Vec::new(),
        Key::Enter => alt(vec![b'\r']),
        Key::Tab if mods.shift => b"\x1b[Z".to_vec(),
        Key::Tab => alt(vec![b'\t']),
        Key::Backspace if mods.ctrl => alt(vec![0x08]),
        Key::Backspace => alt(vec![0x7f]),
        Key::Escape => alt(vec![0x1b]),
        Key::Char(c) => {
            // Shift on a character is its capital (`S-a` types `A`); with Ctrl it changes nothing.
            let c = match (mods.shift, mods.ctrl) {
                (true, false) => c.to_uppercase().next().unwrap_or(c),
                _ => c,
            };
            alt(encode_char(c, mods.ctrl))
        }
    }
}

/// A character, with Ctrl folded into a C0 control where xterm does.
fn encode_char(c: char, ctrl: bool) -> Vec<u8> {
    if ctrl {
        let control = match c {
            'a'..='z' => Some(c as u8 - b'a' + 1),
            'A'..='Z' => Some(c as u8 - b'A' + 1),
            '@' | ' ' | '2' => Some(0),
            '[' | '3' => Some(0x1b),
            '\\' | '4' => Some(0x1c),
            ']' | '5' => Some(0x1d),
            '^' | '6' => Some(0x1e),
            '_' | '7' | '/' => Some(0x1f),
            '?' | '8' => Some(0x7f),
            _ => None,
        };
        if let Some(byte) = control {
            return vec![byte];
        }
    }
    c.to_string().into_bytes()
}

/// Text for the PTY from a paste: wrapped in `ESC [200~` … `ESC [201~` when the program asked
/// for bracketed paste (with any end marker inside removed, so pasted text cannot end the
/// bracket early), and with newlines as carriage returns, as a typed Enter would send.
pub fn encode_paste(text: &str, bracketed: bool) -> Vec<u8> {
    let body = text.replace("\r\n", "\r").replace('\n', "\r");
    if !bracketed {
        return body.into_bytes();
    }
    let mut body = body;
    while body.contains("\x1b[201~") {
        body = body.replace("\x1b[201~", "");
    }
    format!("\x1b[200~{body}\x1b[201~").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHIFT: Modifiers = Modifiers { shift: true, alt: false, ctrl: false };
    const ALT: Modifiers = Modifiers { shift: false, alt: true, ctrl: false };
    const CTRL: Modifiers = Modifiers { shift: false, alt: false, ctrl: true };
    const CTRL_SHIFT: Modifiers = Modifiers { shift: true, alt: false, ctrl: true };

    #[test]
    fn keys_as_xterm_sends_them() {
        let normal = InputModes::default();
        let app = InputModes { app_cursor: true };
        let cases: &[(Key, Modifiers, InputModes, &[u8])] = &[
            (Key::Up, Modifiers::NONE, normal, b"\x1b[A"),
            (Key::Up, Modifiers::NONE, app, b"\x1bOA"),
            (Key::Left, CTRL, app, b"\x1b[1;5D"),
            (Key::Right, CTRL_SHIFT, normal, b"\x1b[1;6C"),
            (Key::Home, Modifiers::NONE, normal, b"\x1b[H"),
            (Key::End, Modifiers::NONE, app, b"\x1bOF"),
            (Key::End, SHIFT, normal, b"\x1b[1;2F"),
            (Key::Insert, Modifiers::NONE, normal, b"\x1b[2~"),
            (Key::Delete, ALT, normal, b"\x1b[3;3~"),
            (Key::PageUp, Modifiers::NONE, normal, b"\x1b[5~"),
            (Key::PageDown, CTRL, normal, b"\x1b[6;5~"),
            (Key::F(1), Modifiers::NONE, normal, b"\x1bOP"),
            (Key::F(4), SHIFT, normal, b"\x1b[1;2S"),
            (Key::F(5), Modifiers::NONE, normal, b"\x1b[15~"),
            (Key::F(12), CTRL, normal, b"\x1b[24;5~"),
            (Key::F(13), Modifiers::NONE, normal, b""),
            (Key::Enter, Modifiers::NONE, normal, b"\r"),
            (Key::Enter, ALT, normal, b"\x1b\r"),
            (Key::Tab, Modifiers::NONE, normal, b"\t"),
            (Key::Tab, SHIFT, normal, b"\x1b[Z"),
            (Key::Backspace, Modifiers::NONE, normal, b"\x7f"),
            (Key::Backspace, CTRL, normal, b"\x08"),
            (Key::Escape, Modifiers::NONE, normal, b"\x1b"),
            (Key::Char('a'), Modifiers::NONE, normal, b"a"),
            (Key::Char('c'), CTRL, normal, b"\x03"),
            (Key::Char('C'), CTRL_SHIFT, normal, b"\x03"),
            (Key::Char('['), CTRL, normal, b"\x1b"),
            (Key::Char(' '), CTRL, normal, b"\x00"),
            (Key::Char('?'), CTRL, normal, b"\x7f"),
            (Key::Char('x'), ALT, normal, b"\x1bx"),
            (Key::Char('é'), Modifiers::NONE, normal, "é".as_bytes()),
            (Key::Char('1'), CTRL, normal, b"1"),
            (Key::Char('a'), SHIFT, normal, b"A"),
            (Key::Char('x'), Modifiers { shift: true, alt: true, ctrl: false }, normal, b"\x1bX"),
        ];
        for (key, mods, modes, expected) in cases {
            assert_eq!(encode_key(*key, *mods, *modes), *expected, "{key:?} {mods:?} {modes:?}");
        }
    }

    #[test]
    fn paste_is_bracketed_and_cannot_break_out() {
        assert_eq!(encode_paste("a\nb", false), b"a\rb");
        assert_eq!(encode_paste("ls\r\n", true), b"\x1b[200~ls\r\x1b[201~");
        let hostile = "x\x1b[201~\x1b[2\x1b[201~01~rm -rf ~\n";
        let out = String::from_utf8(encode_paste(hostile, true)).unwrap();
        assert_eq!(out.matches("\x1b[201~").count(), 1, "{out:?}");
        assert!(out.ends_with("\x1b[201~"));
    }
}
