//! One frame's content, gathered from the panes' models: the tab bar, each pane's title strip,
//! cells, cursor and highlights, the dividers and bell flashes.
//!
//! This is the snapshot step: each pane's model is locked only while its rows are read into
//! rectangles and styled text runs, and released before anything is shaped or touches the
//! GPU. A pane in synchronized output (mode 2026) keeps its last complete picture until the
//! program ends the update, or for `SYNC_HOLD` at most.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::app::{ChangedLook, PaneLook, Shown};
use crate::input::Chord;
use crate::mux::{PaneId, Rect};
use crate::pulse::{PanePulse, PulseState, Reason};
use crate::render::chrome;
use crate::render::glow::{push_glow, GlowInstance, GlowKind, GlowShape, GlowTarget, Glows};
use crate::render::scene::{
    push_dividers, push_pane, rgba, CellSize, CursorStyle, PaneScene, RectInstance, Theme,
};
use crate::render::text::PaneText;
use crate::term::{CursorShape, Modes, TermSize, Terminal};
use crate::view::{ClipboardNote, PaneView, REFUSAL_SHOWN};

/// Rows above the panes for the tab bar.
pub const TAB_BAR_ROWS: usize = 1;
/// The text layer's key for the tab bar's row (pane ids start at 1 and never reach it).
const TAB_BAR_KEY: u32 = u32::MAX;
/// Title strips' keys: the pane's id with the top bit set.
const STRIP_KEY: u32 = 1 << 31;
/// The longest a program may hold its pane's picture with synchronized output.
const SYNC_HOLD: Duration = Duration::from_millis(150);
/// How long a bell flashes its pane.
pub const FLASH: Duration = Duration::from_millis(120);

/// What one frame draws.
pub struct Frame<'a> {
    pub rects: Vec<RectInstance>,
    /// The pulse overlay, drawn over the rectangles and under the text.
    pub glows: Vec<GlowInstance>,
    pub texts: Vec<&'a PaneText>,
    /// When a flash or a held picture ends and another frame is due, if any.
    pub next: Option<Instant>,
}

/// A pane's last picture, kept for synchronized output.
struct Picture {
    origin: [f32; 2],
    cols: usize,
    rects: Vec<RectInstance>,
    text: PaneText,
    /// When the program started holding it (`None`: not held).
    held_since: Option<Instant>,
}

pub use chrome::TabSpans;

/// Builds frames, keeping each pane's last picture.
#[derive(Default)]
pub struct FrameBuilder {
    pictures: HashMap<PaneId, Picture>,
    bar: Option<PaneText>,
    strips: Vec<PaneText>,
    pub tab_spans: TabSpans,
    /// How each shown pane's glow moves.
    glows: Glows,
}

/// What the window knows besides the workspace.
pub struct FrameContext<'a> {
    pub cell: CellSize,
    pub grid: TermSize,
    /// Where the grid starts in the window (below the tab bar, inside the padding).
    pub origin: [f32; 2],
    /// The chord that restarts a thread, named where a thread's configuration changed.
    pub restart_chord: Option<Chord>,
    /// The key that lets a held clipboard write through.
    pub allow_clipboard_chord: Option<Chord>,
    /// The chord that lets a pane's last refused host through, to name on its strip.
    pub allow_host_chord: Option<Chord>,
    pub approve_chord: Option<Chord>,
    pub theme: &'a Theme,
    pub software: bool,
    pub views: &'a HashMap<PaneId, PaneView>,
    pub flashes: &'a HashMap<PaneId, Instant>,
    /// Whether pane borders glow with their pulse (the `pulse_glow` setting).
    pub glow: bool,
    pub now: Instant,
}

