//! The tiny-region loop of `benches/launches.rs` on wgpu (issue 16): 10,000 regions over 1,024
//! present `f64`, a sum the host reads every tenth step, against the same loop written by hand
//! with wgpu on the same adapter, two ways: one submission per step (as the CUDA reference
//! launches), and the ten steps between two reads in one compute pass and one submission, each
//! step's scalar at a dynamic offset of one buffer written once (what a careful wgpu program
//! does). Results verified against each other.

use std::time::{Duration, Instant};

#[path = "../launches/programs.rs"]
#[allow(dead_code)]
mod programs;

/// Regions of the loop.
pub const STEPS: usize = 10_000;
/// Elements each region updates.
pub const N: usize = 1024;

/// The hand-written loop: the update and sum shaders, the array, the scalars' buffer.
pub struct Reference {
    device: wgpu::Device,
    queue: wgpu::Queue,
    update: wgpu::ComputePipeline,
    sum: wgpu::ComputePipeline,
    x: wgpu::Buffer,
    out: wgpu::Buffer,
    staging: wgpu::Buffer,
    scalars: wgpu::Buffer,
    update_group: wgpu::BindGroup,
    sum_group: wgpu::BindGroup,
    /// Bytes between two steps' scalars (the adapter's dynamic offset alignment).
    stride: u64,
}

impl Reference {
    pub fn new(adapter: &wgpu::Adapter) -> Reference {
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("reference"),
            required_features: wgpu::Features::SHADER_F64,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .expect("the adapter starts");
        let src = format!(
            "@group(0) @binding(0) var<storage, read_write> x: array<f64>;
             @group(0) @binding(1) var<storage, read> a: f64;
             @group(0) @binding(2) var<storage, read_write> out: f64;
             var<workgroup> s: array<f64, 256>;
             @compute @workgroup_size(256)
             fn update(@builtin(global_invocation_id) g: vec3<u32>) {{
                 if (g.x < {N}u) {{ x[g.x] = x[g.x] * 0.5lf + a; }}
             }}
             @compute @workgroup_size(256)
             fn sum(@builtin(local_invocation_index) t: u32) {{
                 var v = 0.0lf;
                 for (var i = t; i < {N}u; i = i + 256u) {{ v = v + x[i]; }}
                 s[t] = v;
                 workgroupBarrier();
                 for (var w = 128u; w > 0u; w = w / 2u) {{
                     if (t < w) {{ s[t] = s[t] + s[t + w]; }}
                     workgroupBarrier();
                 }}
                 if (t == 0u) {{ out = s[0]; }}
             }}"
        );
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(src.into()),
        });
        let storage = |read_only| wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        };
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty,
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: None,
            entries: &[
                entry(0, storage(false)),
                entry(
                    1,
                    wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: true },
                        has_dynamic_offset: true,
                        min_binding_size: None,
                    },
                ),
                entry(2, storage(false)),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: None,
            bind_group_layouts: &[Some(&layout)],
            ..Default::default()
        });
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let (update, sum) = (pipeline("update"), pipeline("sum"));
        let stride = u64::from(device.limits().min_storage_buffer_offset_alignment).max(8);
        let buffer = |size: u64, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size,
                usage,
                mapped_at_creation: false,
            })
        };
        let copy = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let x = buffer(8 * N as u64, wgpu::BufferUsages::STORAGE | copy);
        let out = buffer(8, wgpu::BufferUsages::STORAGE | copy);
        let staging = buffer(
            8 * N as u64,
            wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        );
        let scalars = buffer(10 * stride, wgpu::BufferUsages::STORAGE | copy);
        let group = |pipeline: &wgpu::ComputePipeline| {
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: x.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                            buffer: &scalars,
                            offset: 0,
                            size: std::num::NonZeroU64::new(8),
                        }),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: out.as_entire_binding(),
                    },
                ],
            })
        };
        let (update_group, sum_group) = (group(&update), group(&sum));
        Reference {
            device,
            queue,
            update,
            sum,
            x,
            out,
            staging,
            scalars,
            update_group,
            sum_group,
            stride,
        }
    }

    /// The first `bytes` of the staging buffer, once the queue ran.
    fn read(&self, bytes: u64) -> Vec<f64> {
        self.staging
            .slice(..bytes)
            .map_async(wgpu::MapMode::Read, |_| {});
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("the device runs");
        let data: Vec<f64> = self
            .staging
            .slice(..bytes)
            .get_mapped_range()
            .expect("mapped")
            .chunks_exact(8)
            .map(|w| f64::from_le_bytes(w.try_into().expect("8 bytes")))
            .collect();
        self.staging.unmap();
        data
    }

    /// The loop from `x`: one submission per step (`batched` false) or per ten steps; returns
    /// the sums' total, leaving the array in `x`.
    pub fn run(&self, x: &mut [f64], steps: usize, batched: bool) -> f64 {
        let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.queue.write_buffer(&self.x, 0, &bytes);
        let groups = N.div_ceil(256) as u32;
        let mut total = 0.0;
        let mut step = 0;
        while step < steps {
            // Steps up to the next read (ten), or one step.
            let run = if batched {
                (10 - step % 10).min(steps - step)
            } else {
                1
            };
            let mut scalars = vec![0u8; (self.stride * run as u64) as usize];
            for k in 0..run {
                let a = ((step + k) % 7) as f64;
                let at = (self.stride * k as u64) as usize;
                scalars[at..at + 8].copy_from_slice(&a.to_le_bytes());
            }
            self.queue.write_buffer(&self.scalars, 0, &scalars);
            let mut enc = self.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                pass.set_pipeline(&self.update);
                for k in 0..run {
                    pass.set_bind_group(0, &self.update_group, &[(self.stride * k as u64) as u32]);
                    pass.dispatch_workgroups(groups, 1, 1);
                }
            }
            step += run;
            let read = step % 10 == 0;
            if read {
                {
                    let mut pass = enc.begin_compute_pass(&Default::default());
                    pass.set_pipeline(&self.sum);
                    pass.set_bind_group(0, &self.sum_group, &[0]);
                    pass.dispatch_workgroups(1, 1, 1);
                }
                enc.copy_buffer_to_buffer(&self.out, 0, &self.staging, 0, 8);
            }
            self.queue.submit([enc.finish()]);
            if read {
                total += self.read(8)[0];
            }
        }
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&self.x, 0, &self.staging, 0, 8 * N as u64);
        self.queue.submit([enc.finish()]);
        x.copy_from_slice(&self.read(8 * N as u64));
        total
    }
}

