//! The execution-model patterns on wgpu against the same programs on nvidia, in one process
//! on one GPU: each pattern's `acc` code runs on `ACC_DEVICE_TYPE` nvidia (PTX through CUDA)
//! and on wgpu (WGSL through the GPU's Vulkan driver), with its data present, and prints
//! nvidia time / wgpu time, then that ratio divided by the same ratio for a STREAM triad: the
//! share of the two devices' bandwidth gap the pattern adds or removes (1.0: the pattern runs
//! on wgpu as well as the triad does; the execution-model issue asks at least 0.8). Results
//! of the two devices are compared.
//!
//! `cargo bench --features wgpu,cuda --bench gpu_patterns` (`ACC_DEVICE_PATTERNS=1
//! scripts/device-build` builds it here into .device-bin, and `scripts/gpu-bench` runs it on
//! the GPU machine; repetitions: `ACC_BENCH_REPS`, default 10; each timed repetition is
//! `INNER` regions and one wait).

// Index loops are the OpenACC idiom these benchmarks measure.
#![allow(clippy::needless_range_loop)]

use std::time::{Duration, Instant};

use acc::DeviceType;

/// Repetitions run before the timed ones.
const WARM_UP: usize = 2;
/// Regions per timed repetition (then one `acc::wait_all`), so that short kernels are not
/// timed by their launch and wait alone.
const INNER: usize = 5;

/// Times repetitions of `INNER` regions, each repetition ended by `acc::wait_all`, the first
/// `WARM_UP` untimed: `while t.next() { for _ in 0..INNER { region } }`.
struct Timer {
    reps: usize,
    done: usize,
    started: Option<Instant>,
    times: Vec<Duration>,
}

impl Timer {
    fn new(reps: usize) -> Timer {
        Timer {
            reps,
            done: 0,
            started: None,
            times: Vec::new(),
        }
    }

    /// Ends the repetition under way (waiting for its regions), and starts another unless
    /// all have run.
    fn next(&mut self) -> bool {
        if let Some(t0) = self.started.take() {
            acc::wait_all().expect("the regions run");
            if self.done > WARM_UP {
                self.times.push(t0.elapsed() / INNER as u32);
            }
        }
        if self.done == self.reps + WARM_UP {
            return false;
        }
        self.done += 1;
        self.started = Some(Instant::now());
        true
    }

    /// The median time of one region.
    fn median(mut self) -> Duration {
        self.times.sort();
        self.times[self.times.len() / 2]
    }
}

#[acc::offload]
fn triad(a: &mut Vec<f32>, b: &Vec<f32>, c: &Vec<f32>, reps: usize) -> Duration {
    let mut t = Timer::new(reps);
    #[acc::data(copyin(b, c), copyout(a))]
    {
        while t.next() {
            for _ in 0..INNER {
                let s = 3.0f32;
                #[acc::parallel_loop]
                for i in 0..a.len() {
                    a[i] = b[i] + s * c[i];
                }
            }
        }
    }
    t.median()
}

#[acc::offload]
fn matvec(a: &Vec<f32>, x: &Vec<f32>, y: &mut Vec<f32>, reps: usize) -> Duration {
    let n = x.len();
    let mut t = Timer::new(reps);
    #[acc::data(copyin(a, x), copyout(y))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop(gang)]
                for i in 0..n {
                    let mut s = 0.0f32;
                    #[acc::r#loop(vector, reduction(+: s))]
                    for j in 0..n {
                        s += a[i * n + j] * x[j];
                    }
                    y[i] = s;
                }
            }
        }
    }
    t.median()
}

#[acc::offload]
fn stencil(a: &Vec<f32>, b: &mut Vec<f32>, n: usize, reps: usize) -> Duration {
    let nn = n * n;
    let mut t = Timer::new(reps);
    #[acc::data(copyin(a), copy(b))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop(gang)]
                for k in 1..n - 1 {
                    #[acc::r#loop(worker)]
                    for j in 1..n - 1 {
                        #[acc::r#loop(vector)]
                        for i in 1..n - 1 {
                            let c = k * nn + j * n + i;
                            b[c] =
                                (a[c - 1] + a[c + 1] + a[c - n] + a[c + n] + a[c - nn] + a[c + nn])
                                    * (1.0 / 6.0);
                        }
                    }
                }
            }
        }
    }
    t.median()
}

