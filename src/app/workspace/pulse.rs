//! The panes' pulse as the workspace answers for it: the sampler's latest snapshot, the
//! longest-waiting pane, muting, and what the instance's cgroups are.

use std::sync::Arc;

use super::{Refusal, Workspace};
use crate::mux::PaneId;
use crate::pulse::Sampler;

impl Workspace {
    /// Every pane's pulse as the sampler last published it (`None`: no sampler).
    pub fn pulses(&self) -> Option<Arc<crate::pulse::Snapshot>> {
        self.sampler.as_ref().map(Sampler::latest)
    }

    /// Focus the pane that has waited for its user longest (across tabs): which, if any.
    pub fn focus_longest_waiting(&mut self) -> Option<PaneId> {
        let snapshot = self.pulses()?;
        let waiting = snapshot
            .panes
            .iter()
            .filter(|(id, pulse)| {
                matches!(pulse.state, crate::pulse::PulseState::NeedsYou(_))
                    && self.panes.get(&PaneId(**id)).is_some_and(|pane| !pane.muted)
            })
            // The longest first; of equal waits, the lower id.
            .max_by(|(a_id, a), (b_id, b)| a.since.cmp(&b.since).then(b_id.cmp(a_id)))
            .map(|(id, _)| PaneId(*id))?;
        self.mux.focus(waiting).then_some(waiting)
    }

    /// What `pane`'s program is doing now, as the sampler last saw it.
    /// Muted panes say so (`PanePulse::muted`).
    pub fn pulse_of(&self, pane: PaneId) -> Option<crate::pulse::PanePulse> {
        let entry = self.panes.get(&pane)?;
        entry.session.activity()?;
        let mut pulse = self.sampler.as_ref()?.latest().panes.get(&pane.0).cloned()?;
        pulse.muted = entry.muted;
        Some(pulse)
    }

    /// What the instance's cgroups are, or why there are none.
    pub fn cgroups_described(&self) -> String {
        match &self.options.cgroups {
            Ok(tree) => tree.describe(),
            Err(why) => format!("none: {why}; the pulse counts each pane's process tree"),
        }
    }

    /// Mute or unmute `pane`.
    pub fn set_muted(&mut self, pane: PaneId, muted: bool) -> Result<(), Refusal> {
        let entry = self.panes.get_mut(&pane).ok_or_else(|| Refusal::no_pane(pane))?;
        entry.muted = muted;
        (self.wake)();
        Ok(())
    }

    /// Mute the focused pane, or unmute it if it is muted: whether it is muted now.
    pub fn toggle_mute_focused(&mut self) -> Option<bool> {
        let pane = self.mux.focused_pane()?;
        let entry = self.panes.get_mut(&pane)?;
        entry.muted = !entry.muted;
        Some(entry.muted)
    }
}
