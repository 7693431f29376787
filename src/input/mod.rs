//! Input for panes: keys and pastes to the bytes a program expects.
//!
//! Pure: no window, no PTY. The window (and the control socket's `send`) turn their events into
//! `Key`s and hand the bytes from here to a pane's writer.

pub mod encode;
pub mod keymap;
pub mod keys;
pub mod mouse;

pub use encode::{encode_key, encode_paste, InputModes, Key, Modifiers};
pub use keymap::{Action, Chord, KeyBindings};
pub use keys::{parse_keys, KeySpecError};
pub use mouse::{encode_mouse, MouseAction, MouseButton};