/// `steps` heat steps on an n x n grid in one `kernels` region: a host-driven time loop around
/// two gang/vector nests.
#[acc::offload]
fn heat(u: &mut Vec<f32>, v: &mut Vec<f32>, n: usize, steps: usize, reps: usize) -> Duration {
    let mut t = Timer::new(reps);
    #[acc::data(copy(u, v))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::kernels]
                {
                    for _ in 0..steps {
                        for i in 1..n - 1 {
                            for j in 1..n - 1 {
                                let k = i * n + j;
                                v[k] = u[k]
                                    + 0.2
                                        * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - 4.0 * u[k]);
                            }
                        }
                        for i in 1..n - 1 {
                            for j in 1..n - 1 {
                                u[i * n + j] = v[i * n + j];
                            }
                        }
                    }
                }
            }
        }
    }
    t.median()
}

#[acc::offload]
fn transpose(a: &Vec<f32>, b: &mut Vec<f32>, n: usize, reps: usize) -> Duration {
    let mut t = Timer::new(reps);
    #[acc::data(copyin(a), copyout(b))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop(tile(32, 32))]
                for i in 0..n {
                    for j in 0..n {
                        b[j * n + i] = a[i * n + j];
                    }
                }
            }
        }
    }
    t.median()
}

#[acc::offload]
fn softmax(x: &Vec<f32>, y: &mut Vec<f32>, m: usize, reps: usize) -> Duration {
    let rows = x.len() / m;
    let mut t = Timer::new(reps);
    #[acc::data(copyin(x), copyout(y))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop(gang)]
                for i in 0..rows {
                    let mut hi = f32::NEG_INFINITY;
                    #[acc::r#loop(vector, reduction(max: hi))]
                    for j in 0..m {
                        hi = hi.max(x[i * m + j]);
                    }
                    let mut s = 0.0f32;
                    #[acc::r#loop(vector, reduction(+: s))]
                    for j in 0..m {
                        s += (x[i * m + j] - hi).exp();
                    }
                    let scale = 1.0f32 / s;
                    #[acc::r#loop(vector)]
                    for j in 0..m {
                        y[i * m + j] = (x[i * m + j] - hi).exp() * scale;
                    }
                }
            }
        }
    }
    t.median()
}

#[acc::offload]
fn row_smooth(a: &Vec<f32>, b: &mut Vec<f32>, m: usize, reps: usize) -> Duration {
    let rows = a.len() / m;
    let mut t = Timer::new(reps);
    #[acc::data(copyin(a), copyout(b))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop(gang)]
                for i in 0..rows {
                    let mut row = [0.0f32; 1024];
                    #[acc::r#loop(vector)]
                    for j in 0..m {
                        row[j] = a[i * m + j];
                    }
                    #[acc::r#loop(vector)]
                    for j in 0..m {
                        let l = if j > 0 { row[j - 1] } else { row[j] };
                        let r = if j + 1 < m { row[j + 1] } else { row[j] };
                        b[i * m + j] = (l + row[j] + r) * (1.0f32 / 3.0f32);
                    }
                }
            }
        }
    }
    t.median()
}

/// A 17-tap filter whose window `cache!` stages in workgroup memory.
#[acc::offload]
fn filter(a: &Vec<f32>, w: &Vec<f32>, out: &mut Vec<f32>, reps: usize) -> Duration {
    let n = a.len();
    let mut t = Timer::new(reps);
    #[acc::data(copyin(a, w), copy(out))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop]
                for i in 8..n - 8 {
                    acc::cache!(a[i - 8..i + 9]);
                    let mut s = 0.0f32;
                    for k in 0..17 {
                        s += w[k] * a[i + k - 8];
                    }
                    out[i] = s;
                }
            }
        }
    }
    t.median()
}

#[acc::offload]
fn histogram(keys: &Vec<u32>, bins: &mut Vec<u32>, reps: usize) -> Duration {
    let (n, nbins) = (keys.len(), bins.len());
    let mut t = Timer::new(reps);
    #[acc::data(copyin(keys), copy(bins))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop]
                for i in 0..n {
                    let b = keys[i] as usize % nbins;
                    #[acc::atomic(update)]
                    bins[b] += 1;
                }
            }
        }
    }
    t.median()
}

#[acc::offload]
fn matmul(a: &Vec<f32>, b: &Vec<f32>, c: &mut Vec<f32>, n: usize, reps: usize) -> Duration {
    let mut t = Timer::new(reps);
    #[acc::data(copyin(a, b), copyout(c))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop(tile(16, 16))]
                for i in 0..n {
                    for j in 0..n {
                        let mut s = 0.0f32;
                        for k in 0..n {
                            s += a[i * n + k] * b[k * n + j];
                        }
                        c[i * n + j] = s;
                    }
                }
            }
        }
    }
    t.median()
}

