//! winit's key events to the bytes a program in the focused pane receives.

use winit::event::{ElementState, KeyEvent};
use winit::keyboard::{Key as WinitKey, ModifiersState, NamedKey};

use crate::input::{encode_key, InputModes, Key, Modifiers};

/// A press as a chord for key bindings: a named key, or a character typed with Ctrl or Alt.
pub fn chord_of(event: &KeyEvent, mods: ModifiersState) -> Option<(Key, Modifiers)> {
    if event.state != ElementState::Pressed {
        return None;
    }
    let modifiers =
        Modifiers { shift: mods.shift_key(), alt: mods.alt_key(), ctrl: mods.control_key() };
    let key = match &event.logical_key {
        WinitKey::Named(name) => match name {
            NamedKey::Enter => Key::Enter,
            NamedKey::Tab => Key::Tab,
            NamedKey::ArrowUp => Key::Up,
            NamedKey::ArrowDown => Key::Down,
            NamedKey::ArrowLeft => Key::Left,
            NamedKey::ArrowRight => Key::Right,
            NamedKey::PageUp => Key::PageUp,
            NamedKey::PageDown => Key::PageDown,
            other => Key::F(function_key(other)?),
        },
        WinitKey::Character(text) if modifiers.ctrl || modifiers.alt => {
            Key::Char(text.chars().next()?.to_ascii_lowercase())
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
    let modifiers =
        Modifiers { shift: mods.shift_key(), alt: mods.alt_key(), ctrl: mods.control_key() };
    let named = |key: Key| Some(encode_key(key, modifiers, modes));
    match &event.logical_key {
        WinitKey::Named(name) => match name {
            NamedKey::Enter => named(Key::Enter),
            NamedKey::Tab => named(Key::Tab),
            NamedKey::Backspace => named(Key::Backspace),
            NamedKey::Escape => named(Key::Escape),
            NamedKey::ArrowUp => named(Key::Up),
            NamedKey::ArrowDown => named(Key::Down),
            NamedKey::ArrowLeft => named(Key::Left),
            NamedKey::ArrowRight => named(Key::Right),
            NamedKey::Home => named(Key::Home),
            NamedKey::End => named(Key::End),
            NamedKey::Insert => named(Key::Insert),
            NamedKey::Delete => named(Key::Delete),
            NamedKey::PageUp => named(Key::PageUp),
            NamedKey::PageDown => named(Key::PageDown),
            NamedKey::Space => named(Key::Char(' ')),
            other => function_key(other).and_then(|n| named(Key::F(n))),
        },
        // With Ctrl or Alt the key is a chord (C-c, M-x); without, the text it types.
        WinitKey::Character(text) if modifiers.ctrl || modifiers.alt => {
            let c = text.chars().next()?;
            let c = if modifiers.shift { c } else { c.to_lowercase().next().unwrap_or(c) };
            named(Key::Char(c))
        }
        _ => event.text.as_ref().map(|t| t.as_bytes().to_vec()).filter(|b| !b.is_empty()),
    }
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
