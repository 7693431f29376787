//! The GPU: adapter choice, device, and the instanced pipelines (rectangles, the pulse glow),
//! with offscreen rendering for tests and screenshots.
//!
//! Adapter choice prefers hardware (discrete, then integrated, then virtual) and falls back to a
//! software rasteriser (llvmpipe/lavapipe, WARP), which it reports so the app can say so once.
//! No adapter at all is an error with a message that says what to install, never a panic.

use wgpu::util::DeviceExt;

use super::glow::GlowInstance;
use super::scene::RectInstance;
use super::RenderError;
use crate::term::Rgb;

/// The target format: not sRGB, so colors reach the screen as the bytes programs named.
pub const TARGET_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub adapter: wgpu::AdapterInfo,
    /// The adapter itself, for what a surface needs to ask it (its capabilities).
    pub wgpu_adapter: wgpu::Adapter,
}

impl Gpu {
    /// A device for offscreen rendering (no window).
    pub fn headless() -> Result<Gpu, RenderError> {
        open_on_best_backends(
            |backends| {
                let mut descriptor = wgpu::InstanceDescriptor::new_without_display_handle();
                descriptor.backends = backends;
                Gpu::best(&wgpu::Instance::new(descriptor), |_| true)
            },
            Gpu::is_software,
        )
    }

    /// A device on the best adapter of `instance` that `usable` accepts (one that can present
    /// to a window's surface, say).
    pub fn best(
        instance: &wgpu::Instance,
        usable: impl Fn(&wgpu::Adapter) -> bool,
    ) -> Result<Gpu, RenderError> {
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        let adapter = adapters
            .into_iter()
            .filter(|a| usable(a))
            .min_by_key(|a| preference(&a.get_info()))
            .ok_or(RenderError::NoAdapter)?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("paddock"),
            required_limits: wgpu::Limits::downlevel_defaults().using_resolution(adapter.limits()),
            ..Default::default()
        }))
        .map_err(|e| RenderError::Device(e.to_string()))?;
        Ok(Gpu { device, queue, adapter: adapter.get_info(), wgpu_adapter: adapter })
    }

    /// Whether the adapter is a software rasteriser (slow; worth telling the user once).
    pub fn is_software(&self) -> bool {
        is_software(&self.adapter)
    }
}

/// Open the GPU with `open`, given the platform's own backends (Vulkan, Metal, DX12) first and
/// OpenGL only when those offer no adapter, or only a software one on a machine with a GPU (one
/// whose driver speaks OpenGL and not Vulkan). An instance that includes OpenGL loads its driver
/// even when it draws with another backend (Mesa's, 4.5 MiB in every window, and more heap),
/// so the two are asked together only where it can pay. `WGPU_BACKEND` (wgpu's list, such as
/// `gl` or `vulkan`) names the only backends tried.
pub fn open_on_best_backends<T>(
    mut open: impl FnMut(wgpu::Backends) -> Result<T, RenderError>,
    software: impl Fn(&T) -> bool,
) -> Result<T, RenderError> {
    if let Some(backends) = wgpu::Backends::from_env() {
        return open(backends);
    }
    let primary = open(first_backends());
    choose_backend(primary, || open(wgpu::Backends::SECONDARY), software, has_render_node())
}

/// The backends `open_on_best_backends` tries first: `WGPU_BACKEND`'s, else the platform's own.
pub fn first_backends() -> wgpu::Backends {
    wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY)
}

/// The choice `open_on_best_backends` makes, given what the platform's own backends offered:
/// `secondary` (OpenGL) is opened only when that can find something better.
fn choose_backend<T>(
    primary: Result<T, RenderError>,
    secondary: impl FnOnce() -> Result<T, RenderError>,
    software: impl Fn(&T) -> bool,
    has_gpu_device: bool,
) -> Result<T, RenderError> {
    match primary {
        Ok(found) if !software(&found) || !has_gpu_device => Ok(found),
        Ok(found) => match secondary() {
            Ok(gl) if !software(&gl) => Ok(gl),
            _ => Ok(found),
        },
        // The platform's own backends' reason is the one worth reading.
        Err(e) => secondary().map_err(|_| e),
    }
}

