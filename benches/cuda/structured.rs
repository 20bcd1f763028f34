//! The structured kernels real programs are made of, against hand-written CUDA: a gang loop
//! over a vector loop with a reduction (matrix-vector product, CSR SpMV by block and by warp),
//! gang/worker/vector levels (a 7-point stencil) and atomic updates (a histogram).

use super::*;

/// The matrix-vector product as an OpenACC user writes it: a gang loop over rows, a vector
/// loop with `reduction(+: s)`, then `y[i] = s`; against a block per row in CUDA.
#[allow(clippy::too_many_arguments)]
#[acc::offload]
pub(super) fn matvec(
    a: &Vec<f32>,
    x: &Vec<f32>,
    y: &mut Vec<f32>,
    n: usize,
    reps: usize,
    cu: &Cuda,
    t: &mut Times,
) {
    let (ra, rx) = (cu.upload(a), cu.upload(x));
    let mut ry = cu.stream.alloc_zeros::<f32>(n).expect("alloc");
    let f = cu.f("matvec_f32");
    let ni = n as i32;
    #[acc::data(copyin(a, x), copyout(y))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop(gang)]
            for i in 0..n {
                let mut s = 0.0f32;
                #[acc::r#loop(vector, reduction(+: s))]
                for j in 0..n {
                    s += a[i * n + j] * x[j];
                }
                y[i] = s;
            }
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                let cfg = blocks(n as u32);
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&ra)
                        .arg(&rx)
                        .arg(&mut ry)
                        .arg(&ni)
                        .launch(cfg)
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    let hy = cu.stream.clone_dtoh(&ry).unwrap();
    let worst = worst_relative(&hy, y);
    assert!(worst < 1e-4, "matvec results differ by {worst} (relative)");
}

/// CSR sparse matrix-vector product: a gang loop over rows, a vector loop with a reduction
/// over each row's entries; against a block per row in CUDA.
#[allow(clippy::too_many_arguments)]
#[acc::offload]
pub(super) fn spmv(
    (rows, cols, vals): (&Vec<usize>, &Vec<u32>, &Vec<f32>),
    x: &Vec<f32>,
    y: &mut Vec<f32>,
    (reps, warp): (usize, bool),
    cu: &Cuda,
    t: &mut Times,
) {
    let n = y.len();
    let rows64: Vec<u64> = rows.iter().map(|&r| r as u64).collect();
    let (rr, rc, rv, rx) = (
        cu.upload(&rows64),
        cu.upload(cols),
        cu.upload(vals),
        cu.upload(x),
    );
    let mut ry = cu.stream.alloc_zeros::<f32>(n).expect("alloc");
    let f = cu.f(if warp { "spmv_warp_f32" } else { "spmv_f32" });
    let ni = n as i32;
    #[acc::data(copyin(rows, cols, vals, x), copyout(y))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            if warp {
                #[acc::parallel_loop(gang, vector_length(32))]
                for i in 0..n {
                    let mut s = 0.0f32;
                    #[acc::r#loop(vector, reduction(+: s))]
                    for k in rows[i]..rows[i + 1] {
                        s += vals[k] * x[cols[k] as usize];
                    }
                    y[i] = s;
                }
            } else {
                #[acc::parallel_loop(gang)]
                for i in 0..n {
                    let mut s = 0.0f32;
                    #[acc::r#loop(vector, reduction(+: s))]
                    for k in rows[i]..rows[i + 1] {
                        s += vals[k] * x[cols[k] as usize];
                    }
                    y[i] = s;
                }
            }
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                let cfg = blocks((if warp { n.div_ceil(8) } else { n }).min(1 << 20) as u32);
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&rr)
                        .arg(&rc)
                        .arg(&rv)
                        .arg(&rx)
                        .arg(&mut ry)
                        .arg(&ni)
                        .launch(cfg)
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    let hy = cu.stream.clone_dtoh(&ry).unwrap();
    let worst = worst_relative(&hy, y);
    assert!(worst < 1e-4, "spmv results differ by {worst} (relative)");
}

/// A 7-point stencil written with three levels, as stencil codes write them: gang over
/// planes, worker over rows, vector over columns; against a thread per point in CUDA.
#[acc::offload]
pub(super) fn stencil(
    a: &Vec<f64>,
    b: &mut Vec<f64>,
    n: usize,
    reps: usize,
    cu: &Cuda,
    t: &mut Times,
) {
    let ra = cu.upload(a);
    let mut rb = cu.stream.alloc_zeros::<f64>(n * n * n).expect("alloc");
    let f = cu.f("stencil7");
    let ni = n as i32;
    let nn = n * n;
    #[acc::data(copyin(a), copy(b))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop(gang)]
            for k in 1..n - 1 {
                #[acc::r#loop(worker)]
                for j in 1..n - 1 {
                    #[acc::r#loop(vector)]
                    for i in 1..n - 1 {
                        let c = k * nn + j * n + i;
                        b[c] = (a[c - 1] + a[c + 1] + a[c - n] + a[c + n] + a[c - nn] + a[c + nn])
                            * (1.0 / 6.0);
                    }
                }
            }
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                let cfg = blocks(cu.sms * 32);
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
    assert!(hb == *b, "stencil results differ between acc and CUDA");
}

/// A histogram with `atomic update` into a few bins, against global atomics in CUDA.
#[acc::offload]
pub(super) fn histogram(
    keys: &Vec<u32>,
    bins: &mut Vec<u32>,
    (reps, shared): (usize, bool),
    cu: &Cuda,
    t: &mut Times,
) {
    let nbins = bins.len();
    let rk = cu.upload(keys);
    let mut rb = cu.stream.alloc_zeros::<u32>(nbins).expect("alloc");
    let f = cu.f(if shared {
        "histogram_shared_u32"
    } else {
        "histogram_u32"
    });
    let (n, nb) = (keys.len(), nbins as u32);
    #[acc::data(copyin(keys), copy(bins))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 0..n {
                let b = keys[i] as usize % nbins;
                #[acc::atomic(update)]
                bins[b] += 1;
            }
            acc::wait_all().expect("the region runs");
            t.acc.push(t0.elapsed());
            t.reference.push(timed(|| {
                let cfg = blocks(cu.sms * 32);
                unsafe {
                    cu.stream
                        .launch_builder(&f)
                        .arg(&rk)
                        .arg(&mut rb)
                        .arg(&n)
                        .arg(&nb)
                        .launch(cfg)
                }
                .expect("launch");
                cu.sync();
            }));
        }
    }
    let hb = cu.stream.clone_dtoh(&rb).unwrap();
    assert!(hb == *bins, "histograms differ between acc and CUDA");
}
