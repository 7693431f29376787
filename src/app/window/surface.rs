//! The window's surface: the GPU side of a frame (shaping changed rows, uploading, presenting).
//! What a frame shows is gathered from the panes beforehand (see `frame`).

use std::sync::Arc;

use glyphon::FontSystem;
use winit::event_loop::OwnedDisplayHandle;
use winit::window::Window;

use super::frame::{Frame, TAB_BAR_ROWS};
use crate::config::Config;
use crate::render::gpu::{
    begin_clear_pass, has_render_node, open_on_best_backends, vulkan_drivers_to_disable,
    GlowPipeline, Gpu, RectPipeline, VULKAN_DRIVERS_DISABLE,
};
use crate::render::scene::{CellSize, Theme};
use crate::render::text::{font_system, Fonts, TextLayer, Typeface};
use crate::render::RenderError;
use crate::term::TermSize;

pub struct Surface {
    window: Arc<Window>,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    gpu: Gpu,
    rects: RectPipeline,
    glows: GlowPipeline,
    text: TextLayer,
    theme: Theme,
    /// Logical pixels between the window's edge and the panes.
    padding: u32,
}

/// How the window looks: what the configuration's font, theme and padding say.
#[derive(Clone, Debug, PartialEq)]
pub struct Look {
    pub family: String,
    pub font_size: f32,
    pub theme: Theme,
    pub padding: u32,
}

impl Look {
    pub fn of(config: &Config) -> Look {
        let colors = &config.theme;
        let theme = Theme {
            foreground: colors.foreground,
            background: colors.background,
            cursor: colors.cursor,
            selection: colors.selection,
            palette: colors.palette,
            ..Theme::default()
        };
        Look {
            family: config.font.family.clone(),
            font_size: config.font.size,
            theme,
            padding: config.padding,
        }
    }
}

/// The fonts a window draws with, read on a thread of their own while the display opens
/// (listing the system's fonts takes milliseconds), so that the window knows its grid as soon
/// as it has its size.
pub struct FontLoad(Option<std::thread::JoinHandle<FontSystem>>);

impl FontLoad {
    /// Start reading the fonts. Only reads the environment: see `instance_on` for the one
    /// write, which comes after `typeface` has waited for this thread.
    pub fn start() -> FontLoad {
        let read = || font_system(Fonts::BundledAndSystem);
        FontLoad(std::thread::Builder::new().name("fonts".into()).spawn(read).ok())
    }

    /// The fonts, measured for `look` at `scale`, once they are read. A family that is not
    /// installed is left for `Surface::set_look` to tell.
    pub fn typeface(&mut self, look: &Look, scale: f32) -> Typeface {
        let read = self.0.take().and_then(|thread| thread.join().ok());
        let system = read.unwrap_or_else(|| font_system(Fonts::BundledAndSystem));
        let mut typeface = Typeface::new(system, look.font_size * scale);
        typeface.set_family(&look.family);
        typeface
    }
}

/// The grid panes are laid out in, in a window of `width` x `height` pixels: below the tab bar,
/// inside `padding` pixels, in cells.
pub fn grid_in(width: u32, height: u32, cell: CellSize, padding: f32) -> TermSize {
    let top = TAB_BAR_ROWS as f32 * cell.height + padding;
    let width = width.max(1) as f32 - 2.0 * padding;
    let height = height.max(1) as f32 - top - padding;
    let cols = (width / cell.width).floor().max(1.0) as usize;
    let rows = (height / cell.height).floor().max(1.0) as usize;
    TermSize::new(cols, rows)
}

/// The padding in pixels at the window's `scale`.
pub fn padding_px(padding: u32, scale: f64) -> f32 {
    (padding as f64 * scale).round() as f32
}

fn instance_on(display: &OwnedDisplayHandle, backends: wgpu::Backends) -> wgpu::Instance {
    let mut descriptor =
        wgpu::InstanceDescriptor::new_with_display_handle(Box::new(display.clone()));
    descriptor.backends = backends;
    let skip = backends
        .contains(wgpu::Backends::VULKAN)
        .then(|| vulkan_drivers_to_disable(has_render_node(), |n| std::env::var_os(n).is_some()))
        .flatten();
    let Some(drivers) = skip else {
        return wgpu::Instance::new(descriptor);
    };
    // The loader reads its variable when the instance is made, and only then; it is taken out
    // again as soon as it is made (or fails), so that nothing this process starts inherits
    // it. This runs on the window's main thread before it starts any program; the threads
    // running meanwhile (the attach reader and writer, signals, the configuration watcher,
    // and with `--single-process` the server's listeners and sampler) neither start programs
    // nor read the environment through the C library, and Rust's own reads are serialized
    // with these writes; the fonts' thread (`FontLoad`) has ended. Offscreen rendering
    // (`Gpu::headless`, run by tests in parallel) never does this.
    struct Unset;
    impl Drop for Unset {
        fn drop(&mut self) {
            std::env::remove_var(VULKAN_DRIVERS_DISABLE);
        }
    }
    std::env::set_var(VULKAN_DRIVERS_DISABLE, drivers);
    let _unset = Unset;
    wgpu::Instance::new(descriptor)
}

