//! The remaining patterns of the GPU execution model issue, as an OpenACC user writes them,
//! against hand-written CUDA: all-pairs n-body (a parallel loop over bodies around a sequential
//! loop over all of them), a matrix transpose with `tile(32, 32)` (against a shared-memory
//! tiled transpose), a two-pass scan (chunks scanned by a gang loop, their totals by a
//! `serial` region, then an add pass; against a shared-memory block scan, the same serial
//! pass and add pass), a row-wise softmax (three vector loops in each gang iteration), and a
//! row smoothing through an array private to each gang iteration (in shared memory).

// Index loops are the OpenACC idiom these benchmarks measure.
#![allow(clippy::needless_range_loop)]

use super::*;

/// Accelerations of every body from all the others (softened by `eps`); positions and masses
/// as a structure of arrays.
#[allow(clippy::too_many_arguments)]
#[acc::offload]
pub(super) fn nbody(
    (px, py, pz, m): (&Vec<f32>, &Vec<f32>, &Vec<f32>, &Vec<f32>),
    ax: &mut Vec<f32>,
    ay: &mut Vec<f32>,
    az: &mut Vec<f32>,
    reps: usize,
    cu: &Cuda,
    t: &mut Times,
) {
    let n = px.len();
    let eps = 1e-3f32;
    let r: Vec<CudaSlice<f32>> = [px, py, pz, m].iter().map(|v| cu.upload(v)).collect();
    let mut rout: Vec<CudaSlice<f32>> = (0..3)
        .map(|_| cu.stream.alloc_zeros::<f32>(n).expect("alloc"))
        .collect();
    let f = cu.f("nbody_f32");
    let ni = n as i32;
    #[acc::data(copyin(px, py, pz, m), copyout(ax, ay, az))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 0..n {
                let (xi, yi, zi) = (px[i], py[i], pz[i]);
                let (mut fx, mut fy, mut fz) = (0.0f32, 0.0f32, 0.0f32);
                for j in 0..n {
                    let (dx, dy, dz) = (px[j] - xi, py[j] - yi, pz[j] - zi);
                    let d2 = dx * dx + dy * dy + dz * dz + eps;
                    let inv = 1.0f32 / d2.sqrt();
                    let s = m[j] * inv * inv * inv;
                    fx += dx * s;
                    fy += dy * s;
                    fz += dz * s;
                }
                ax[i] = fx;
                ay[i] = fy;
                az[i] = fz;
            }
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                let (o, rest) = rout.split_at_mut(1);
                let (o1, o2) = rest.split_at_mut(1);
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&r[0])
                        .arg(&r[1])
                        .arg(&r[2])
                        .arg(&r[3])
                        .arg(&mut o[0])
                        .arg(&mut o1[0])
                        .arg(&mut o2[0])
                        .arg(&ni)
                        .arg(&eps)
                        .launch(grid(n))
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    for (k, ours) in [&*ax, &*ay, &*az].into_iter().enumerate() {
        let reference = cu.stream.clone_dtoh(&rout[k]).unwrap();
        let worst = worst_relative(&reference, ours);
        assert!(worst < 1e-3, "n-body results differ by {worst} (relative)");
    }
}

/// `b = aᵀ` for n x n f32 matrices, the loop nest spelt `tile(32, 32)` (`spelling` 0),
/// `collapse(2)` (1) or as a gang loop over a vector loop (2); acc tiles the last two 32 x 32
/// itself.
#[acc::offload]
pub(super) fn transpose(
    a: &Vec<f32>,
    b: &mut Vec<f32>,
    n: usize,
    (reps, spelling): (usize, u8),
    cu: &Cuda,
    t: &mut Times,
) {
    let ra = cu.upload(a);
    let mut rb = cu.stream.alloc_zeros::<f32>(n * n).expect("alloc");
    let f = cu.f("transpose_f32");
    let ni = n as i32;
    #[acc::data(copyin(a), copyout(b))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            if spelling == 0 {
                #[acc::parallel_loop(tile(32, 32))]
                for i in 0..n {
                    for j in 0..n {
                        b[j * n + i] = a[i * n + j];
                    }
                }
            } else if spelling == 1 {
                #[acc::parallel_loop(collapse(2))]
                for i in 0..n {
                    for j in 0..n {
                        b[j * n + i] = a[i * n + j];
                    }
                }
            } else {
                #[acc::parallel_loop(gang)]
                for i in 0..n {
                    #[acc::r#loop(vector)]
                    for j in 0..n {
                        b[j * n + i] = a[i * n + j];
                    }
                }
            }
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                let cfg = LaunchConfig {
                    grid_dim: (n.div_ceil(32) as u32, n.div_ceil(32) as u32, 1),
                    block_dim: (32, 8, 1),
                    shared_mem_bytes: 0,
                };
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&ra)
                        .arg(&mut rb)
                        .arg(&ni)
                        .launch(cfg)
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    let hb = cu.stream.clone_dtoh(&rb).unwrap();
    assert!(hb == *b, "transposes differ");
}

