//! Text: each visible row of a pane is shaped again only when the row's content or styles change
//! (a hash of what it shows is kept per row), so a frame in which one row changed shapes one row.
//!
//! The bundled JetBrains Mono (assets/fonts) is the primary face, so text looks the same on
//! every machine; system fonts fill in missing glyphs unless the layer is built with the bundled
//! fonts only (as the golden-image tests are, for images that do not depend on the host).
//! Every glyph lands on its cell: a row is shaped as pieces placed at their first cell (runs of
//! narrow characters together, each wide character alone and centred on its two cells), because
//! fallback fonts do not advance by the grid's width.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use glyphon::{
    Attrs, Buffer, Cache, Color, ColorMode, Family, FontSystem, Metrics, Resolution, Shaping,
    Style as FontStyle, SwashCache, TextArea, TextAtlas, TextBounds, TextRenderer, Viewport,
    Weight,
};

use super::scene::{CellSize, Colors, PaneScene, Theme};
use super::RenderError;
use crate::term::{Cell, Rgb, Row, StyleFlags, Terminal};

/// The family name of the bundled font.
pub const FAMILY: &str = super::FONT_FAMILY;

const BUNDLED: [&[u8]; 4] = [
    include_bytes!("../../assets/fonts/JetBrainsMono-Regular.ttf"),
    include_bytes!("../../assets/fonts/JetBrainsMono-Bold.ttf"),
    include_bytes!("../../assets/fonts/JetBrainsMono-Italic.ttf"),
    include_bytes!("../../assets/fonts/JetBrainsMono-BoldItalic.ttf"),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fonts {
    /// The bundled font, then the system's for glyphs it lacks.
    BundledAndSystem,
    /// Only the bundled font (deterministic images for tests).
    BundledOnly,
    /// The bundled font, then exactly these fonts for glyphs it lacks, never the system's
    /// (deterministic images of fallback text for tests).
    BundledWith(&'static [&'static [u8]]),
}

/// Which pane a cached row belongs to (any stable number the caller chooses).
pub type PaneKey = u32;

/// A row's shaped text and its own glyph renderer, prepared only when the row's text or place
/// changes: a frame in which one row changed shapes and prepares one row.
struct CachedRow {
    hash: u64,
    pieces: Vec<Piece>,
    renderer: TextRenderer,
    /// Where it was last prepared (left, top, and the bounds), `None` when it must be again.
    placed: Option<(f32, f32, [i32; 4])>,
}

/// The fonts and the cell they make: the part of text that needs no GPU, so that a window
/// knows its grid (and its panes their size) before its GPU is ready.
pub struct Typeface {
    font_system: FontSystem,
    /// The primary family (the bundled one unless the configuration names another).
    family: String,
    metrics: Metrics,
    cell: CellSize,
}

impl Typeface {
    /// `font_system`'s primary family (the bundled one) at `font_size` pixels.
    pub fn new(mut font_system: FontSystem, font_size: f32) -> Typeface {
        let metrics = metrics_for(font_size);
        let width = advance_width(&mut font_system, metrics, FAMILY);
        Typeface {
            font_system,
            family: FAMILY.to_owned(),
            metrics,
            cell: CellSize { width, height: metrics.line_height },
        }
    }

    /// The size of a cell in pixels: the font's advance and line height.
    pub fn cell_size(&self) -> CellSize {
        self.cell
    }

    pub fn family(&self) -> &str {
        &self.family
    }

    /// Change the font size (pixels): cells are measured again.
    pub fn set_font_size(&mut self, font_size: f32) {
        self.metrics = metrics_for(font_size);
        let width = advance_width(&mut self.font_system, self.metrics, &self.family);
        self.cell = CellSize { width, height: self.metrics.line_height };
    }

    /// Use `family` as the primary font: false (and no change) when no such family is
    /// installed. Cells are measured again.
    pub fn set_family(&mut self, family: &str) -> bool {
        let installed =
            self.font_system.db().faces().any(|face| {
                face.families.iter().any(|(name, _)| name.eq_ignore_ascii_case(family))
            });
        if installed {
            self.family = family.to_owned();
            self.set_font_size(self.metrics.font_size);
        }
        installed
    }
}

