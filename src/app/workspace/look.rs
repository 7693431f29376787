//! What a window shows of each pane besides its screen (`PaneLook`), and the workspace as a
//! window reads it (`Shown`): the same for the window in this process and one attached to it.

use std::borrow::Cow;
use std::sync::MutexGuard;

use serde::{Deserialize, Serialize};

use super::Workspace;
use crate::config::ClipboardRule;
use crate::mux::{Mux, PaneId};
use crate::pulse::PanePulse;
use crate::sandbox::Enforcement;
use crate::term::Terminal;

/// What a window shows of a pane besides its screen, and what its window-side rules need: the
/// same for a window in the server's process and one attached to it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PaneLook {
    /// Its configured thread's name.
    pub name: Option<String>,
    /// Its program's file name.
    pub program: String,
    /// How it is locked; none for a pane nobody asked to lock.
    pub lock: Option<LockLook>,
    pub pulse: Option<PanePulse>,
    /// Its thread's memory limit, in bytes.
    pub memory_limit: Option<u64>,
    /// Its thread is defined differently now, and how that would loosen its lock.
    pub config_changed: bool,
    pub lock_widening: Vec<String>,
    /// A pinned program that changed since its approval.
    pub changed_program: Option<ChangedLook>,
    /// The last host its network refused.
    pub net_refused: Option<String>,
    /// What its clipboard writes do.
    pub clipboard: ClipboardRule,
}

/// A pane's lock as its badge shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockLook {
    /// locked, degraded, unlocked or refused.
    pub level: String,
    /// What is enforced, in a few words.
    pub text: String,
}

/// A pinned program that changed: its file's name and both fingerprints.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedLook {
    pub file: String,
    pub approved_sha256: String,
    pub sha256: String,
}

/// The panes a window draws: their layout, models and looks.
pub trait Shown {
    /// The tabs and splits, with this window's active tab and focus.
    fn mux(&self) -> &Mux;
    /// Rows above each pane for its title strip.
    fn header_rows(&self) -> usize;
    /// The pane's model, locked for reading.
    fn term(&self, pane: PaneId) -> Option<MutexGuard<'_, Terminal>>;
    fn look(&self, pane: PaneId) -> Option<Cow<'_, PaneLook>>;
}

impl Workspace {
    /// What `pane`'s title strip and the window's rules need to know of it.
    pub fn look_of(&self, pane: PaneId) -> Option<PaneLook> {
        // A remote thread's pane looks as its host shows it (name, lock, pulse), but for what
        // is this side's to say: its clipboard rule, and whether it is muted here.
        #[cfg(unix)]
        if let Some((look, down)) = self.remote.look(pane) {
            let mut look: PaneLook = serde_json::from_value(look.clone()).ok()?;
            if down {
                look.pulse = None;
            }
            look.clipboard = self.clipboard_rule(pane);
            look.config_changed = self.config_changed(pane);
            look.lock_widening = Vec::new();
            if let Some(pulse) = &mut look.pulse {
                pulse.muted = self.panes.get(&pane).is_some_and(|p| p.muted);
            }
            return Some(look);
        }
        let command = self.command_of(pane)?;
        let program = command.first().map(|p| p.rsplit('/').next().unwrap_or(p).to_owned());
        let thread = self.thread_of(pane);
        // A pane nobody asked to lock is a plain terminal and needs no badge; one chosen to
        // run unlocked next to locked ones says so.
        let lock = self
            .lock_of(pane)
            .filter(|l| !matches!(l, Enforcement::Unlocked { chosen: false }))
            .map(|l| LockLook { level: l.level().to_owned(), text: l.to_string() });
        let changed_program = self.changed_program(pane).map(|c| ChangedLook {
            file: c.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            approved_sha256: c.approved_sha256.clone(),
            sha256: c.sha256.clone(),
        });
        Some(PaneLook {
            name: thread.map(|t| t.name.clone()),
            program: program.unwrap_or_default(),
            lock,
            pulse: self.pulse_of(pane),
            memory_limit: thread.and_then(|t| t.limits.memory_bytes),
            config_changed: self.config_changed(pane),
            lock_widening: self.lock_widening(pane),
            changed_program,
            net_refused: self.net_refused(pane),
            clipboard: self.clipboard_rule(pane),
        })
    }
}

impl Shown for Workspace {
    fn mux(&self) -> &Mux {
        Workspace::mux(self)
    }

    fn header_rows(&self) -> usize {
        Workspace::header_rows(self)
    }

    fn term(&self, pane: PaneId) -> Option<MutexGuard<'_, Terminal>> {
        self.session(pane).map(|s| s.term())
    }

    fn look(&self, pane: PaneId) -> Option<Cow<'_, PaneLook>> {
        self.look_of(pane).map(Cow::Owned)
    }
}
