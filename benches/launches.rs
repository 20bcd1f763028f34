//! Programs of many short launches (issue 16), on the nvidia device, each figure a ratio
//! against a reference measured in the same run (above 1.0: acc is faster):
//!
//! - **tiny regions**: a time loop of 10,000 regions over 1,024 present elements, each with a
//!   scalar that changes every step, and every tenth step a sum the host reads, against the
//!   same loop of hand-written CUDA launches (benches/cuda/reference.cu: `tiny_update`, and
//!   `tiny_sum` with a copy back of its result);
//! - **wavefront**: a sequence alignment's score table (n = 8192), one region per
//!   anti-diagonal (16,383 regions, each a few thousand cells), on the nvidia device against
//!   the multicore device on the same machine's cores, and against the hand-written CUDA loop.
//!
//! - **pipeline**: 2^23 `f64` filled on the host in 16 blocks, each sent with `update device`
//!   and transformed by a region as soon as it is filled, on three `async` queues, against the
//!   same without `async` and against hand-written CUDA on three streams
//!   (`benches/launches/pipeline.rs`).
//!
//! - **cold start**: the first step of a program of twelve kernels with an empty kernel cache,
//!   as a fresh machine or container runs it, in a child process, against the same with each
//!   kernel compiled at its launch (`benches/launches/cold.rs`).
//!
//! Results are verified: the tiny loop's sums and array against the CUDA loop's (exactly: both
//! round as Rust does), the wavefront's table against plain Rust loops.
//!
//! `cargo bench --features cuda --bench launches` (`ACC_BENCH_REPS`, default 5 repetitions of
//! each whole loop; `ACC_BENCH_WAVEFRONT_N`, default 8192; `ACC_BENCH_ONLY`, a comma-separated
//! list of `tiny`, `cold`, `table`, `diagonals` and `pipeline`, runs only those, to profile one).

#![allow(clippy::manual_saturating_arithmetic, clippy::implicit_saturating_sub)]

use std::time::{Duration, Instant};

use cudarc::driver::{LaunchConfig, PushKernelArg};

#[path = "cuda/reference.rs"]
mod reference;

#[path = "launches/programs.rs"]
mod programs;

#[path = "launches/pipeline.rs"]
mod pipeline;

#[path = "launches/cold.rs"]
mod cold;

use programs::{tiny_regions, wavefront_diagonals};

use reference::Cuda;

const N_TINY: usize = 1024;
const STEPS: usize = 10_000;

/// The same loop of hand-written CUDA launches.
fn tiny_reference(cu: &Cuda, x: &mut [f64], steps: usize) -> f64 {
    let n = x.len();
    let mut dx = cu.upload(x);
    let mut out = cu.upload(&[0.0f64]);
    let (update, sum) = (cu.f("tiny_update"), cu.f("tiny_sum"));
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let mut total = 0.0;
    let mut s = [0.0f64];
    for step in 0..steps {
        let a = (step % 7) as f64;
        unsafe {
            cu.stream
                .launch_builder(&update)
                .arg(&mut dx)
                .arg(&a)
                .arg(&n)
                .launch(cfg)
        }
        .expect("launch");
        if step % 10 == 9 {
            unsafe {
                cu.stream
                    .launch_builder(&sum)
                    .arg(&dx)
                    .arg(&mut out)
                    .arg(&n)
                    .launch(one)
            }
            .expect("launch");
            cu.stream.memcpy_dtoh(&out, &mut s).expect("copy back");
            total += s[0];
        }
    }
    cu.stream.memcpy_dtoh(&dx, x).expect("copy back");
    total
}

