//! The pulse overlay without a GPU: how each pane's glow looks at a moment, how it moves
//! between pulse samples, and the bands `shaders/pulse.wgsl` draws.
//!
//! Pure, and driven by the instants it is given, so tests need no clock. A glow's color is its
//! pane's state; its intensity eases toward what the pane's activity asks for, and a pane that
//! needs you pulses through its first minute of waiting. `next_frame` says when the picture will
//! next differ, and `None` once every glow is steady: from then on the overlay draws no frames.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::scene::rgba;
use crate::term::Rgb;

/// One band of a pane's glow: the layout the glow shader's instance buffer reads.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GlowInstance {
    /// The quad drawn: x, y, width, height in pixels.
    pub band: [f32; 4],
    /// The pane it belongs to, its title strip included.
    pub pane: [f32; 4],
    /// The state's color, sRGB 0–1, and the intensity in alpha.
    pub color: [f32; 4],
    /// The glow's reach inward, the title strip's height and the edge line's width, in pixels.
    pub shape: [f32; 4],
}

/// The pane states the overlay tells apart by color.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlowKind {
    Working,
    Quiet,
    NeedsYou,
    Exited,
}

/// What a pane's pulse asks of its glow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlowTarget {
    pub kind: GlowKind,
    /// How hard the pane works, 0 to 1.
    pub level: f32,
    /// How long the pane has been in its state: a pane that has waited for an hour does not
    /// start pulsing again when its tab is shown.
    pub in_state: Duration,
}

impl GlowTarget {
    /// The intensity this asks for: quiet and exited panes glow faintly and steadily, a working
    /// one from a third up to full as it works harder, a waiting one at full.
    pub fn intensity(&self) -> f32 {
        match self.kind {
            GlowKind::Working => 0.35 + 0.65 * self.level.clamp(0.0, 1.0),
            GlowKind::Quiet => 0.18,
            GlowKind::NeedsYou => 1.0,
            GlowKind::Exited => 0.12,
        }
    }
}

/// A pulse state's color, decided once for everything that shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateColor {
    /// The ANSI color (SGR foreground) its title-strip badge and tab mark are written in,
    /// drawn through the theme's palette.
    pub ansi: u8,
    /// The glow's shade of that color.
    pub glow: Rgb,
}

impl GlowKind {
    /// This state's color: working green, quiet blue, needs-you red, exited grey.
    pub fn color(self) -> StateColor {
        let (ansi, glow) = match self {
            GlowKind::Working => (32, Rgb { r: 0x3f, g: 0xb9, b: 0x50 }),
            GlowKind::Quiet => (34, Rgb { r: 0x4c, g: 0x8d, b: 0xd6 }),
            GlowKind::NeedsYou => (31, Rgb { r: 0xff, g: 0x5a, b: 0x3c }),
            GlowKind::Exited => (37, Rgb { r: 0x8b, g: 0x8b, b: 0x95 }),
        };
        StateColor { ansi, glow }
    }
}

/// How quickly a glow follows its target: 95% of the way in three of these.
const EASE: Duration = Duration::from_millis(120);
/// A pane that needs you brightens and dims once per this…
pub const PULSE_PERIOD: Duration = Duration::from_millis(1500);
/// …for this long after it started waiting (40 periods, so the pulse ends at full brightness,
/// where it stays); then it glows steadily (a pulse that goes on for hours costs power and
/// stops being noticed).
pub const PULSING_FOR: Duration = Duration::from_secs(60);
/// The time between frames while a glow moves: 30 a second.
pub const FRAME: Duration = Duration::from_micros(33_333);
/// Closer than this to its target (about one step of an 8-bit channel), a glow has arrived.
const ARRIVED: f32 = 0.004;

/// A pane's glow as last stepped.
#[derive(Clone, Copy, Debug)]
struct Shown {
    kind: GlowKind,
    intensity: f32,
    target: f32,
    /// When it took on its kind.
    since: Instant,
    /// When it was last stepped.
    at: Instant,
}

impl Shown {
    fn intensity_at(&self, now: Instant) -> f32 {
        approach(self.intensity, self.target, now.saturating_duration_since(self.at))
    }

    fn pulsing_until(&self) -> Option<Instant> {
        (self.kind == GlowKind::NeedsYou).then(|| self.since + PULSING_FOR)
    }
}

/// `from` moved toward `to` for `elapsed`, arriving exactly once close enough.
fn approach(from: f32, to: f32, elapsed: Duration) -> f32 {
    let moved = from + (to - from) * (1.0 - (-elapsed.as_secs_f32() / EASE.as_secs_f32()).exp());
    if (to - moved).abs() <= ARRIVED {
        to
    } else {
        moved
    }
}

