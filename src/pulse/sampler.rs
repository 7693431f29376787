//! The sampler: one background thread that, a few times a second, reads each watched pane's
//! counters and the CPU of its process tree, decides its state, and publishes an immutable
//! snapshot of every pane. Whoever reads snapshots (the workspace, for the window and
//! `paddock ls`) takes the latest without ever waiting on this thread.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use super::activity::Activity;
use super::cpu::TreeCpu;
use super::rules::{Found, Rules};
use super::state::{Observation, Pulse, PulseState, Thresholds};
use crate::cgroup::{LimitEvents, Limits, PaneCgroup};
use crate::term::{row_text, Terminal};

/// The shortest time between samples, whatever is asked (a zero period would spin).
const MIN_PERIOD: Duration = Duration::from_millis(10);
/// How far back the output rate and the CPU look: a rate over one tick jumps with every chunk of
/// output, and CPU over one tick with every short burst of an idle program's housekeeping.
const RATE_WINDOW: Duration = Duration::from_secs(2);
/// Seconds of history kept for the sparkline.
pub const HISTORY: usize = 60;

/// A pane to watch.
pub struct Watch {
    pub pane: u32,
    pub activity: Arc<Activity>,
    /// Its program's process (the root of the tree whose CPU counts).
    pub pid: Option<u32>,
    pub limits: Thresholds,
    /// Screen text that means its program waits for a person.
    pub rules: Rules,
    pub term: Arc<Mutex<Terminal>>,
    /// Its cgroup, where it has one: CPU and memory are counted over it (every process the
    /// pane started, a daemon that left its tree too), not over the tree of `pid`.
    pub cgroup: Option<Arc<PaneCgroup>>,
}

enum Command {
    Watch(Box<Watch>),
    Forget(u32),
    Period(Duration),
}

/// One pane's pulse at one tick.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PanePulse {
    pub state: PulseState,
    pub cpu_percent: f32,
    pub out_bytes_per_s: f32,
    /// Time in the current state.
    pub since: Duration,
    /// One entry per second, oldest first: (CPU percent, output bytes/s), up to [`HISTORY`].
    pub history: Vec<(f32, f32)>,
    /// Memory in use now (its cgroup's, else its process tree's resident memory).
    pub memory_bytes: u64,
    /// Muted by its user (set by the workspace; the sampler never mutes).
    pub muted: bool,
}

/// Output at this rate reads as half of full activity.
const HALF_LEVEL_OUTPUT: f32 = 2048.0;

impl PanePulse {
    /// How hard the pane works, 0 (idle) to 1: a full core, or output well past a screenful a
    /// second, whichever is more. Output counts on a curve that saturates, since a pane
    /// printing 2 KB/s is plainly busy and one printing 2 MB/s is not a thousand times more.
    pub fn level(&self) -> f32 {
        let cpu = self.cpu_percent / 100.0;
        let out = self.out_bytes_per_s.max(0.0);
        let out = out / (out + HALF_LEVEL_OUTPUT);
        cpu.max(out).clamp(0.0, 1.0)
    }
}

impl PanePulse {
    /// The state as it counts for the user's attention: a muted pane's need is not raised
    /// (it reads as quiet in glows, marks and notifications; `ls` still says what it is).
    pub fn counted_state(&self) -> PulseState {
        match &self.state {
            PulseState::NeedsYou(_) if self.muted => PulseState::Quiet,
            state => state.clone(),
        }
    }
}

/// Levels are told apart to this step when deciding whether to wake the window.
const LEVEL_STEPS: f32 = 8.0;

/// A level of activity (0 to 1) to the step a window tells apart.
pub fn level_step(level: f32) -> u8 {
    (level.clamp(0.0, 1.0) * LEVEL_STEPS).round() as u8
}

/// Every watched pane at one tick.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub panes: HashMap<u32, PanePulse>,
}

/// The running sampler; dropping it stops the thread.
pub struct Sampler {
    epoch: Instant,
    commands: Option<Sender<Command>>,
    snapshots: Receiver<Arc<Snapshot>>,
    latest: Mutex<Arc<Snapshot>>,
    thread: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Start sampling every `period`; `wake` is called after each snapshot whose states, or
    /// levels of activity (to an eighth), changed.
    pub fn start(period: Duration, wake: Arc<dyn Fn() + Send + Sync>) -> std::io::Result<Sampler> {
        let period = period.max(MIN_PERIOD);
        let epoch = Instant::now();
        let (commands, receive) = crossbeam_channel::unbounded();
        let (publish, snapshots) = crossbeam_channel::bounded(1);
        let stale = snapshots.clone();
        let thread = std::thread::Builder::new().name("pulse-sampler".into()).spawn(move || {
            run(epoch, period, &receive, &publish, &stale, &*wake);
        })?;
        Ok(Sampler {
            epoch,
            commands: Some(commands),
            snapshots,
            latest: Mutex::new(Arc::new(Snapshot::default())),
            thread: Some(thread),
        })
    }

