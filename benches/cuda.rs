//! acc on the nvidia device against hand-written CUDA C++ (benches/cuda/reference.cu, compiled
//! here with `nvcc -O3 -arch=sm_XX -cubin` for the GPU found), in one process, on the same GPU:
//! STREAM copy, scale, add, triad and dot (f64, 2^27 elements), sum and max reductions (f32,
//! 2^28), a Jacobi sweep (4096 x 4096 f64, as in the jacobi example), matmul (4096 f32: the plain
//! loops collapsed, and tiled 16 x 16, against a 16 x 16 shared-memory CUDA kernel, and acc's best
//! against cuBLAS's SGEMM through PyTorch where the GPU machine has it), the structured kernels
//! below, and the cost of launching a region whose data is present.
//!
//! Every acc region runs inside a data region (its arrays present) and is synchronous; each
//! reference call launches its kernel(s), waits for them and reads back what the acc region
//! gives back (a reduction's value). A region that brings nothing back and whose accesses are
//! proven in bounds returns before the GPU has run it (the next transfer or wait settles it),
//! so its timing includes an `acc::wait_all()`, as the reference's includes its synchronize.
//! The two alternate repetition by repetition, so that clock changes touch both alike; each
//! figure is the median of `ACC_BENCH_REPS` (default 30) after warm-ups, and the results of
//! both are compared. Prints reference time / acc time per benchmark (above 1.0: acc is
//! faster). The structured kernels (matrix-vector, SpMV, stencil, histogram) are in
//! benches/cuda/structured.rs.
//!
//! `cargo bench --features cuda --bench cuda` (nvcc: `ACC_NVCC`, else `nvcc` on the PATH or
//! in /usr/local/cuda/bin; sizes scale with `ACC_BENCH_SCALE`, a divisor, default 1;
//! `ACC_BENCH_ONLY=transpose,scan` runs only the patterns it lists).

use std::time::{Duration, Instant};

use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

#[path = "cuda/structured.rs"]
mod structured;

use structured::{histogram, matvec, spmv, stencil};

#[path = "cuda/patterns.rs"]
mod patterns;

use patterns::{nbody, row_smooth, scan, softmax, transpose};

#[path = "cuda/time_loops.rs"]
mod time_loops;

#[path = "cuda/matmul.rs"]
mod matmul;

#[path = "cuda/launch.rs"]
mod launch;

#[path = "cuda/transfers.rs"]
mod transfers;

#[path = "cuda/cached.rs"]
mod cached;

#[path = "cuda/stream.rs"]
mod stream;

use stream::{stream, Stream};

#[path = "cuda/reference.rs"]
mod reference;

use reference::Cuda;

use launch::launch_cost;

const WARM_UP: usize = 3;