impl FrameBuilder {
    pub fn build<'a>(&'a mut self, shown: &dyn Shown, cx: &FrameContext<'_>) -> Frame<'a> {
        let cell = cx.cell;
        let mut rects = Vec::new();
        let mut next: Option<Instant> = None;
        let mut soonest = |at: Instant| next = Some(next.map_or(at, |n: Instant| n.min(at)));
        let (bar, spans) = tab_bar(shown, cx.grid.cols, cx.software);
        self.tab_spans = spans;
        let hidden = CursorStyle { shape: CursorShape::Block, thickness: 0.0 };
        let bar_scene = PaneScene::screen(&bar, [0.0, 0.0], false);
        push_pane(&bar_scene, cell, cx.theme, hidden, &mut rects);
        self.bar = Some(PaneText::of(TAB_BAR_KEY, &bar_scene, cx.theme));
        self.strips.clear();
        let Some(tab) = shown.mux().active_tab() else {
            self.pictures.clear();
            self.glows = Glows::default();
            return Frame { rects, glows: Vec::new(), texts: self.bar.iter().collect(), next };
        };
        let area = Rect::new(0, 0, cx.grid.cols, cx.grid.lines);
        let (layout, dividers) = tab.layout(area);
        let [left, top] = cx.origin;
        push_dividers(&dividers, [left, top], cell, cx.theme, &mut rects);
        let header = shown.header_rows();
        let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
        let no_view = PaneView::default();
        let mut glowing = Vec::new();
        for (pane, rect) in &layout {
            let Some(term) = shown.term(*pane) else {
                continue;
            };
            let focused = tab.focus() == *pane;
            let view = cx.views.get(pane).unwrap_or(&no_view);
            let x = left + rect.col as f32 * cell.width;
            let strip_y = top + rect.row as f32 * cell.height;
            // Read once: the strip and the glow show the same sample.
            let look = shown.look(*pane);
            let pulse = look.as_ref().and_then(|l| l.pulse.as_ref());
            if let Some(target) = pulse.filter(|_| cx.glow).map(glow_target) {
                let size = [rect.cols as f32 * cell.width, rect.rows as f32 * cell.height];
                glowing.push((pane.0, target, [x, strip_y, size[0], size[1]]));
            }
            let origin = [x, strip_y + header as f32 * cell.height];
            if header > 0 {
                let strip = title_strip(look.as_deref(), &term, view, rect.cols, cx);
                if let Some(ClipboardNote::Refused { at }) = &view.clipboard {
                    if cx.now < *at + REFUSAL_SHOWN {
                        soonest(*at + REFUSAL_SHOWN);
                    }
                }
                let background = if focused { cx.theme.focused_strip } else { cx.theme.strip };
                let width = rect.cols as f32 * cell.width;
                rects.push(RectInstance::new(x, strip_y, width, cell.height, background));
                let strip_scene = PaneScene::screen(&strip, [x, strip_y], false);
                push_pane(&strip_scene, cell, cx.theme, hidden, &mut rects);
                self.strips.push(PaneText::of(STRIP_KEY | pane.0, &strip_scene, cx.theme));
            }
            let syncing = term.modes().flags.contains(Modes::SYNCHRONIZED_OUTPUT);
            if let Some(held) = self
                .pictures
                .get_mut(pane)
                .filter(|held| syncing && held.origin == origin && held.cols == term.size().cols)
            {
                // The program is mid-update: keep showing its last complete picture.
                let until = *held.held_since.get_or_insert(cx.now) + SYNC_HOLD;
                if cx.now < until {
                    soonest(until);
                    rects.extend_from_slice(&held.rects);
                    continue;
                }
            }
            let picture = picture(&term, view, origin, focused, pane.0, cell, cx.theme, cursor);
            drop(term);
            rects.extend_from_slice(&picture.rects);
            if let Some(&flashed) = cx.flashes.get(pane) {
                if cx.now < flashed + FLASH {
                    soonest(flashed + FLASH);
                    let size = [rect.cols as f32 * cell.width, rect.rows as f32 * cell.height];
                    let mut color = rgba(cx.theme.foreground);
                    color[3] = 0.18;
                    rects.push(RectInstance { origin: [x, strip_y], size, color });
                }
            }
            self.pictures.insert(*pane, picture);
        }
        // Pictures of panes no longer shown.
        self.pictures.retain(|pane, _| layout.iter().any(|(p, _)| p == pane));
        let glows = self.glow(&glowing, header as f32 * cell.height, cell, cx.now);
        if let Some(at) = self.glows.next_frame(cx.now) {
            soonest(at);
        }
        let mut texts: Vec<&PaneText> = self.bar.iter().chain(&self.strips).collect();
        for (pane, _) in &layout {
            if let Some(picture) = self.pictures.get(pane) {
                texts.push(&picture.text);
            }
        }
        Frame { rects, glows, texts, next }
    }

