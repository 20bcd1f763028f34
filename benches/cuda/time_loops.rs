//! Sequential loops around parallel loops inside one compute region, as OpenACC programs write
//! time steps and eliminations: a `kernels` region whose time loop holds a heat step and its
//! copy back, and a `parallel` region whose loop over pivots holds a gang loop over the rows
//! below (each reading its factor, then a vector loop over the row). The host drives each
//! sequential loop and launches the parallel loops in it once per iteration; the CUDA
//! references launch the same kernels from a host loop.

// Index loops are the OpenACC idiom these benchmarks measure.
#![allow(clippy::needless_range_loop)]

use super::*;

/// `steps` explicit heat steps on an n x n f32 grid inside one `kernels` region.
#[acc::offload]
pub(super) fn heat(
    u: &mut Vec<f32>,
    v: &mut Vec<f32>,
    n: usize,
    (steps, reps): (usize, usize),
    cu: &Cuda,
    t: &mut Times,
) {
    let mut ru = cu.upload(u);
    let mut rv = cu.upload(v);
    let (step, copy) = (cu.f("heat_step_f32"), cu.f("heat_copy_f32"));
    let ni = n as i32;
    let cfg = LaunchConfig {
        grid_dim: ((n as u32 - 2).div_ceil(256), n as u32 - 2, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    #[acc::data(copy(u, v))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::kernels]
            {
                for _ in 0..steps {
                    // kernels proves both loops of each nest independent (each `i` writes
                    // its own row): a gang per row, its threads along `j`.
                    for i in 1..n - 1 {
                        for j in 1..n - 1 {
                            let k = i * n + j;
                            v[k] = u[k]
                                + 0.2 * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - 4.0 * u[k]);
                        }
                    }
                    for i in 1..n - 1 {
                        for j in 1..n - 1 {
                            u[i * n + j] = v[i * n + j];
                        }
                    }
                }
            }
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                for _ in 0..steps {
                    unsafe {
                        cu.stream
                            .launch_builder(&step)
                            .arg(&ru)
                            .arg(&mut rv)
                            .arg(&ni)
                            .launch(cfg)
                    }
                    .expect("launch");
                    unsafe {
                        cu.stream
                            .launch_builder(&copy)
                            .arg(&mut ru)
                            .arg(&rv)
                            .arg(&ni)
                            .launch(cfg)
                    }
                    .expect("launch");
                }
                cu.sync();
            }));
        }
    }
    let hu = cu.stream.clone_dtoh(&ru).unwrap();
    let worst = worst_relative(&hu, u);
    assert!(worst < 1e-4, "heat results differ by {worst} (relative)");
}

/// Forward elimination of an n x n f32 matrix in one `parallel` region.
#[acc::offload]
pub(super) fn eliminate(m: &mut Vec<f32>, reps: usize, cu: &Cuda, t: &mut Times) {
    let n = (m.len() as f64).sqrt() as usize;
    let start = m.clone();
    let f = cu.f("eliminate_step_f32");
    let ni = n as i32;
    let mut rm = cu.upload(&start);
    #[acc::data(create(m))]
    {
        for _ in 0..reps {
            acc::update!(device(m));
            let t0 = Instant::now();
            #[acc::parallel]
            {
                for k in 0..n {
                    #[acc::r#loop(gang)]
                    for i in k + 1..n {
                        let f = m[i * n + k] / m[k * n + k];
                        #[acc::r#loop(vector)]
                        for j in k..n {
                            m[i * n + j] -= f * m[k * n + j];
                        }
                    }
                }
            }
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            acc::update!(self(m));
            m.copy_from_slice(&start);
            cu.stream.memcpy_htod(&start, &mut rm).expect("upload");
            cu.sync();
            t.reference.push(timed(|| {
                for k in 0..n {
                    let rows = (n - k - 1).min(cu.sms as usize * 8) as u32;
                    if rows == 0 {
                        continue;
                    }
                    let ki = k as i32;
                    unsafe {
                        cu.stream
                            .launch_builder(&f)
                            .arg(&mut rm)
                            .arg(&ni)
                            .arg(&ki)
                            .launch(blocks(rows))
                    }
                    .expect("launch");
                }
                cu.sync();
            }));
        }
        acc::update!(self(m));
    }
    let hm = cu.stream.clone_dtoh(&rm).unwrap();
    // (nvcc contracts `m - f * x` into a fused multiply-add; acc keeps Rust's two roundings.)
    let worst = worst_relative(&hm, m);
    assert!(
        worst < 1e-2,
        "elimination results differ by {worst} (relative)"
    );
}
