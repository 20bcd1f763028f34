//! STREAM triad on wgpu: `a[i] = b[i] + s * c[i]` through `acc` (a `parallel_loop` inside a
//! data region, so the arrays stay on the device) against the same triad written by hand as
//! WGSL and dispatched with wgpu on the same adapter, in one run. Prints reference time / acc
//! time (above 1.0: acc is faster).
//!
//! And the tiny-region loop of `benches/launches.rs` against hand-written wgpu
//! (`benches/wgpu/launches.rs`).
//!
//! `cargo bench --features wgpu --bench wgpu` (element count: `ACC_BENCH_N`, default 2^26;
//! repetitions: `ACC_BENCH_REPS`, default 20; `ACC_BENCH_ONLY=triad` or `tiny` runs one part).

use std::time::{Duration, Instant};

#[path = "wgpu/launches.rs"]
mod launches;

const S: f64 = 3.0;
/// Repetitions run before the timed ones.
const WARM_UP: usize = 5;

/// One acc triad per repetition, each followed by one run of every reference, so that clock
/// changes of the GPU during the run touch all of them alike.
#[acc::offload]
fn triad_interleaved(
    a: &mut Vec<f64>,
    b: &[f64],
    c: &[f64],
    reps: usize,
    refs: &[Reference],
) -> (Vec<Duration>, Vec<Vec<Duration>>) {
    let mut times = Vec::with_capacity(reps);
    let mut ref_times = vec![Vec::with_capacity(reps); refs.len()];
    #[acc::data(copyin(b, c), copyout(a))]
    {
        for _ in 0..reps {
            let t = Instant::now();
            let s = S;
            #[acc::parallel_loop]
            for i in 0..a.len() {
                a[i] = b[i] + s * c[i];
            }
            // A region that brings nothing back returns once submitted: its time includes
            // the wait, as the reference's includes its poll.
            acc::wait_all().expect("the region runs");
            times.push(t.elapsed());
            for (r, t) in refs.iter().zip(&mut ref_times) {
                t.push(r.run());
            }
        }
    }
    (times, ref_times)
}

/// The hand-written reference: one compute shader, its buffers created once, each run one
/// dispatch waited for (as each `acc` region is, with `acc::wait_all`).
struct Reference {
    name: &'static str,
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    out: wgpu::Buffer,
    grid: (u32, u32),
}

impl Reference {
    fn new(b: &[f64], c: &[f64], grid_stride: bool) -> Reference {
        use wgpu::util::DeviceExt;
        let adapter = acc_device_adapter();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("reference"),
            required_features: wgpu::Features::SHADER_F64,
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .expect("the adapter starts");
        let n = b.len() as u32;
        let groups = n.div_ceil(256);
        // Two ways to cover n elements: one invocation each on a 2-D grid, or a 1-D grid of at
        // most 65,535 workgroups whose invocations stride over the array.
        let grid = if grid_stride {
            (groups.min(65_535), 1)
        } else {
            (groups.min(65_535), groups.div_ceil(65_535))
        };
        let body = if grid_stride {
            format!(
                "for (var i = g.x; i < {n}u; i = i + {}u) {{ a[i] = b[i] + {S:?}lf * c[i]; }}",
                grid.0 * 256
            )
        } else {
            format!(
                "let i = g.x + g.y * {}u; if (i < {n}u) {{ a[i] = b[i] + {S:?}lf * c[i]; }}",
                grid.0 * 256
            )
        };
        let src = format!(
            "@group(0) @binding(0) var<storage, read_write> a: array<f64>;
             @group(0) @binding(1) var<storage, read> b: array<f64>;
             @group(0) @binding(2) var<storage, read> c: array<f64>;
             @compute @workgroup_size(256)
             fn main(@builtin(global_invocation_id) g: vec3<u32>) {{ {body} }}"
        );
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: None,
            source: wgpu::ShaderSource::Wgsl(src.into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let usage = wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST;
        let bytes = |v: &[f64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: 8 * n as u64,
            usage,
            mapped_at_creation: false,
        });
        let bb = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &bytes(b),
            usage,
        });
        let bc = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: None,
            contents: &bytes(c),
            usage,
        });
        let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: out.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: bb.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: bc.as_entire_binding(),
                },
            ],
        });
        Reference {
            name: if grid_stride {
                "grid-stride"
            } else {
                "2-D grid"
            },
            device,
            queue,
            pipeline,
            group,
            out,
            grid,
        }
    }

    fn run(&self) -> Duration {
        let t = Instant::now();
        let mut enc = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.group, &[]);
            pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
        }
        self.queue.submit([enc.finish()]);
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("the device runs");
        t.elapsed()
    }

    fn result(&self) -> Vec<f64> {
        let staging = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: self.out.size(),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = self.device.create_command_encoder(&Default::default());
        enc.copy_buffer_to_buffer(&self.out, 0, &staging, 0, self.out.size());
        self.queue.submit([enc.finish()]);
        staging.slice(..).map_async(wgpu::MapMode::Read, |_| {});
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("the device runs");
        let data = staging
            .slice(..)
            .get_mapped_range()
            .expect("mapped")
            .to_vec();
        data.chunks_exact(8)
            .map(|w| f64::from_le_bytes(w.try_into().expect("8 bytes")))
            .collect()
    }
}

