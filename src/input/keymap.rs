//! Key chords that act on the multiplexer instead of going to a pane: one table names every
//! action, its default chord and what it does; the README's table is generated from it (a test
//! keeps the two equal), and the configuration rebinds chords by these names.

use super::encode::{Key, Modifiers};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    NewTab,
    ClosePane,
    SplitRight,
    SplitDown,
    FocusLeft,
    FocusRight,
    FocusUp,
    FocusDown,
    ZoomPane,
    NextTab,
    PreviousTab,
    FontBigger,
    FontSmaller,
    FontReset,
    Copy,
    Paste,
    ScrollPageUp,
    ScrollPageDown,
    ScrollTop,
    ScrollBottom,
    Search,
    RestartThread,
    AllowClipboard,
    AllowHost,
    ApproveProgram,
    NextWaiting,
    MutePane,
    Detach,
    NewWindow,
}

/// Every action: (action, name, default chord, what it does).
pub const ACTIONS: &[(Action, &str, &str, &str)] = &[
    (Action::NewTab, "new_tab", "Ctrl+Shift+T", "open a tab running $SHELL"),
    (
        Action::ClosePane,
        "close_pane",
        "Ctrl+Shift+W",
        "close the focused pane (hang up its programs)",
    ),
    (
        Action::SplitRight,
        "split_right",
        "Ctrl+Shift+E",
        "split the focused pane, new pane on the right",
    ),
    (Action::SplitDown, "split_down", "Ctrl+Shift+O", "split the focused pane, new pane below"),
    (Action::FocusLeft, "focus_left", "Ctrl+Shift+Left", "focus the pane to the left"),
    (Action::FocusRight, "focus_right", "Ctrl+Shift+Right", "focus the pane to the right"),
    (Action::FocusUp, "focus_up", "Ctrl+Shift+Up", "focus the pane above"),
    (Action::FocusDown, "focus_down", "Ctrl+Shift+Down", "focus the pane below"),
    (
        Action::ZoomPane,
        "zoom_pane",
        "Ctrl+Shift+Z",
        "show the focused pane alone, or all panes again",
    ),
    (Action::NextTab, "next_tab", "Ctrl+PageDown", "activate the next tab"),
    (Action::PreviousTab, "previous_tab", "Ctrl+PageUp", "activate the previous tab"),
    (Action::FontBigger, "font_bigger", "Ctrl+=", "make the font one point bigger"),
    (Action::FontSmaller, "font_smaller", "Ctrl+-", "make the font one point smaller"),
    (Action::FontReset, "font_reset", "Ctrl+0", "back to the configured font size"),
    (Action::Copy, "copy", "Ctrl+Shift+C", "copy the selection to the clipboard"),
    (
        Action::Paste,
        "paste",
        "Ctrl+Shift+V",
        "paste the clipboard into the focused pane (bracketed when the program asks)",
    ),
    (Action::ScrollPageUp, "scroll_page_up", "Shift+PageUp", "scroll back one page"),
    (Action::ScrollPageDown, "scroll_page_down", "Shift+PageDown", "scroll forward one page"),
    (Action::ScrollTop, "scroll_top", "Shift+Home", "scroll to the oldest line kept"),
    (Action::ScrollBottom, "scroll_bottom", "Shift+End", "back to the program's screen"),
    (
        Action::Search,
        "search",
        "Ctrl+Shift+F",
        "search the scrollback: type, Enter for older, Shift+Enter for newer, Escape to close",
    ),
    (
        Action::RestartThread,
        "restart_thread",
        "Ctrl+Shift+R",
        "start the focused thread again as the configuration defines it now",
    ),
    (
        Action::AllowClipboard,
        "allow_clipboard",
        "Ctrl+Shift+Y",
        "let the focused pane's held clipboard write through (a thread with `clipboard: Ask`)",
    ),
    (
        Action::AllowHost,
        "allow_host",
        "Ctrl+Shift+N",
        "let the host the focused pane's network allow-list last refused through, for that pane until it closes",
    ),
    (
        Action::ApproveProgram,
        "approve_program",
        "Ctrl+Shift+P",
        "approve again the pinned program the focused pane's secret was withheld from because it changed (the title strip shows both fingerprints), then restart the pane",
    ),
    (
        Action::NextWaiting,
        "next_waiting",
        "Ctrl+Shift+J",
        "jump to the pane that has waited for you longest, in any tab",
    ),
    (
        Action::MutePane,
        "mute_pane",
        "Ctrl+Shift+M",
        "mute the focused pane (it never notifies or counts as waiting), or unmute it",
    ),
    (
        Action::Detach,
        "detach",
        "Ctrl+Shift+Q",
        "close this window and leave every pane running in the paddock server (`paddock attach` shows them again)",
    ),
    (
        Action::NewWindow,
        "new_window",
        "Ctrl+Shift+K",
        "open another window on the same paddock server, with its own tab, focus and scroll",
    ),
];

/// A key with its modifiers, as a binding names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chord {
    pub key: Key,
    pub mods: Modifiers,
}

impl std::fmt::Display for Chord {
    /// As bindings write it: `Ctrl+Shift+T`, `Ctrl+PageDown`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (on, name) in
            [(self.mods.ctrl, "Ctrl+"), (self.mods.alt, "Alt+"), (self.mods.shift, "Shift+")]
        {
            if on {
                f.write_str(name)?;
            }
        }
        match self.key {
            Key::Char(' ') => f.write_str("Space"),
            Key::Char(c) => write!(f, "{}", c.to_ascii_uppercase()),
            Key::F(n) => write!(f, "F{n}"),
            other => write!(f, "{other:?}"),
        }
    }
}