/// Inclusive prefix sums of `x` in chunks of `chunk`: each chunk scanned by an iteration of a
/// gang loop, the chunks' totals turned into offsets by a `serial` region, then added.
#[acc::offload]
pub(super) fn scan(
    x: &Vec<u32>,
    y: &mut Vec<u32>,
    chunk: usize,
    reps: usize,
    cu: &Cuda,
    t: &mut Times,
) {
    let n = x.len();
    let chunks = n / chunk;
    let mut sums = vec![0u32; chunks];
    let rx = cu.upload(x);
    let mut ry = cu.stream.alloc_zeros::<u32>(n).expect("alloc");
    let mut rs = cu.stream.alloc_zeros::<u32>(chunks).expect("alloc");
    let (f1, f2, f3) = (
        cu.f("scan_chunks_u32"),
        cu.f("scan_offsets_u32"),
        cu.f("scan_add_u32"),
    );
    let (n64, c32, k32) = (n as u64, chunk as u32, chunks as u32);
    #[acc::data(copyin(x), copyout(y), create(sums))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop(gang, vector)]
            for c in 0..chunks {
                let mut run = 0u32;
                for k in c * chunk..(c + 1) * chunk {
                    run += x[k];
                    y[k] = run;
                }
                sums[c] = run;
            }
            #[acc::serial]
            {
                let mut run = 0u32;
                for c in 0..chunks {
                    let total = sums[c];
                    sums[c] = run;
                    run += total;
                }
            }
            #[acc::parallel_loop]
            for k in 0..n {
                y[k] += sums[k / chunk];
            }
            acc::wait_all().expect("the regions run");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&f1)
                        .arg(&rx)
                        .arg(&mut ry)
                        .arg(&mut rs)
                        .arg(&n64)
                        .arg(&c32)
                        .launch(blocks(k32))
                }
                .expect("launch");
                let one = LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (1, 1, 1),
                    shared_mem_bytes: 0,
                };
                unsafe {
                    cu.stream
                        .launch_builder(&f2)
                        .arg(&mut rs)
                        .arg(&k32)
                        .launch(one)
                }
                .expect("launch");
                unsafe {
                    cu.stream
                        .launch_builder(&f3)
                        .arg(&mut ry)
                        .arg(&rs)
                        .arg(&n64)
                        .arg(&c32)
                        .launch(blocks(cu.sms * 8))
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    let hy = cu.stream.clone_dtoh(&ry).unwrap();
    assert!(hy == *y, "scans differ");
}

/// Softmax of each row: a gang loop over rows whose iteration has three vector loops (the
/// maximum, the sum of exponentials, the scaled elements); against a block per row in CUDA.
#[acc::offload]
pub(super) fn softmax(
    x: &Vec<f32>,
    y: &mut Vec<f32>,
    n: usize,
    reps: usize,
    cu: &Cuda,
    t: &mut Times,
) {
    let m = x.len() / n;
    let rx = cu.upload(x);
    let mut ry = cu.stream.alloc_zeros::<f32>(n * m).expect("alloc");
    let f = cu.f("softmax_rows_f32");
    let (ni, mi) = (n as i32, m as i32);
    #[acc::data(copyin(x), copyout(y))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop(gang)]
            for i in 0..n {
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
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&rx)
                        .arg(&mut ry)
                        .arg(&ni)
                        .arg(&mi)
                        .launch(blocks((n as u32).min(cu.sms * 8)))
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    let hy = cu.stream.clone_dtoh(&ry).unwrap();
    let worst = worst_relative(&hy, y);
    assert!(worst < 1e-5, "softmax results differ by {worst} (relative)");
}

/// Each row of `a` (rows of `m` f32) smoothed over three points into `b`, through an array
/// private to the gang iteration: one vector loop copies the row into it, the next reads each
/// element's neighbours from it (the shape of column physics and line stencils). Against a
/// block per row with the row in shared memory in CUDA.
#[acc::offload]
pub(super) fn row_smooth(
    a: &Vec<f32>,
    b: &mut Vec<f32>,
    m: usize,
    reps: usize,
    cu: &Cuda,
    t: &mut Times,
) {
    let rows = a.len() / m;
    assert!(m <= 1024, "rows of at most 1024");
    let ra = cu.upload(a);
    let mut rb = cu.stream.alloc_zeros::<f32>(rows * m).expect("alloc");
    let f = cu.f("row_smooth_f32");
    let (ri, mi) = (rows as i32, m as i32);
    #[acc::data(copyin(a), copyout(b))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
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
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&ra)
                        .arg(&mut rb)
                        .arg(&ri)
                        .arg(&mi)
                        .launch(blocks((rows as u32).min(cu.sms * 8)))
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    let hb = cu.stream.clone_dtoh(&rb).unwrap();
    let worst = worst_relative(&hb, b);
    assert!(
        worst < 1e-6,
        "row smoothing results differ by {worst} (relative)"
    );
}