#[allow(clippy::type_complexity)]
#[acc::offload]
fn nbody(
    (px, py, m): (&Vec<f32>, &Vec<f32>, &Vec<f32>),
    (fx, fy): (&mut Vec<f32>, &mut Vec<f32>),
    reps: usize,
) -> Duration {
    let n = px.len();
    let mut t = Timer::new(reps);
    #[acc::data(copyin(px, py, m), copyout(fx, fy))]
    {
        while t.next() {
            for _ in 0..INNER {
                #[acc::parallel_loop]
                for i in 0..n {
                    let (xi, yi) = (px[i], py[i]);
                    let (mut ax, mut ay) = (0.0f32, 0.0f32);
                    for j in 0..n {
                        let (dx, dy) = (px[j] - xi, py[j] - yi);
                        let d2 = dx * dx + dy * dy + 1e-3;
                        let s = m[j] / (d2 * d2.sqrt());
                        ax += dx * s;
                        ay += dy * s;
                    }
                    fx[i] = ax;
                    fy[i] = ay;
                }
            }
        }
    }
    t.median()
}

/// The largest relative difference between `a` and `b`.
fn worst(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / x.abs().max(1e-6))
        .fold(0.0, f32::max)
}

/// Runs `run` on nvidia, then on wgpu; returns their times and outputs.
fn both<T>(mut run: impl FnMut() -> (Duration, T)) -> ((Duration, T), (Duration, T)) {
    acc::set_device_type(DeviceType::Nvidia);
    let nv = run();
    acc::set_device_type(DeviceType::Wgpu);
    let wg = run();
    (nv, wg)
}

