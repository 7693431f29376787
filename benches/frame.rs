//! Frame CPU time for a 200x50 pane: everything before the GPU works on a frame (reading the
//! model into rectangles and styled runs, shaping the rows that changed, glyphon's prepare and
//! the buffer uploads), on a screen where every row changed against one where one row did.
//! Goal: the one-row frame costs at most 10% of the full one. Runs on whatever adapter
//! `Gpu::headless` finds (in CI and on the build machine: Mesa's llvmpipe).
//! `cargo bench --bench frame` runs it.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use paddock::render::gpu::{Gpu, RectPipeline, TARGET_FORMAT};
use paddock::render::scene::{push_pane, CursorStyle, PaneScene, Theme};
use paddock::render::text::{Fonts, PaneText, TextLayer};
use paddock::term::{CursorShape, TermConfig, TermSize, Terminal};

const COLS: usize = 200;
const LINES: usize = 50;

/// A full screen of colored build-log text; `variant` changes every row's text.
fn screen(variant: usize) -> Vec<u8> {
    let mut out = String::from("\x1b[H");
    for row in 0..LINES {
        let color = 31 + (row + variant) % 7;
        out.push_str(&format!(
            "\x1b[{};1H\x1b[{color}m{row:>3} {variant:>6}\x1b[0m compiling paddock::render::text (frame {variant}) \x1b[2m{}\x1b[0m",
            row + 1,
            "src/render/text.rs:123:45 warning: unused variable ".repeat(2)
        ));
    }
    out.into_bytes()
}

struct Renderer {
    gpu: Gpu,
    rects: RectPipeline,
    text: TextLayer,
    theme: Theme,
    size: (u32, u32),
}

impl Renderer {
    /// One frame's CPU side: snapshot, shape what changed, prepare and upload.
    fn frame(&mut self, term: &Terminal) {
        let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
        let scene = PaneScene::screen(term, [0.0, 0.0], true);
        let mut rects = Vec::new();
        push_pane(&scene, self.text.cell_size(), &self.theme, cursor, &mut rects);
        let text = PaneText::of(1, &scene, &self.theme);
        self.rects.prepare(&self.gpu.device, &self.gpu.queue, self.size, &rects);
        self.text.prepare(&self.gpu.device, &self.gpu.queue, self.size, &[&text]).expect("prepare");
        black_box(rects.len());
    }
}

fn frames(c: &mut Criterion) {
    let gpu = Gpu::headless().expect("a graphics adapter (Mesa's llvmpipe will do)");
    let text = TextLayer::new(&gpu.device, &gpu.queue, TARGET_FORMAT, 15.0, Fonts::BundledOnly);
    let cell = text.cell_size();
    let size = ((COLS as f32 * cell.width) as u32, (LINES as f32 * cell.height) as u32);
    let rects = RectPipeline::new(&gpu.device, TARGET_FORMAT);
    let mut renderer = Renderer { gpu, rects, text, theme: Theme::default(), size };
    let mut term = Terminal::new(TermSize::new(COLS, LINES), TermConfig::default());
    let screens = [screen(1), screen(2)];
    let mut group = c.benchmark_group("frame_200x50");
    let mut flip = 0;
    group.bench_function("full_redraw", |b| {
        b.iter(|| {
            flip ^= 1;
            term.advance(&screens[flip]);
            renderer.frame(&term);
        })
    });
    term.advance(&screens[0]);
    renderer.frame(&term);
    let mut counter = 0u32;
    group.bench_function("one_damaged_row", |b| {
        b.iter(|| {
            counter = counter.wrapping_add(1);
            term.advance(format!("\x1b[25;1H\x1b[33m{counter:>3}\x1b[0m").as_bytes());
            renderer.frame(&term);
        })
    });
    let theme = Theme::default();
    group.bench_function("snapshot_only", |b| {
        b.iter(|| {
            let scene = PaneScene::screen(&term, [0.0, 0.0], true);
            let mut rects = Vec::new();
            let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
            push_pane(&scene, cell, &theme, cursor, &mut rects);
            black_box(PaneText::of(1, &scene, &theme));
        })
    });
    group.finish();
}

criterion_group!(benches, frames);
criterion_main!(benches);
