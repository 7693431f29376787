//! How often the window draws: at most once per refresh of its display.
//!
//! Where presenting waits for the display (a GPU with FIFO presentation), frames never come
//! faster than that anyway. Where it does not (a software renderer handing its image to the X
//! server, or Xvfb), output arriving every few milliseconds had the window draw 100 frames a
//! second on a 60 Hz display, each one all CPU on llvmpipe, for pictures nobody could see. A
//! frame asked for within a refresh of the last one is drawn when that refresh is over; one
//! asked for later (a key's echo after a pause) is drawn at once.

use std::time::{Duration, Instant};

/// The refresh assumed where the display does not say its own and presenting does not wait
/// for it (a software renderer).
const DEFAULT_MILLIHERTZ: u32 = 60_000;
/// Refresh rates taken as they are said; outside these, the display's report is not believed.
const SLOWEST_MILLIHERTZ: u32 = 24_000;
const FASTEST_MILLIHERTZ: u32 = 500_000;

/// When the window last drew, and the shortest time between two frames.
#[derive(Debug)]
pub struct FramePacer {
    /// `None`: frames are not held (a display of unknown rate whose presenting waits for it).
    interval: Option<Duration>,
    last: Option<Instant>,
}

impl FramePacer {
    /// A pacer for a display refreshing `millihertz` times a thousand seconds, when it says;
    /// where it does not, `software` renderers are held to 60 Hz and others not at all (their
    /// presenting waits for the display, whose rate may be higher).
    pub fn new(millihertz: Option<u32>, software: bool) -> FramePacer {
        let said = millihertz.filter(|mhz| (SLOWEST_MILLIHERTZ..=FASTEST_MILLIHERTZ).contains(mhz));
        let millihertz = said.or(software.then_some(DEFAULT_MILLIHERTZ));
        let interval =
            millihertz.map(|mhz| Duration::from_nanos(1_000_000_000_000 / u64::from(mhz)));
        FramePacer { interval, last: None }
    }

    /// The display's rate, said again (the window moved to another display, or it is known
    /// only now); the last frame's time is kept.
    pub fn set_rate(&mut self, millihertz: Option<u32>, software: bool) {
        let last = self.last;
        *self = FramePacer { last, ..FramePacer::new(millihertz, software) };
    }

    /// `None` when a frame may be drawn at `now`, else when it may.
    pub fn held_until(&self, now: Instant) -> Option<Instant> {
        let due = self.last? + self.interval?;
        (now < due).then_some(due)
    }

    /// A frame was drawn at `at`.
    pub fn drawn(&mut self, at: Instant) {
        self.last = Some(at);
    }

    #[cfg(test)]
    fn interval(&self) -> Option<Duration> {
        self.interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_frame_and_one_after_a_pause_are_drawn_at_once() {
        let mut pacer = FramePacer::new(Some(60_000), false);
        let start = Instant::now();
        assert_eq!(pacer.held_until(start), None, "nothing drawn yet");
        pacer.drawn(start);
        let later = start + Duration::from_millis(40);
        assert_eq!(pacer.held_until(later), None, "a key's echo after a pause waits for nothing");
    }

    #[test]
    fn a_frame_within_a_refresh_of_the_last_waits_for_its_end() {
        let mut pacer = FramePacer::new(Some(60_000), false);
        let start = Instant::now();
        pacer.drawn(start);
        let soon = start + Duration::from_millis(4);
        let due = pacer.held_until(soon).expect("held");
        assert_eq!(Some(due - start), pacer.interval());
        assert!(due - start > Duration::from_millis(16) && due - start < Duration::from_millis(17));
        assert_eq!(pacer.held_until(due), None, "drawn once the refresh is over");
    }

    #[test]
    fn the_displays_own_rate_is_used_to_the_millihertz() {
        let fast = FramePacer::new(Some(144_000), false);
        assert_eq!(fast.interval(), Some(Duration::from_nanos(1_000_000_000 / 144)));
        // 59.94 Hz is not 59: a frame held past the refresh would miss it.
        let ntsc = FramePacer::new(Some(59_940), true);
        assert_eq!(ntsc.interval(), Some(Duration::from_nanos(1_000_000_000_000 / 59_940)));
    }

    #[test]
    fn an_unknown_rate_holds_only_a_software_renderer_and_to_60_hz() {
        for unbelievable in [None, Some(0), Some(1_000), Some(10_000_000)] {
            let software = FramePacer::new(unbelievable, true);
            let sixty = Some(Duration::from_nanos(1_000_000_000_000 / 60_000));
            assert_eq!(software.interval(), sixty, "{unbelievable:?}");
            let gpu = FramePacer::new(unbelievable, false);
            assert_eq!(gpu.interval(), None, "{unbelievable:?}");
        }
        let mut pacer = FramePacer::new(None, false);
        let start = Instant::now();
        pacer.drawn(start);
        assert_eq!(pacer.held_until(start + Duration::from_millis(1)), None);
        // The display's rate becomes known (a Wayland surface entered its output).
        pacer.set_rate(Some(120_000), false);
        assert!(pacer.held_until(start + Duration::from_millis(1)).is_some());
    }
}
