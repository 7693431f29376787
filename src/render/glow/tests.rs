use std::time::{Duration, Instant};

use super::*;

fn at(start: Instant, ms: u64) -> Instant {
    start + Duration::from_millis(ms)
}

fn target(kind: GlowKind, level: f32) -> GlowTarget {
    GlowTarget { kind, level, in_state: Duration::ZERO }
}

#[test]
fn a_pane_seen_first_glows_at_once_and_a_steady_one_draws_no_frames() {
    let start = Instant::now();
    let mut glows = Glows::default();
    glows.step(&[(1, target(GlowKind::Quiet, 0.0)), (2, target(GlowKind::Exited, 0.0))], start);
    assert_eq!(glows.look(1, start), Some((GlowKind::Quiet, 0.18)));
    assert_eq!(glows.look(2, start), Some((GlowKind::Exited, 0.12)));
    assert_eq!(glows.next_frame(start), None);
    // The same again later: still nothing to draw.
    glows.step(
        &[(1, target(GlowKind::Quiet, 0.0)), (2, target(GlowKind::Exited, 0.0))],
        at(start, 5000),
    );
    assert_eq!(glows.next_frame(at(start, 5000)), None);
}

#[test]
fn a_working_pane_eases_toward_its_level_then_stops_drawing() {
    let start = Instant::now();
    let mut glows = Glows::default();
    glows.step(&[(1, target(GlowKind::Working, 0.0))], start);
    assert_eq!(glows.look(1, start), Some((GlowKind::Working, 0.35)));
    glows.step(&[(1, target(GlowKind::Working, 1.0))], start);
    let mut last = 0.35;
    let mut now = start;
    let mut frames = 0;
    while let Some(next) = glows.next_frame(now) {
        assert_eq!(next, now + FRAME, "frames follow each other while it moves");
        now = next;
        let (_, intensity) = glows.look(1, now).expect("shown");
        assert!(intensity > last, "brighter each frame: {intensity} after {last}");
        last = intensity;
        frames += 1;
        assert!(frames < 100, "it arrives");
    }
    assert_eq!(last, 1.0, "arrives exactly");
    // 95% of the way in three time constants, so about half a second of frames.
    assert!((8..=20).contains(&frames), "{frames} frames");
}

#[test]
fn a_pane_that_needs_you_pulses_for_a_minute_then_glows_steadily() {
    let start = Instant::now();
    let mut glows = Glows::default();
    glows.step(&[(1, target(GlowKind::NeedsYou, 0.0))], start);
    let look = |ms| glows.look(1, at(start, ms)).expect("shown").1;
    assert_eq!(look(0), 1.0, "full at once");
    assert!((look(750) - 0.1).abs() < 1e-3, "dim half a period later: {}", look(750));
    assert!((look(1500) - 1.0).abs() < 1e-3, "full again a period later: {}", look(1500));
    assert_eq!(glows.next_frame(at(start, 750)), Some(at(start, 750) + FRAME));
    // It ends where it stays: at full brightness, without a jump.
    assert!(look(59_990) > 0.99, "{}", look(59_990));
    // The pulse's last frame lands when it ends.
    let near_end = start + PULSING_FOR - Duration::from_millis(10);
    assert_eq!(glows.next_frame(near_end), Some(start + PULSING_FOR));
    assert_eq!(glows.look(1, start + PULSING_FOR), Some((GlowKind::NeedsYou, 1.0)));
    assert_eq!(glows.next_frame(start + PULSING_FOR), None, "steady after a minute");
}

#[test]
fn a_pane_that_has_waited_long_does_not_pulse_again_when_shown() {
    let start = Instant::now();
    let mut glows = Glows::default();
    let waited = |secs| GlowTarget {
        kind: GlowKind::NeedsYou,
        level: 0.0,
        in_state: Duration::from_secs(secs),
    };
    // Its tab is shown an hour into its wait: a steady glow, no frames.
    glows.step(&[(1, waited(3600))], start);
    assert_eq!(glows.look(1, start), Some((GlowKind::NeedsYou, 1.0)));
    assert_eq!(glows.next_frame(start), None);
    // Ten seconds into its wait: it pulses for the fifty left.
    let mut glows = Glows::default();
    glows.step(&[(2, waited(10))], start);
    assert_eq!(
        glows.next_frame(start + Duration::from_secs(49)),
        Some(start + Duration::from_secs(49) + FRAME)
    );
    assert_eq!(glows.next_frame(start + Duration::from_secs(50)), None);
}

