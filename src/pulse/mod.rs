//! The pulse: what each pane's program is doing right now. Its PTY reader counts output,
//! bells, notifications and prompts without locks (`activity`); one sampler thread reads those
//! and the CPU of each pane's process tree (`cpu`) a few times a second, looks at the screens
//! that changed (`rules`: text that means a program waits for a person), decides each pane's
//! state (`state`: working, quiet, needs you, exited) and publishes immutable snapshots
//! (`sampler`) that the window and `paddock ls` read without waiting.

pub mod activity;
pub mod cpu;
pub mod rules;
pub mod sampler;
pub mod state;

pub use activity::Activity;
pub use rules::{Rules, DEFAULT_RULES};
pub use sampler::{level_step, PanePulse, Sampler, Snapshot, Watch};
pub use state::{PulseState, Reason, Thresholds};
