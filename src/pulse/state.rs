//! A pane's pulse state, decided from what its counters show at each tick: pure, driven by the
//! sampler with the real clock and by tests with a fake one.
//!
//! Working: a change on the screen, or CPU above the busy floor (averaged over the sampler's
//! window), within the last [`RECENT`]. Output that changes nothing on the screen (a frame
//! redrawn as it was) is not work, nor is a change right after the user typed (the echo of
//! their keys). After that, a pause in work that went on for at least
//! [`SUSTAINED`] still reads as working until `quiet_after` (an agent between two steps); a
//! short burst (a prompt drawn, a key echoed) reads as quiet at once. A pane starts quiet.
//! NeedsYou is raised only on positive evidence (a bell, a desktop notification, a shell back
//! at its prompt after a command, a screen rule, `paddock ctl notify`) and cleared when the
//! user types into the pane, or when the rule that raised it no longer matches. Exited ends it
//! all.

use std::time::Duration;

/// How recent a change on the screen or CPU must be for a pane to read as working.
pub const RECENT: Duration = Duration::from_secs(2);
/// How long work must have gone on for a pause in it to read as working still.
pub const SUSTAINED: Duration = Duration::from_secs(5);
/// A change on the screen this soon after the user typed is the echo of their keys, not work.
pub const ECHO: Duration = Duration::from_millis(500);

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum PulseState {
    Working,
    Quiet,
    NeedsYou(Reason),
    /// The exit code, `None` when a signal ended the program.
    Exited(Option<i32>),
}

impl PulseState {
    /// As `paddock ls --json` names it.
    pub fn name(&self) -> &'static str {
        match self {
            PulseState::Working => "working",
            PulseState::Quiet => "quiet",
            PulseState::NeedsYou(_) => "needs_you",
            PulseState::Exited(_) => "exited",
        }
    }
}

/// Why a pane needs its user.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Reason {
    Bell,
    /// A desktop notification (OSC 9, 777, 99) or `paddock ctl notify`: its text.
    Notification(String),
    /// A shell with prompt marks (OSC 133) is back at its prompt after a command.
    Prompt,
    /// A screen rule matches: the rule.
    Screen(String),
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reason::Bell => f.write_str("bell"),
            Reason::Notification(text) => write!(f, "notification: {text}"),
            Reason::Prompt => f.write_str("back at its prompt"),
            Reason::Screen(rule) => write!(f, "screen shows \"{rule}\""),
        }
    }
}

/// What the counters show at one tick. Times are durations since some fixed start.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observation {
    pub now: Duration,
    /// When the program's output last changed the screen, if ever.
    pub last_change: Option<Duration>,
    /// CPU of the pane's process tree since the last tick, in percent of one core.
    pub cpu_percent: f32,
    /// Bells so far.
    pub bells: u64,
    /// Notifications so far, and the latest one's text.
    pub notifications: u64,
    pub last_notification: Option<String>,
    /// Times a shell came back to its prompt after a command, so far.
    pub prompts: u64,
    /// A screen rule that matches now.
    pub screen_rule: Option<String>,
    /// When the user last typed into the pane, if ever.
    pub last_typed: Option<Duration>,
    /// Set once the program has exited.
    pub exited: Option<Option<i32>>,
}

/// The thresholds of one pane (from its thread's `pulse` settings).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    pub busy_cpu: f32,
    pub quiet_after: Duration,
}

/// One pane's state over time.
#[derive(Clone, Debug)]
pub struct Pulse {
    state: PulseState,
    since: Duration,
    /// When a change on the screen or CPU last showed work.
    last_active: Option<Duration>,
    /// When the current run of work began (work after a pause longer than [`RECENT`] begins
    /// a new one).
    run_began: Option<Duration>,
    seen_bells: u64,
    seen_notifications: u64,
    seen_prompts: u64,
    /// When NeedsYou was raised (typing after this clears it).
    raised_at: Option<Duration>,
    /// A screen rule the user answered by typing: not raised again while it still shows.
    dismissed: Option<String>,
}

