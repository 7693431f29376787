//! Key specs as scripts write them: `"echo hi Enter"`, `"C-c"`, `"M-x S-Tab F5"`.
//!
//! Words are separated by spaces. A word that names a key (optionally with `C-`, `M-`, `S-`
//! prefixes for Ctrl, Alt and Shift) is that key; any other word is typed as text, and words of
//! text next to each other keep one space between them, so `echo hi Enter` types `echo hi` and
//! presses Enter.

use thiserror::Error;

use super::encode::{Key, Modifiers};

#[derive(Debug, Error, PartialEq, Eq)]
pub enum KeySpecError {
    #[error("{0:?}: a modifier prefix needs a key after it (for example C-c or M-Enter)")]
    DanglingModifier(String),
    #[error(
        "{word:?}: {name:?} is not a key name (try Enter, Tab, Escape, Up, F5, or one character)"
    )]
    UnknownKey { word: String, name: String },
}

/// The key presses a spec stands for.
pub fn parse_keys(spec: &str) -> Result<Vec<(Key, Modifiers)>, KeySpecError> {
    let mut out = Vec::new();
    let mut last_was_text = false;
    for word in spec.split(' ').filter(|w| !w.is_empty()) {
        match parse_word(word)? {
            Some(press) => {
                out.push(press);
                last_was_text = false;
            }
            None => {
                if last_was_text {
                    out.push((Key::Char(' '), Modifiers::NONE));
                }
                out.extend(word.chars().map(|c| (Key::Char(c), Modifiers::NONE)));
                last_was_text = true;
            }
        }
    }
    Ok(out)
}

/// A named key with its modifiers, or `None` for a word of plain text.
fn parse_word(word: &str) -> Result<Option<(Key, Modifiers)>, KeySpecError> {
    let mut mods = Modifiers::NONE;
    let mut rest = word;
    let mut prefixed = false;
    while let Some((flag, tail)) = strip_modifier(rest) {
        match flag {
            'C' => mods.ctrl = true,
            'M' => mods.alt = true,
            _ => mods.shift = true,
        }
        rest = tail;
        prefixed = true;
    }
    if prefixed && rest.is_empty() {
        return Err(KeySpecError::DanglingModifier(word.to_owned()));
    }
    if let Some(key) = key_name(rest) {
        return Ok(Some((key, mods)));
    }
    let mut chars = rest.chars();
    match (chars.next(), chars.next(), prefixed) {
        (Some(c), None, true) => Ok(Some((Key::Char(c), mods))),
        (_, _, false) => Ok(None),
        _ => Err(KeySpecError::UnknownKey { word: word.to_owned(), name: rest.to_owned() }),
    }
}

fn strip_modifier(word: &str) -> Option<(char, &str)> {
    ['C', 'M', 'S'].into_iter().find_map(|flag| {
        word.strip_prefix(flag).and_then(|r| r.strip_prefix('-')).map(|rest| (flag, rest))
    })
}

/// A key by name (Enter, Tab, Up, PageDown, F5…), as key specs and key chords write it.
pub(super) fn key_name(name: &str) -> Option<Key> {
    Some(match name {
        "Enter" | "Return" => Key::Enter,
        "Tab" => Key::Tab,
        "BSpace" | "Backspace" => Key::Backspace,
        "Escape" | "Esc" => Key::Escape,
        "Space" => Key::Char(' '),
        "Up" => Key::Up,
        "Down" => Key::Down,
        "Left" => Key::Left,
        "Right" => Key::Right,
        "Home" => Key::Home,
        "End" => Key::End,
        "IC" | "Insert" => Key::Insert,
        "DC" | "Delete" => Key::Delete,
        "PageUp" | "PgUp" | "PPage" => Key::PageUp,
        "PageDown" | "PgDn" | "NPage" => Key::PageDown,
        _ => {
            let n: u8 = name.strip_prefix('F')?.parse().ok()?;
            return (1..=12).contains(&n).then_some(Key::F(n));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{encode_key, InputModes};

    fn bytes(spec: &str) -> Vec<u8> {
        parse_keys(spec)
            .expect("valid spec")
            .into_iter()
            .flat_map(|(k, m)| encode_key(k, m, InputModes::default()))
            .collect()
    }

    #[test]
    fn specs_to_bytes() {
        assert_eq!(bytes("echo hi Enter"), b"echo hi\r");
        assert_eq!(bytes("C-c"), b"\x03");
        assert_eq!(bytes("ls Space -la Enter"), b"ls -la\r");
        assert_eq!(bytes("M-x S-Tab F5 Up"), b"\x1bx\x1b[Z\x1b[15~\x1b[A");
        assert_eq!(bytes("C-M-a"), b"\x1b\x01");
        assert_eq!(bytes("S-a M-S-x"), b"A\x1bX");
        assert_eq!(bytes("  spaced   out  "), b"spaced out");
        assert_eq!(bytes("Centre"), b"Centre");
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        assert_eq!(parse_keys("C-"), Err(KeySpecError::DanglingModifier("C-".into())));
        let err = parse_keys("a C-Bogus").unwrap_err();
        assert_eq!(err, KeySpecError::UnknownKey { word: "C-Bogus".into(), name: "Bogus".into() });
        assert!(err.to_string().contains("not a key name"));
    }
}