fn metrics_for(font_size: f32) -> Metrics {
    Metrics::new(font_size, (font_size * 1.25).round())
}

pub struct TextLayer {
    typeface: Typeface,
    swash: SwashCache,
    viewport: Viewport,
    atlas: TextAtlas,
    rows: HashMap<(PaneKey, usize), CachedRow>,
    /// The rows of the last `prepare`, in drawing order.
    order: Vec<(PaneKey, usize)>,
    /// Rows shaped by the last `prepare`, for tests and benchmarks.
    shaped: usize,
}

/// One pane's text to draw: its rows as styled runs, taken from the model (under its lock) so
/// that shaping and uploading happen after the lock is released.
pub struct PaneText {
    pub key: PaneKey,
    pub origin: [f32; 2],
    pub cols: usize,
    pub rows: Vec<Vec<Span>>,
}

impl PaneText {
    /// The text of the rows `scene` shows.
    pub fn of(key: PaneKey, scene: &PaneScene<'_>, theme: &Theme) -> PaneText {
        let colors = Colors::new(scene.term, theme);
        let rows = scene.rows.iter().map(|row| row_spans(scene.term, row, &colors)).collect();
        PaneText { key, origin: scene.origin, cols: scene.term.size().cols, rows }
    }
}

impl TextLayer {
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        format: wgpu::TextureFormat,
        font_size: f32,
        fonts: Fonts,
    ) -> TextLayer {
        let typeface = Typeface::new(font_system(fonts), font_size);
        TextLayer::with_typeface(device, queue, format, typeface)
    }

    /// A layer drawing with `typeface`, measured beforehand.
    pub fn with_typeface(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        format: wgpu::TextureFormat,
        typeface: Typeface,
    ) -> TextLayer {
        let cache = Cache::new(device);
        let viewport = Viewport::new(device, &cache);
        // The target is not sRGB: colors go through as the bytes programs named.
        let atlas = TextAtlas::with_color_mode(device, queue, &cache, format, ColorMode::Web);
        TextLayer {
            typeface,
            swash: SwashCache::new(),
            viewport,
            atlas,
            rows: HashMap::new(),
            order: Vec::new(),
            shaped: 0,
        }
    }

    /// The size of a cell in pixels: the font's advance and line height.
    pub fn cell_size(&self) -> CellSize {
        self.typeface.cell
    }

    /// Change the font size (pixels): cells are measured again and every row is shaped anew.
    pub fn set_font_size(&mut self, font_size: f32) {
        self.typeface.set_font_size(font_size);
        self.rows.clear();
    }

    pub fn family(&self) -> &str {
        self.typeface.family()
    }

    /// Use `family` as the primary font: false (and no change) when no such family is
    /// installed. Cells are measured again and every row is shaped anew.
    pub fn set_family(&mut self, family: &str) -> bool {
        let installed = self.typeface.set_family(family);
        if installed {
            self.rows.clear();
        }
        installed
    }

    /// Rows shaped by the last `prepare`.
    pub fn rows_shaped(&self) -> usize {
        self.shaped
    }

    /// Shape what changed and upload the glyphs for `panes`.
    ///
    /// The glyph atlas is never trimmed between frames: a row that is not prepared again still
    /// draws from it, so none of its glyphs may be evicted. Only when the atlas is full (it
    /// grows first, up to the GPU's texture limit) is it trimmed and every row prepared again.
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        resolution: (u32, u32),
        panes: &[&PaneText],
    ) -> Result<(), RenderError> {
        self.viewport.update(queue, Resolution { width: resolution.0, height: resolution.1 });
        self.shaped = 0;
        match self.prepare_rows(device, queue, panes) {
            Err(glyphon::PrepareError::AtlasFull) => {
                self.atlas.trim();
                self.rows.values_mut().for_each(|row| row.placed = None);
                self.prepare_rows(device, queue, panes)
            }
            other => other,
        }
        .map_err(|e| RenderError::Text(e.to_string()))
    }

    fn prepare_rows(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        panes: &[&PaneText],
    ) -> Result<(), glyphon::PrepareError> {
        self.order.clear();
        for pane in panes {
            let (cols, lines) = (pane.cols as f32, pane.rows.len() as f32);
            let cell = self.typeface.cell;
            let bounds = [
                pane.origin[0] as i32,
                pane.origin[1] as i32,
                (pane.origin[0] + cols * cell.width).ceil() as i32,
                (pane.origin[1] + lines * cell.height).ceil() as i32,
            ];
            for (row, spans) in pane.rows.iter().enumerate() {
                let hash = hash_spans(spans);
                let key = (pane.key, row);
                self.order.push(key);
                let fresh = self.rows.get(&key).is_some_and(|r| r.hash == hash);
                if !fresh {
                    let pieces = self.shape(spans, pane.cols);
                    self.shaped += 1;
                    match self.rows.get_mut(&key) {
                        Some(cached) => {
                            cached.hash = hash;
                            cached.pieces = pieces;
                            cached.placed = None;
                        }
                        None => {
                            let renderer = TextRenderer::new(
                                &mut self.atlas,
                                device,
                                Default::default(),
                                None,
                            );
                            let cached = CachedRow { hash, pieces, renderer, placed: None };
                            self.rows.insert(key, cached);
                        }
                    }
                }
                let place = (pane.origin[0], pane.origin[1] + row as f32 * cell.height, bounds);
                let Some(cached) = self.rows.get_mut(&key) else {
                    continue;
                };
                if cached.placed == Some(place) {
                    continue;
                }
                let cell_width = cell.width;
                let areas = cached.pieces.iter().map(|piece| TextArea {
                    buffer: &piece.buffer,
                    left: place.0 + piece.col as f32 * cell_width + piece.dx,
                    top: place.1,
                    scale: 1.0,
                    bounds: TextBounds {
                        left: bounds[0],
                        top: bounds[1],
                        right: bounds[2],
                        bottom: bounds[3],
                    },
                    default_color: Color::rgb(255, 255, 255),
                    custom_glyphs: &[],
                });
                cached.renderer.prepare(
                    device,
                    queue,
                    &mut self.typeface.font_system,
                    &mut self.atlas,
                    &self.viewport,
                    areas,
                    &mut self.swash,
                )?;
                cached.placed = Some(place);
            }
        }
        // Rows of panes that went away, or of rows past a shrunken screen.
        let live: std::collections::HashSet<_> = self.order.iter().copied().collect();
        self.rows.retain(|key, _| live.contains(key));
        Ok(())
    }

    pub fn render(&self, pass: &mut wgpu::RenderPass<'_>) -> Result<(), RenderError> {
        for key in &self.order {
            if let Some(row) = self.rows.get(key) {
                row.renderer
                    .render(&self.atlas, &self.viewport, pass)
                    .map_err(|e| RenderError::Text(e.to_string()))?;
            }
        }
        Ok(())
    }

    /// A row's text as pieces that each start on their cell. Runs of narrow characters are
    /// shaped together (one piece for most rows); a wide character is a piece of its own,
    /// centred on its two cells, because fallback fonts (CJK, emoji) do not advance by the grid's
    /// width. A run in which some glyph still lands off its cell (a narrow glyph from a
    /// proportional fallback font) is shaped again a character at a time.
    fn shape(&mut self, spans: &[Span], cols: usize) -> Vec<Piece> {
        let mut pieces = Vec::new();
        for run in spans.chunk_by(|a, b| !a.wide && !b.wide) {
            let piece = self.shape_piece(run, cols);
            if run[0].wide || on_grid(&piece, run, self.typeface.cell.width) {
                pieces.push(piece);
            } else {
                for span in run.iter().flat_map(Span::clusters) {
                    pieces.push(self.shape_piece(std::slice::from_ref(&span), cols));
                }
            }
        }
        pieces
    }

    fn shape_piece(&mut self, spans: &[Span], cols: usize) -> Piece {
        let Typeface { font_system, family, metrics, cell } = &mut self.typeface;
        let mut buffer = Buffer::new(font_system, *metrics);
        buffer.set_monospace_width(Some(cell.width));
        // No wrapping: a piece is one line, never wider than the pane.
        buffer.set_size(Some(cols as f32 * cell.width + 1.0), Some(cell.height));
        let base = Attrs::new().family(Family::Name(family));
        let attrs: Vec<Attrs> = spans.iter().map(|s| span_attrs(&base, s)).collect();
        buffer.set_rich_text(
            spans.iter().zip(&attrs).map(|(s, a)| (s.text.as_str(), a.clone())),
            &base,
            Shaping::Advanced,
            None,
        );
        buffer.shape_until_scroll(font_system, false);
        let span = &spans[0];
        let dx = if span.wide {
            let width: f32 = buffer.layout_runs().flat_map(|r| r.glyphs.iter()).map(|g| g.w).sum();
            ((2.0 * cell.width - width) / 2.0).max(0.0)
        } else {
            0.0
        };
        Piece { col: span.col, dx, buffer }
    }
}