impl Pulse {
    pub fn new(now: Duration) -> Pulse {
        Pulse {
            state: PulseState::Quiet,
            since: now,
            last_active: None,
            run_began: None,
            seen_bells: 0,
            seen_notifications: 0,
            seen_prompts: 0,
            raised_at: None,
            dismissed: None,
        }
    }

    pub fn state(&self) -> &PulseState {
        &self.state
    }

    /// How long the pane has been in its state.
    pub fn time_in_state(&self, now: Duration) -> Duration {
        now.saturating_sub(self.since)
    }

    /// Take one tick's observation; the state after it.
    pub fn observe(&mut self, seen: &Observation, limits: Thresholds) -> &PulseState {
        let now = seen.now;
        if let Some(code) = seen.exited {
            self.enter(PulseState::Exited(code), now);
            return &self.state;
        }
        if seen.cpu_percent >= limits.busy_cpu {
            self.active(now);
        }
        let echo =
            |change: Duration| seen.last_typed.is_some_and(|t| t <= change && change - t <= ECHO);
        if let Some(change) = seen.last_change.filter(|&change| !echo(change)) {
            self.active(change);
        }
        // New evidence that the user is wanted (the latest kind wins).
        let mut raised = None;
        if seen.bells > self.seen_bells {
            raised = Some(Reason::Bell);
        }
        if seen.prompts > self.seen_prompts {
            raised = Some(Reason::Prompt);
        }
        if seen.notifications > self.seen_notifications {
            let text = seen.last_notification.clone().unwrap_or_default();
            raised = Some(Reason::Notification(text));
        }
        (self.seen_bells, self.seen_prompts, self.seen_notifications) =
            (seen.bells, seen.prompts, seen.notifications);
        if self.dismissed.is_some() && self.dismissed != seen.screen_rule {
            self.dismissed = None;
        }
        if raised.is_none() {
            if let Some(rule) = &seen.screen_rule {
                // Raised already: by this rule, or by the program's own word since (a hook's
                // notification says more than the dialog it is about, and stands until the
                // user answers).
                let already = match &self.state {
                    PulseState::NeedsYou(Reason::Screen(r)) => r == rule,
                    PulseState::NeedsYou(_) => true,
                    _ => false,
                };
                if !already && self.dismissed.as_ref() != Some(rule) {
                    raised = Some(Reason::Screen(rule.clone()));
                }
            }
        }
        if let Some(reason) = raised {
            self.raised_at = Some(now);
            self.enter(PulseState::NeedsYou(reason), now);
            return &self.state;
        }
        if let PulseState::NeedsYou(reason) = &self.state {
            let typed = seen.last_typed.zip(self.raised_at).is_some_and(|(t, r)| t >= r);
            let rule_gone = matches!(reason, Reason::Screen(_)) && seen.screen_rule.is_none();
            if !typed && !rule_gone {
                return &self.state;
            }
            // The answer is to the question on screen too, whatever raised it.
            match (typed, reason) {
                (true, Reason::Screen(rule)) => self.dismissed = Some(rule.clone()),
                (true, _) if seen.screen_rule.is_some() => {
                    self.dismissed.clone_from(&seen.screen_rule)
                }
                _ => {}
            }
            self.raised_at = None;
            // An answer sets the program going: it reads as working for a moment, and on
            // only if it works.
            self.active(now);
        }
        let next = match self.last_active {
            Some(last) if now.saturating_sub(last) <= RECENT => PulseState::Working,
            Some(last)
                if now.saturating_sub(last) < limits.quiet_after
                    && self.state == PulseState::Working
                    && self
                        .run_began
                        .is_some_and(|began| last.saturating_sub(began) >= SUSTAINED) =>
            {
                PulseState::Working
            }
            _ => PulseState::Quiet,
        };
        self.enter(next, now);
        &self.state
    }