/// Runs the tiny-region loop `reps` times after a warm-up through acc (on the wgpu device) and
/// both references, verifies them, and prints the ratios.
pub fn bench(adapter: &wgpu::Adapter, reps: usize) {
    let r = Reference::new(adapter);
    let start: Vec<f64> = (0..N).map(|i| (i % 13) as f64).collect();
    let (mut ta, mut t1, mut t10) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..=reps {
        let mut x = start.clone();
        let t = Instant::now();
        let total = programs::tiny_regions(&mut x, STEPS);
        let acc_time = t.elapsed();
        let mut times = [Duration::ZERO; 2];
        for (batched, time) in [false, true].into_iter().zip(&mut times) {
            let mut y = start.clone();
            let t = Instant::now();
            let expected = r.run(&mut y, STEPS, batched);
            *time = t.elapsed();
            assert_eq!(x, y, "the tiny regions' array differs from the wgpu loop's");
            assert!(
                (total - expected).abs() <= 1e-12 * expected.abs(),
                "the tiny regions' sums differ: {total} against {expected}"
            );
        }
        if rep > 0 {
            ta.push(acc_time);
            t1.push(times[0]);
            t10.push(times[1]);
        }
    }
    let median = |mut t: Vec<Duration>| {
        t.sort();
        t[t.len() / 2]
    };
    let (a, one, ten) = (median(ta), median(t1), median(t10));
    let per = |d: Duration| d.as_secs_f64() * 1e6 / (STEPS + STEPS / 10) as f64;
    println!(
        "tiny regions: acc {:.2} us a region; hand-written wgpu, a submission per step {:.2} us (ratio {:.2}x), ten steps a submission {:.2} us (ratio {:.2}x) ({STEPS} regions of {N} f64 and {} sums, medians of {reps}, results verified)",
        per(a),
        per(one),
        one.as_secs_f64() / a.as_secs_f64(),
        per(ten),
        ten.as_secs_f64() / a.as_secs_f64(),
        STEPS / 10,
    );
}