/// Shaped text placed at a cell of its row.
struct Piece {
    col: usize,
    /// Pixels right of the cell's left edge (a narrow glyph centred on a wide cell pair).
    dx: f32,
    buffer: Buffer,
}

/// Whether every character of a run of narrow spans was laid out on its own cell.
fn on_grid(piece: &Piece, run: &[Span], cell_width: f32) -> bool {
    // The column of each character that takes a cell, by its byte offset in the run's text.
    let mut columns = Vec::new();
    let mut offset = 0;
    for span in run {
        let mut col = span.col;
        for (at, c) in span.text.char_indices() {
            if unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) > 0 {
                columns.push((offset + at, col - piece.col));
                col += 1;
            }
        }
        offset += span.text.len();
    }
    piece.buffer.layout_runs().flat_map(|r| r.glyphs.iter()).all(|glyph| {
        match columns.binary_search_by_key(&glyph.start, |&(at, _)| at) {
            Ok(i) => (glyph.x - columns[i].1 as f32 * cell_width).abs() < 0.5,
            // A mark, or a glyph after the first of its cluster: placed by its base.
            Err(_) => true,
        }
    })
}

/// A run of a row's text in one look.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    /// The cell the run starts on.
    pub col: usize,
    /// A single double-width character (drawn on its own, centred on its two cells).
    pub wide: bool,
    pub text: String,
    pub color: Rgb,
    pub bold: bool,
    pub italic: bool,
}