    /// Step the shown panes' glows to `now` and lay out their bands.
    fn glow(
        &mut self,
        panes: &[(u32, GlowTarget, [f32; 4])],
        strip: f32,
        cell: CellSize,
        now: Instant,
    ) -> Vec<GlowInstance> {
        let targets: Vec<(u32, GlowTarget)> = panes.iter().map(|p| (p.0, p.1)).collect();
        self.glows.step(&targets, now);
        let shape = GlowShape::for_cells(cell.height, strip);
        let mut bands = Vec::new();
        for &(pane, _, area) in panes {
            if let Some((kind, intensity)) = self.glows.look(pane, now) {
                push_glow(area, shape, kind.color().glow, intensity, &mut bands);
            }
        }
        bands
    }
}

/// What a pane's pulse asks of its glow.
fn glow_target(pulse: &PanePulse) -> GlowTarget {
    GlowTarget {
        kind: kind_of(&pulse.counted_state()),
        level: pulse.level(),
        in_state: pulse.since,
    }
}

/// Which of the states the glow, badges and marks know a pane's pulse is in.
fn kind_of(state: &PulseState) -> GlowKind {
    match state {
        PulseState::Working => GlowKind::Working,
        PulseState::Quiet => GlowKind::Quiet,
        PulseState::NeedsYou(_) => GlowKind::NeedsYou,
        PulseState::Exited(_) => GlowKind::Exited,
    }
}

#[allow(clippy::too_many_arguments)]
fn picture(
    term: &Terminal,
    view: &PaneView,
    origin: [f32; 2],
    focused: bool,
    key: u32,
    cell: CellSize,
    theme: &Theme,
    cursor: CursorStyle,
) -> Picture {
    let scene = PaneScene::viewed(term, view, origin, focused);
    let mut rects = Vec::new();
    push_pane(&scene, cell, theme, cursor, &mut rects);
    let text = PaneText::of(key, &scene, theme);
    Picture { origin, cols: term.size().cols, rects, text, held_since: None }
}

/// The tab bar: each tab's thread name, else its focused pane's title, else its program.
fn tab_bar(shown: &dyn Shown, cols: usize, software: bool) -> (Terminal, TabSpans) {
    let mux = shown.mux();
    let labels: Vec<chrome::TabLabel> = mux
        .tabs()
        .iter()
        .map(|tab| {
            let title = shown.term(tab.focus()).and_then(|t| t.title().map(str::to_owned));
            let looks: Vec<_> = tab.panes().into_iter().filter_map(|p| shown.look(p)).collect();
            let name = match (&tab.thread, title) {
                (Some(thread), _) => thread.clone(),
                (None, Some(title)) if !title.is_empty() => title,
                _ => tab.name.clone(),
            };
            // Seen from any tab: how its panes are locked, and whether a thread here is defined
            // differently now.
            let locks: Vec<&str> =
                looks.iter().filter_map(|l| l.lock.as_ref()).map(|l| l.level.as_str()).collect();
            let mut name = name;
            if let Some(level) = locks.iter().max_by_key(|level| severity(level)) {
                name = format!("{name} [{level}]");
            }
            if looks.iter().any(|l| l.config_changed) {
                name = format!("{name} \u{b7} config changed");
            }
            // The tab's panes taken together, needs-you first: a tab that hides a waiting
            // agent says so.
            let mark = looks
                .iter()
                .filter_map(|l| l.pulse.as_ref())
                .map(|pulse| pulse.counted_state())
                .max_by_key(urgency)
                .map(|state| pulse_color(&state));
            chrome::TabLabel { name, mark }
        })
        .collect();
    let active = mux.active_tab().and_then(|a| mux.tabs().iter().position(|t| t.id == a.id));
    let note = software.then_some("software renderer");
    chrome::tab_bar(&labels, active, cols, note)
}

/// Which pane state a tab's mark shows: the one that most wants a look.
fn urgency(state: &PulseState) -> u8 {
    match state {
        PulseState::NeedsYou(_) => 3,
        PulseState::Working => 2,
        PulseState::Quiet => 1,
        PulseState::Exited(_) => 0,
    }
}

/// The SGR color of a pulse badge or tab mark (`GlowKind::color`).
fn pulse_color(state: &PulseState) -> u8 {
    kind_of(state).color().ansi
}

/// The pulse badge where the strip is narrow: a symbol in the state's color.
fn pulse_symbol(state: &PulseState) -> &'static str {
    match state {
        PulseState::NeedsYou(_) => "!",
        PulseState::Exited(_) => "x",
        PulseState::Working | PulseState::Quiet => "\u{25cf}",
    }
}

/// How much a tab's lock word should worry its reader: the worst of its panes is shown.
fn severity(level: &str) -> u8 {
    match level {
        "refused" => 3,
        "degraded" => 2,
        _ => 1,
    }
}