/// How bright a waiting pane's glow is, `waited` after it started waiting: full at once, then
/// between 10% and full once per period, then full for good.
fn pulse(waited: Duration) -> f32 {
    if waited >= PULSING_FOR {
        return 1.0;
    }
    let phase = waited.as_secs_f32() / PULSE_PERIOD.as_secs_f32() * std::f32::consts::TAU;
    0.55 + 0.45 * phase.cos()
}

/// Every shown pane's glow, keyed by pane id.
#[derive(Debug, Default)]
pub struct Glows {
    shown: HashMap<u32, Shown>,
}

impl Glows {
    /// Move each pane's glow toward what its pulse asks for now; panes not listed are
    /// forgotten. A pane seen for the first time (a new pane, or a tab just switched to) glows
    /// at once as it should, without fading in, and a waiting one pulses only for what is
    /// left of its first minute.
    pub fn step(&mut self, targets: &[(u32, GlowTarget)], now: Instant) {
        self.shown.retain(|pane, _| targets.iter().any(|(p, _)| p == pane));
        for &(pane, target) in targets {
            let goal = target.intensity();
            let began = now.checked_sub(target.in_state).unwrap_or(now);
            let shown = self.shown.entry(pane).or_insert(Shown {
                kind: target.kind,
                intensity: goal,
                target: goal,
                since: began,
                at: now,
            });
            shown.intensity = shown.intensity_at(now);
            shown.target = goal;
            shown.at = now;
            if shown.kind != target.kind {
                shown.kind = target.kind;
                shown.since = began;
            }
        }
    }

    /// `pane`'s glow as drawn at `now`: its kind and intensity.
    pub fn look(&self, pane: u32, now: Instant) -> Option<(GlowKind, f32)> {
        let shown = self.shown.get(&pane)?;
        let mut intensity = shown.intensity_at(now);
        if shown.kind == GlowKind::NeedsYou {
            intensity *= pulse(now.saturating_duration_since(shown.since));
        }
        Some((shown.kind, intensity))
    }

    /// When the next frame is due for the glows to move, or `None` when all are steady.
    pub fn next_frame(&self, now: Instant) -> Option<Instant> {
        self.shown
            .values()
            .filter_map(|shown| {
                if shown.intensity_at(now) != shown.target {
                    return Some(now + FRAME);
                }
                // The last frame of a pulse lands when it ends, so the steady glow is drawn.
                let until = shown.pulsing_until().filter(|until| now < *until)?;
                Some((now + FRAME).min(until))
            })
            .min()
    }
}

/// How a glow is drawn in a pane, in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlowShape {
    /// How far the light reaches inward from the edge.
    pub reach: f32,
    /// The title strip's height (0: no strip).
    pub strip: f32,
    /// The edge line's width.
    pub line: f32,
}

impl GlowShape {
    /// The shape for cells `cell_height` pixels tall, with a title strip of `strip` pixels.
    pub fn for_cells(cell_height: f32, strip: f32) -> GlowShape {
        GlowShape {
            reach: (cell_height * 0.75).round().max(2.0),
            strip,
            line: (cell_height / 16.0).round().max(1.0),
        }
    }
}

/// The bands that draw a glow over `pane` (x, y, width, height): the top (with the title
/// strip), the bottom, then the two sides between them, none overlapping. Nothing at zero
/// intensity.
pub fn push_glow(
    pane: [f32; 4],
    shape: GlowShape,
    color: Rgb,
    intensity: f32,
    out: &mut Vec<GlowInstance>,
) {
    let [x, y, width, height] = pane;
    if intensity <= 0.0 || width <= 0.0 || height <= 0.0 {
        return;
    }
    let mut color = rgba(color);
    color[3] = intensity.min(1.0);
    let top = shape.strip.max(shape.reach).min(height);
    let bottom = shape.reach.min(height - top);
    let side = shape.reach.min(width / 2.0);
    let middle = height - top - bottom;
    let mut bands = vec![[x, y, width, top]];
    if bottom > 0.0 {
        bands.push([x, y + height - bottom, width, bottom]);
    }
    if middle > 0.0 {
        bands.push([x, y + top, side, middle]);
        bands.push([x + width - side, y + top, side, middle]);
    }
    out.extend(bands.into_iter().map(|band| GlowInstance {
        band,
        pane,
        color,
        shape: [shape.reach, shape.strip, shape.line, 0.0],
    }));
}

#[cfg(test)]
mod tests;
