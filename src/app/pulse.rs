//! Where panes meet the pulse: what the sampler watches for a pane (its thresholds and screen
//! rules from its thread's `pulse` settings), and a pane's pulse as `paddock ls` shows it.

use std::sync::Arc;

use regex::Regex;
use std::time::Duration;

use crate::config::{PulseSettings, ThreadSpec};
use crate::ctl::protocol::PulseInfo;
use crate::mux::PaneId;
use crate::pty::{PaneSession, PaneStatus};
use crate::pulse::{Activity, PulseState, Snapshot, Thresholds, Watch};

/// Screen text that means a common agent CLI (or any program) waits for an answer, watched in
/// every pane besides a thread's own `needs_you` rules.
pub const DEFAULT_RULES: &[&str] = &[
    r"Do you want to (proceed|make this edit|allow|create|run)",
    r"Allow (this )?(command|edit|action)\?",
    r"Waiting for (your )?approval",
    r"\[y/N\]|\[Y/n\]|\(y/n\)",
];

/// What the sampler watches for a pane just started.
pub fn watch(
    PaneId(pane): PaneId,
    activity: Arc<Activity>,
    session: &PaneSession,
    thread: Option<&ThreadSpec>,
) -> Watch {
    let default = PulseSettings::default();
    let settings = thread.map_or(&default, |t| &t.pulse);
    // The thread's own were checked when the configuration was read; the defaults are tested.
    let rules: Vec<Regex> = settings
        .needs_you
        .iter()
        .map(String::as_str)
        .chain(DEFAULT_RULES.iter().copied())
        .filter_map(|rule| Regex::new(rule).ok())
        .collect();
    Watch {
        pane,
        activity,
        pid: session.pid(),
        limits: Thresholds {
            busy_cpu: settings.busy_cpu,
            quiet_after: Duration::from_secs(settings.quiet_after.into()),
        },
        rules,
        term: session.terminal().clone(),
    }
}

/// A pane's pulse for `paddock ls`: the sampler's view, with the exit code the pane knows.
pub fn info(
    snapshot: Option<&Snapshot>,
    PaneId(pane): PaneId,
    status: PaneStatus,
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
        // Not sampled yet: it has only just started.
        (_, None) => (PulseState::Working, None),
    };
    Some(PulseInfo {
        state: state.name().into(),
        cpu_percent: seen.map_or(0.0, |p| p.cpu_percent),
        out_bytes_per_s: seen.map_or(0.0, |p| p.out_bytes_per_s),
        since_s: seen.map_or(0.0, |p| p.since.as_secs_f32()),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_rules_compile_and_match_agent_questions() {
        let rules: Vec<Regex> = DEFAULT_RULES.iter().map(|r| Regex::new(r).expect(r)).collect();
        for question in [
            "Do you want to proceed?",
            "Do you want to make this edit to main.rs?",
            "Allow this command?",
            "Overwrite? [y/N]",
            "Continue (y/n) ",
        ] {
            assert!(rules.iter().any(|r| r.is_match(question)), "{question}");
        }
        assert!(!rules.iter().any(|r| r.is_match("cargo test: 12 passed")));
    }
}
