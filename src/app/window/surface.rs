//! The window's surface and one frame: the active tab's panes, their dividers, cursor and text.
//!
//! Each pane's model is locked while its rectangles and text are gathered and shaped, and the
//! locks are dropped before the frame is submitted and presented.

use std::sync::{Arc, MutexGuard};

use winit::window::Window;

use crate::app::Workspace;
use crate::mux::Rect;
use crate::render::gpu::{begin_clear_pass, Gpu, RectPipeline};
use crate::render::scene::{push_dividers, push_pane, CellSize, CursorStyle, PaneView, Theme};
use crate::render::text::{Fonts, PaneText, TextLayer};
use crate::render::RenderError;
use crate::term::{CursorShape, TermConfig, TermSize, Terminal};

/// Rows above the panes for the tab bar.
const TAB_BAR_ROWS: usize = 1;
/// The text layer's key for the tab bar's row (pane ids start at 1 and never reach it).
const TAB_BAR_KEY: u32 = u32::MAX;

/// The tab bar as a one-row terminal: each tab's number and name (its thread's, else its
/// program's) and the focused pane's title, the active tab in inverse video; a note at the
/// right when drawing on a software renderer. Drawn like a pane, so it is shaped like one: only
/// when it changes.
fn tab_bar(workspace: &Workspace, cols: usize, software: bool) -> Terminal {
    let mut bar = Terminal::new(TermSize::new(cols, 1), TermConfig { scrollback_lines: 0 });
    let mux = workspace.mux();
    let active = mux.active_tab().map(|t| t.id);
    let mut text = String::from("\x1b[?25l");
    for (index, tab) in mux.tabs().iter().enumerate() {
        let title = workspace
            .session(tab.focus())
            .and_then(|s| s.terminal().lock().ok().and_then(|t| t.title().map(str::to_owned)));
        let name = match (&tab.thread, title) {
            (Some(thread), _) => thread.clone(),
            (None, Some(title)) if !title.is_empty() => title,
            _ => tab.name.clone(),
        };
        let name: String = name.chars().filter(|c| !c.is_control()).take(30).collect();
        let look = if Some(tab.id) == active { "\x1b[7m" } else { "\x1b[2m" };
        text.push_str(&format!("{look} {} {name} \x1b[0m ", index + 1));
    }
    if software {
        let note = "software renderer ";
        text.push_str(&format!("\x1b[1;{}H\x1b[2m{note}", cols.saturating_sub(note.len()) + 1));
    }
    bar.advance(text.as_bytes());
    bar
}

pub struct Surface {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    gpu: Gpu,
    rects: RectPipeline,
    text: TextLayer,
    theme: Theme,
}

impl Surface {
    pub fn new(
        instance: &wgpu::Instance,
        window: Arc<Window>,
        font_size: f32,
    ) -> Result<Surface, RenderError> {
        let surface = instance
            .create_surface(window.clone())
            .map_err(|e| RenderError::Device(e.to_string()))?;
        let gpu = Gpu::best(instance, |adapter| adapter.is_surface_supported(&surface))?;
        if gpu.is_software() {
            eprintln!(
                "paddock: drawing on a software renderer ({}); a GPU driver would be faster",
                gpu.adapter.name
            );
        }
        let size = window.inner_size();
        let adapter_caps = surface.get_capabilities(&gpu.wgpu_adapter);
        // A format without sRGB conversion: the bytes programs name are the bytes shown.
        let format = adapter_caps
            .formats
            .iter()
            .copied()
            .find(|f| !f.is_srgb())
            .or_else(|| adapter_caps.formats.first().copied())
            .ok_or(RenderError::NoAdapter)?;
        let config = wgpu::SurfaceConfiguration {
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            format,
            color_space: wgpu::SurfaceColorSpace::Auto,
            width: size.width.max(1),
            height: size.height.max(1),
            desired_maximum_frame_latency: 2,
            present_mode: wgpu::PresentMode::Fifo,
            alpha_mode: adapter_caps
                .alpha_modes
                .first()
                .copied()
                .unwrap_or(wgpu::CompositeAlphaMode::Auto),
            view_formats: vec![],
        };
        surface.configure(&gpu.device, &config);
        let rects = RectPipeline::new(&gpu.device, format);
        let scale = window.scale_factor() as f32;
        let text = TextLayer::new(
            &gpu.device,
            &gpu.queue,
            format,
            font_size * scale,
            Fonts::BundledAndSystem,
        );
        Ok(Surface { window, surface, config, gpu, rects, text, theme: Theme::default() })
    }

