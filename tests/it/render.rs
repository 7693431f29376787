//! Rendering: every shader validates with naga, and the rect pipeline draws the scene of real
//! byte streams on a real GPU adapter (in CI: Mesa's software Vulkan, lavapipe), compared with
//! committed golden PNGs. `cargo xtask bless` rewrites them; a mismatch writes the actual image
//! and a diff under target/golden-failures and says where.

use std::path::Path;

use crate::images::{read_png, write_png};

use paddock::mux::{Axis, Divider, Rect};
use paddock::render::chrome::{self, Badge, Strip};
use paddock::render::glow::{push_glow, GlowKind, GlowShape, GlowTarget, Glows};
use paddock::render::gpu::{
    render_offscreen, render_rects, GlowPipeline, Gpu, Image, RectPipeline, TARGET_FORMAT,
};
use paddock::render::scene::{
    push_dividers, push_pane, CellSize, Colors, CursorStyle, PaneScene, RectInstance, Theme,
};
use paddock::render::text::{font_system, Fonts, PaneText, TextLayer};
use paddock::term::{Cell, CursorShape, TermConfig, TermSize, Terminal};
use paddock::view::{PaneView, Point, Search, Selection, SelectionKind};

#[test]
fn every_shader_validates_with_naga() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("shaders/") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "wgsl") {
            continue;
        }
        let source = std::fs::read_to_string(&path).expect("read shader");
        let module = naga::front::wgsl::parse_str(&source)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
        let mut validator = naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::default(),
        );
        validator
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.emit_to_string(&source)));
        checked += 1;
    }
    assert!(checked >= 1, "no shaders found in {}", dir.display());
}

const CELL: CellSize = CellSize { width: 8.0, height: 16.0 };

fn terminal(cols: usize, lines: usize, bytes: &str) -> Terminal {
    let mut term = Terminal::new(TermSize::new(cols, lines), TermConfig::default());
    term.advance(bytes.as_bytes());
    term
}

/// The 16 colors, a stretch of the 256-color cube and grays, a truecolor ramp, inverse video.
fn palettes() -> String {
    let mut s = String::new();
    for i in 0..16 {
        s.push_str(&format!("\x1b[48;5;{i}m  "));
    }
    s.push_str("\x1b[0m\r\n");
    for i in (16..256).step_by(8) {
        s.push_str(&format!("\x1b[48;5;{i}m "));
    }
    s.push_str("\x1b[0m\r\n");
    for i in 0..32 {
        s.push_str(&format!("\x1b[48;2;{};{};{}m ", i * 8, 255 - i * 8, 128));
    }
    s.push_str("\x1b[0m\r\n\x1b[7m inverse \x1b[0m \x1b[31;7m red \x1b[0m");
    s
}

fn gpu() -> Gpu {
    let gpu = Gpu::headless().unwrap_or_else(|e| {
        panic!("{e}\n(CI installs mesa-vulkan-drivers through `cargo xtask ci`)")
    });
    eprintln!("render test on {:?} (software: {})", gpu.adapter.name, gpu.is_software());
    gpu
}

fn render(name: &str, size: (u32, u32), rects: &[RectInstance], clear: paddock::term::Rgb) {
    let gpu = gpu();
    let mut pipeline = RectPipeline::new(&gpu.device, TARGET_FORMAT);
    let image = render_rects(&gpu, &mut pipeline, clear, size, rects).expect("render");
    expect_golden(name, &image);
}