/// Whether the machine has a DRM render node (on Linux; elsewhere, assumed). Without one, a
/// software adapter from Vulkan is the best there is and OpenGL is not asked, and Mesa's GPU
/// drivers are not loaded (`vulkan_drivers_to_disable`).
pub fn has_render_node() -> bool {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_dir("/dev/dri").is_ok_and(|entries| {
            entries.flatten().any(|e| e.file_name().to_string_lossy().starts_with("renderD"))
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// The Vulkan loader's variable naming drivers it must not load (loader 1.3.234 and later; an
/// older loader ignores it and loads them all, as before).
pub const VULKAN_DRIVERS_DISABLE: &str = "VK_LOADER_DRIVERS_DISABLE";
/// The variables with which a user chooses Vulkan drivers themselves: then paddock does not.
const VULKAN_DRIVER_CHOICES: [&str; 5] = [
    VULKAN_DRIVERS_DISABLE,
    "VK_LOADER_DRIVERS_SELECT",
    "VK_DRIVER_FILES",
    "VK_ICD_FILENAMES",
    "VK_ADD_DRIVER_FILES",
];
/// Mesa's Vulkan drivers for GPUs, as the loader matches their manifests' names: each drives
/// its GPU through a DRM render node and offers nothing without one. Vendors' own drivers
/// (NVIDIA's, Arm's, Qualcomm's…), which reach their GPUs through device nodes of their own,
/// and WSL's (dzn, through /dev/dxg) are not among them, nor the software ones.
const MESA_DRM_VULKAN_DRIVERS: &str = "*radeon_icd*,*intel_icd*,*intel_hasvk_icd*,\
    *nouveau_icd*,*freedreno_icd*,*broadcom_icd*,*panfrost_icd*,*asahi_icd*,*virtio_icd*,\
    *powervr_mesa_icd*";

/// The Vulkan drivers the loader should skip, if any: Mesa's GPU drivers where the machine has
/// no DRM render node, since none of them can offer an adapter there, yet the loader loads
/// every installed driver to ask (Mesa's radeon and two Intel drivers: 4.7 MiB of a window's
/// memory on the build machine); none where the user chose drivers with the loader's own
/// variables.
pub fn vulkan_drivers_to_disable(
    render_node: bool,
    chosen: impl Fn(&str) -> bool,
) -> Option<&'static str> {
    let user_chose = VULKAN_DRIVER_CHOICES.iter().any(|name| chosen(name));
    (!render_node && !user_chose).then_some(MESA_DRM_VULKAN_DRIVERS)
}

/// Lower is better: hardware first, software last.
fn preference(info: &wgpu::AdapterInfo) -> u8 {
    if is_software(info) {
        return 4;
    }
    match info.device_type {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other | wgpu::DeviceType::Cpu => 3,
    }
}

pub fn is_software(info: &wgpu::AdapterInfo) -> bool {
    let name = info.name.to_lowercase();
    info.device_type == wgpu::DeviceType::Cpu
        || ["llvmpipe", "lavapipe", "swiftshader", "warp", "software"]
            .iter()
            .any(|n| name.contains(n))
}

/// What an instanced pipeline draws: one quad per instance, laid out as `ATTRIBUTES` say, by a
/// shader whose vertex stage reads a viewport-size uniform at group 0, binding 0.
pub trait InstanceData: bytemuck::Pod {
    const LABEL: &'static str;
    const ATTRIBUTES: &'static [wgpu::VertexAttribute];
    fn shader() -> wgpu::ShaderModuleDescriptor<'static>;
}

impl InstanceData for RectInstance {
    const LABEL: &'static str = "rect";
    const ATTRIBUTES: &'static [wgpu::VertexAttribute] =
        &wgpu::vertex_attr_array![0 => Float32x2, 1 => Float32x2, 2 => Float32x4];
    fn shader() -> wgpu::ShaderModuleDescriptor<'static> {
        wgpu::include_wgsl!("../../shaders/rect.wgsl")
    }
}

impl InstanceData for GlowInstance {
    const LABEL: &'static str = "pulse glow";
    const ATTRIBUTES: &'static [wgpu::VertexAttribute] = &wgpu::vertex_attr_array![
        0 => Float32x4, 1 => Float32x4, 2 => Float32x4, 3 => Float32x4
    ];
    fn shader() -> wgpu::ShaderModuleDescriptor<'static> {
        wgpu::include_wgsl!("../../shaders/pulse.wgsl")
    }
}

/// Cell backgrounds, cursors, dividers and the chrome's fills (shaders/rect.wgsl).
pub type RectPipeline = Instanced<RectInstance>;
/// The pulse overlay (shaders/pulse.wgsl).
pub type GlowPipeline = Instanced<GlowInstance>;

