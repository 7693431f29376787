//! Terminal modes set by SM/RM and DECSET/DECRST, as one bit set.

/// Which mouse events the program asked to receive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MouseTracking {
    #[default]
    Off,
    /// 1000: button presses and releases.
    Clicks,
    /// 1002: presses, releases and motion while a button is held.
    Drag,
    /// 1003: all motion.
    Motion,
}

/// How mouse reports are encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MouseEncoding {
    #[default]
    X10,
    /// 1005
    Utf8,
    /// 1006
    Sgr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Modes(u32);

impl Modes {
    pub(super) fn bits(self) -> u32 {
        self.0
    }

    pub(super) fn from_bits(bits: u32) -> Modes {
        Modes(bits)
    }

    /// DECCKM (?1): cursor keys send application sequences.
    pub const APP_CURSOR: Modes = Modes(1);
    /// DECKPAM / DECKPNM: keypad sends application sequences.
    pub const APP_KEYPAD: Modes = Modes(1 << 1);
    /// DECOM (?6): cursor addressing is relative to the scroll region.
    pub const ORIGIN: Modes = Modes(1 << 2);
    /// DECAWM (?7): printing past the last column wraps.
    pub const AUTOWRAP: Modes = Modes(1 << 3);
    /// DECTCEM (?25)
    pub const SHOW_CURSOR: Modes = Modes(1 << 4);
    /// ?12
    pub const BLINKING_CURSOR: Modes = Modes(1 << 5);
    /// IRM (4): printing shifts the rest of the line right.
    pub const INSERT: Modes = Modes(1 << 6);
    /// LNM (20): line feed also returns the carriage.
    pub const LINEFEED_NEWLINE: Modes = Modes(1 << 7);
    /// ?2004
    pub const BRACKETED_PASTE: Modes = Modes(1 << 8);
    /// ?1004
    pub const FOCUS_EVENTS: Modes = Modes(1 << 9);
    /// ?2026: the program is redrawing; renderers hold the last complete frame.
    pub const SYNCHRONIZED_OUTPUT: Modes = Modes(1 << 10);
    /// ?1007: the wheel sends arrow keys on the alternate screen.
    pub const ALTERNATE_SCROLL: Modes = Modes(1 << 11);
    /// Showing the alternate screen (?47, ?1047, ?1049).
    pub const ALT_SCREEN: Modes = Modes(1 << 12);
    /// DECSCNM (?5): reverse video for the whole screen.
    pub const REVERSE_VIDEO: Modes = Modes(1 << 13);
    /// ?1042: ring the urgency hint on bell.
    pub const URGENCY_HINTS: Modes = Modes(1 << 14);

    #[inline]
    pub const fn contains(self, other: Modes) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn set(&mut self, other: Modes, on: bool) {
        if on {
            self.0 |= other.0
        } else {
            self.0 &= !other.0
        }
    }
}

impl Default for Modes {
    fn default() -> Self {
        Modes(Modes::AUTOWRAP.0 | Modes::SHOW_CURSOR.0 | Modes::ALTERNATE_SCROLL.0)
    }
}

/// The mode state a program can set and query, including the multi-valued mouse modes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModeState {
    pub flags: Modes,
    pub mouse: MouseTracking,
    pub mouse_encoding: MouseEncoding,
}