#[test]
fn styled_text_renders_as_the_golden_image_and_reshapes_only_changed_rows() {
    let gpu = gpu();
    let theme = Theme::default();
    let mut text = TextLayer::new(&gpu.device, &gpu.queue, TARGET_FORMAT, 16.0, Fonts::BundledOnly);
    let cell = text.cell_size();
    let mut term = terminal(30, 4, "Hello, paddock! 0123456789\r\n\x1b[1mbold\x1b[0m \x1b[3mitalic\x1b[0m \x1b[2mdim\x1b[0m \x1b[31mred\x1b[0m \x1b[7minverse\x1b[0m\r\n\x1b[8mhidden\x1b[0m \x1b[42;30m on green \x1b[0m \x1b[38;2;255;128;0mtruecolor\x1b[0m\r\n$ ");
    let size = ((30.0 * cell.width) as u32, (4.0 * cell.height) as u32);
    let mut pipeline = RectPipeline::new(&gpu.device, TARGET_FORMAT);
    let mut frame = |term: &Terminal, text: &mut TextLayer| {
        let mut rects = Vec::new();
        let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
        let scene = PaneScene::screen(term, [0.0, 0.0], true);
        push_pane(&scene, cell, &theme, cursor, &mut rects);
        pipeline.prepare(&gpu.device, &gpu.queue, size, &rects);
        let pane = PaneText::of(1, &scene, &theme);
        text.prepare(&gpu.device, &gpu.queue, size, &[&pane]).expect("prepare text");
        render_offscreen(&gpu, theme.background, size, |pass| {
            pipeline.draw(pass);
            text.render(pass)
        })
        .expect("render")
    };
    let image = frame(&term, &mut text);
    assert_eq!(text.rows_shaped(), 4, "the first frame shapes every row");
    expect_golden("text", &image);
    // Nothing changed: nothing is shaped again. One row changed: one row is.
    frame(&term, &mut text);
    assert_eq!(text.rows_shaped(), 0);
    term.advance(b"ls");
    frame(&term, &mut text);
    assert_eq!(text.rows_shaped(), 1);
}

#[test]
fn palettes_and_cursor_render_as_the_golden_image() {
    let theme = Theme::default();
    let term = terminal(32, 5, &palettes());
    let mut rects = Vec::new();
    let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
    push_pane(&PaneScene::screen(&term, [0.0, 0.0], true), CELL, &theme, cursor, &mut rects);
    let clear = Colors::new(&term, &theme).background();
    render("palettes", (256, 80), &rects, clear);
}

#[test]
fn a_split_with_a_divider_and_both_cursor_kinds_renders_as_the_golden_image() {
    let theme = Theme::default();
    let left = terminal(10, 4, "left\x1b[42m  \x1b[0m");
    let right = terminal(9, 4, "\x1b[44mright\x1b[0m\r\nbar\x1b[6 q");
    let mut rects = Vec::new();
    let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
    push_pane(&PaneScene::screen(&left, [0.0, 0.0], false), CELL, &theme, cursor, &mut rects);
    push_pane(&PaneScene::screen(&right, [88.0, 0.0], true), CELL, &theme, cursor, &mut rects);
    let divider = Divider {
        axis: Axis::Horizontal,
        rect: Rect::new(10, 0, 1, 4),
        area: Rect::new(0, 0, 20, 4),
    };
    push_dividers(&[divider], [0.0, 0.0], CELL, &theme, &mut rects);
    render("split", (160, 64), &rects, theme.background);
}

#[test]
fn every_cursor_shape_renders_as_the_golden_image() {
    let theme = Theme::default();
    let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
    let mut rects = Vec::new();
    // Block, underline, beam (the program's choice, DECSCUSR), then an unfocused block: hollow.
    let shapes = [("\x1b[2 q", true), ("\x1b[4 q", true), ("\x1b[6 q", true), ("", false)];
    let terms: Vec<Terminal> =
        shapes.iter().map(|(s, _)| terminal(3, 1, &format!("a{s}"))).collect();
    for (i, (term, (_, focused))) in terms.iter().zip(shapes).enumerate() {
        let origin = [i as f32 * 4.0 * CELL.width, 0.0];
        push_pane(&PaneScene::screen(term, origin, focused), CELL, &theme, cursor, &mut rects);
    }
    render("cursors", (128, 16), &rects, theme.background);
}

