//! The vte `Perform` implementation: routes parsed actions to `State` primitives.
//!
//! C0 controls and ESC sequences are handled here; CSI, SGR and OSC have a module each. Unknown
//! or malformed sequences are ignored, never answered and never fatal.

use vte::{Params, Perform};

use super::cursor::Charset;
use super::events::TermEvent;
use super::fast_csi::Csi;
use super::modes::Modes;
use super::state::State;
use super::{csi, osc};

impl Perform for State {
    // Inlined into vte's ground-state loop: this runs once per printed character.
    #[inline(always)]
    fn print(&mut self, c: char) {
        State::print(self, c);
    }

    // The parser asks before every step that is not a stretch of text (each byte of an escape
    // sequence, whether or not it ends in a call), and before the text after one: whatever it
    // read there ends a clean run (`clean_run.rs`). It never stops the parser.
    #[inline(always)]
    fn terminated(&self) -> bool {
        self.clean_runs.end();
        false
    }

    fn execute(&mut self, byte: u8) {
        self.clean_runs.end();
        match byte {
            0x07 => self.outbox.event(TermEvent::Bell),
            0x08 => self.backspace(),
            0x09 => self.tab(),
            0x0a..=0x0c => {
                self.linefeed();
                if self.mode(Modes::LINEFEED_NEWLINE) {
                    self.carriage_return();
                }
            }
            0x0d => self.carriage_return(),
            0x0e => self.active.cursor.charsets.active = 1,
            0x0f => self.active.cursor.charsets.active = 0,
            _ => {}
        }
    }

    fn csi_dispatch(&mut self, params: &Params, intermediates: &[u8], ignore: bool, action: char) {
        if ignore || intermediates.len() > 2 {
            return;
        }
        csi::dispatch(self, params.iter(), intermediates, action);
    }

    fn esc_dispatch(&mut self, intermediates: &[u8], ignore: bool, byte: u8) {
        if ignore {
            return;
        }
        match (byte, intermediates) {
            (b'B' | b'0', [slot @ (b'(' | b')' | b'*' | b'+')]) => {
                let index = (slot - b'(') as usize;
                let charset = if byte == b'0' { Charset::DecSpecial } else { Charset::Ascii };
                self.active.cursor.charsets.slots[index] = charset;
            }
            (b'D', []) => self.linefeed(),
            (b'E', []) => {
                self.linefeed();
                self.carriage_return();
            }
            (b'H', []) => self.tabs.set(self.active.cursor.col, true),
            (b'M', []) => self.reverse_index(),
            (b'Z', []) => csi::primary_device_attributes(self),
            (b'c', []) => self.full_reset(),
            (b'7', []) => self.save_cursor(),
            (b'8', []) => self.restore_cursor(),
            (b'8', [b'#']) => self.screen_alignment_test(),
            (b'=', []) => self.modes.flags.set(Modes::APP_KEYPAD, true),
            (b'>', []) => self.modes.flags.set(Modes::APP_KEYPAD, false),
            _ => {}
        }
    }

    fn osc_dispatch(&mut self, params: &[&[u8]], bell_terminated: bool) {
        osc::dispatch(self, params, bell_terminated);
    }

    // DCS strings (DECRQSS, sixel) are not interpreted: they are consumed by the parser and
    // have no effect. tmux's passthrough (`ESC P tmux;` then a sequence with its ESCs doubled)
    // ends at its first ESC, and the sequence after is parsed as if sent directly: so a
    // notification from a program under tmux is raised, counted and starred as a direct one
    // (redact_tests.rs), and no sequence does more wrapped than it would plain.
    fn hook(&mut self, _: &Params, _: &[u8], _: bool, _: char) {}
    fn put(&mut self, _: u8) {}
    fn unhook(&mut self) {}
}

/// A sequence the parser's fast path read (`parser.rs`): dispatched as vte would have
/// dispatched it, with no intermediates.
#[inline(always)]
pub(super) fn csi(state: &mut State, csi: &Csi) {
    csi::dispatch(state, csi.groups(), &[], char::from(csi.action));
}