fn grid(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `grid` blocks of 256 threads.
fn blocks(grid: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The largest difference between the reference's and acc's results, relative to the
/// reference (absolute below 1).
fn worst_relative(reference: &[f32], ours: &[f32]) -> f32 {
    reference
        .iter()
        .zip(ours)
        .map(|(r, a)| ((r - a) / r.abs().max(1.0)).abs())
        .fold(0.0f32, f32::max)
}

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn median(mut t: Vec<Duration>) -> Duration {
    t.sort();
    t[t.len() / 2]
}

/// Acc and reference times of one benchmark.
#[derive(Default)]
struct Times {
    acc: Vec<Duration>,
    reference: Vec<Duration>,
}

impl Times {
    fn report(&self, name: &str, bytes: f64, note: &str) -> f64 {
        let (a, r) = (
            median(self.acc[WARM_UP..].to_vec()),
            median(self.reference[WARM_UP..].to_vec()),
        );
        let ratio = r.as_secs_f64() / a.as_secs_f64();
        let bw = |d: Duration| {
            if bytes > 0.0 {
                format!(" ({:.0} GB/s)", bytes / d.as_secs_f64() / 1e9)
            } else {
                String::new()
            }
        };
        let us = |d: Duration| d.as_secs_f64() * 1e6;
        println!(
            "{name:<22} acc {:>10.1} us{:<12} CUDA {:>10.1} us{:<12} ratio {ratio:.2}x{note}",
            us(a),
            bw(a),
            us(r),
            bw(r)
        );
        ratio
    }
}

const S: f64 = 3.0;

#[derive(Default)]
struct Reductions {
    sum: Times,
    max: Times,
}

/// f32 sum and max over present data; returns (acc sum, CUDA sum, acc max, CUDA max).
#[acc::offload]
fn reductions(x: &Vec<f32>, reps: usize, cu: &Cuda, t: &mut Reductions) -> (f32, f32, f32, f32) {
    let n = x.len();
    let rx = cu.upload(x);
    let (fs, fm, ffs, ffm) = (
        cu.f("sum_f32_partials"),
        cu.f("max_f32_partials"),
        cu.f("fold_f32_add"),
        cu.f("fold_f32_max"),
    );
    let blocks = cu.sms * 8;
    let mut partials = cu
        .stream
        .alloc_zeros::<f32>(blocks as usize)
        .expect("alloc");
    let mut out = cu.stream.alloc_zeros::<f32>(1).expect("alloc");
    let (mut r, mut s_acc, mut m_acc) = ([0.0f32; 2], 0.0f32, 0.0f32);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1024, 1, 1),
        shared_mem_bytes: 0,
    };
    #[acc::data(copyin(x))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            let mut s = 0.0f32;
            #[acc::parallel_loop(reduction(+: s))]
            for i in 0..n {
                s += x[i];
            }
            s_acc = s;
            t.sum.acc.push(t0.elapsed());
            t.sum.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&fs)
                        .arg(&rx)
                        .arg(&mut partials)
                        .arg(&n)
                        .launch(cfg)
                }
                .expect("launch");
                unsafe {
                    cu.stream
                        .launch_builder(&ffs)
                        .arg(&partials)
                        .arg(&mut out)
                        .arg(&blocks)
                        .launch(one)
                }
                .expect("launch");
                r[0] = cu.stream.clone_dtoh(&out).expect("read")[0];
            }));
            let t0 = Instant::now();
            let mut m = f32::NEG_INFINITY;
            #[acc::parallel_loop(reduction(max: m))]
            for i in 0..n {
                m = m.max(x[i]);
            }
            m_acc = m;
            t.max.acc.push(t0.elapsed());
            t.max.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&fm)
                        .arg(&rx)
                        .arg(&mut partials)
                        .arg(&n)
                        .launch(cfg)
                }
                .expect("launch");
                unsafe {
                    cu.stream
                        .launch_builder(&ffm)
                        .arg(&partials)
                        .arg(&mut out)
                        .arg(&blocks)
                        .launch(one)
                }
                .expect("launch");
                r[1] = cu.stream.clone_dtoh(&out).expect("read")[0];
            }));
        }
    }
    (s_acc, r[0], m_acc, r[1])
}