/// Parse `Ctrl+Shift+T`, `Ctrl+PageDown`, `Alt+F5`: modifiers, then one key (a character or a
/// key name as in key specs: Left, PageUp, Enter, F1…).
pub fn parse_chord(text: &str) -> Option<Chord> {
    let mut mods = Modifiers::NONE;
    let mut parts = text.split('+').peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            let key = super::keys::key_name(part).or_else(|| {
                let mut chars = part.chars();
                let c = chars.next()?;
                chars.next().is_none().then(|| Key::Char(c.to_ascii_lowercase()))
            })?;
            return Some(Chord { key, mods });
        }
        match part {
            "Ctrl" => mods.ctrl = true,
            "Alt" => mods.alt = true,
            "Shift" => mods.shift = true,
            _ => return None,
        }
    }
    None
}

/// The action named `name` in the table (`new_tab`).
pub fn action_named(name: &str) -> Option<Action> {
    ACTIONS.iter().find(|(_, n, _, _)| *n == name).map(|(action, ..)| *action)
}

/// The name of `action` in the table.
pub fn action_name(action: Action) -> &'static str {
    ACTIONS.iter().find(|(a, ..)| *a == action).map_or("", |(_, name, _, _)| name)
}

/// Which chord does what: the defaults of [`ACTIONS`], as the configuration changed them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyBindings {
    /// Every action, with its chord or `None` when unbound.
    bound: Vec<(Action, Option<Chord>)>,
}

impl Default for KeyBindings {
    fn default() -> KeyBindings {
        let bound = ACTIONS.iter().map(|(action, _, chord, _)| (*action, parse_chord(chord)));
        KeyBindings { bound: bound.collect() }
    }
}

impl KeyBindings {
    /// Bind `action` to `chord` (`None`: no chord).
    pub fn bind(&mut self, action: Action, chord: Option<Chord>) {
        if let Some(entry) = self.bound.iter_mut().find(|(a, _)| *a == action) {
            entry.1 = chord;
        }
    }

    pub fn chord_of(&self, action: Action) -> Option<Chord> {
        self.bound.iter().find(|(a, _)| *a == action).and_then(|(_, chord)| *chord)
    }

    /// The action bound to a key press, if any. Letters match whatever their case (Shift is a
    /// modifier of the chord, not of the letter).
    pub fn action_for(&self, key: Key, mods: Modifiers) -> Option<Action> {
        let key = normalize(key);
        self.bound.iter().find_map(|(action, chord)| {
            let chord = (*chord)?;
            (chord.key == key && chord.mods == mods).then_some(*action)
        })
    }

    /// Another action already bound to `chord`.
    pub fn bound_to(&self, chord: Chord, except: Action) -> Option<Action> {
        let chord = Chord { key: normalize(chord.key), mods: chord.mods };
        self.bound
            .iter()
            .find(|(a, c)| *a != except && *c == Some(chord))
            .map(|(action, _)| *action)
    }
}

fn normalize(key: Key) -> Key {
    match key {
        Key::Char(c) => Key::Char(c.to_ascii_lowercase()),
        other => other,
    }
}

/// The action bound to a key press by default.
#[cfg(test)]
fn action_for(key: Key, mods: Modifiers) -> Option<Action> {
    KeyBindings::default().action_for(key, mods)
}

/// The README's table of key bindings.
pub fn binding_table() -> String {
    let mut out = String::from("| action | keys | what it does |\n| --- | --- | --- |\n");
    for (_, name, chord, what) in ACTIONS {
        out.push_str(&format!("| `{name}` | {chord} | {what} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_chord_parses_and_finds_its_action() {
        for (action, name, chord, _) in ACTIONS {
            let parsed = parse_chord(chord).unwrap_or_else(|| panic!("{name}: {chord}"));
            assert_eq!(action_for(parsed.key, parsed.mods), Some(*action), "{name}");
        }
    }

    #[test]
    fn letters_match_in_either_case_and_plain_keys_are_not_actions() {
        let ctrl_shift = Modifiers { ctrl: true, shift: true, alt: false };
        assert_eq!(action_for(Key::Char('T'), ctrl_shift), Some(Action::NewTab));
        assert_eq!(action_for(Key::Char('t'), Modifiers { ctrl: true, ..Modifiers::NONE }), None);
        assert_eq!(action_for(Key::Char('e'), Modifiers::NONE), None);
        assert_eq!(action_for(Key::Left, ctrl_shift), Some(Action::FocusLeft));
        assert_eq!(parse_chord("Hyper+T"), None);
        assert_eq!(parse_chord("Ctrl+"), None);
    }

    #[test]
    fn chords_print_as_they_are_written() {
        for (_, _, chord, _) in ACTIONS {
            let parsed = parse_chord(chord).expect("parses");
            assert_eq!(parsed.to_string(), *chord);
            assert_eq!(parse_chord(&parsed.to_string()), Some(parsed));
        }
    }

    #[test]
    fn no_two_actions_share_a_chord() {
        for (i, (_, a, chord_a, _)) in ACTIONS.iter().enumerate() {
            for (_, b, chord_b, _) in &ACTIONS[i + 1..] {
                assert_ne!(parse_chord(chord_a), parse_chord(chord_b), "{a} and {b}");
            }
        }
    }
}