    /// The clock the counters of watched panes must count from.
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    pub fn watch(&self, watch: Watch) {
        if let Some(commands) = &self.commands {
            let _ = commands.send(Command::Watch(Box::new(watch)));
        }
    }

    pub fn forget(&self, pane: u32) {
        if let Some(commands) = &self.commands {
            let _ = commands.send(Command::Forget(pane));
        }
    }

    /// Sample every `period` from the next tick on.
    pub fn set_period(&self, period: Duration) {
        if let Some(commands) = &self.commands {
            let _ = commands.send(Command::Period(period.max(MIN_PERIOD)));
        }
    }

    /// The newest snapshot (never waits).
    pub fn latest(&self) -> Arc<Snapshot> {
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        while let Ok(snapshot) = self.snapshots.try_recv() {
            *latest = snapshot;
        }
        latest.clone()
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // Closing the command channel ends the thread at its next tick.
        self.commands = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Readings of a running total over the last [`RATE_WINDOW`] (and the one just before it), for
/// its rate.
#[derive(Default)]
struct Window(VecDeque<(Duration, f64)>);

impl Window {
    /// Add the total at `now`: its rate per second over the window.
    fn push(&mut self, now: Duration, total: f64) -> f64 {
        self.0.push_back((now, total));
        while self.0.len() > 2 && self.0[1].0 + RATE_WINDOW <= now {
            self.0.pop_front();
        }
        match (self.0.front(), self.0.back()) {
            (Some(&(t0, v0)), Some(&(t1, v1))) if t1 > t0 => {
                (v1 - v0).max(0.0) / (t1 - t0).as_secs_f64()
            }
            _ => 0.0,
        }
    }
}

/// What the sampler keeps per pane between ticks.
struct Watched {
    watch: Watch,
    pulse: Pulse,
    /// The process tree's CPU time at the last tick.
    cpu_total: Option<Duration>,
    /// CPU time used since the pane was watched: the sum of each tick's increase (a child that
    /// exits takes its time out of the tree's total; that is no negative use).
    cpu_used: Duration,
    cpu: Window,
    bytes: Window,
    history: VecDeque<(f32, f32)>,
    /// The current second, and the peak CPU and output rate within it.
    second: (u64, f32, f32),
    /// The output count at the last look at the screen: it is looked at again only after new
    /// output.
    looked_at: Option<u64>,
    /// The screen's digest at the last look, and when it last differed from the one before.
    fingerprint: Option<u64>,
    last_change: Option<Duration>,
    /// What the rules found on the screen at the last look that saw a change.
    found: Option<Found>,
    /// What its cgroup's limits had done at the last tick.
    limit_events: LimitEvents,
}

fn run(
    epoch: Instant,
    mut period: Duration,
    commands: &Receiver<Command>,
    publish: &Sender<Arc<Snapshot>>,
    stale: &Receiver<Arc<Snapshot>>,
    wake: &(dyn Fn() + Send + Sync),
) {
    let mut panes: HashMap<u32, Watched> = HashMap::new();
    let mut cpu = TreeCpu::default();
    let mut states: HashMap<u32, (PulseState, u8)> = HashMap::new();
    let mut next = Instant::now();
    loop {
        next += period;
        // Commands until the next tick; a closed channel ends the thread.
        loop {
            let wait = next.saturating_duration_since(Instant::now());
            match commands.recv_timeout(wait) {
                Ok(Command::Watch(watch)) => {
                    let now = epoch.elapsed();
                    let watched = Watched {
                        pulse: Pulse::new(now),
                        cpu_total: None,
                        cpu_used: Duration::ZERO,
                        cpu: Window::default(),
                        bytes: Window::default(),
                        history: VecDeque::new(),
                        second: (now.as_secs(), 0.0, 0.0),
                        looked_at: None,
                        fingerprint: None,
                        last_change: None,
                        found: None,
                        limit_events: LimitEvents::default(),
                        watch: *watch,
                    };
                    panes.insert(watched.watch.pane, watched);
                }
                Ok(Command::Forget(pane)) => {
                    panes.remove(&pane);
                }
                Ok(Command::Period(new)) => {
                    next = next.checked_sub(period).unwrap_or(next) + new;
                    period = new;
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if Instant::now() > next + period {
            // Fell behind (a suspended laptop): do not tick to catch up.
            next = Instant::now();
        }
        let roots: Vec<u32> = panes.values().filter_map(|p| p.watch.pid).collect();
        cpu.begin_tick(&roots);
        let now = epoch.elapsed();
        let mut snapshot = Snapshot::default();
        for (id, pane) in &mut panes {
            snapshot.panes.insert(*id, tick(pane, &mut cpu, now));
        }
        let changed: HashMap<u32, (PulseState, u8)> = snapshot
            .panes
            .iter()
            .map(|(id, p)| (*id, (p.state.clone(), level_step(p.level()))))
            .collect();
        let _ = stale.try_recv();
        let _ = publish.try_send(Arc::new(snapshot));
        if changed != states {
            states = changed;
            wake();
        }
    }
}

fn tick(pane: &mut Watched, cpu: &mut TreeCpu, now: Duration) -> PanePulse {
    let counters = pane.watch.activity.read();
    let (total, memory_bytes) = match pane.watch.cgroup.as_ref().and_then(|c| c.usage()) {
        Some(usage) => (Some(Duration::from_micros(usage.cpu_usec)), usage.memory_bytes),
        None => {
            let usage = pane.watch.pid.and_then(|pid| cpu.usage(pid));
            (usage.map(|u| u.cpu), usage.map_or(0, |u| u.memory_bytes))
        }
    };
    // Limits are hit only where they are set: no other pane's event files are read.
    if let Some(cgroup) = pane.watch.cgroup.clone().filter(|c| c.limits() != Limits::default()) {
        say_limits_hit(pane, cgroup);
    }
    if let (Some(before), Some(after)) = (pane.cpu_total, total) {
        pane.cpu_used += after.saturating_sub(before);
    }
    pane.cpu_total = total.or(pane.cpu_total);
    // Averaged over the window, like the output rate.
    let cpu_percent = (pane.cpu.push(now, pane.cpu_used.as_secs_f64()) * 100.0) as f32;
    let out_bytes_per_s = pane.bytes.push(now, counters.bytes_out as f64) as f32;
    // Only output that changed the screen is work; a dialog's shape counts once the screen has
    // held still from one tick to the next.
    let mut still = true;
    if pane.looked_at != Some(counters.bytes_out) {
        pane.looked_at = Some(counters.bytes_out);
        if let Some(screen) = look(&pane.watch.term, pane.fingerprint) {
            // The first look at a screen nothing was written to yet is no change.
            if pane.fingerprint.is_some() || counters.bytes_out > 0 {
                pane.last_change = Some(now);
                still = false;
            }
            pane.fingerprint = Some(screen.fingerprint);
            pane.found = pane.watch.rules.find(&screen.rows, screen.cursor_row);
        }
    }
    let screen_rule =
        pane.found.as_ref().filter(|found| still || !found.when_still).map(|f| f.text.clone());
    let seen = Observation {
        now,
        last_change: pane.last_change,
        cpu_percent,
        bells: counters.bells,
        notifications: counters.notifications,
        last_notification: counters.last_notification,
        prompts: counters.prompts,
        screen_rule,
        last_typed: counters.last_typed,
        exited: counters.output_ended.then_some(None),
    };
    let state = pane.pulse.observe(&seen, pane.watch.limits).clone();
    // One history entry per second: the peaks within it.
    let (second, peak_cpu, peak_out) = pane.second;
    if now.as_secs() != second {
        pane.history.push_back((peak_cpu, peak_out));
        while pane.history.len() > HISTORY {
            pane.history.pop_front();
        }
        pane.second = (now.as_secs(), 0.0, 0.0);
    }
    pane.second.1 = pane.second.1.max(cpu_percent);
    pane.second.2 = pane.second.2.max(out_bytes_per_s);
    PanePulse {
        state,
        cpu_percent,
        out_bytes_per_s,
        since: pane.pulse.time_in_state(now),
        history: pane.history.iter().copied().collect(),
        memory_bytes,
        muted: false,
    }
}

/// Say in the pane when its cgroup's limits were hit since the last tick (a process killed for
/// memory, CPU held back): once per new kill, once per stretch of throttling.
fn say_limits_hit(pane: &mut Watched, cgroup: Arc<PaneCgroup>) {
    let (now, before) = (cgroup.limit_events(), pane.limit_events);
    pane.limit_events = now;
    let limits = cgroup.limits();
    let mut notes = Vec::new();
    if let Some(bytes) = limits.memory_bytes.filter(|_| now.oom_kills > before.oom_kills) {
        notes.push(format!(
            "its memory limit ({}) was hit: the kernel ended a process in this pane",
            crate::cgroup::size_words(bytes)
        ));
    }
    if let Some(cpus) = limits.cpus.filter(|_| now.throttled > 0 && before.throttled == 0) {
        notes.push(format!("it is held to its CPU limit ({cpus} cores)"));
    }
    if notes.is_empty() {
        return;
    }
    // paddock's own words, through the unmasked path (they name no value).
    let mut term = pane.watch.term.lock().unwrap_or_else(PoisonError::into_inner);
    for note in notes {
        term.advance(format!("\r\n\x1b[33mpaddock: {note}\x1b[0m\r\n").as_bytes());
    }
}

/// A screen as the rules read it.
struct Screen {
    fingerprint: u64,
    rows: Vec<String>,
    cursor_row: usize,
}

/// The screen of `term`, unless its digest is still `before` (nothing new to read).
fn look(term: &Mutex<Terminal>, before: Option<u64>) -> Option<Screen> {
    let term = term.lock().unwrap_or_else(PoisonError::into_inner);
    let fingerprint = term.screen_fingerprint();
    if before == Some(fingerprint) {
        return None;
    }
    let rows = term.rows().iter().map(row_text).collect();
    Some(Screen { fingerprint, rows, cursor_row: term.cursor().row })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::{TermConfig, TermSize};

    fn watch(pane: u32, epoch: Instant) -> Watch {
        Watch {
            pane,
            activity: Arc::new(Activity::new(epoch)),
            pid: None,
            limits: Thresholds { busy_cpu: 5.0, quiet_after: Duration::from_secs(5) },
            rules: Rules::new(Vec::new()),
            cgroup: None,
            term: Arc::new(Mutex::new(Terminal::new(TermSize::new(10, 2), TermConfig::default()))),
        }
    }

    #[test]
    fn a_new_rate_applies_from_the_next_tick() {
        let sampler = Sampler::start(Duration::from_secs(600), Arc::new(|| {})).expect("thread");
        sampler.set_period(Duration::from_millis(10));
        sampler.watch(watch(7, sampler.epoch()));
        let deadline = Instant::now() + Duration::from_secs(30);
        while !sampler.latest().panes.contains_key(&7) {
            assert!(Instant::now() < deadline, "no sample yet: the old 600 s period still holds");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn cpu_is_averaged_over_the_window_so_an_idle_programs_bursts_stay_below_the_floor() {
        // An agent idle at its prompt: 20 ms of housekeeping once a second, sampled at 4 Hz.
        // One tick would read 8% each second (over a 5% floor); the window reads 2%.
        let mut window = Window::default();
        let mut used = 0.0;
        let mut peak: f64 = 0.0;
        for tick in 0..40u64 {
            if tick % 4 == 0 {
                used += 0.020;
            }
            let percent = window.push(Duration::from_millis(250 * tick), used) * 100.0;
            if tick >= 8 {
                peak = peak.max(percent);
            }
        }
        assert!(peak < 2.5, "{peak}");
        // Steady work reads as it is, and stopping shows within the window.
        let mut window = Window::default();
        let at = |ms: u64| Duration::from_millis(ms);
        for tick in 0..12u64 {
            window.push(at(250 * tick), 0.125 * tick as f64);
        }
        assert!((window.push(at(3000), 1.5) * 100.0 - 50.0).abs() < 1.0);
        for tick in 13..30u64 {
            window.push(at(250 * tick), 1.5);
        }
        assert_eq!(window.push(at(7500), 1.5), 0.0);
    }

    #[test]
    fn the_level_is_the_busier_of_cpu_and_output_and_stays_within_one() {
        let pulse = |cpu_percent, out_bytes_per_s| PanePulse {
            state: PulseState::Working,
            cpu_percent,
            out_bytes_per_s,
            since: Duration::ZERO,
            history: Vec::new(),
            memory_bytes: 0,
            muted: false,
        };
        assert_eq!(pulse(0.0, 0.0).level(), 0.0);
        assert_eq!(pulse(50.0, 0.0).level(), 0.5);
        assert_eq!(pulse(10.0, HALF_LEVEL_OUTPUT).level(), 0.5);
        assert_eq!(pulse(180.0, 0.0).level(), 1.0, "two busy cores read as full");
        assert!(pulse(0.0, 1e9).level() <= 1.0);
    }
}
