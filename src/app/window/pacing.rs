//! How often the window draws: at most once per refresh of its display.
//!
//! Where presenting waits for the display (a GPU with FIFO presentation), frames never come
//! faster than that anyway. Where it does not (a software renderer handing its image to the X
//! server, or Xvfb), output arriving every few milliseconds had the window draw 100 frames a
//! second on a 60 Hz display, each one all CPU on llvmpipe, for pictures nobody could see. A
//! frame asked for within a refresh of the last one is drawn when that refresh is over; one
//! asked for later (a key's echo after a pause) is drawn at once.

use std::time::{Duration, Instant};

/// The refresh assumed where the display does not say its own.
const DEFAULT_HZ: u32 = 60;
/// Refresh rates taken as they are said; outside these, the display's report is not believed.
const SLOWEST_HZ: u32 = 24;
const FASTEST_HZ: u32 = 500;

/// When the window last drew, and the shortest time between two frames.
#[derive(Debug)]
pub struct FramePacer {
    interval: Duration,
    last: Option<Instant>,
}

impl FramePacer {
    /// A pacer for a display refreshing `millihertz` times a thousand seconds, when it says.
    pub fn new(millihertz: Option<u32>) -> FramePacer {
        let hz = millihertz
            .map(|mhz| mhz / 1000)
            .filter(|hz| (SLOWEST_HZ..=FASTEST_HZ).contains(hz))
            .unwrap_or(DEFAULT_HZ);
        let interval = Duration::from_nanos(1_000_000_000 / u64::from(hz));
        FramePacer { interval, last: None }
    }

    /// `None` when a frame may be drawn at `now`, else when it may.
    pub fn held_until(&self, now: Instant) -> Option<Instant> {
        let due = self.last? + self.interval;
        (now < due).then_some(due)
    }

    /// A frame was drawn at `at`.
    pub fn drawn(&mut self, at: Instant) {
        self.last = Some(at);
    }

    #[cfg(test)]
    fn interval(&self) -> Duration {
        self.interval
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_frame_and_one_after_a_pause_are_drawn_at_once() {
        let mut pacer = FramePacer::new(Some(60_000));
        let start = Instant::now();
        assert_eq!(pacer.held_until(start), None, "nothing drawn yet");
        pacer.drawn(start);
        let later = start + Duration::from_millis(40);
        assert_eq!(pacer.held_until(later), None, "a key's echo after a pause waits for nothing");
    }

    #[test]
    fn a_frame_within_a_refresh_of_the_last_waits_for_its_end() {
        let mut pacer = FramePacer::new(Some(60_000));
        let start = Instant::now();
        pacer.drawn(start);
        let soon = start + Duration::from_millis(4);
        let due = pacer.held_until(soon).expect("held");
        assert_eq!(due - start, pacer.interval());
        assert!(pacer.interval() > Duration::from_millis(16));
        assert!(pacer.interval() < Duration::from_millis(17));
        assert_eq!(pacer.held_until(due), None, "drawn once the refresh is over");
    }

    #[test]
    fn the_displays_own_rate_is_used_and_a_rate_past_belief_is_not() {
        let fast = FramePacer::new(Some(144_000));
        assert_eq!(fast.interval(), Duration::from_nanos(1_000_000_000 / 144));
        for unbelievable in [None, Some(0), Some(1_000), Some(10_000_000)] {
            let pacer = FramePacer::new(unbelievable);
            assert_eq!(
                pacer.interval(),
                Duration::from_nanos(1_000_000_000 / 60),
                "{unbelievable:?}"
            );
        }
    }
}
