//! acc regions and a compute shader of one's own on the same wgpu buffer: an acc region fills
//! an array, `host_data use_device` hands its buffer to a WGSL shader (a 3-point smoothing the
//! program writes itself) dispatched on acc's own wgpu device and queue, and another acc
//! region scales the result. The queue runs the three in order; the result is checked against
//! plain Rust. Runs on the wgpu device (`ACC_DEVICE_TYPE=wgpu`; lavapipe in CI).
//!
//! `ACC_DEVICE_TYPE=wgpu cargo run --release --example wgpu_interop [n]`

use std::time::Instant;

use acc::wgpu;

/// `out[i] = (x[i - 1] + x[i] + x[i + 1]) / 3` inside, the ends copied: the program's own WGSL
/// on acc's device, reading `x`'s buffer and writing `out`'s.
fn smooth_with_wgsl(x: &acc::DeviceSlice<'_, f32>, out: &acc::DeviceSlice<'_, f32>) {
    let (device, queue) = acc::wgpu_device().expect("the wgpu device is the current device");
    let ((xb, xo, xs), (ob, oo, os)) = (
        x.wgpu_buffer().expect("x is on the wgpu device"),
        out.wgpu_buffer().expect("out is on the wgpu device"),
    );
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("smooth"),
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<storage, read> x: array<f32>;
             @group(0) @binding(1) var<storage, read_write> out: array<f32>;
             @compute @workgroup_size(256)
             fn main(@builtin(global_invocation_id) g: vec3<u32>) {
                 let n = arrayLength(&x);
                 let i = g.x;
                 if (i >= n) { return; }
                 if (i == 0u || i == n - 1u) {
                     out[i] = x[i];
                 } else {
                     out[i] = (x[i - 1u] + x[i] + x[i + 1u]) / 3.0;
                 }
             }"
            .into(),
        ),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("smooth"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let binding = |buffer, offset, size| {
        wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer,
            offset,
            size: std::num::NonZeroU64::new(size),
        })
    };
    let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: binding(xb, xo, xs),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: binding(ob, oo, os),
            },
        ],
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &group, &[]);
        pass.dispatch_workgroups((x.len() as u32).div_ceil(256), 1, 1);
    }
    queue.submit([encoder.finish()]);
}

#[acc::offload]
fn fill_smooth_scale(x: &mut Vec<f32>, out: &mut Vec<f32>) {
    let n = x.len();
    #[acc::data(create(x), copyout(out))]
    {
        #[acc::parallel_loop]
        for i in 0..n {
            x[i] = ((i * 7919) % 1000) as f32;
        }
        #[acc::host_data(use_device(x, out))]
        {
            smooth_with_wgsl(&x, &out);
        }
        #[acc::parallel_loop]
        for i in 0..n {
            out[i] *= 2.0;
        }
    }
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1 << 20);
    if let Err(e) = acc::init(acc::DeviceType::Wgpu) {
        eprintln!("wgpu_interop needs a wgpu device: {e}");
        std::process::exit(1);
    }
    acc::set_device_type(acc::DeviceType::Wgpu);
    let (mut x, mut out) = (vec![0.0f32; n], vec![0.0f32; n]);
    let t = Instant::now();
    fill_smooth_scale(&mut x, &mut out);
    let elapsed = t.elapsed();
    // The same in plain Rust, as the shader rounds it (f32 adds left to right, one division).
    let v = |i: usize| ((i * 7919) % 1000) as f32;
    for (i, &got) in out.iter().enumerate() {
        let s = if i == 0 || i == n - 1 {
            v(i)
        } else {
            (v(i - 1) + v(i) + v(i + 1)) / 3.0
        };
        let want = s * 2.0;
        assert!(
            (got - want).abs() <= 1e-5 * want.abs().max(1.0),
            "out[{i}] = {got} against {want}"
        );
    }
    println!(
        "wgpu_interop: n = {n}, device = wgpu ({}), an acc region, a WGSL shader of the program's own on the same buffers, an acc region: {:.3} ms, verified",
        acc::get_property(0, acc::DeviceType::Wgpu, acc::Property::Name),
        elapsed.as_secs_f64() * 1e3
    );
}