/// A pane's title strip: its program, title and directory; on the right, how far it is
/// scrolled back, or the search being typed.
fn title_strip(
    look: Option<&PaneLook>,
    term: &Terminal,
    view: &PaneView,
    cols: usize,
    cx: &FrameContext<'_>,
) -> Terminal {
    let pulse = look.and_then(|l| l.pulse.as_ref());
    let program = look.map(|l| l.program.as_str()).unwrap_or_default();
    // A configured thread is named first: splits in one tab may run different agents.
    let name = look.and_then(|l| l.name.as_deref());
    let right = match &view.search {
        Some(search) => {
            let missing = !search.query.is_empty() && search.current.is_none();
            Some(chrome::search_prompt(&search.query, missing))
        }
        None => match view.scrolled_back(term) {
            0 if look.is_some_and(|l| l.config_changed) => {
                // A loosened lock is named, so a restart is never a surprise.
                let wider = look.map(|l| l.lock_widening.as_slice()).unwrap_or_default();
                let what = match wider.is_empty() {
                    true => "config changed".to_owned(),
                    false => format!("config changed, LOCK WIDER ({})", wider.join(", ")),
                };
                Some(match cx.restart_chord {
                    Some(chord) => format!("{what}: {chord} restarts"),
                    None => what,
                })
            }
            0 => {
                let allow = cx.allow_clipboard_chord.map(|c| c.to_string());
                // A pinned program that changed comes first: its agent runs without its secret.
                let changed = look.and_then(|l| l.changed_program.as_ref());
                let changed = changed.map(|c| changed_note(c, cx));
                let clipboard = changed.or_else(|| {
                    view.clipboard.as_ref().and_then(|note| note.describe(cx.now, allow.as_deref()))
                });
                // The network's refusal, so a person knows why the agent cannot reach a host.
                clipboard.or_else(|| {
                    let host = crate::sandbox::visible(look?.net_refused.as_deref()?);
                    Some(match cx.allow_host_chord {
                        Some(chord) => format!("refused {host} ({chord} allows)"),
                        None => format!("refused {host}"),
                    })
                })
            }
            n => Some(format!("\u{2191} {n} lines")),
        },
    };
    // A pane nobody asked to lock is a plain terminal and needs no badge; one chosen to run
    // unlocked next to locked ones says so.
    let badge = look.and_then(|l| l.lock.as_ref()).map(|lock| chrome::Badge {
        text: &lock.text,
        // Where the strip is narrow: the color says how locked.
        short: match lock.level.as_str() {
            "unlocked" => "U",
            _ => "L",
        },
        color: match lock.level.as_str() {
            "locked" => 32,
            "degraded" => 33,
            _ => 31,
        },
    });
    let limit = look.and_then(|l| l.memory_limit);
    let pulse_text = pulse.map(|p| pulse_words(p, limit));
    let pulse_badge = pulse.zip(pulse_text.as_deref()).map(|(p, text)| chrome::Badge {
        text,
        short: pulse_symbol(&p.counted_state()),
        color: pulse_color(&p.counted_state()),
    });
    let spark = pulse.and_then(sparkline);
    let strip = chrome::Strip {
        name,
        program,
        title: term.title(),
        cwd: term.working_directory(),
        right: right.as_deref(),
        lock: badge,
        pulse: pulse_badge,
        spark: spark.as_deref(),
    };
    chrome::title_strip(&strip, cols)
}

/// The pulse badge's words: its state (short: the strip also holds the program, its title
/// and the lock), and its memory in use, against its thread's limit where it has one.
fn pulse_words(p: &PanePulse, limit: Option<u64>) -> String {
    let text = match &p.state {
        PulseState::NeedsYou(reason) => {
            let why = match reason {
                Reason::Bell => "bell".to_owned(),
                Reason::Prompt => "prompt".to_owned(),
                Reason::Notification(text) | Reason::Screen(text) => chrome::clean(text, 24),
            };
            format!("NEEDS YOU: {why}")
        }
        PulseState::Exited(_) => "exited".to_owned(),
        state => state.name().to_owned(),
    };
    let text = match (p.memory_bytes, limit) {
        (0, _) => text,
        (used, None) => format!("{text} \u{b7} {}", crate::cgroup::size_words(used)),
        (used, Some(most)) => format!(
            "{text} \u{b7} {}/{}",
            crate::cgroup::size_words(used),
            crate::cgroup::size_words(most)
        ),
    };
    match p.muted {
        true => format!("muted \u{b7} {text}"),
        false => text,
    }
}