/// The window's parts as the window draws them: a tab bar with two tabs (the second active), a
/// pane's title strip with the search field, and the pane with a selection and search matches.
#[test]
fn tabs_a_title_strip_a_selection_and_search_matches_render_as_the_golden_image() {
    let gpu = gpu();
    let theme = Theme::default();
    let mut text = TextLayer::new(&gpu.device, &gpu.queue, TARGET_FORMAT, 16.0, Fonts::BundledOnly);
    let cell = text.cell_size();
    let cols = 36;
    let tab = |name: &str| chrome::TabLabel { name: name.to_owned(), mark: None };
    let (bar, spans) = chrome::tab_bar(&[tab("agent"), tab("build")], Some(1), cols, None);
    assert_eq!(spans.len(), 2);
    let prompt = chrome::search_prompt("error", false);
    let lock = Some(Badge { text: "Locked", short: "L", color: 32 });
    let strip = Strip {
        name: None,
        program: "bash",
        title: Some("tests"),
        cwd: None,
        right: Some(&prompt),
        lock,
        pulse: None,
        spark: None,
    };
    let strip = chrome::title_strip(&strip, cols);
    let term = terminal(cols, 4, "cargo test\r\nerror: one failed\r\nok: Error, error\r\n$ ");
    let mut search = Search { query: "error".into(), current: None };
    assert!(search.jump(&term, true).is_some(), "the newest match");
    let line = term.screen_line();
    let selection = Selection {
        anchor: Point { line, col: 0 },
        head: Point { line, col: 4 },
        kind: SelectionKind::Cells,
    };
    let mut view = PaneView::default();
    view.selection = Some(selection);
    view.search = Some(search);
    let hidden = CursorStyle { shape: CursorShape::Block, thickness: 0.0 };
    let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
    let scenes = [
        (PaneScene::screen(&bar, [0.0, 0.0], false), hidden),
        (PaneScene::screen(&strip, [0.0, cell.height], false), hidden),
        (PaneScene::viewed(&term, &view, [0.0, 2.0 * cell.height], true), cursor),
    ];
    let mut rects = vec![RectInstance::new(
        0.0,
        cell.height,
        cols as f32 * cell.width,
        cell.height,
        theme.focused_strip,
    )];
    for (scene, style) in &scenes {
        push_pane(scene, cell, &theme, *style, &mut rects);
    }
    let texts: Vec<PaneText> =
        scenes.iter().enumerate().map(|(i, (s, _))| PaneText::of(i as u32, s, &theme)).collect();
    let size = ((cols as f32 * cell.width) as u32, (6.0 * cell.height) as u32);
    let mut pipeline = RectPipeline::new(&gpu.device, TARGET_FORMAT);
    pipeline.prepare(&gpu.device, &gpu.queue, size, &rects);
    let refs: Vec<&PaneText> = texts.iter().collect();
    text.prepare(&gpu.device, &gpu.queue, size, &refs).expect("prepare text");
    let image = render_offscreen(&gpu, theme.background, size, |pass| {
        pipeline.draw(pass);
        text.render(pass)
    })
    .expect("render");
    expect_golden("window-parts", &image);
}