    pub fn window(&self) -> &Arc<Window> {
        &self.window
    }

    pub fn cell_size(&self) -> CellSize {
        self.text.cell_size()
    }

    /// The grid that fits the window, in cells.
    /// The grid panes are laid out in: the window below the tab bar, in cells.
    pub fn grid(&self) -> TermSize {
        let cell = self.cell_size();
        let cols = (self.config.width as f32 / cell.width).floor().max(1.0) as usize;
        let rows = (self.config.height as f32 / cell.height).floor() as usize;
        let rows = rows.saturating_sub(TAB_BAR_ROWS).max(1);
        TermSize::new(cols, rows)
    }

    /// Follow the window's new size (at least one pixel each way).
    pub fn resize(&mut self, width: u32, height: u32) {
        self.config.width = width.max(1);
        self.config.height = height.max(1);
        self.surface.configure(&self.gpu.device, &self.config);
    }

    pub fn draw(&mut self, workspace: &Workspace) -> Result<(), RenderError> {
        let cell = self.cell_size();
        let grid = self.grid();
        let area = Rect::new(0, 0, grid.cols, grid.lines);
        let Some(tab) = workspace.mux().active_tab() else {
            return Ok(());
        };
        let (layout, dividers) = tab.layout(area);
        let top = TAB_BAR_ROWS as f32 * cell.height;
        let origin_of = |r: &Rect| [r.col as f32 * cell.width, top + r.row as f32 * cell.height];
        let cursor = CursorStyle { shape: CursorShape::Block, thickness: 2.0 };
        let mut rects = Vec::new();
        push_dividers(&dividers, [0.0, top], cell, &self.theme, &mut rects);
        let software = self.gpu.is_software();
        let bar = tab_bar(workspace, grid.cols, software);
        let hidden = CursorStyle { shape: CursorShape::Block, thickness: 0.0 };
        push_pane(
            &PaneView { term: &bar, origin: [0.0, 0.0], focused: false },
            cell,
            &self.theme,
            hidden,
            &mut rects,
        );
        let resolution = (self.config.width, self.config.height);
        {
            // The panes' models, locked while this frame is gathered and shaped only.
            let guards: Vec<(u32, Rect, MutexGuard<'_, Terminal>)> = layout
                .iter()
                .filter_map(|(pane, rect)| {
                    let session = workspace.session(*pane)?;
                    let term = session.terminal().lock().unwrap_or_else(|e| e.into_inner());
                    Some((pane.0, *rect, term))
                })
                .collect();
            let mut texts = vec![PaneText { key: TAB_BAR_KEY, term: &bar, origin: [0.0, 0.0] }];
            for (key, rect, term) in &guards {
                let focused = tab.focus().0 == *key;
                let view = PaneView { term, origin: origin_of(rect), focused };
                push_pane(&view, cell, &self.theme, cursor, &mut rects);
                texts.push(PaneText { key: *key, term, origin: origin_of(rect) });
            }
            self.rects.prepare(&self.gpu.device, &self.gpu.queue, resolution, &rects);
            self.text.prepare(
                &self.gpu.device,
                &self.gpu.queue,
                resolution,
                &self.theme,
                &texts,
            )?;
        }
        let frame = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(frame)
            | wgpu::CurrentSurfaceTexture::Suboptimal(frame) => frame,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.surface.configure(&self.gpu.device, &self.config);
                self.window.request_redraw();
                return Ok(());
            }
            _ => return Ok(()),
        };
        let view = frame.texture.create_view(&Default::default());
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = begin_clear_pass(&mut encoder, &view, self.theme.background);
            self.rects.draw(&mut pass, rects.len());
            self.text.render(&mut pass)?;
        }
        self.gpu.queue.submit([encoder.finish()]);
        self.window.pre_present_notify();
        self.gpu.queue.present(frame);
        self.text.trim();
        Ok(())
    }
}
