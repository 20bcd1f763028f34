//! `acc::cache!` (3.3 section 2.10), the windows staged in shared memory by the GPU backends,
//! against hand-written CUDA: a 17-tap filter over a long f32 array (a flat parallel loop whose
//! window an inner loop over the taps reads; against a kernel staging each block's window in
//! shared memory) and a five-point stencil written gang rows over vector columns with the
//! centre row's window cached (against a thread per point). Each also runs without the
//! directive, against the same reference, to show what the staging adds.

// Index loops are the OpenACC idiom these benchmarks measure.
#![allow(clippy::needless_range_loop)]

use super::*;

/// `out[i] = sum over k of w[k] * a[i + k - 8]` for the interior `i`, with and without
/// `cache!(a[i - 8..i + 9])`.
#[acc::offload]
pub(super) fn filter17(
    a: &Vec<f32>,
    w: &Vec<f32>,
    out: &mut Vec<f32>,
    reps: usize,
    cu: &Cuda,
    (cached, plain): (&mut Times, &mut Times),
) {
    let n = a.len();
    let (ra, rw) = (cu.upload(a), cu.upload(w));
    let mut rb = cu.stream.alloc_zeros::<f32>(n).expect("alloc");
    let f = cu.f("filter17_f32");
    let nl = n as i64;
    let mut other = vec![0.0f32; n];
    #[acc::data(copyin(a, w), copy(out, other))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 8..n - 8 {
                acc::cache!(a[i - 8..i + 9]);
                let mut s = 0.0f32;
                for k in 0..17 {
                    s += w[k] * a[i + k - 8];
                }
                out[i] = s;
            }
            acc::wait_all().expect("the region runs");
            cached.acc.push(t0.elapsed());
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 8..n - 8 {
                let mut s = 0.0f32;
                for k in 0..17 {
                    s += w[k] * a[i + k - 8];
                }
                other[i] = s;
            }
            acc::wait_all().expect("the region runs");
            plain.acc.push(t0.elapsed());
            let r = timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&ra)
                        .arg(&rw)
                        .arg(&mut rb)
                        .arg(&nl)
                        .launch(blocks(cu.sms * 8))
                }
                .expect("launch");
                cu.sync();
            });
            cached.reference.push(r);
            plain.reference.push(r);
        }
    }
    let hb = cu.stream.clone_dtoh(&rb).unwrap();
    for ours in [&*out, &other] {
        let worst = worst_relative(&hb[8..n - 8], &ours[8..n - 8]);
        assert!(worst < 1e-4, "filter results differ by {worst} (relative)");
    }
}

/// The five-point stencil as gang rows over vector columns, with and without the centre row's
/// window cached.
#[acc::offload]
pub(super) fn stencil5(
    a: &Vec<f32>,
    b: &mut Vec<f32>,
    (n, m): (usize, usize),
    reps: usize,
    cu: &Cuda,
    (cached, plain): (&mut Times, &mut Times),
) {
    let ra = cu.upload(a);
    let mut rb = cu.stream.alloc_zeros::<f32>(n * m).expect("alloc");
    let f = cu.f("stencil5_f32");
    let (ni, mi) = (n as i32, m as i32);
    let mut other = vec![0.0f32; n * m];
    #[acc::data(copyin(a), copy(b, other))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop(gang)]
            for j in 1..n - 1 {
                #[acc::r#loop(vector)]
                for i in 1..m - 1 {
                    acc::cache!(a[j * m + i - 1..j * m + i + 2]);
                    let c = j * m + i;
                    b[c] = 0.25 * (a[c - 1] + a[c + 1] + a[c - m] + a[c + m]);
                }
            }
            acc::wait_all().expect("the region runs");
            cached.acc.push(t0.elapsed());
            let t0 = Instant::now();
            #[acc::parallel_loop(gang)]
            for j in 1..n - 1 {
                #[acc::r#loop(vector)]
                for i in 1..m - 1 {
                    let c = j * m + i;
                    other[c] = 0.25 * (a[c - 1] + a[c + 1] + a[c - m] + a[c + m]);
                }
            }
            acc::wait_all().expect("the region runs");
            plain.acc.push(t0.elapsed());
            let r = timed(|| {
                let cfg = LaunchConfig {
                    grid_dim: ((m as u32 - 2).div_ceil(256), n as u32 - 2, 1),
                    block_dim: (256, 1, 1),
                    shared_mem_bytes: 0,
                };
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&ra)
                        .arg(&mut rb)
                        .arg(&ni)
                        .arg(&mi)
                        .launch(cfg)
                }
                .expect("launch");
                cu.sync();
            });
            cached.reference.push(r);
            plain.reference.push(r);
        }
    }
    let hb = cu.stream.clone_dtoh(&rb).unwrap();
    for ours in [&*b, &other] {
        let worst = worst_relative(&hb, ours);
        assert!(worst < 1e-5, "stencil results differ by {worst} (relative)");
    }
}

/// Both, as rows of the summary.
pub(super) fn run(reps: usize, scale: usize, cu: &Cuda, ratios: &mut Vec<(&'static str, f64)>) {
    let n = (1usize << 26) / scale;
    let a: Vec<f32> = (0..n).map(|k| ((k * 7) % 19) as f32 * 0.5 - 4.0).collect();
    let w: Vec<f32> = (0..17).map(|k| (k as f32 - 8.0) * 0.0625).collect();
    let mut out = vec![0.0f32; n];
    let (mut c, mut p) = (Times::default(), Times::default());
    filter17(&a, &w, &mut out, reps, cu, (&mut c, &mut p));
    let bytes = (8 * n) as f64;
    ratios.push((
        "filter cache",
        c.report(
            &format!(
                "17-tap filter 2^{} f32, cache! (CUDA: shared-memory window)",
                n.trailing_zeros()
            ),
            bytes,
            "",
        ),
    ));
    ratios.push((
        "filter plain",
        p.report("the same without cache!", bytes, ""),
    ));
    drop((a, out));
    let g = 8192 / scale.min(8);
    let a: Vec<f32> = (0..g * g).map(|k| ((k * 5) % 23) as f32).collect();
    let mut b = vec![0.0f32; g * g];
    let (mut c, mut p) = (Times::default(), Times::default());
    stencil5(&a, &mut b, (g, g), reps, cu, (&mut c, &mut p));
    let bytes = (8 * g * g) as f64;
    ratios.push((
        "stencil5 cache",
        c.report(
            &format!("5-point stencil {g}x{g} f32, gang/vector, cache! of the centre row (CUDA: a thread per point)"),
            bytes,
            "",
        ),
    ));
    ratios.push((
        "stencil5 plain",
        p.report("the same without cache!", bytes, ""),
    ));
}