impl Span {
    /// The run as one span per character cell (each with its combining marks).
    fn clusters(&self) -> impl Iterator<Item = Span> + '_ {
        let mut col = self.col;
        let mut spans: Vec<Span> = Vec::new();
        for c in self.text.chars() {
            match spans.last_mut() {
                Some(last) if unicode_width::UnicodeWidthChar::width(c).unwrap_or(0) == 0 => {
                    last.text.push(c)
                }
                _ => {
                    spans.push(Span { col, text: c.to_string(), ..self.clone() });
                    col += 1;
                }
            }
        }
        spans.into_iter()
    }
}

fn span_attrs<'a>(base: &Attrs<'a>, span: &Span) -> Attrs<'a> {
    let Rgb { r, g, b } = span.color;
    let mut attrs = base.clone().color(Color::rgb(r, g, b));
    if span.bold {
        attrs = attrs.weight(Weight::BOLD);
    }
    if span.italic {
        attrs = attrs.style(FontStyle::Italic);
    }
    attrs
}

/// The row's text as styled runs, each starting at its cell: fillers skipped, a wide character
/// a run of its own, hidden text as spaces, dim text halfway to the background, inverse text
/// in the background color.
pub fn row_spans(term: &Terminal, cells: &Row, colors: &Colors<'_>) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::new();
    for (col, cell) in cells.cells().iter().enumerate() {
        if cell.is_filler() {
            continue;
        }
        let style = term.style(cell.style());
        let flags = style.flags;
        let mut color = if flags.contains(StyleFlags::INVERSE) {
            colors.resolve(style.bg, colors.background())
        } else {
            colors.resolve(style.fg, colors.foreground())
        };
        if flags.contains(StyleFlags::DIM) {
            color = halfway(color, colors.cell_background(style.fg, style.bg, flags));
        }
        let hidden = flags.contains(StyleFlags::HIDDEN);
        let look = (color, flags.contains(StyleFlags::BOLD), flags.contains(StyleFlags::ITALIC));
        let mut text = String::new();
        text.push(if hidden { ' ' } else { cell.ch() });
        if !hidden {
            text.extend(cells.marks(col));
        }
        let wide = cell.has(Cell::WIDE);
        match spans.last_mut() {
            Some(last) if !wide && !last.wide && (last.color, last.bold, last.italic) == look => {
                last.text.push_str(&text)
            }
            _ => spans.push(Span { col, wide, text, color: look.0, bold: look.1, italic: look.2 }),
        }
    }
    // Trailing blanks draw nothing; leaving them out keeps most rows' buffers short.
    while let Some(last) = spans.last_mut() {
        let trimmed = last.text.trim_end_matches(' ').len();
        last.text.truncate(trimmed);
        if !last.text.is_empty() {
            break;
        }
        spans.pop();
    }
    spans
}