fn main() {
    let reps: usize = std::env::var("ACC_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    for ty in [DeviceType::Nvidia, DeviceType::Wgpu] {
        if let Err(e) = acc::init(ty) {
            eprintln!("gpu_patterns bench: {ty}: {e}");
            std::process::exit(1);
        }
    }
    println!(
        "nvidia: {}; wgpu: {}; medians of {reps} repetitions of {INNER} regions after {WARM_UP} warm-ups",
        acc::get_property(0, DeviceType::Nvidia, acc::Property::Name),
        acc::get_property(0, DeviceType::Wgpu, acc::Property::Name),
    );
    println!("ratio = nvidia time / wgpu time; scaled = ratio / the triad's ratio");
    let mut rows: Vec<(&str, Duration, Duration)> = Vec::new();

    let n = 1usize << 24;
    let (b, c) = (vec![1.0f32; n], vec![2.0f32; n]);
    let ((tn, an), (tw, aw)) = both(|| {
        let mut a = vec![0.0f32; n];
        (triad(&mut a, &b, &c, reps), a)
    });
    assert!(an == aw, "triad results differ");
    rows.push(("triad f32 2^24", tn, tw));

    let g = 4096;
    let a: Vec<f32> = (0..g * g)
        .map(|k| ((k * 7) % 13) as f32 * 0.1 - 0.5)
        .collect();
    let x: Vec<f32> = (0..g).map(|j| ((j * 5) % 11) as f32 * 0.1).collect();
    let ((tn, yn), (tw, yw)) = both(|| {
        let mut y = vec![0.0f32; g];
        (matvec(&a, &x, &mut y, reps), y)
    });
    assert!(worst(&yn, &yw) < 1e-4, "matvec results differ");
    rows.push(("matvec f32 4096^2", tn, tw));

    let g = 256;
    let a: Vec<f32> = (0..g * g * g).map(|k| ((k * 13) % 29) as f32).collect();
    let ((tn, bn), (tw, bw)) = both(|| {
        let mut b = vec![0.0f32; g * g * g];
        (stencil(&a, &mut b, g, reps), b)
    });
    assert!(worst(&bn, &bw) < 1e-6, "stencil results differ");
    rows.push(("7-point stencil 256^3 f32", tn, tw));

    let g = 2048;
    let start: Vec<f32> = (0..g * g).map(|k| ((k * 13) % 7) as f32 * 0.1).collect();
    let ((tn, un), (tw, uw)) = both(|| {
        let (mut u, mut v) = (start.clone(), start.clone());
        (heat(&mut u, &mut v, g, 10, reps), u)
    });
    // (NVIDIA's Vulkan driver fuses f32 `a * b + c`: close, not equal.)
    assert!(worst(&un, &uw) < 1e-4, "heat results differ");
    rows.push(("heat 2048^2 f32, 10 steps in kernels", tn, tw));

    let g = 4096;
    let a: Vec<f32> = (0..g * g).map(|k| (k % 10007) as f32).collect();
    let ((tn, bn), (tw, bw)) = both(|| {
        let mut b = vec![0.0f32; g * g];
        (transpose(&a, &mut b, g, reps), b)
    });
    assert!(bn == bw, "transposes differ");
    rows.push(("transpose 4096^2 f32, tile(32, 32)", tn, tw));

    let (r, m) = (16384, 1024);
    let x: Vec<f32> = (0..r * m)
        .map(|k| ((k * 13) % 29) as f32 * 0.25 - 3.0)
        .collect();
    let ((tn, yn), (tw, yw)) = both(|| {
        let mut y = vec![0.0f32; r * m];
        (softmax(&x, &mut y, m, reps), y)
    });
    assert!(worst(&yn, &yw) < 1e-5, "softmax results differ");
    rows.push(("softmax 16384 rows of 1024 f32", tn, tw));

    let a: Vec<f32> = (0..r * m)
        .map(|k| ((k * 7) % 31) as f32 * 0.5 - 4.0)
        .collect();
    let ((tn, bn), (tw, bw)) = both(|| {
        let mut b = vec![0.0f32; r * m];
        (row_smooth(&a, &mut b, m, reps), b)
    });
    assert!(worst(&bn, &bw) < 1e-6, "row smoothing results differ");
    rows.push(("row smoothing, gang array, 16384 x 1024 f32", tn, tw));

    let n = 1usize << 24;
    let a: Vec<f32> = (0..n).map(|k| ((k * 7) % 19) as f32 * 0.5 - 4.0).collect();
    let w: Vec<f32> = (0..17).map(|k| (k as f32 - 8.0) * 0.0625).collect();
    let ((tn, on), (tw, ow)) = both(|| {
        let mut out = vec![0.0f32; n];
        (filter(&a, &w, &mut out, reps), out)
    });
    // (NVIDIA's Vulkan driver fuses f32 `a * b + c`: close, not equal.)
    assert!(worst(&on, &ow) < 1e-4, "filter results differ");
    rows.push(("filter 17 taps 2^24 f32, cache!", tn, tw));

    let keys: Vec<u32> = (0..n as u64)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u32)
        .collect();
    let ((tn, hn), (tw, hw)) = both(|| {
        let mut bins = vec![0u32; 256];
        (histogram(&keys, &mut bins, reps), bins)
    });
    assert!(hn == hw, "histograms differ");
    rows.push(("histogram 2^24 keys, 256 bins", tn, tw));

    let g = 1024;
    let a: Vec<f32> = (0..g * g).map(|k| ((k * 7) % 13) as f32 * 0.1).collect();
    let b: Vec<f32> = (0..g * g).map(|k| ((k * 5) % 11) as f32 * 0.1).collect();
    let ((tn, cn), (tw, cw)) = both(|| {
        let mut c = vec![0.0f32; g * g];
        (matmul(&a, &b, &mut c, g, reps), c)
    });
    assert!(worst(&cn, &cw) < 1e-4, "matmul results differ");
    rows.push(("matmul 1024 f32, tile(16, 16)", tn, tw));

    let n = 16384;
    let px: Vec<f32> = (0..n).map(|k| ((k * 37) % 1009) as f32 * 0.01).collect();
    let py: Vec<f32> = (0..n).map(|k| ((k * 53) % 1013) as f32 * 0.01).collect();
    let m: Vec<f32> = (0..n).map(|k| 1.0 + (k % 5) as f32 * 0.25).collect();
    let ((tn, (xn, _)), (tw, (xw, _))) = both(|| {
        let (mut fx, mut fy) = (vec![0.0f32; n], vec![0.0f32; n]);
        (nbody((&px, &py, &m), (&mut fx, &mut fy), reps), (fx, fy))
    });
    // (Sums of forces may cancel: compared against the largest.)
    let scale = xn.iter().fold(0.0f32, |m, v| m.max(v.abs()));
    assert!(
        xn.iter()
            .zip(&xw)
            .all(|(a, b)| (a - b).abs() <= 1e-4 * scale),
        "n-body results differ"
    );
    rows.push(("n-body 16384 f32 (tiled by acc)", tn, tw));

    let triad_ratio = rows[0].1.as_secs_f64() / rows[0].2.as_secs_f64();
    let mut summary = Vec::new();
    for (name, tn, tw) in &rows {
        let ratio = tn.as_secs_f64() / tw.as_secs_f64();
        let scaled = ratio / triad_ratio;
        println!(
            "{name:<44} nvidia {:>9.1} us  wgpu {:>9.1} us  ratio {ratio:.2}  scaled {scaled:.2}",
            tn.as_secs_f64() * 1e6,
            tw.as_secs_f64() * 1e6
        );
        summary.push(format!(
            "{} {scaled:.2}",
            name.split_whitespace().next().unwrap_or(name)
        ));
    }
    println!("summary (scaled): {}", summary.join(", "));
}
