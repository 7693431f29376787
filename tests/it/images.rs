//! PNG files for the render and window tests.

use std::path::Path;

pub use paddock::render::gpu::Image;

pub fn write_png(path: &Path, image: &Image) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("create dir");
    let file = std::fs::File::create(path).expect("create png");
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), image.width, image.height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().expect("png header");
    writer.write_image_data(&image.rgba).expect("png data");
}

/// An 8-bit RGBA PNG, or `None` when the file is missing or of another kind.
pub fn read_png(path: &Path) -> Option<Image> {
    let file = std::fs::File::open(path).ok()?;
    let decoder = png::Decoder::new(std::io::BufReader::new(file));
    let mut reader = decoder.read_info().ok()?;
    let mut rgba = vec![0; reader.output_buffer_size()?];
    let info = reader.next_frame(&mut rgba).ok()?;
    rgba.truncate(info.buffer_size());
    let rgba_8 = info.color_type == png::ColorType::Rgba && info.bit_depth == png::BitDepth::Eight;
    rgba_8.then_some(Image { width: info.width, height: info.height, rgba })
}
