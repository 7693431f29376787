//! winit's key events to chords (for key bindings) and to the bytes a program in the focused
//! pane receives.

use winit::event::{ElementState, KeyEvent};
use winit::keyboard::{Key as WinitKey, ModifiersState, NamedKey};

use crate::input::{encode_key, InputModes, Key, Modifiers};

/// A press as a chord: a named key, or a character typed with Ctrl or Alt (C-c, M-x). Plain
/// typing is not a chord: it goes to the pane as the text it produces.
pub fn chord_of(event: &KeyEvent, mods: ModifiersState) -> Option<(Key, Modifiers)> {
    if event.state != ElementState::Pressed {
        return None;
    }
    let modifiers =
        Modifiers { shift: mods.shift_key(), alt: mods.alt_key(), ctrl: mods.control_key() };
    let key = match &event.logical_key {
        WinitKey::Named(name) => named(name)?,
        WinitKey::Character(text) if modifiers.ctrl || modifiers.alt => {
            let c = text.chars().next()?;
            Key::Char(if modifiers.shift { c } else { c.to_lowercase().next().unwrap_or(c) })
        }
        _ => return None,
    };
    Some((key, modifiers))
}

/// The bytes for a key press, or `None` when it sends nothing (releases, lone modifiers).
pub fn key_bytes(event: &KeyEvent, mods: ModifiersState, modes: InputModes) -> Option<Vec<u8>> {
    if event.state != ElementState::Pressed {
        return None;
    }
    match chord_of(event, mods) {
        Some((key, modifiers)) => Some(encode_key(key, modifiers, modes)),
        None => event.text.as_ref().map(|t| t.as_bytes().to_vec()).filter(|b| !b.is_empty()),
    }
}

fn named(name: &NamedKey) -> Option<Key> {
    Some(match name {
        NamedKey::Enter => Key::Enter,
        NamedKey::Tab => Key::Tab,
        NamedKey::Backspace => Key::Backspace,
        NamedKey::Escape => Key::Escape,
        NamedKey::ArrowUp => Key::Up,
        NamedKey::ArrowDown => Key::Down,
        NamedKey::ArrowLeft => Key::Left,
        NamedKey::ArrowRight => Key::Right,
        NamedKey::Home => Key::Home,
        NamedKey::End => Key::End,
        NamedKey::Insert => Key::Insert,
        NamedKey::Delete => Key::Delete,
        NamedKey::PageUp => Key::PageUp,
        NamedKey::PageDown => Key::PageDown,
        NamedKey::Space => Key::Char(' '),
        other => Key::F(function_key(other)?),
    })
}

fn function_key(name: &NamedKey) -> Option<u8> {
    let keys = [
        NamedKey::F1,
        NamedKey::F2,
        NamedKey::F3,
        NamedKey::F4,
        NamedKey::F5,
        NamedKey::F6,
        NamedKey::F7,
        NamedKey::F8,
        NamedKey::F9,
        NamedKey::F10,
        NamedKey::F11,
        NamedKey::F12,
    ];
    keys.iter().position(|k| k == name).map(|i| i as u8 + 1)
}
