//! Panes that run real programs: a PTY child whose output feeds a terminal model.
//!
//! One reader thread per pane parses the child's output into the pane's `Terminal`, holding the
//! lock for one chunk at a time, and sends the model's replies (DA, DSR, …) back. One writer
//! thread per pane owns the PTY's input side, so a child that stops reading its stdin blocks
//! only that thread, never the caller or another pane. Closing a pane hangs up its whole
//! process group and kills it after a short grace period.

mod process;
mod reader;
mod session;

pub use session::{
    CgroupJoin, Locked, MaskCounts, Mirrored, PaneLock, PaneSession, PaneStatus, SpawnSpec,
};

use thiserror::Error;

#[derive(Debug, Error)]
pub enum PtyError {
    #[error("cannot open a pseudo-terminal: {0}")]
    Open(String),
    #[error("cannot start {program:?}: {reason}")]
    Spawn { program: String, reason: String },
    #[error("cannot resize the pseudo-terminal: {0}")]
    Resize(String),
    #[error("the pane's input is full: its program is not reading what is typed")]
    InputFull,
    #[error("the pane's program has exited")]
    Exited,
    #[error("this pane runs no program: it only shows a notice")]
    NoProgram,
    /// The lock cannot be enforced as written: the program did not run (it never runs
    /// unlocked instead).
    #[error("its folder lock cannot be enforced ({0}); it never runs unlocked")]
    LockRefused(String),
    /// A pane of another host's server, which could not be reached.
    #[error("{0}")]
    Remote(String),
}