/// The adapter `acc` picks first (wgpu's adapters, best first).
fn acc_device_adapter() -> wgpu::Adapter {
    acc_device::wgpu::adapters()
        .into_iter()
        .next()
        .expect("a wgpu adapter")
}

fn median(mut t: Vec<Duration>) -> Duration {
    t.sort();
    t[t.len() / 2]
}

fn main() {
    let n: usize = std::env::var("ACC_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 26);
    let reps: usize = std::env::var("ACC_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    acc::set_device_type(acc::DeviceType::Wgpu);
    if let Err(e) = acc::init(acc::DeviceType::Wgpu) {
        eprintln!("wgpu bench: {e}");
        std::process::exit(1);
    }
    let only = std::env::var("ACC_BENCH_ONLY").unwrap_or_default();
    let runs = |part: &str| only.is_empty() || only.split(',').any(|p| p.trim() == part);
    let adapter = acc_device_adapter();
    println!("adapter: {}", adapter.get_info().name);
    if runs("tiny") {
        launches::bench(&adapter, reps.min(5));
    }
    if !runs("triad") {
        return;
    }
    let b: Vec<f64> = (0..n).map(|i| (i % 1000) as f64).collect();
    let c: Vec<f64> = (0..n).map(|i| (i % 7) as f64).collect();
    let want = |i: usize| b[i] + S * c[i];

    let refs = [Reference::new(&b, &c, false), Reference::new(&b, &c, true)];
    let mut a_acc = vec![0.0; n];
    let (t_acc, t_refs) = triad_interleaved(&mut a_acc, &b, &c, reps + WARM_UP, &refs);
    let results: Vec<Vec<f64>> = refs.iter().map(Reference::result).collect();
    let ok = (0..n)
        .step_by(997)
        .chain([n - 1])
        .all(|i| a_acc[i] == want(i) && results.iter().all(|r| r[i] == want(i)));
    assert!(ok, "a triad result is wrong");

    let bytes = 3.0 * 8.0 * n as f64;
    let gbs = |d: Duration| bytes / d.as_secs_f64() / 1e9;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let ma = median(t_acc[WARM_UP..].to_vec());
    let mrefs: Vec<Duration> = t_refs
        .iter()
        .map(|t| median(t[WARM_UP..].to_vec()))
        .collect();
    // The reference is the faster of the hand-written shaders.
    let mr = mrefs.iter().copied().min().expect("references");
    let refs_text: Vec<String> = refs
        .iter()
        .zip(&mrefs)
        .map(|(r, &t)| format!("{} {:.3} ms ({:.0} GB/s)", r.name, ms(t), gbs(t)))
        .collect();
    println!(
        "triad f64 n={n}: acc {:.3} ms ({:.0} GB/s); hand-written WGSL: {}; ratio to the faster: {:.2}x (medians of {reps} interleaved repetitions after {WARM_UP} warm-ups, each waited for, results verified)",
        ms(ma),
        gbs(ma),
        refs_text.join(", "),
        mr.as_secs_f64() / ma.as_secs_f64(),
    );
}
