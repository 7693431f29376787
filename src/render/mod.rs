//! Drawing: the pure scene step (`scene`: cells → rectangles, testable without a GPU; `chrome`:
//! the tab bar and title strips as one-row terminals; `glow`: the pulse overlay's bands and how
//! they move) and the GPU side (`gpu`: adapter, device, the instanced pipelines of
//! shaders/rect.wgsl and shaders/pulse.wgsl, offscreen rendering). Text (glyphon) and the
//! window surface build on these.

pub mod chrome;
pub mod glow;
pub mod gpu;
pub mod scene;
pub mod text;

use thiserror::Error;

/// The family name of the bundled font (assets/fonts): the monospace family text falls back
/// to, and the configuration's default (a test keeps the two the same).
pub const FONT_FAMILY: &str = "JetBrains Mono";

#[derive(Debug, Error)]
pub enum RenderError {
    #[error(
        "no graphics adapter found: paddock needs Vulkan, Metal, DirectX 12 or OpenGL \
         (on Linux without a GPU, install a software driver such as Debian's mesa-vulkan-drivers)"
    )]
    NoAdapter,
    #[error("cannot open the graphics device: {0}")]
    Device(String),
    #[error("cannot read the rendered image back: {0}")]
    Readback(String),
    #[error("cannot draw text: {0}")]
    Text(String),
    #[error("the window cannot be drawn on any more ({0}); was its display closed?")]
    Surface(String),
}

#[cfg(test)]
mod tests {
    /// A configuration that names no font draws with the bundled one, not a system lookup.
    #[test]
    fn the_default_font_is_the_bundled_one() {
        assert_eq!(crate::config::Config::default().font.family, super::FONT_FAMILY);
    }
}