/// The wavefront: `h` is the (n + 1) x (n + 1) score table of sequences `a` and `b` (row and
/// column 0 given); each anti-diagonal `d` depends on the two before it.
#[acc::offload]
fn wavefront(h: &mut Vec<i32>, a: &[u8], b: &[u8]) {
    let n = a.len();
    let w = n + 1;
    #[acc::data(copy(h), copyin(a, b))]
    {
        for d in 2..=2 * n {
            let lo = if d > n { d - n } else { 1 };
            let hi = if d - 1 < n { d } else { n + 1 };
            #[acc::parallel_loop]
            for i in lo..hi {
                let j = d - i;
                let m = if a[i - 1] == b[j - 1] { 2 } else { -1 };
                let diag = h[(i - 1) * w + j - 1] + m;
                let up = h[(i - 1) * w + j] - 1;
                let left = h[i * w + j - 1] - 1;
                let best = if diag > up { diag } else { up };
                h[i * w + j] = if best > left { best } else { left };
            }
        }
    }
}

/// The wavefront as plain loops, row by row (the reference result).
fn wavefront_plain(h: &mut [i32], a: &[u8], b: &[u8]) {
    let n = a.len();
    let w = n + 1;
    for i in 1..=n {
        for j in 1..=n {
            let m = if a[i - 1] == b[j - 1] { 2 } else { -1 };
            let diag = h[(i - 1) * w + j - 1] + m;
            let up = h[(i - 1) * w + j] - 1;
            let left = h[i * w + j - 1] - 1;
            h[i * w + j] = diag.max(up).max(left);
        }
    }
}