/// The strip's last 20 seconds: CPU (a core is full height) or output (its own peak),
/// whichever is higher each second.
fn sparkline(p: &PanePulse) -> Option<String> {
    if p.history.is_empty() {
        return None;
    }
    let out_peak = p.history.iter().map(|h| h.1).fold(1.0, f32::max);
    let levels: Vec<f32> =
        p.history.iter().map(|(cpu, out)| (cpu / 100.0).max(out / out_peak)).collect();
    Some(chrome::sparkline(&levels[levels.len().saturating_sub(20)..], 0.05))
}

/// What of a pane's look a frame draws. Two looks with the same `DrawnLook` draw the same
/// frame, so a view from the server that changes only what no frame shows (the time in a
/// state, CPU figures between two glow steps) wakes no redraw: an idle window draws nothing.
#[derive(Debug, PartialEq)]
pub struct DrawnLook {
    /// The look without its pulse.
    rest: PaneLook,
    pulse: Option<DrawnPulse>,
}

#[derive(Debug, PartialEq)]
struct DrawnPulse {
    state: PulseState,
    words: String,
    spark: Option<String>,
    /// The glow's level, in the sampler's steps.
    level: u8,
}

impl DrawnLook {
    pub fn of(look: &PaneLook) -> DrawnLook {
        let pulse = look.pulse.as_ref().map(|p| DrawnPulse {
            state: p.counted_state(),
            words: pulse_words(p, look.memory_limit),
            spark: sparkline(p),
            level: crate::pulse::level_step(p.level()),
        });
        DrawnLook { rest: PaneLook { pulse: None, ..look.clone() }, pulse }
    }
}

/// The title strip's note for a pinned program that changed since its approval: both
/// fingerprints, so a person can compare them with the new release's before approving.
fn changed_note(changed: &ChangedLook, cx: &FrameContext<'_>) -> String {
    let short = |sha: &str| sha.get(..12).unwrap_or(sha).to_owned();
    // The file's name: the strip is short (the pane's first line has the path).
    let name = crate::sandbox::visible(&changed.file);
    let what = format!(
        "{name} CHANGED {} \u{2192} {}",
        short(&changed.approved_sha256),
        short(&changed.sha256)
    );
    match cx.approve_chord {
        Some(chord) => format!("{what}: {chord} approves"),
        None => what,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::DrawnLook;
    use crate::app::PaneLook;
    use crate::pulse::{PanePulse, PulseState};

    fn look(since: Duration, cpu: f32, history: Vec<(f32, f32)>, memory: u64) -> PaneLook {
        let pulse = PanePulse {
            state: PulseState::Quiet,
            cpu_percent: cpu,
            out_bytes_per_s: 0.0,
            since,
            history,
            memory_bytes: memory,
            muted: false,
        };
        PaneLook {
            name: None,
            program: "sh".into(),
            lock: None,
            pulse: Some(pulse),
            memory_limit: None,
            config_changed: false,
            lock_widening: Vec::new(),
            changed_program: None,
            net_refused: None,
            clipboard: crate::config::ClipboardRule::Ask,
        }
    }

    #[test]
    fn a_look_draws_the_same_frame_until_its_strip_or_glow_would_change() {
        let idle = vec![(0.0, 0.0); 30];
        let drawn = DrawnLook::of(&look(Duration::from_secs(3), 0.0, idle.clone(), 4 << 20));
        // Later, a little CPU, a few more bytes: the strip reads the same.
        let later = look(Duration::from_secs(9), 0.4, idle.clone(), (4 << 20) + 100);
        assert_eq!(DrawnLook::of(&later), drawn);
        // What the strip shows: its sparkline, its memory in words, its state.
        let mut busy = idle.clone();
        busy.push((90.0, 0.0));
        assert_ne!(DrawnLook::of(&look(Duration::from_secs(3), 0.0, busy, 4 << 20)), drawn);
        assert_ne!(DrawnLook::of(&look(Duration::from_secs(3), 0.0, idle.clone(), 9 << 20)), drawn);
        let mut working = look(Duration::from_secs(3), 0.0, idle, 4 << 20);
        working.pulse.as_mut().unwrap().state = PulseState::Working;
        assert_ne!(DrawnLook::of(&working), drawn);
    }
}