/// The pulse overlay in each state as the window draws it: a pane whose title strip carries the
/// pulse badge and sparkline, its border and strip glowing in the state's color, as bright as
/// the state asks (a needs-you pane at the top of its pulse).
#[test]
fn the_pulse_overlay_renders_each_state_as_its_golden_image() {
    let gpu = gpu();
    let theme = Theme::default();
    let mut text = TextLayer::new(&gpu.device, &gpu.queue, TARGET_FORMAT, 16.0, Fonts::BundledOnly);
    let cell = text.cell_size();
    let (cols, rows) = (30, 5);
    let size = ((cols as f32 * cell.width) as u32, (rows as f32 * cell.height) as u32);
    let mut rect_pipeline = RectPipeline::new(&gpu.device, TARGET_FORMAT);
    let mut glow_pipeline = GlowPipeline::new(&gpu.device, TARGET_FORMAT);
    let spark = chrome::sparkline(&[0.1, 0.4, 0.9, 1.0, 0.7, 0.3, 0.8, 1.0], 0.05);
    // name, state, level, badge and its color, what the pane shows. A 30-column pane of a
    // locked thread: the thread's name first and whole, the badges as their symbols.
    let states = [
        (
            "working",
            GlowKind::Working,
            1.0,
            "working",
            32,
            "Compiling paddock v0.1.0\r\n   Building [====>   ] 41/97",
        ),
        ("quiet", GlowKind::Quiet, 0.0, "quiet", 34, "test result: ok. 116 passed\r\n$ "),
        (
            "needs-you",
            GlowKind::NeedsYou,
            0.0,
            "NEEDS YOU: Do you want to",
            31,
            "Edit src/main.rs\r\nDo you want to proceed? [y/N] ",
        ),
        ("exited", GlowKind::Exited, 0.0, "exited", 37, "agent finished\r\n[exited 0]"),
    ];
    let mut edges = Vec::new();
    for (name, kind, level, badge, badge_color, screen) in states {
        let symbol = match name {
            "needs-you" => "!",
            "exited" => "x",
            _ => "\u{25cf}",
        };
        let strip = Strip {
            name: Some("review"),
            program: "claude",
            title: Some("Fix the parser"),
            cwd: None,
            right: None,
            lock: Some(Badge { text: "Locked (files + network)", short: "L", color: 32 }),
            pulse: Some(Badge { text: badge, short: symbol, color: badge_color }),
            spark: Some(&spark),
        };
        let strip = chrome::title_strip(&strip, cols);
        let term = terminal(cols, rows - 1, screen);
        let hidden = CursorStyle { shape: CursorShape::Block, thickness: 0.0 };
        let scenes = [
            PaneScene::screen(&strip, [0.0, 0.0], false),
            PaneScene::screen(&term, [0.0, cell.height], false),
        ];
        let width = cols as f32 * cell.width;
        let mut rects = vec![RectInstance::new(0.0, 0.0, width, cell.height, theme.strip)];
        for scene in &scenes {
            push_pane(scene, cell, &theme, hidden, &mut rects);
        }
        let now = std::time::Instant::now();
        let mut glows = Glows::default();
        let in_state = std::time::Duration::ZERO;
        glows.step(&[(1, GlowTarget { kind, level, in_state })], now);
        let (shown, intensity) = glows.look(1, now).expect("a glow");
        assert_eq!(shown, kind);
        let mut bands = Vec::new();
        let shape = GlowShape::for_cells(cell.height, cell.height);
        let pane = [0.0, 0.0, width, rows as f32 * cell.height];
        push_glow(pane, shape, kind.color().glow, intensity, &mut bands);
        rect_pipeline.prepare(&gpu.device, &gpu.queue, size, &rects);
        glow_pipeline.prepare(&gpu.device, &gpu.queue, size, &bands);
        let texts: Vec<PaneText> =
            scenes.iter().enumerate().map(|(i, s)| PaneText::of(i as u32, s, &theme)).collect();
        let refs: Vec<&PaneText> = texts.iter().collect();
        text.prepare(&gpu.device, &gpu.queue, size, &refs).expect("prepare text");
        let image = render_offscreen(&gpu, theme.background, size, |pass| {
            rect_pipeline.draw(pass);
            glow_pipeline.draw(pass);
            text.render(pass)
        })
        .expect("render");
        expect_golden(&format!("pulse-{name}"), &image);
        // What a person sees: the left edge, halfway down, in the state's color; a little
        // further in, the pane's own background.
        let y = size.1 / 2 + (cell.height / 2.0) as u32;
        let edge = pixel(&image, 0, y);
        let inside = pixel(&image, shape.reach as u32 + 1, y);
        let background = theme.background;
        assert_eq!(inside, [background.r, background.g, background.b], "{name}: the glow stops");
        let hue = kind.color().glow;
        let strongest = |c: [u8; 3]| (0..3).max_by_key(|&i| c[i]).expect("three");
        if kind != GlowKind::Exited {
            assert_eq!(strongest(edge), strongest([hue.r, hue.g, hue.b]), "{name}: {edge:?}");
        }
        let lift: u32 = (0..3)
            .map(|i| u32::from(edge[i].abs_diff([background.r, background.g, background.b][i])))
            .sum();
        edges.push((name, lift));
    }
    // Brighter as it matters more: a waiting pane, then a busy one, then a quiet and a
    // finished one.
    let lift = |name: &str| edges.iter().find(|(n, _)| *n == name).expect("state").1;
    assert!(lift("needs-you") > lift("working"), "{edges:?}");
    assert!(lift("working") > lift("quiet"), "{edges:?}");
    assert!(lift("quiet") > 0 && lift("exited") > 0, "{edges:?}");
}

