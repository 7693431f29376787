//! One pane's activity counters: written by its PTY reader (and its input path) with atomics,
//! read by the sampler a few times a second. Only the latest notification's text sits behind a
//! lock, taken when a notification arrives or the sampler sees the count change.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::term::Signals;

/// Millisecond stamps are stored plus one, so that zero means "never".
const NEVER: u64 = 0;

#[derive(Debug)]
pub struct Activity {
    epoch: Instant,
    bytes_out: AtomicU64,
    last_typed: AtomicU64,
    bells: AtomicU64,
    /// Notifications from the program (its model's count) and from `paddock ctl notify`.
    model_notifications: AtomicU64,
    ctl_notifications: AtomicU64,
    prompts: AtomicU64,
    output_ended: AtomicBool,
    last_notification: Mutex<Option<String>>,
}

/// What the counters say at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counters {
    pub bytes_out: u64,
    pub last_typed: Option<Duration>,
    pub bells: u64,
    pub notifications: u64,
    pub last_notification: Option<String>,
    pub prompts: u64,
    pub output_ended: bool,
}

impl Activity {
    /// Counters whose times count from `epoch` (the sampler's clock).
    pub fn new(epoch: Instant) -> Activity {
        Activity {
            epoch,
            bytes_out: AtomicU64::new(0),
            last_typed: AtomicU64::new(NEVER),
            bells: AtomicU64::new(0),
            model_notifications: AtomicU64::new(0),
            ctl_notifications: AtomicU64::new(0),
            prompts: AtomicU64::new(0),
            output_ended: AtomicBool::new(false),
            last_notification: Mutex::new(None),
        }
    }

    fn stamp(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64 + 1
    }

    /// The reader parsed `bytes` of output; `signals` are its model's running counts.
    pub fn output(&self, bytes: usize, signals: &Signals) {
        self.bytes_out.fetch_add(bytes as u64, Ordering::Relaxed);
        self.bells.store(signals.bells, Ordering::Relaxed);
        self.prompts.store(signals.prompts, Ordering::Relaxed);
        if self.model_notifications.swap(signals.notifications, Ordering::Relaxed)
            != signals.notifications
        {
            *self.text() = signals.last_notification.clone();
        }
    }

    /// The program's output ended (it exited, or closed the terminal).
    pub fn ended(&self) {
        self.output_ended.store(true, Ordering::Relaxed);
    }

    /// Someone typed into the pane.
    pub fn typed(&self) {
        self.last_typed.store(self.stamp(), Ordering::Relaxed);
    }

    /// `paddock ctl notify`: the pane asks for its user, saying `text`.
    pub fn notify(&self, text: &str) {
        *self.text() = Some(text.to_owned());
        self.ctl_notifications.fetch_add(1, Ordering::Relaxed);
    }

    fn text(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.last_notification.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn read(&self) -> Counters {
        let time = |stamp: &AtomicU64| match stamp.load(Ordering::Relaxed) {
            NEVER => None,
            ms => Some(Duration::from_millis(ms - 1)),
        };
        Counters {
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
            last_typed: time(&self.last_typed),
            bells: self.bells.load(Ordering::Relaxed),
            notifications: self.model_notifications.load(Ordering::Relaxed)
                + self.ctl_notifications.load(Ordering::Relaxed),
            last_notification: self.text().clone(),
            prompts: self.prompts.load(Ordering::Relaxed),
            output_ended: self.output_ended.load(Ordering::Relaxed),
        }
    }
}
