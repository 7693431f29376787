use super::*;
use crate::mux::Axis;
use crate::term::{TermConfig, TermSize};

const CELL: CellSize = CellSize { width: 10.0, height: 20.0 };
const BLOCK: CursorStyle = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };

fn term(bytes: &str) -> Terminal {
    let mut term = Terminal::new(TermSize::new(8, 2), TermConfig::default());
    term.advance(bytes.as_bytes());
    term
}

fn rects(bytes: &str, focused: bool) -> Vec<RectInstance> {
    let term = term(bytes);
    let mut out = Vec::new();
    let pane = PaneScene::screen(&term, [100.0, 50.0], focused);
    push_pane(&pane, CELL, &Theme::default(), BLOCK, &mut out);
    out
}

fn rgb(r: u8, g: u8, b: u8) -> Rgb {
    Rgb { r, g, b }
}

#[test]
fn text_on_the_theme_background_draws_only_the_cursor() {
    let theme = Theme::default();
    assert_eq!(rects("hello", true), [RectInstance::new(150.0, 50.0, 10.0, 20.0, theme.cursor)]);
    assert_eq!(rects("hello\x1b[?25l", true), []);
}

#[test]
fn runs_of_one_background_are_one_rectangle() {
    let out = rects("\x1b[41mab\x1b[44mc\x1b[0md\x1b[48;2;1;2;3me\x1b[?25l", true);
    assert_eq!(
        out,
        [
            RectInstance::new(100.0, 50.0, 20.0, 20.0, default_palette(1)),
            RectInstance::new(120.0, 50.0, 10.0, 20.0, default_palette(4)),
            RectInstance::new(140.0, 50.0, 10.0, 20.0, rgb(1, 2, 3)),
        ]
    );
}

#[test]
fn inverse_video_shows_the_foreground_as_background() {
    let theme = Theme::default();
    let out = rects("\x1b[7mab\x1b[32;7mc\x1b[?25l", true);
    assert_eq!(
        out,
        [
            RectInstance::new(100.0, 50.0, 20.0, 20.0, theme.foreground),
            RectInstance::new(120.0, 50.0, 10.0, 20.0, default_palette(2)),
        ]
    );
}

#[test]
fn program_colors_override_the_theme() {
    // OSC 11 sets the background: default cells on it draw nothing, old-background cells do.
    let out = rects("\x1b]11;rgb:00/00/80\x07\x1b]4;1;rgb:10/20/30\x07\x1b[41mx\x1b[?25l", true);
    assert_eq!(out, [RectInstance::new(100.0, 50.0, 10.0, 20.0, rgb(0x10, 0x20, 0x30))]);
    let theme = Theme::default();
    let term = term("\x1b]12;rgb:ff/00/00\x07");
    assert_eq!(Colors::new(&term, &theme).cursor(), rgb(255, 0, 0));
}

#[test]
fn cursor_shapes_and_the_hollow_unfocused_block() {
    let theme = Theme::default();
    let c = theme.cursor;
    assert_eq!(rects("\x1b[6 q", true), [RectInstance::new(100.0, 50.0, 2.0, 20.0, c)]);
    assert_eq!(rects("\x1b[4 q", true), [RectInstance::new(100.0, 68.0, 10.0, 2.0, c)]);
    assert_eq!(
        rects("", false),
        [
            RectInstance::new(100.0, 50.0, 10.0, 2.0, c),
            RectInstance::new(100.0, 68.0, 10.0, 2.0, c),
            RectInstance::new(100.0, 50.0, 2.0, 20.0, c),
            RectInstance::new(108.0, 50.0, 2.0, 20.0, c),
        ]
    );
    // On a wide character the block covers both cells.
    assert_eq!(rects("中\x1b[D\x1b[D", true), [RectInstance::new(100.0, 50.0, 20.0, 20.0, c)]);
}

#[test]
fn dividers_cover_their_cells() {
    let divider = Divider {
        axis: Axis::Horizontal,
        rect: Rect::new(40, 0, 1, 24),
        area: Rect::new(0, 0, 81, 24),
    };
    let mut out = Vec::new();
    push_dividers(&[divider], [0.0, 30.0], CELL, &Theme::default(), &mut out);
    assert_eq!(out, [RectInstance::new(400.0, 30.0, 10.0, 480.0, Theme::default().divider)]);
}

#[test]
fn an_instance_is_the_32_bytes_the_shader_reads() {
    assert_eq!(std::mem::size_of::<RectInstance>(), 32);
}

#[test]
fn underlines_and_strikethrough_are_lines_in_their_colors() {
    let theme = Theme::default();
    let fg = theme.foreground;
    // Single underline in the text color, one per cell; a red double underline on green text.
    let out = rects("\x1b[4ma\x1b[0m\x1b[32;21;58;5;1mb\x1b[0m\x1b[9mc\x1b[?25l", true);
    assert_eq!(
        out,
        [
            RectInstance::new(100.0, 68.0, 10.0, 1.0, fg),
            RectInstance::new(110.0, 68.0, 10.0, 1.0, default_palette(1)),
            RectInstance::new(110.0, 66.0, 10.0, 1.0, default_palette(1)),
            RectInstance::new(120.0, 60.0, 10.0, 1.0, fg),
        ]
    );
    for style in ["4:3", "4:4", "4:5"] {
        let out = rects(&format!("\x1b[{style}mx\x1b[?25l"), true);
        assert!(out.len() >= 2, "{style}: {out:?}");
        assert!(out.iter().all(|r| r.origin[0] >= 100.0 && r.origin[0] + r.size[0] <= 110.0));
    }
}