fn halfway(a: Rgb, b: Rgb) -> Rgb {
    let mix = |x: u8, y: u8| ((u16::from(x) + u16::from(y)) / 2) as u8;
    Rgb { r: mix(a.r, b.r), g: mix(a.g, b.g), b: mix(a.b, b.b) }
}

fn hash_spans(spans: &[Span]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    spans.hash(&mut hasher);
    hasher.finish()
}

/// The font system for `fonts`. The pinned variants get a database holding exactly the given
/// fonts and a fixed locale: cosmic-text's `FontSystem::new_with_fonts` would also load every font
/// installed on the machine, and a system font (Droid Sans Fallback, Noto CJK) could then take
/// over glyphs from the pinned ones and change the test images.
pub fn font_system(fonts: Fonts) -> FontSystem {
    // Read where they are compiled in, not copied to the heap (1.1 MiB for the bundled four).
    let source = |data: &'static [u8]| glyphon::fontdb::Source::Binary(std::sync::Arc::new(data));
    let pinned = |extra: &[&'static [u8]]| {
        let mut db = glyphon::fontdb::Database::new();
        for data in BUNDLED.iter().chain(extra) {
            db.load_font_source(source(data));
        }
        db.set_monospace_family(FAMILY);
        FontSystem::new_with_locale_and_db("en-US".to_owned(), db)
    };
    match fonts {
        Fonts::BundledOnly => pinned(&[]),
        Fonts::BundledWith(fallback) => pinned(fallback),
        Fonts::BundledAndSystem => {
            let mut system = FontSystem::new();
            for data in BUNDLED {
                system.db_mut().load_font_source(source(data));
            }
            system
        }
    }
}

/// The advance of '0' in the primary face: the width of a cell.
fn advance_width(font_system: &mut FontSystem, metrics: Metrics, family: &str) -> f32 {
    let mut buffer = Buffer::new(font_system, metrics);
    let attrs = Attrs::new().family(Family::Name(family));
    buffer.set_text("0", &attrs, Shaping::Advanced, None);
    buffer.shape_until_scroll(font_system, false);
    let width = buffer.layout_runs().flat_map(|run| run.glyphs.iter()).map(|g| g.w).next();
    // Not rounded: glyphs advance by exactly this much, so cells must too, or text drifts off
    // its cells along a row. JetBrains Mono's advance is 0.6 em, if shaping found nothing.
    width.unwrap_or(metrics.font_size * 0.6)
}