/// Draws instances of `T`: one triangle strip each, alpha-blended over what is there.
pub struct Instanced<T: InstanceData> {
    pipeline: wgpu::RenderPipeline,
    viewport: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    instances: wgpu::Buffer,
    capacity: usize,
    count: usize,
    kind: std::marker::PhantomData<T>,
}

impl<T: InstanceData> Instanced<T> {
    pub fn new(device: &wgpu::Device, format: wgpu::TextureFormat) -> Instanced<T> {
        let module = device.create_shader_module(T::shader());
        let layout_entry = wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let bind_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(T::LABEL),
            entries: &[layout_entry],
        });
        let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(T::LABEL),
            bind_group_layouts: &[Some(&bind_layout)],
            immediate_size: 0,
        });
        let instance_layout = wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<T>() as wgpu::BufferAddress,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes: T::ATTRIBUTES,
        };
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(T::LABEL),
            layout: Some(&layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                compilation_options: Default::default(),
                buffers: &[Some(instance_layout)],
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleStrip,
                ..Default::default()
            },
            depth_stencil: None,
            multisample: Default::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                compilation_options: Default::default(),
                targets: &[Some(wgpu::ColorTargetState {
                    format,
                    blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
            }),
            multiview_mask: None,
            cache: None,
        });
        let viewport = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(T::LABEL),
            contents: bytemuck::cast_slice(&[0f32; 4]),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(T::LABEL),
            layout: &bind_layout,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: viewport.as_entire_binding() }],
        });
        let capacity = 256;
        let instances = instance_buffer::<T>(device, capacity);
        Instanced {
            pipeline,
            viewport,
            bind_group,
            instances,
            capacity,
            count: 0,
            kind: std::marker::PhantomData,
        }
    }

    /// Upload the viewport size and the instances (growing the buffer when needed).
    pub fn prepare(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        size: (u32, u32),
        instances: &[T],
    ) {
        let viewport = [size.0 as f32, size.1 as f32, 0.0, 0.0];
        queue.write_buffer(&self.viewport, 0, bytemuck::cast_slice(&viewport));
        if instances.len() > self.capacity {
            self.capacity = instances.len().next_power_of_two();
            self.instances = instance_buffer::<T>(device, self.capacity);
        }
        queue.write_buffer(&self.instances, 0, bytemuck::cast_slice(instances));
        self.count = instances.len();
    }

    /// Draw what was prepared last.
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if self.count == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.bind_group, &[]);
        pass.set_vertex_buffer(0, self.instances.slice(..));
        pass.draw(0..4, 0..self.count as u32);
    }
}

fn instance_buffer<T: InstanceData>(device: &wgpu::Device, capacity: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(T::LABEL),
        size: (capacity * std::mem::size_of::<T>()) as wgpu::BufferAddress,
        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// The one render pass of a frame: `view` cleared to `clear`, then drawn on.
pub fn begin_clear_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    view: &wgpu::TextureView,
    clear: Rgb,
) -> wgpu::RenderPass<'e> {
    let [r, g, b, _] = super::scene::rgba(clear);
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some("frame"),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color {
                    r: f64::from(r),
                    g: f64::from(g),
                    b: f64::from(b),
                    a: 1.0,
                }),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: None,
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

/// An RGBA image, rows top to bottom, 4 bytes per pixel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

/// Clear a `width`×`height` texture to `clear`, draw `rects` on it and read it back.
pub fn render_rects(
    gpu: &Gpu,
    pipeline: &mut RectPipeline,
    clear: Rgb,
    (width, height): (u32, u32),
    rects: &[RectInstance],
) -> Result<Image, RenderError> {
    pipeline.prepare(&gpu.device, &gpu.queue, (width.max(1), height.max(1)), rects);
    render_offscreen(gpu, clear, (width, height), |pass| {
        pipeline.draw(pass);
        Ok(())
    })
}

