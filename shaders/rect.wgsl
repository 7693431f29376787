// Filled rectangles, one instance each: cell backgrounds, cursors, dividers, the tab bar.
// Positions are pixels from the top-left of the target; colors are written as given (the target
// is a non-sRGB format, so the bytes a program named are the bytes on screen).

struct Viewport {
    size: vec2<f32>,
    _padding: vec2<f32>,
};

@group(0) @binding(0) var<uniform> viewport: Viewport;

struct Rect {
    @location(0) origin: vec2<f32>,
    @location(1) size: vec2<f32>,
    @location(2) color: vec4<f32>,
};

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) color: vec4<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, rect: Rect) -> VertexOut {
    // A triangle strip over the four corners: (0,0) (1,0) (0,1) (1,1).
    let corner = vec2<f32>(f32(vertex & 1u), f32(vertex >> 1u));
    let pixel = rect.origin + corner * rect.size;
    let clip = vec2<f32>(pixel.x / viewport.size.x * 2.0 - 1.0, 1.0 - pixel.y / viewport.size.y * 2.0);
    var out: VertexOut;
    out.position = vec4<f32>(clip, 0.0, 1.0);
    out.color = rect.color;
    return out;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    return in.color;
}
