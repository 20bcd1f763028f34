//! Matrix products: acc's plain loops (collapsed, with the sum in a scalar or accumulated in
//! `c[i * n + j]` as C programs often write it, or tiled 16 x 16 so that each element's `k`
//! loop runs in chunks staged through shared memory, with `*` and `+` or with `mul_add`)
//! against a 16 x 16 shared-memory CUDA kernel, and cuBLAS's SGEMM through PyTorch.

use super::*;

/// How acc's version of the matrix product is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Spelling {
    /// `collapse(2)`, the sum in a scalar.
    Collapse,
    /// `collapse(2)`, the sum accumulated in `c[i * n + j]`.
    CollapseInC,
    /// A `gang` loop over rows around a `vector` loop over columns.
    GangVector,
    /// `tile(16, 16)`.
    Tile,
    /// `tile(16, 16)` with `mul_add`.
    TileMulAdd,
}

/// C = A B (f32, n x n), acc's version the plain triple loop as `spelling` writes it (tiled,
/// the block runs each element's `k` loop in chunks staged through shared memory; acc tiles
/// the collapsed and gang/vector nests itself). The reference tiles through shared memory.
#[allow(clippy::too_many_arguments)]
#[acc::offload]
pub(super) fn matmul(
    a: &Vec<f32>,
    b: &Vec<f32>,
    c: &mut Vec<f32>,
    n: usize,
    (reps, spelling): (usize, Spelling),
    cu: &Cuda,
    t: &mut Times,
) {
    let (ra, rb) = (cu.upload(a), cu.upload(b));
    let mut rc = cu.stream.alloc_zeros::<f32>(n * n).expect("alloc");
    let f = cu.f("matmul_f32");
    let ni = n as i32;
    #[acc::data(copyin(a, b), copyout(c))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            if spelling == Spelling::TileMulAdd {
                // `mul_add`: one rounding per step, as CUDA's contracted `s += a * b` (and as
                // `f32::mul_add` on the host).
                #[acc::parallel_loop(tile(16, 16))]
                for i in 0..n {
                    for j in 0..n {
                        let mut s = 0.0f32;
                        for k in 0..n {
                            s = a[i * n + k].mul_add(b[k * n + j], s);
                        }
                        c[i * n + j] = s;
                    }
                }
            } else if spelling == Spelling::Tile {
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
            } else if spelling == Spelling::GangVector {
                #[acc::parallel_loop(gang)]
                for i in 0..n {
                    #[acc::r#loop(vector)]
                    for j in 0..n {
                        let mut s = 0.0f32;
                        for k in 0..n {
                            s += a[i * n + k] * b[k * n + j];
                        }
                        c[i * n + j] = s;
                    }
                }
            } else if spelling == Spelling::CollapseInC {
                #[acc::parallel_loop(collapse(2))]
                for i in 0..n {
                    for j in 0..n {
                        c[i * n + j] = 0.0;
                        for k in 0..n {
                            c[i * n + j] += a[i * n + k] * b[k * n + j];
                        }
                    }
                }
            } else {
                #[acc::parallel_loop(collapse(2))]
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
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                let cfg = LaunchConfig {
                    grid_dim: (n as u32 / 16, n as u32 / 16, 1),
                    block_dim: (16, 16, 1),
                    shared_mem_bytes: 0,
                };
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&ra)
                        .arg(&rb)
                        .arg(&mut rc)
                        .arg(&ni)
                        .launch(cfg)
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    let hc = cu.stream.clone_dtoh(&rc).unwrap();
    let worst = worst_relative(&hc, c);
    assert!(worst < 1e-3, "matmul results differ by {worst} (relative)");
}

/// cuBLAS's SGEMM time for n x n f32 matrices (median of 20, CUDA events, TF32 off), through
/// PyTorch on the GPU machine, in a child process of this run; `None` where python3 or torch
/// is missing.
pub(super) fn cublas_sgemm(n: usize) -> Option<Duration> {
    let script = format!(
        "import torch\n\
         torch.backends.cuda.matmul.allow_tf32 = False\n\
         a = torch.rand({n}, {n}, device='cuda'); b = torch.rand({n}, {n}, device='cuda')\n\
         for _ in range(3): torch.mm(a, b)\n\
         t = []\n\
         for _ in range(20):\n    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)\n    s.record(); torch.mm(a, b); e.record(); torch.cuda.synchronize(); t.append(s.elapsed_time(e))\n\
         t.sort(); print(t[len(t) // 2])\n"
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .ok()?;
    let ms: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(Duration::from_secs_f64(ms / 1e3))
}

/// The matrix products at 4096 (scaled down by `scale`, at most 8): each acc version against
/// the CUDA kernel, and acc's best against cuBLAS; the tiled versions' ratios join `ratios`.
pub(super) fn bench(scale: usize, reps: usize, cu: &Cuda, ratios: &mut Vec<(&str, f64)>) {
    let g = 4096 / scale.min(8);
    let a: Vec<f32> = (0..g * g).map(|k| ((k * 7) % 13) as f32 * 0.1).collect();
    let b: Vec<f32> = (0..g * g).map(|k| ((k * 5) % 11) as f32 * 0.1).collect();
    let flops = 2.0 * (g as f64).powi(3);
    let tf = |d: Duration| flops / d.as_secs_f64() / 1e12;
    let mut best = Duration::MAX;
    for (spelling, name, key) in [
        (
            Spelling::Collapse,
            format!("matmul f32 {g}, collapse(2)"),
            "matmul",
        ),
        (
            Spelling::CollapseInC,
            format!("matmul f32 {g}, collapse(2), c[i * n + j] +="),
            "matmul_in_c",
        ),
        (
            Spelling::GangVector,
            format!("matmul f32 {g}, gang / vector loops"),
            "matmul_gang_vector",
        ),
        (
            Spelling::Tile,
            format!("matmul f32 {g}, tile(16, 16)"),
            "matmul_tile",
        ),
        (
            Spelling::TileMulAdd,
            format!("matmul f32 {g}, tile(16, 16), mul_add"),
            "matmul_tile_fma",
        ),
    ] {
        let mut c = vec![0.0f32; g * g];
        let mut mt = Times::default();
        matmul(
            &a,
            &b,
            &mut c,
            g,
            (reps.min(10 + WARM_UP), spelling),
            cu,
            &mut mt,
        );
        let r = mt.report(&name, 0.0, "  (CUDA: 16x16 shared-memory tiles)");
        ratios.push((key, r));
        let acc_time = median(mt.acc[WARM_UP..].to_vec());
        best = best.min(acc_time);
        println!(
            "{:<22} acc {:.1} TFLOP/s, CUDA (16x16 tiles) {:.1} TFLOP/s",
            "",
            tf(acc_time),
            tf(median(mt.reference[WARM_UP..].to_vec()))
        );
    }
    match cublas_sgemm(g) {
        Some(d) => {
            let r = d.as_secs_f64() / best.as_secs_f64();
            println!(
                "{:<22} cuBLAS SGEMM (PyTorch, TF32 off) {:.1} us, {:.1} TFLOP/s: acc's best ratio {r:.2}x",
                "",
                d.as_secs_f64() * 1e6,
                tf(d)
            );
            ratios.push(("matmul_cublas", r));
        }
        None => println!(
            "{:<22} no cuBLAS reference (python3 with torch not found)",
            ""
        ),
    }
}
