//! Where panes meet the pulse: what the sampler watches for a pane (its thresholds and screen
//! rules: its thread's `pulse` settings, then the defaults), and a pane's pulse as `paddock ls`
//! shows it.

use std::sync::Arc;

use regex::Regex;
use std::time::Duration;

use crate::config::{PulseSettings, ThreadSpec};
use crate::ctl::protocol::PulseInfo;
use crate::mux::PaneId;
use crate::pty::{PaneSession, PaneStatus};
use crate::pulse::{Activity, PulseState, Rules, Snapshot, Thresholds, Watch};

/// What the sampler watches for a pane just started.
pub fn watch(
    PaneId(pane): PaneId,
    activity: Arc<Activity>,
    session: &PaneSession,
    thread: Option<&ThreadSpec>,
) -> Watch {
    let default = PulseSettings::default();
    let settings = thread.map_or(&default, |t| &t.pulse);
    // The thread's own were checked when the configuration was read.
    let own = settings.needs_you.iter().filter_map(|rule| Regex::new(rule).ok()).collect();
    Watch {
        pane,
        activity,
        pid: session.pid(),
        limits: Thresholds {
            busy_cpu: settings.busy_cpu,
            quiet_after: Duration::from_secs(settings.quiet_after.into()),
        },
        rules: Rules::new(own),
        term: session.terminal().clone(),
        cgroup: session.cgroup(),
    }
}

/// A pane's pulse for `paddock ls`: the sampler's view, with the exit code the pane knows.
pub fn info(
    snapshot: Option<&Snapshot>,
    PaneId(pane): PaneId,
    status: PaneStatus,
    muted: bool,
) -> Option<PulseInfo> {
    if status == PaneStatus::NoProgram {
        return None;
    }
    let seen = snapshot.and_then(|s| s.panes.get(&pane));
    let (state, reason) = match (status, seen.map(|p| &p.state)) {
        (PaneStatus::Exited(code), _) => (PulseState::Exited(code), None),
        (_, Some(PulseState::NeedsYou(reason))) => {
            (PulseState::NeedsYou(reason.clone()), Some(reason.to_string()))
        }
        (_, Some(state)) => (state.clone(), None),
        // Not sampled yet: it has only just started, and nothing shows it at work yet.
        (_, None) => (PulseState::Quiet, None),
    };
    Some(PulseInfo {
        state: state.name().into(),
        cpu_percent: seen.map_or(0.0, |p| p.cpu_percent),
        out_bytes_per_s: seen.map_or(0.0, |p| p.out_bytes_per_s),
        since_s: seen.map_or(0.0, |p| p.since.as_secs_f32()),
        reason,
        muted,
        memory_bytes: seen.map_or(0, |p| p.memory_bytes),
    })
}