fn pixel(image: &Image, x: u32, y: u32) -> [u8; 3] {
    let at = ((y * image.width + x) * 4) as usize;
    [image.rgba[at], image.rgba[at + 1], image.rgba[at + 2]]
}

/// The fallback fonts the goldens pin instead of the system's (see tests/data/fonts/README.md).
const FALLBACK_FONTS: &[&[u8]] = &[
    include_bytes!("../data/fonts/cjk-subset.ttf"),
    include_bytes!("../data/fonts/emoji-subset.ttf"),
];

/// The test images see exactly the fonts they pin, whatever the machine has installed: a
/// system font (Droid Sans Fallback, Noto CJK) would take over glyphs and change the images.
/// The app's own font system still has the system's fonts for fallback.
#[test]
fn pinned_fonts_are_exactly_the_bundled_and_given_ones_never_the_systems() {
    let families = |fonts: Fonts| {
        let system = font_system(fonts);
        let mut names: Vec<String> = system
            .db()
            .faces()
            .map(|face| {
                let family = face.families.first().map_or("?", |(name, _)| name.as_str());
                format!("{family} {:?} {:?}", face.weight.0, face.style)
            })
            .collect();
        names.sort();
        names
    };
    let bundled = [
        "JetBrains Mono 400 Italic",
        "JetBrains Mono 400 Normal",
        "JetBrains Mono 700 Italic",
        "JetBrains Mono 700 Normal",
    ];
    assert_eq!(families(Fonts::BundledOnly), bundled);
    let with_fallback = families(Fonts::BundledWith(FALLBACK_FONTS));
    assert_eq!(with_fallback.len(), 6, "{with_fallback:?}");
    assert!(bundled.iter().all(|b| with_fallback.iter().any(|f| f == b)), "{with_fallback:?}");
    assert_eq!(font_system(Fonts::BundledOnly).locale(), "en-US");
    // The app's: the bundled faces and then the system's (at least as many as pinned).
    assert!(font_system(Fonts::BundledAndSystem).db().len() >= bundled.len());
}