#[test]
fn a_changed_state_takes_its_color_at_once_and_its_intensity_gradually() {
    let start = Instant::now();
    let mut glows = Glows::default();
    glows.step(&[(1, target(GlowKind::Working, 1.0))], start);
    glows.step(&[(1, target(GlowKind::Quiet, 0.0))], at(start, 1000));
    let (kind, intensity) = glows.look(1, at(start, 1000)).expect("shown");
    assert_eq!((kind, intensity), (GlowKind::Quiet, 1.0), "fades from where it was");
    let (_, later) = glows.look(1, at(start, 1120)).expect("shown");
    assert!(0.18 < later && later < 0.9, "{later}");
    assert_eq!(glows.look(1, at(start, 3000)), Some((GlowKind::Quiet, 0.18)));
}

#[test]
fn panes_no_longer_shown_are_forgotten() {
    let start = Instant::now();
    let mut glows = Glows::default();
    glows.step(&[(1, target(GlowKind::NeedsYou, 0.0)), (2, target(GlowKind::Quiet, 0.0))], start);
    glows.step(&[(2, target(GlowKind::Quiet, 0.0))], at(start, 100));
    assert_eq!(glows.look(1, at(start, 100)), None);
    assert_eq!(glows.next_frame(at(start, 100)), None, "the waiting pane's pulse went with it");
}

fn area(band: [f32; 4]) -> f32 {
    band[2] * band[3]
}

fn overlaps(a: [f32; 4], b: [f32; 4]) -> bool {
    a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3]
}

#[test]
fn the_bands_cover_the_strip_and_the_border_once_inside_the_pane() {
    let shape = GlowShape { reach: 8.0, strip: 16.0, line: 1.0 };
    let pane = [10.0, 20.0, 200.0, 100.0];
    let color = Rgb { r: 255, g: 0, b: 0 };
    let mut bands = Vec::new();
    push_glow(pane, shape, color, 0.5, &mut bands);
    assert_eq!(bands.len(), 4);
    let rects: Vec<[f32; 4]> = bands.iter().map(|b| b.band).collect();
    // The strip and the top edge, the bottom edge, two sides between.
    assert_eq!(rects[0], [10.0, 20.0, 200.0, 16.0]);
    assert_eq!(rects[1], [10.0, 112.0, 200.0, 8.0]);
    assert_eq!(rects[2], [10.0, 36.0, 8.0, 76.0]);
    assert_eq!(rects[3], [202.0, 36.0, 8.0, 76.0]);
    for (i, a) in rects.iter().enumerate() {
        for b in &rects[i + 1..] {
            assert!(!overlaps(*a, *b), "{a:?} and {b:?} overlap: those pixels would blend twice");
        }
    }
    let border = 200.0 * 100.0 - (200.0 - 16.0) * (100.0 - 16.0 - 8.0);
    assert_eq!(rects.iter().map(|r| area(*r)).sum::<f32>(), border);
    for band in &bands {
        assert_eq!(band.pane, pane);
        assert_eq!(band.color, [1.0, 0.0, 0.0, 0.5]);
        assert_eq!(band.shape, [8.0, 16.0, 1.0, 0.0]);
    }
}

#[test]
fn a_pane_smaller_than_the_glow_is_covered_once_and_a_dark_glow_draws_nothing() {
    let shape = GlowShape { reach: 8.0, strip: 16.0, line: 1.0 };
    let color = Rgb { r: 1, g: 2, b: 3 };
    let mut bands = Vec::new();
    push_glow([0.0, 0.0, 10.0, 12.0], shape, color, 1.0, &mut bands);
    let rects: Vec<[f32; 4]> = bands.iter().map(|b| b.band).collect();
    assert_eq!(rects, vec![[0.0, 0.0, 10.0, 12.0]], "the strip band takes it all");
    bands.clear();
    push_glow([0.0, 0.0, 10.0, 30.0], shape, color, 0.0, &mut bands);
    push_glow([0.0, 0.0, 0.0, 30.0], shape, color, 1.0, &mut bands);
    assert!(bands.is_empty());
}

#[test]
fn the_shape_grows_with_the_cells() {
    assert_eq!(GlowShape::for_cells(16.0, 16.0), GlowShape { reach: 12.0, strip: 16.0, line: 1.0 });
    assert_eq!(GlowShape::for_cells(32.0, 0.0), GlowShape { reach: 24.0, strip: 0.0, line: 2.0 });
}