/// Jacobi iterations (the jacobi example's two regions) on present grids, timed in blocks of
/// `JACOBI_ITERS` as a solver runs them: acc's sweep waits for its error (a reduction), which
/// also finishes the copy before it; the reference's three kernels end with reading the error.
/// Returns both errors.
#[acc::offload]
fn jacobi(
    a: &mut Vec<f64>,
    anew: &mut Vec<f64>,
    n: usize,
    reps: usize,
    cu: &Cuda,
    t: &mut Times,
) -> (f64, f64) {
    let m = n;
    let (mut ra, mut rnew) = (cu.upload(a), cu.upload(anew));
    let (fsweep, fcopy, ffold) = (
        cu.f("jacobi_sweep"),
        cu.f("jacobi_copy"),
        cu.f("fold_f64_max"),
    );
    let gx = (m as u32 - 2).div_ceil(256);
    let gy = (n as u32 - 2).min(1024);
    let mut partials = cu
        .stream
        .alloc_zeros::<f64>((gx * gy) as usize)
        .expect("alloc");
    let mut out = cu.stream.alloc_zeros::<f64>(1).expect("alloc");
    let (ni, mi) = (n as i32, m as i32);
    let (mut err_acc, mut err_ref) = (0.0, 0.0);
    #[acc::data(copy(a), copyin(anew))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            for _ in 0..JACOBI_ITERS {
                let mut err = 0.0;
                #[acc::parallel_loop(reduction(max: err))]
                for j in 1..n - 1 {
                    #[acc::r#loop(vector)]
                    for i in 1..m - 1 {
                        anew[j * m + i] = 0.25
                            * (a[j * m + i + 1]
                                + a[j * m + i - 1]
                                + a[(j - 1) * m + i]
                                + a[(j + 1) * m + i]);
                        err = f64::max(err, (anew[j * m + i] - a[j * m + i]).abs());
                    }
                }
                #[acc::parallel_loop(collapse(2))]
                for j in 1..n - 1 {
                    for i in 1..m - 1 {
                        a[j * m + i] = anew[j * m + i];
                    }
                }
                err_acc = err;
            }
            acc::wait_all().expect("the regions run");
            t.acc.push(t0.elapsed() / JACOBI_ITERS);
            t.reference.push(
                timed(|| {
                    for _ in 0..JACOBI_ITERS {
                        let cfg = LaunchConfig {
                            grid_dim: (gx, gy, 1),
                            block_dim: (256, 1, 1),
                            shared_mem_bytes: 0,
                        };
                        unsafe {
                            cu.stream
                                .launch_builder(&fsweep)
                                .arg(&ra)
                                .arg(&mut rnew)
                                .arg(&mut partials)
                                .arg(&ni)
                                .arg(&mi)
                                .launch(cfg)
                        }
                        .expect("launch");
                        unsafe {
                            cu.stream
                                .launch_builder(&fcopy)
                                .arg(&mut ra)
                                .arg(&rnew)
                                .arg(&ni)
                                .arg(&mi)
                                .launch(cfg)
                        }
                        .expect("launch");
                        let one = LaunchConfig {
                            grid_dim: (1, 1, 1),
                            block_dim: (1024, 1, 1),
                            shared_mem_bytes: 0,
                        };
                        let count = gx * gy;
                        unsafe {
                            cu.stream
                                .launch_builder(&ffold)
                                .arg(&partials)
                                .arg(&mut out)
                                .arg(&count)
                                .launch(one)
                        }
                        .expect("launch");
                        err_ref = cu.stream.clone_dtoh(&out).expect("read")[0];
                    }
                }) / JACOBI_ITERS,
            );
        }
    }
    let ha = cu.stream.clone_dtoh(&ra).unwrap();
    assert!(ha == *a, "Jacobi grids differ between acc and CUDA");
    (err_acc, err_ref)
}

/// Jacobi iterations per timed block.
const JACOBI_ITERS: u32 = 10;

/// Whether the pattern `key` runs: all of them, or those `ACC_BENCH_ONLY` lists
/// (comma-separated: stream, reductions, jacobi, matmul, matvec, spmv, stencil, histogram,
/// nbody, transpose, scan, softmax, row_smooth, heat, eliminate, cache, transfers, launch).
fn wanted(key: &str) -> bool {
    match std::env::var("ACC_BENCH_ONLY") {
        Ok(only) if !only.trim().is_empty() => only.split(',').any(|k| k.trim() == key),
        _ => true,
    }
}