/// Wide characters and emoji come from fallback fonts, each in two cells, in color where the font
/// has color; a combining mark stays on its base; a wide character that does not fit at the end
/// of a row wraps whole.
#[test]
fn wide_characters_and_emoji_through_font_fallback_render_as_the_golden_image() {
    let gpu = gpu();
    let theme = Theme::default();
    let fonts = Fonts::BundledWith(FALLBACK_FONTS);
    let mut text = TextLayer::new(&gpu.device, &gpu.queue, TARGET_FORMAT, 16.0, fonts);
    let cell = text.cell_size();
    let cols = 16;
    let term = terminal(
        cols,
        5,
        "漢字|かな|한글\r\n🦀🚀✅👍|cafe\u{301}\r\n\x1b[44m中文\x1b[0m \x1b[7m界面\x1b[0m ok\r\nabcdefghijklmno漢",
    );
    // The crab takes two cells: the grid agrees with the picture.
    let crab = term.row(1).expect("row 1");
    assert_eq!((crab.cell(0).ch(), crab.cell(0).has(Cell::WIDE)), ('🦀', true));
    assert!(crab.cell(1).has(Cell::WIDE_SPACER));
    let mut rects = Vec::new();
    let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
    let scene = PaneScene::screen(&term, [0.0, 0.0], false);
    push_pane(&scene, cell, &theme, cursor, &mut rects);
    let size = ((cols as f32 * cell.width) as u32, (5.0 * cell.height) as u32);
    let mut pipeline = RectPipeline::new(&gpu.device, TARGET_FORMAT);
    pipeline.prepare(&gpu.device, &gpu.queue, size, &rects);
    let pane = PaneText::of(1, &scene, &theme);
    text.prepare(&gpu.device, &gpu.queue, size, &[&pane]).expect("prepare text");
    let image = render_offscreen(&gpu, theme.background, size, |pass| {
        pipeline.draw(pass);
        text.render(pass)
    })
    .expect("render");
    // What a person sees, before the pixel comparison: the CJK cells are inked, and the emoji
    // row has color (a missing fallback draws nothing, or a gray box).
    let inked = |x0: f32, cells: f32, row: f32, colorful: bool| {
        let (y0, y1) = ((row * cell.height) as u32, ((row + 1.0) * cell.height) as u32);
        let (x0, x1) = ((x0 * cell.width) as u32, ((x0 + cells) * cell.width) as u32);
        let mut count = 0;
        for y in y0..y1 {
            for x in x0..x1 {
                let at = ((y * image.width + x) * 4) as usize;
                let [r, g, b] = [image.rgba[at], image.rgba[at + 1], image.rgba[at + 2]];
                let background = [theme.background.r, theme.background.g, theme.background.b];
                let gray = r.abs_diff(g) < 24 && g.abs_diff(b) < 24;
                if [r, g, b] != background && (!colorful || !gray) {
                    count += 1;
                }
            }
        }
        count
    };
    assert!(inked(0.0, 4.0, 0.0, false) > 40, "漢字 is drawn");
    assert!(inked(0.0, 8.0, 1.0, true) > 100, "the emoji are drawn in color");
    expect_golden("wide-and-emoji", &image);
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The largest difference allowed per channel: rasterisers may round edges differently.
const TOLERANCE: u8 = 2;

fn expect_golden(name: &str, image: &Image) {
    let golden = root().join("tests/data/goldens").join(format!("{name}.png"));
    if std::env::var_os("PADDOCK_BLESS").is_some() {
        write_png(&golden, image);
        return;
    }
    let expected = read_png(&golden).unwrap_or_else(|| {
        panic!("{}: missing (run `cargo xtask bless` to create it)", golden.display())
    });
    let same_size = (expected.width, expected.height) == (image.width, image.height);
    let worst = if same_size {
        expected.rgba.iter().zip(&image.rgba).map(|(a, b)| a.abs_diff(*b)).max().unwrap_or(0)
    } else {
        u8::MAX
    };
    if worst <= TOLERANCE {
        return;
    }
    let failures = root().join("target/golden-failures");
    let actual = failures.join(format!("{name}.actual.png"));
    write_png(&actual, image);
    let mut message = format!(
        "{name}: the rendered image differs from {} (largest channel difference {worst}); actual: {}",
        golden.display(),
        actual.display()
    );
    if same_size {
        let diff = diff_image(&expected, image);
        let diff_path = failures.join(format!("{name}.diff.png"));
        write_png(&diff_path, &diff);
        message.push_str(&format!("; diff: {}", diff_path.display()));
    }
    panic!("{message}");
}

/// Red where pixels differ beyond the tolerance, the expected image dimmed elsewhere.
fn diff_image(expected: &Image, actual: &Image) -> Image {
    let mut rgba = Vec::with_capacity(expected.rgba.len());
    for (a, b) in expected.rgba.chunks(4).zip(actual.rgba.chunks(4)) {
        let differs = a.iter().zip(b).any(|(x, y)| x.abs_diff(*y) > TOLERANCE);
        if differs {
            rgba.extend_from_slice(&[255, 0, 0, 255]);
        } else {
            rgba.extend_from_slice(&[a[0] / 3, a[1] / 3, a[2] / 3, 255]);
        }
    }
    Image { width: expected.width, height: expected.height, rgba }
}