    /// Work seen at `at`.
    fn active(&mut self, at: Duration) {
        match self.last_active {
            Some(last) if at <= last => {}
            Some(last) if at - last <= RECENT => self.last_active = Some(at),
            _ => (self.last_active, self.run_began) = (Some(at), Some(at)),
        }
    }

    fn enter(&mut self, state: PulseState, now: Duration) {
        if self.state != state {
            self.state = state;
            self.since = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Thresholds = Thresholds { busy_cpu: 5.0, quiet_after: Duration::from_secs(10) };

    fn at(secs: f32) -> Duration {
        Duration::from_secs_f32(secs)
    }

    /// A pane driven tick by tick with a fake clock.
    struct Pane {
        pulse: Pulse,
        seen: Observation,
    }

    impl Pane {
        fn new() -> Pane {
            Pane { pulse: Pulse::new(at(0.0)), seen: Observation::default() }
        }

        fn tick(&mut self, secs: f32) -> PulseState {
            self.seen.now = at(secs);
            let state = self.pulse.observe(&self.seen, LIMITS).clone();
            self.seen.cpu_percent = 0.0;
            state
        }
    }

    #[test]
    fn a_fresh_pane_is_quiet_and_a_short_burst_is_over_in_two_seconds() {
        let mut pane = Pane::new();
        assert_eq!(pane.tick(0.25), PulseState::Quiet, "nothing seen yet");
        // A shell draws its prompt: one change.
        pane.seen.last_change = Some(at(0.5));
        assert_eq!(pane.tick(0.5), PulseState::Working);
        assert_eq!(pane.tick(2.5), PulseState::Working);
        assert_eq!(pane.tick(2.75), PulseState::Quiet, "not held until quiet_after");
    }

    #[test]
    fn the_echo_of_typing_is_not_work() {
        let mut pane = Pane::new();
        pane.seen.last_typed = Some(at(1.0));
        pane.seen.last_change = Some(at(1.25));
        assert_eq!(pane.tick(1.25), PulseState::Quiet);
        // The program answers a moment later: that is work.
        pane.seen.last_change = Some(at(2.0));
        assert_eq!(pane.tick(2.0), PulseState::Working);
    }

    #[test]
    fn a_pause_in_sustained_work_is_working_until_quiet_after() {
        let mut pane = Pane::new();
        // Changes every second for six seconds (a stream of output), then none.
        for second in 1..=7 {
            pane.seen.last_change = Some(at(second as f32));
            assert_eq!(pane.tick(second as f32), PulseState::Working);
        }
        // Silent for a while: still working (an agent waits for its model).
        assert_eq!(pane.tick(12.0), PulseState::Working);
        assert_eq!(pane.tick(17.5), PulseState::Quiet);
        assert_eq!(pane.pulse.time_in_state(at(19.0)), at(1.5));
        // Work after the pause is a new run: a burst of it is over soon.
        pane.seen.last_change = Some(at(20.0));
        assert_eq!(pane.tick(20.2), PulseState::Working);
        assert_eq!(pane.tick(22.5), PulseState::Quiet);
    }

    #[test]
    fn cpu_above_the_floor_is_working_without_output() {
        let mut pane = Pane::new();
        assert_eq!(pane.tick(20.0), PulseState::Quiet);
        pane.seen.cpu_percent = 3.0;
        assert_eq!(pane.tick(20.25), PulseState::Quiet, "below the floor");
        pane.seen.cpu_percent = 95.0;
        assert_eq!(pane.tick(20.5), PulseState::Working);
    }

    #[test]
    fn a_bell_raises_needs_you_until_the_user_types() {
        let mut pane = Pane::new();
        pane.seen.bells = 1;
        assert_eq!(pane.tick(1.0), PulseState::NeedsYou(Reason::Bell));
        // Output does not clear it; time does not either.
        pane.seen.last_change = Some(at(2.0));
        assert_eq!(pane.tick(30.0), PulseState::NeedsYou(Reason::Bell));
        // Typing from before it was raised does not count.
        pane.seen.last_typed = Some(at(0.5));
        assert_eq!(pane.tick(31.0), PulseState::NeedsYou(Reason::Bell));
        pane.seen.last_typed = Some(at(31.5));
        assert_eq!(pane.tick(32.0), PulseState::Working);
        // The same bell count raises nothing again.
        assert_eq!(pane.tick(33.0), PulseState::Working);
    }

    #[test]
    fn notifications_and_prompts_raise_needs_you_with_their_reason() {
        let mut pane = Pane::new();
        pane.seen.notifications = 1;
        pane.seen.last_notification = Some("build done".into());
        assert_eq!(pane.tick(1.0), PulseState::NeedsYou(Reason::Notification("build done".into())));
        pane.seen.last_typed = Some(at(2.0));
        assert_eq!(pane.tick(2.0), PulseState::Working);
        pane.seen.prompts = 1;
        assert_eq!(pane.tick(3.0), PulseState::NeedsYou(Reason::Prompt));
    }

    #[test]
    fn a_screen_rule_holds_needs_you_while_it_matches() {
        let mut pane = Pane::new();
        pane.seen.screen_rule = Some("Do you want to proceed?".into());
        let wanted = PulseState::NeedsYou(Reason::Screen("Do you want to proceed?".into()));
        assert_eq!(pane.tick(1.0), wanted);
        assert_eq!(pane.tick(2.0), wanted);
        assert_eq!(pane.pulse.time_in_state(at(2.0)), at(1.0), "not raised again each tick");
        pane.seen.screen_rule = None;
        assert_eq!(pane.tick(3.0), PulseState::Working);
    }

    #[test]
    fn typing_answers_a_screen_rule_until_it_shows_anew() {
        let mut pane = Pane::new();
        let rule = "Allow this command?".to_owned();
        pane.seen.screen_rule = Some(rule.clone());
        assert_eq!(pane.tick(1.0), PulseState::NeedsYou(Reason::Screen(rule.clone())));
        // The user answers; the question is still on screen, and is not raised again.
        pane.seen.last_typed = Some(at(1.5));
        assert_eq!(pane.tick(2.0), PulseState::Working);
        assert_eq!(pane.tick(3.0), PulseState::Working);
        // It scrolls away, and later shows again: a new question.
        pane.seen.screen_rule = None;
        assert_eq!(pane.tick(4.0), PulseState::Working);
        pane.seen.screen_rule = Some(rule.clone());
        assert_eq!(pane.tick(5.0), PulseState::NeedsYou(Reason::Screen(rule)));
    }

    #[test]
    fn a_programs_notification_about_its_dialog_stands_until_the_user_answers() {
        let mut pane = Pane::new();
        let rule = "Allow execution of".to_owned();
        pane.seen.screen_rule = Some(rule.clone());
        assert_eq!(pane.tick(1.0), PulseState::NeedsYou(Reason::Screen(rule.clone())));
        // The agent's own hook says why, while its dialog stays on screen.
        pane.seen.notifications = 1;
        pane.seen.last_notification = Some("Tool Confirm requires execution".into());
        let told =
            PulseState::NeedsYou(Reason::Notification("Tool Confirm requires execution".into()));
        assert_eq!(pane.tick(1.5), told);
        assert_eq!(pane.tick(2.0), told, "not taken back by the rule still on screen");
        assert_eq!(pane.tick(9.0), told);
        // The answer is to both: the dialog still showing is not raised again.
        pane.seen.last_typed = Some(at(9.5));
        assert_eq!(pane.tick(10.0), PulseState::Working);
        assert_eq!(pane.tick(10.25), PulseState::Working);
    }

    #[test]
    fn an_exit_ends_it() {
        let mut pane = Pane::new();
        pane.seen.bells = 3;
        pane.seen.exited = Some(Some(2));
        assert_eq!(pane.tick(1.0), PulseState::Exited(Some(2)));
        assert_eq!(PulseState::Exited(None).name(), "exited");
    }
}
