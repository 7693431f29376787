// The pulse overlay: each pane's border and title strip glow in its state's color, as bright as
// its activity. An instance is one band of a pane (its top with the title strip, its bottom, or
// one side), so only pixels that can glow are shaded; the fragment shader works the glow out
// from the pixel's distance to the pane's edge. Drawn over the cells, under the text, with
// alpha blending. What changes over time (the intensity, the needs-you pulse) is computed on
// the CPU and arrives per instance, so a steady overlay costs nothing between frames.

struct Viewport {
    size: vec2<f32>,
    _padding: vec2<f32>,
};

@group(0) @binding(0) var<uniform> viewport: Viewport;

struct Band {
    // The quad drawn: x, y, width, height in pixels.
    @location(0) band: vec4<f32>,
    // The pane it belongs to, title strip included.
    @location(1) pane: vec4<f32>,
    // The state's color, and the glow's intensity (0 to 1) in alpha.
    @location(2) color: vec4<f32>,
    // How far the glow reaches inward, the title strip's height and the edge line's width, in
    // pixels.
    @location(3) shape: vec4<f32>,
};

struct VertexOut {
    @builtin(position) position: vec4<f32>,
    @location(0) pixel: vec2<f32>,
    @location(1) @interpolate(flat) pane: vec4<f32>,
    @location(2) @interpolate(flat) color: vec4<f32>,
    @location(3) @interpolate(flat) shape: vec4<f32>,
};

@vertex
fn vs_main(@builtin(vertex_index) vertex: u32, band: Band) -> VertexOut {
    // A triangle strip over the four corners: (0,0) (1,0) (0,1) (1,1).
    let corner = vec2<f32>(f32(vertex & 1u), f32(vertex >> 1u));
    let pixel = band.band.xy + corner * band.band.zw;
    let clip = vec2<f32>(pixel.x / viewport.size.x * 2.0 - 1.0, 1.0 - pixel.y / viewport.size.y * 2.0);
    var out: VertexOut;
    out.position = vec4<f32>(clip, 0.0, 1.0);
    out.pixel = pixel;
    out.pane = band.pane;
    out.color = band.color;
    out.shape = band.shape;
    return out;
}

@fragment
fn fs_main(in: VertexOut) -> @location(0) vec4<f32> {
    let inside = in.pixel - in.pane.xy;
    let size = in.pane.zw;
    // Distance from the pixel's center to the nearest edge of the pane.
    let edge = min(min(inside.x, size.x - inside.x), min(inside.y, size.y - inside.y));
    let reach = max(in.shape.x, 1.0);
    let line_width = in.shape.z;
    // A crisp line on the edge, then light that fades inward.
    let line = clamp(line_width + 0.5 - edge, 0.0, 1.0);
    let fade = clamp(1.0 - edge / reach, 0.0, 1.0);
    var alpha = max(line * 0.9, fade * fade * 0.55);
    // The title strip: a wash from the left, where the pulse badge is, fading to the right.
    if inside.y < in.shape.y {
        alpha = max(alpha, 0.3 * (1.0 - 0.75 * clamp(inside.x / size.x, 0.0, 1.0)));
    }
    return vec4<f32>(in.color.rgb, alpha * in.color.a);
}