fn main() {
    let reps: usize = std::env::var("ACC_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30)
        + WARM_UP;
    let scale: usize = std::env::var("ACC_BENCH_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    if let Err(e) = acc::init(acc::DeviceType::Nvidia) {
        eprintln!("cuda bench: {e}");
        std::process::exit(1);
    }
    acc::set_device_type(acc::DeviceType::Nvidia);
    let cu = Cuda::new();
    println!(
        "device: {} ({} SMs); medians of {} interleaved repetitions after {WARM_UP} warm-ups",
        acc::get_property(0, acc::DeviceType::Nvidia, acc::Property::Name),
        cu.sms,
        reps - WARM_UP
    );
    println!("ratio = CUDA time / acc time (above 1.0: acc is faster)");

    let mut ratios: Vec<(&str, f64)> = Vec::new();
    if wanted("stream") {
        let n = (1usize << 27) / scale;
        let (mut a, mut b, mut c) = (vec![1.0f64; n], vec![2.0f64; n], vec![0.0f64; n]);
        let mut st = Stream::default();
        let (dot_acc, dot_ref) = stream(&mut a, &mut b, &mut c, reps, &cu, &mut st);
        assert!(
            (dot_acc - dot_ref).abs() <= 1e-12 * dot_ref.abs(),
            "dot: acc {dot_acc}, CUDA {dot_ref}"
        );
        let mb = |k: usize| (k * 8 * n) as f64;
        ratios.extend([
            (
                "copy",
                st.copy.report(
                    &format!("STREAM copy f64 2^{}", n.trailing_zeros()),
                    mb(2),
                    "",
                ),
            ),
            ("scale", st.scale.report("STREAM scale", mb(2), "")),
            ("add", st.add.report("STREAM add", mb(3), "")),
            ("triad", st.triad.report("STREAM triad", mb(3), "")),
            ("dot", st.dot.report("STREAM dot", mb(2), "")),
        ]);
        drop((a, b, c));
    }

    if wanted("reductions") {
        let n = (1usize << 28) / scale;
        let x: Vec<f32> = (0..n)
            .map(|i| (i % 1000) as f32 * 1e-3 - (i % 7) as f32)
            .collect();
        let mut rt = Reductions::default();
        let (s_acc, s_ref, m_acc, m_ref) = reductions(&x, reps, &cu, &mut rt);
        assert!(
            (s_acc - s_ref).abs() <= 1e-3 * s_ref.abs().max(1.0),
            "sum: acc {s_acc}, CUDA {s_ref}"
        );
        assert_eq!(m_acc, m_ref, "max");
        ratios.push((
            "sum",
            rt.sum.report(
                &format!("sum f32 2^{}", n.trailing_zeros()),
                (4 * n) as f64,
                "",
            ),
        ));
        ratios.push(("max", rt.max.report("max f32", (4 * n) as f64, "")));
        drop(x);
    }

    if wanted("jacobi") {
        let g = 4096 / scale.min(8);
        let mut a: Vec<f64> = (0..g * g)
            .map(|k| if k % g == 0 || k < g { 1.0 } else { 0.0 })
            .collect();
        let mut anew = a.clone();
        let mut jt = Times::default();
        let (e_acc, e_ref) = jacobi(
            &mut a,
            &mut anew,
            g,
            reps.div_ceil(3).max(WARM_UP + 3),
            &cu,
            &mut jt,
        );
        assert_eq!(e_acc, e_ref, "Jacobi error");
        ratios.push((
            "jacobi",
            jt.report(&format!("Jacobi iteration {g}x{g}"), 0.0, ""),
        ));
        drop((a, anew));
    }

    if wanted("matmul") {
        matmul::bench(scale, reps, &cu, &mut ratios);
    }

    if wanted("matvec") {
        let g = 16384 / scale.min(8);
        let a: Vec<f32> = (0..g * g)
            .map(|k| ((k * 7) % 13) as f32 * 0.1 - 0.5)
            .collect();
        let x: Vec<f32> = (0..g).map(|j| ((j * 5) % 11) as f32 * 0.1).collect();
        let mut y = vec![0.0f32; g];
        let mut vt = Times::default();
        matvec(&a, &x, &mut y, g, reps, &cu, &mut vt);
        ratios.push((
            "matvec",
            vt.report(&format!("matvec f32 {g}x{g}"), (4 * g * g) as f64, ""),
        ));
        drop((a, x, y));
    }

    if wanted("spmv") {
        // 2^22 rows of 16 to 47 entries (about 32), columns spread over the vector.
        let n = (1usize << 22) / scale;
        let mut rows = vec![0usize];
        for i in 0..n {
            rows.push(rows[i] + 16 + (i * 7) % 32);
        }
        let nnz = rows[n];
        let cols: Vec<u32> = (0..nnz).map(|k| ((k * 2_654_435_761) % n) as u32).collect();
        let vals: Vec<f32> = (0..nnz)
            .map(|k| ((k * 3) % 17) as f32 * 0.1 - 0.8)
            .collect();
        let x: Vec<f32> = (0..n).map(|j| ((j * 5) % 11) as f32 * 0.1).collect();
        let mut y = vec![0.0f32; n];
        for (warp, key, what) in [
            (false, "spmv", "a block per row"),
            (true, "spmv32", "vector_length(32), a warp per row"),
        ] {
            let mut sp = Times::default();
            spmv(
                (&rows, &cols, &vals),
                &x,
                &mut y,
                (reps, warp),
                &cu,
                &mut sp,
            );
            ratios.push((
                key,
                sp.report(
                    &format!("CSR SpMV 2^{} rows ({what})", n.trailing_zeros()),
                    (nnz * 12 + n * 16) as f64,
                    "",
                ),
            ));
        }
        drop((rows, cols, vals, x, y));
    }

    if wanted("stencil") {
        let g = 512 / scale.min(4);
        let a: Vec<f64> = (0..g * g * g).map(|k| ((k * 13) % 29) as f64).collect();
        let mut b = vec![0.0f64; g * g * g];
        let mut s7 = Times::default();
        stencil(&a, &mut b, g, reps, &cu, &mut s7);
        ratios.push((
            "stencil",
            s7.report(
                &format!("7-point stencil {g}^3 f64 (gang/worker/vector)"),
                (16 * g * g * g) as f64,
                "",
            ),
        ));
        drop((a, b));
    }

    if wanted("histogram") {
        let n = (1usize << 28) / scale;
        let keys: Vec<u32> = (0..n as u64)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u32)
            .collect();
        for (shared, key, what) in [
            (false, "histogram", "CUDA: global atomics"),
            (
                true,
                "histogram_shared",
                "CUDA: a block's bins in shared memory",
            ),
        ] {
            let mut bins = vec![0u32; 256];
            let mut ht = Times::default();
            histogram(&keys, &mut bins, (reps, shared), &cu, &mut ht);
            ratios.push((
                key,
                ht.report(
                    &format!("histogram 2^{} keys, 256 bins ({what})", n.trailing_zeros()),
                    (4 * n) as f64,
                    "",
                ),
            ));
        }
        drop(keys);
    }

    if wanted("nbody") {
        let n = 65536 / scale.min(16);
        let coord = |k: usize, salt: usize| ((k * salt) % 1009) as f32 * 0.01 - 5.0;
        let (px, py, pz): (Vec<f32>, Vec<f32>, Vec<f32>) = (
            (0..n).map(|k| coord(k, 7)).collect(),
            (0..n).map(|k| coord(k, 13)).collect(),
            (0..n).map(|k| coord(k, 31)).collect(),
        );
        let m: Vec<f32> = (0..n).map(|k| 1.0 + (k % 5) as f32 * 0.25).collect();
        let (mut ax, mut ay, mut az) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
        let mut nt = Times::default();
        nbody(
            (&px, &py, &pz, &m),
            &mut ax,
            &mut ay,
            &mut az,
            reps.min(10 + WARM_UP),
            &cu,
            &mut nt,
        );
        ratios.push((
            "nbody",
            nt.report(&format!("n-body {n} f32 (all pairs)"), 0.0, ""),
        ));
        println!(
            "{:<22} acc {:.0} G interactions/s",
            "",
            (n * n) as f64 / median(nt.acc[WARM_UP..].to_vec()).as_secs_f64() / 1e9
        );
        drop((px, py, pz, m, ax, ay, az));
    }

    if wanted("transpose") {
        let g = 16384 / scale.min(8);
        let a: Vec<f32> = (0..g * g).map(|k| (k % 10007) as f32).collect();
        for (spelling, key, how) in [
            (0, "transpose", "tile(32, 32)"),
            (1, "transpose_collapse", "collapse(2)"),
            (2, "transpose_gang_vector", "gang / vector loops"),
        ] {
            let mut b = vec![0.0f32; g * g];
            let mut tt = Times::default();
            transpose(&a, &mut b, g, (reps, spelling), &cu, &mut tt);
            ratios.push((
                key,
                tt.report(
                    &format!("transpose {g}x{g} f32, {how} (CUDA: shared-memory tiles)"),
                    (8 * g * g) as f64,
                    "",
                ),
            ));
        }
        drop(a);
    }

    if wanted("scan") {
        let n = (1usize << 28) / scale;
        let x: Vec<u32> = (0..n).map(|k| (k % 3) as u32).collect();
        let mut y = vec![0u32; n];
        let mut sc = Times::default();
        scan(&x, &mut y, 4096, reps, &cu, &mut sc);
        ratios.push((
            "scan",
            sc.report(
                &format!(
                    "two-pass scan 2^{} u32, chunks of 4096 (CUDA: shared-memory block scan)",
                    n.trailing_zeros()
                ),
                (12 * n) as f64,
                "",
            ),
        ));
        drop((x, y));
    }

    if wanted("cache") {
        cached::run(reps, scale, &cu, &mut ratios);
    }

    if wanted("softmax") {
        let (rows, cols) = (65536 / scale.min(16), 4096);
        let x: Vec<f32> = (0..rows * cols)
            .map(|k| ((k * 13) % 29) as f32 * 0.25 - 3.0)
            .collect();
        let mut y = vec![0.0f32; rows * cols];
        let mut sm = Times::default();
        softmax(&x, &mut y, rows, reps, &cu, &mut sm);
        ratios.push((
            "softmax",
            sm.report(
                &format!(
                    "softmax of {rows} rows of {cols} f32 (three vector loops per gang iteration)"
                ),
                (8 * rows * cols) as f64,
                "",
            ),
        ));
        drop((x, y));
    }

    if wanted("row_smooth") {
        let (rows, cols) = (65536 / scale.min(16), 1024);
        let a: Vec<f32> = (0..rows * cols)
            .map(|k| ((k * 7) % 31) as f32 * 0.5 - 4.0)
            .collect();
        let mut b = vec![0.0f32; rows * cols];
        let mut rs = Times::default();
        row_smooth(&a, &mut b, cols, reps, &cu, &mut rs);
        ratios.push((
            "row_smooth",
            rs.report(
                &format!("row smoothing, {rows} rows of {cols} f32 through a gang-private array (CUDA: the row in shared memory)"),
                (8 * rows * cols) as f64,
                "",
            ),
        ));
        drop((a, b));
    }

    if wanted("heat") {
        let n = 4096 / scale.min(8);
        let steps = 50;
        let mut u: Vec<f32> = (0..n * n)
            .map(|k| {
                if k % n == 0 || k < n {
                    1.0
                } else {
                    ((k * 13) % 7) as f32 * 0.1
                }
            })
            .collect();
        let mut v = u.clone();
        let mut ht = Times::default();
        time_loops::heat(
            &mut u,
            &mut v,
            n,
            (steps, reps.div_ceil(3).max(WARM_UP + 3)),
            &cu,
            &mut ht,
        );
        ratios.push((
            "heat",
            ht.report(
                &format!("heat {n}x{n} f32, {steps} steps in one kernels region"),
                (16 * n * n * steps) as f64,
                "",
            ),
        ));
        drop((u, v));
    }

    if wanted("eliminate") {
        let n = 2048 / scale.min(8);
        let mut m: Vec<f32> = (0..n * n)
            .map(|x| {
                let (i, j) = (x / n, x % n);
                if i == j {
                    n as f32
                } else {
                    ((i * 7 + j * 3) % 11) as f32 * 0.1
                }
            })
            .collect();
        let mut et = Times::default();
        time_loops::eliminate(&mut m, reps.div_ceil(3).max(WARM_UP + 3), &cu, &mut et);
        ratios.push((
            "eliminate",
            et.report(
                &format!("elimination {n}x{n} f32, a gang loop per pivot"),
                0.0,
                "",
            ),
        ));
    }

    if wanted("transfers") {
        let t: [Times; 4] = Default::default();
        let [mut a, mut b, mut c, mut d] = t;
        transfers::transfers(
            reps.min(8).max(WARM_UP + 3),
            &cu,
            [&mut a, &mut b, &mut c, &mut d],
        );
        let bytes = transfers::BYTES as f64;
        let note = "  (reference: a copy from page-locked memory, the link's speed)";
        a.report("copyin, 256 MiB", bytes, note);
        b.report("copyout, 256 MiB", bytes, note);
        c.report("update device, 256 MiB", bytes, note);
        d.report("update self, 256 MiB", bytes, note);
    }
    if wanted("launch") {
        let (mut x, mut y) = (vec![0.0f64; 1], vec![0.0f64; 1]);
        let (mut enqueue, mut complete, mut busy) =
            (Times::default(), Times::default(), Times::default());
        let n = reps.max(200);
        launch_cost(
            &mut x,
            &mut y,
            n,
            &cu,
            [&mut enqueue, &mut complete, &mut busy],
        );
        assert_eq!(x[0], 3.0 * n as f64);
        let spun = (0..n as u64 * launch::SPIN).fold(0.0f64, |v, _| v * 0.999 + 1.0);
        assert_eq!(y[0], spun, "the long region's steps");
        let us = |t: &Times| {
            (
                median(t.acc[WARM_UP..].to_vec()).as_secs_f64() * 1e6,
                median(t.reference[WARM_UP..].to_vec()).as_secs_f64() * 1e6,
            )
        };
        enqueue.report("launch, present data", 0.0, "  (until the call returns)");
        complete.report("launch + wait", 0.0, "  (until the kernel has run)");
        busy.report(
            "launch, GPU busy",
            0.0,
            "  (until the call returns, a long kernel running)",
        );
        let ((ea, er), (ca, cr)) = (us(&enqueue), us(&complete));
        println!("{:<22} acc region returns after {ea:.1} us (bare launch {er:.1} us); with its wait {ca:.1} us (bare launch + synchronize {cr:.1} us)", "");
    }
    let summary: Vec<String> = ratios.iter().map(|(k, r)| format!("{k} {r:.2}")).collect();
    println!("summary: {}", summary.join(", "));
}