/// Clear a `width`×`height` texture to `clear`, run `draw` in one render pass on it (everything
/// it draws is prepared beforehand) and read the image back.
pub fn render_offscreen(
    gpu: &Gpu,
    clear: Rgb,
    (width, height): (u32, u32),
    draw: impl FnOnce(&mut wgpu::RenderPass<'_>) -> Result<(), RenderError>,
) -> Result<Image, RenderError> {
    let (width, height) = (width.max(1), height.max(1));
    let texture = gpu.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("offscreen"),
        size: wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: TARGET_FORMAT,
        usage: wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
        view_formats: &[],
    });
    let view = texture.create_view(&Default::default());
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    {
        let mut pass = begin_clear_pass(&mut encoder, &view, clear);
        draw(&mut pass)?;
    }
    let row_bytes = width * 4;
    let padded =
        row_bytes.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
    let readback = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback"),
        size: u64::from(padded) * u64::from(height),
        usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
        mapped_at_creation: false,
    });
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &readback,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded),
                rows_per_image: Some(height),
            },
        },
        wgpu::Extent3d { width, height, depth_or_array_layers: 1 },
    );
    gpu.queue.submit([encoder.finish()]);
    let slice = readback.slice(..);
    let (sender, receiver) = crossbeam_channel::bounded(1);
    slice.map_async(wgpu::MapMode::Read, move |result| {
        let _ = sender.send(result);
    });
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| RenderError::Readback(e.to_string()))?;
    receiver
        .recv()
        .map_err(|e| RenderError::Readback(e.to_string()))?
        .map_err(|e| RenderError::Readback(e.to_string()))?;
    let mapped = slice.get_mapped_range().map_err(|e| RenderError::Readback(e.to_string()))?;
    let mut rgba = Vec::with_capacity((row_bytes * height) as usize);
    for row in mapped.chunks(padded as usize) {
        rgba.extend_from_slice(&row[..row_bytes as usize]);
    }
    Ok(Image { width, height, rgba })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_render_node_vulkan_skips_mesas_gpu_drivers_unless_the_user_chose() {
        let none = |_: &str| false;
        let skipped = vulkan_drivers_to_disable(false, none).expect("no render node");
        let globs: Vec<&str> = skipped.split(',').collect();
        for mesa in ["radeon_icd.x86_64.json", "intel_icd.x86_64.json", "intel_hasvk_icd.i686.json"]
        {
            assert!(globs.iter().any(|g| mesa.contains(g.trim_matches('*'))), "{mesa}");
        }
        // The software drivers, WSL's and vendors' own drivers stay.
        for kept in ["lvp_icd.x86_64.json", "dzn_icd.x86_64.json", "nvidia_icd.json", "mali.json"] {
            assert!(!globs.iter().any(|g| kept.contains(g.trim_matches('*'))), "{kept}");
        }
        assert!(globs.iter().all(|g| !g.contains(' ') && g.starts_with('*')), "{skipped}");
        assert_eq!(vulkan_drivers_to_disable(true, none), None, "a render node: every one may");
        for chosen in VULKAN_DRIVER_CHOICES {
            assert_eq!(vulkan_drivers_to_disable(false, |name| name == chosen), None, "{chosen}");
        }
    }

    /// An adapter as `choose_backend` sees it: which family offered it, and whether it is software.
    type Found = (&'static str, bool);

    fn choose(
        primary: Result<Found, RenderError>,
        gl: Option<Result<Found, RenderError>>,
        has_gpu_device: bool,
    ) -> (Result<&'static str, String>, bool) {
        let mut asked = false;
        let chosen = choose_backend(
            primary,
            || {
                asked = true;
                gl.expect("OpenGL asked when it should not be")
            },
            |found: &Found| found.1,
            has_gpu_device,
        );
        (chosen.map(|f| f.0).map_err(|e| e.to_string()), asked)
    }

    #[test]
    fn opengl_is_not_loaded_where_vulkan_draws() {
        assert_eq!(choose(Ok(("vulkan", false)), None, true), (Ok("vulkan"), false));
        // llvmpipe's Vulkan on a machine with no GPU: OpenGL would be software too.
        assert_eq!(choose(Ok(("vulkan", true)), None, false), (Ok("vulkan"), false));
    }

    #[test]
    fn a_gpu_that_only_opengl_drives_wins_over_software_vulkan() {
        let gl = Some(Ok(("gl", false)));
        assert_eq!(choose(Ok(("vulkan", true)), gl, true), (Ok("gl"), true));
        let gl = Some(Ok(("gl", true)));
        assert_eq!(choose(Ok(("vulkan", true)), gl, true), (Ok("vulkan"), true));
        let gl = Some(Err(RenderError::NoAdapter));
        assert_eq!(choose(Ok(("vulkan", true)), gl, true), (Ok("vulkan"), true));
    }

    #[test]
    fn without_vulkan_opengl_draws_and_failing_both_names_the_first_reason() {
        let none = || Err(RenderError::Device("no Vulkan driver".into()));
        assert_eq!(choose(none(), Some(Ok(("gl", true))), false), (Ok("gl"), true));
        let (chosen, asked) = choose(none(), Some(Err(RenderError::NoAdapter)), false);
        assert!(asked);
        assert!(chosen.unwrap_err().contains("no Vulkan driver"));
    }
}