impl Surface {
    /// The surface for `window` on `display`. Its GPU instances are made here, after the window
    /// has told its size (a server started for it opens its tabs at that size), since loading
    /// the drivers takes tens of milliseconds (a software renderer's compiler).
    pub fn new(
        display: &OwnedDisplayHandle,
        window: Arc<Window>,
        look: &Look,
        typeface: Typeface,
    ) -> Result<Surface, RenderError> {
        let (surface, gpu) = open_on_best_backends(
            |backends| {
                let instance = instance_on(display, backends);
                let surface = instance
                    .create_surface(window.clone())
                    .map_err(|e| RenderError::Device(e.to_string()))?;
                let gpu = Gpu::best(&instance, |adapter| adapter.is_surface_supported(&surface))?;
                Ok((surface, gpu))
            },
            |(_, gpu)| gpu.is_software(),
        )?;
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
        let glows = GlowPipeline::new(&gpu.device, format);
        let text = TextLayer::with_typeface(&gpu.device, &gpu.queue, format, typeface);
        let mut surface = Surface {
            window,
            surface,
            config,
            gpu,
            rects,
            glows,
            text,
            theme: look.theme,
            padding: 0,
        };
        surface.set_look(look);
        Ok(surface)
    }

    /// Take on a new look (the configuration changed); the font size is the caller's, which
    /// may differ from the configured one after Ctrl+= or Ctrl+-.
    pub fn set_look(&mut self, look: &Look) {
        self.theme = look.theme;
        self.padding = look.padding;
        if look.family != self.text.family() && !self.text.set_family(&look.family) {
            eprintln!(
                "paddock: no font family {:?} is installed; using {:?}",
                look.family,
                self.text.family()
            );
        }
    }

    /// Where the panes' grid starts in the window, in pixels: below the tab bar, inside the
    /// padding.
    pub fn grid_origin(&self) -> [f32; 2] {
        let padding = self.padding_px();
        [padding, TAB_BAR_ROWS as f32 * self.cell_size().height + padding]
    }

    fn padding_px(&self) -> f32 {
        padding_px(self.padding, self.window.scale_factor())
    }

    pub fn window(&self) -> &Arc<Window> {
        &self.window
    }

    pub fn cell_size(&self) -> CellSize {
        self.text.cell_size()
    }

    /// The grid panes are laid out in: the window below the tab bar, in cells.
    pub fn grid(&self) -> TermSize {
        grid_in(self.config.width, self.config.height, self.cell_size(), self.padding_px())
    }

    /// Follow the window's new size (at least one pixel each way).
    pub fn resize(&mut self, width: u32, height: u32) {
        self.config.width = width.max(1);
        self.config.height = height.max(1);
        // A window whose display is gone fails here; the next frame says so.
        let _ = self.configure();
    }

    /// Configure the surface for the window as it is now. A display that went away makes it
    /// fail (a validation error, which wgpu would otherwise raise as a panic).
    fn configure(&mut self) -> Result<(), RenderError> {
        let scope = self.gpu.device.push_error_scope(wgpu::ErrorFilter::Validation);
        self.surface.configure(&self.gpu.device, &self.config);
        match pollster::block_on(scope.pop()) {
            Some(error) => Err(RenderError::Surface(error.to_string())),
            None => Ok(()),
        }
    }

    /// Whether frames are drawn on a software renderer.
    pub fn is_software(&self) -> bool {
        self.gpu.is_software()
    }

    pub fn theme(&self) -> &Theme {
        &self.theme
    }

    /// Change the font size (logical pixels at the window's current scale).
    pub fn set_font_size(&mut self, font_size: f32) {
        let scale = self.window.scale_factor() as f32;
        self.text.set_font_size(font_size * scale);
    }

    /// Shape what changed, upload and present one frame. The panes' models are not locked
    /// here: `frame` was gathered from them beforehand.
    pub fn draw(&mut self, frame: &Frame<'_>) -> Result<(), RenderError> {
        let resolution = (self.config.width, self.config.height);
        self.rects.prepare(&self.gpu.device, &self.gpu.queue, resolution, &frame.rects);
        self.glows.prepare(&self.gpu.device, &self.gpu.queue, resolution, &frame.glows);
        self.text.prepare(&self.gpu.device, &self.gpu.queue, resolution, &frame.texts)?;
        let target = match self.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(target)
            | wgpu::CurrentSurfaceTexture::Suboptimal(target) => target,
            wgpu::CurrentSurfaceTexture::Outdated | wgpu::CurrentSurfaceTexture::Lost => {
                self.configure()?;
                self.window.request_redraw();
                return Ok(());
            }
            _ => return Ok(()),
        };
        let view = target.texture.create_view(&Default::default());
        let mut encoder = self.gpu.device.create_command_encoder(&Default::default());
        {
            let mut pass = begin_clear_pass(&mut encoder, &view, self.theme.background);
            // The glow goes over the cells and under the text, which stays crisp.
            self.rects.draw(&mut pass);
            self.glows.draw(&mut pass);
            self.text.render(&mut pass)?;
        }
        self.gpu.queue.submit([encoder.finish()]);
        self.window.pre_present_notify();
        self.gpu.queue.present(target);
        Ok(())
    }
}