/// The wavefront as hand-written CUDA launches.
fn wavefront_reference(cu: &Cuda, h: &mut [i32], a: &[u8], b: &[u8]) {
    let n = a.len();
    let (mut dh, da, db) = (cu.upload(h), cu.upload(a), cu.upload(b));
    let f = cu.f("wavefront_diagonal");
    for d in 2..=2 * n {
        let lo = if d > n { d - n } else { 1 };
        let hi = if d - 1 < n { d } else { n + 1 };
        let cfg = LaunchConfig {
            grid_dim: ((hi - lo).div_ceil(256) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        unsafe {
            cu.stream
                .launch_builder(&f)
                .arg(&mut dh)
                .arg(&da)
                .arg(&db)
                .arg(&n)
                .arg(&d)
                .arg(&lo)
                .arg(&hi)
                .launch(cfg)
        }
        .expect("launch");
    }
    cu.stream.memcpy_dtoh(&dh, h).expect("copy back");
}

/// The three-diagonal wavefront as hand-written CUDA launches; returns the score of (n, n).
fn diagonals_reference(cu: &Cuda, a: &[u8], b: &[u8]) -> i32 {
    let n = a.len();
    let mut r = vec![0i32; 3 * (n + 1)];
    let (mut dr, da, db) = (cu.upload(&r), cu.upload(a), cu.upload(b));
    let f = cu.f("wavefront_three");
    for d in 0..=2 * n {
        let lo = if d > n { d - n } else { 0 };
        let hi = if d > n { n + 1 } else { d + 1 };
        let cfg = LaunchConfig {
            grid_dim: ((hi - lo).div_ceil(256) as u32, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        unsafe {
            cu.stream
                .launch_builder(&f)
                .arg(&mut dr)
                .arg(&da)
                .arg(&db)
                .arg(&n)
                .arg(&d)
                .arg(&lo)
                .arg(&hi)
                .launch(cfg)
        }
        .expect("launch");
    }
    cu.stream.memcpy_dtoh(&dr, &mut r).expect("copy back");
    r[(2 * n % 3) * (n + 1) + n]
}

/// A score table with its borders set (gap penalties).
fn table(n: usize) -> Vec<i32> {
    let w = n + 1;
    let mut h = vec![0i32; w * w];
    for k in 0..w {
        h[k] = -(k as i32);
        h[k * w] = -(k as i32);
    }
    h
}

/// Two sequences over four letters, from a fixed generator.
fn sequences(n: usize) -> (Vec<u8>, Vec<u8>) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        b"ACGT"[(state % 4) as usize]
    };
    let a = (0..n).map(|_| next()).collect();
    let b = (0..n).map(|_| next()).collect();
    (a, b)
}

fn median(mut t: Vec<Duration>) -> Duration {
    t.sort();
    t[t.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    if cold::child() {
        return;
    }
    let reps: usize = std::env::var("ACC_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let n: usize = std::env::var("ACC_BENCH_WAVEFRONT_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8192);
    acc::set_device_type(acc::DeviceType::Nvidia);
    let only = std::env::var("ACC_BENCH_ONLY").unwrap_or_default();
    let runs = |part: &str| only.is_empty() || only.split(',').any(|p| p.trim() == part);
    let cu = Cuda::new();
    println!(
        "device: {}; medians of {reps} repetitions after a warm-up; ratio = reference time / acc time",
        acc::get_property(0, acc::DeviceType::Nvidia, acc::Property::Name)
    );

    if runs("tiny") {
        // Tiny regions against CUDA launches.
        let start: Vec<f64> = (0..N_TINY).map(|i| (i % 13) as f64).collect();
        let (mut ta, mut tr) = (Vec::new(), Vec::new());
        for rep in 0..=reps {
            let mut x = start.clone();
            let t = Instant::now();
            let total = tiny_regions(&mut x, STEPS);
            let acc_time = t.elapsed();
            let mut y = start.clone();
            let t = Instant::now();
            let expected = tiny_reference(&cu, &mut y, STEPS);
            let ref_time = t.elapsed();
            assert_eq!(x, y, "the tiny regions' array differs from the CUDA loop's");
            assert!(
                (total - expected).abs() <= 1e-12 * expected.abs(),
                "the tiny regions' sums differ: {total} against {expected}"
            );
            if rep > 0 {
                ta.push(acc_time);
                tr.push(ref_time);
            }
        }
        let (a, r) = (median(ta), median(tr));
        let per = |d: Duration| d.as_secs_f64() * 1e6 / (STEPS + STEPS / 10) as f64;
        println!(
        "tiny regions      acc {:>9.2} ms  CUDA {:>9.2} ms  ratio {:.2}x  ({STEPS} regions of {N_TINY} elements and {} sums: {:.2} us per region, CUDA {:.2} us per launch)",
        ms(a),
        ms(r),
        r.as_secs_f64() / a.as_secs_f64(),
        STEPS / 10,
        per(a),
        per(r)
    );
    }
    if runs("cold") {
        cold::run(reps);
    }
    if runs("pipeline") {
        let (n, blocks) = (1usize << 23, 16);
        let (mut pa, mut ps, mut pc) = (Vec::new(), Vec::new(), Vec::new());
        for rep in 0..=reps {
            let (queued, on_queues) = pipeline::pipeline(n, blocks, true);
            let (plain, in_order) = pipeline::pipeline(n, blocks, false);
            let (expected, on_cuda) = pipeline::pipeline_reference(&cu, n, blocks);
            assert!(
                queued == expected,
                "the pipeline on queues differs from CUDA's"
            );
            assert!(
                plain == expected,
                "the pipeline without async differs from CUDA's"
            );
            if rep > 0 {
                pa.push(on_queues);
                ps.push(in_order);
                pc.push(on_cuda);
            }
        }
        let (a, s, c) = (median(pa), median(ps), median(pc));
        println!(
            "pipeline          acc (3 queues) {:>8.2} ms  CUDA (3 streams) {:>8.2} ms  ratio {:.2}x  ({blocks} blocks of {} MiB)",
            ms(a),
            ms(c),
            c.as_secs_f64() / a.as_secs_f64(),
            (n * 8 / blocks) >> 20
        );
        println!(
            "pipeline          acc (3 queues) {:>8.2} ms  acc without async {:>8.2} ms  ratio {:.2}x",
            ms(a),
            ms(s),
            s.as_secs_f64() / a.as_secs_f64()
        );
    }
    if !runs("table") && !runs("diagonals") {
        return;
    }
    // The wavefront on nvidia, on multicore, and as CUDA launches.
    let (sa, sb) = sequences(n);
    let mut expected = table(n);
    wavefront_plain(&mut expected, &sa, &sb);
    if runs("table") {
        let (mut tn, mut tm, mut tc) = (Vec::new(), Vec::new(), Vec::new());
        for rep in 0..=reps {
            let run = |device: Option<acc::DeviceType>| {
                let mut h = table(n);
                let t = Instant::now();
                match device {
                    Some(d) => {
                        acc::set_device_type(d);
                        wavefront(&mut h, &sa, &sb);
                    }
                    None => wavefront_reference(&cu, &mut h, &sa, &sb),
                }
                let time = t.elapsed();
                assert!(h == expected, "the wavefront's table differs ({device:?})");
                time
            };
            let on_nvidia = run(Some(acc::DeviceType::Nvidia));
            let on_threads = run(Some(acc::DeviceType::Multicore));
            let on_cuda = run(None);
            if rep > 0 {
                tn.push(on_nvidia);
                tm.push(on_threads);
                tc.push(on_cuda);
            }
        }
        acc::set_device_type(acc::DeviceType::Nvidia);
        let (on_nvidia, on_threads, on_cuda) = (median(tn), median(tm), median(tc));
        let diagonals = 2 * n - 1;
        println!(
        "wavefront n={n}    nvidia {:>9.2} ms  multicore ({} threads) {:>9.2} ms  ratio {:.2}x  ({diagonals} regions: {:.2} us each)",
        ms(on_nvidia),
        std::thread::available_parallelism().map_or(1, |p| p.get()),
        ms(on_threads),
        on_threads.as_secs_f64() / on_nvidia.as_secs_f64(),
        on_nvidia.as_secs_f64() * 1e6 / diagonals as f64
    );
        println!(
        "wavefront n={n}    nvidia {:>9.2} ms  CUDA {:>9.2} ms  ratio {:.2}x  ({:.2} us per CUDA launch)",
        ms(on_nvidia),
        ms(on_cuda),
        on_cuda.as_secs_f64() / on_nvidia.as_secs_f64(),
        on_cuda.as_secs_f64() * 1e6 / diagonals as f64
    );
    }
    if runs("diagonals") {
        let (mut dn, mut dm, mut dc) = (Vec::new(), Vec::new(), Vec::new());
        for rep in 0..=reps {
            let run = |device: acc::DeviceType| {
                let mut r = vec![0i32; 3 * (n + 1)];
                acc::set_device_type(device);
                let t = Instant::now();
                let score = wavefront_diagonals(&mut r, &sa, &sb);
                let time = t.elapsed();
                assert_eq!(
                    score,
                    expected[n * (n + 1) + n],
                    "the wavefront's score ({device:?})"
                );
                time
            };
            let (on_nvidia, on_threads) = (
                run(acc::DeviceType::Nvidia),
                run(acc::DeviceType::Multicore),
            );
            let t = Instant::now();
            let score = diagonals_reference(&cu, &sa, &sb);
            let on_cuda = t.elapsed();
            assert_eq!(
                score,
                expected[n * (n + 1) + n],
                "the CUDA wavefront's score"
            );
            if rep > 0 {
                dn.push(on_nvidia);
                dm.push(on_threads);
                dc.push(on_cuda);
            }
        }
        acc::set_device_type(acc::DeviceType::Nvidia);
        let (d_nvidia, d_threads, d_cuda) = (median(dn), median(dm), median(dc));
        println!(
        "wavefront, 3 diagonals, n={n}  nvidia {:>9.2} ms  multicore {:>9.2} ms  ratio {:.2}x  ({} regions: {:.2} us each on nvidia, {:.2} us on multicore)",
        ms(d_nvidia),
        ms(d_threads),
        d_threads.as_secs_f64() / d_nvidia.as_secs_f64(),
        2 * n + 1,
        d_nvidia.as_secs_f64() * 1e6 / (2 * n + 1) as f64,
        d_threads.as_secs_f64() * 1e6 / (2 * n + 1) as f64
    );
        println!(
        "wavefront, 3 diagonals, n={n}  nvidia {:>9.2} ms  CUDA {:>9.2} ms  ratio {:.2}x  ({:.2} us per CUDA launch)",
        ms(d_nvidia),
        ms(d_cuda),
        d_cuda.as_secs_f64() / d_nvidia.as_secs_f64(),
        d_cuda.as_secs_f64() * 1e6 / (2 * n + 1) as f64
    );
    }
}
