//! STREAM copy, scale, add, triad and dot (f64) through acc on nvidia against the hand-written
//! CUDA kernels of `reference.cu`, interleaved repetition by repetition.

use super::*;

#[derive(Default)]
pub(super) struct Stream {
    pub(super) copy: Times,
    pub(super) scale: Times,
    pub(super) add: Times,
    pub(super) triad: Times,
    pub(super) dot: Times,
}

/// STREAM on present arrays, alternating acc and CUDA step by step; returns both dot products
/// of the last repetition.
#[acc::offload]
pub(super) fn stream(
    a: &mut Vec<f64>,
    b: &mut Vec<f64>,
    c: &mut Vec<f64>,
    reps: usize,
    cu: &Cuda,
    t: &mut Stream,
) -> (f64, f64) {
    let n = a.len();
    let (mut ra, mut rb, mut rc) = (cu.upload(a), cu.upload(b), cu.upload(c));
    let (fc, fs, fa, ft, fd, ff) = (
        cu.f("stream_copy"),
        cu.f("stream_scale"),
        cu.f("stream_add"),
        cu.f("stream_triad"),
        cu.f("dot_partials"),
        cu.f("fold_f64_add"),
    );
    let blocks = cu.sms * 8;
    let mut partials = cu
        .stream
        .alloc_zeros::<f64>(blocks as usize)
        .expect("alloc");
    let mut out = cu.stream.alloc_zeros::<f64>(1).expect("alloc");
    let (mut dot_acc, mut dot_ref) = (0.0, 0.0);
    #[acc::data(copy(a, b, c))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 0..n {
                c[i] = a[i];
            }
            acc::wait_all().expect("the region runs");
            t.copy.acc.push(t0.elapsed());
            t.copy.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&fc)
                        .arg(&ra)
                        .arg(&mut rc)
                        .arg(&n)
                        .launch(grid(n))
                }
                .expect("launch");
                cu.sync();
            }));
            let t0 = Instant::now();
            let s = S;
            #[acc::parallel_loop]
            for i in 0..n {
                b[i] = s * c[i];
            }
            acc::wait_all().expect("the region runs");
            t.scale.acc.push(t0.elapsed());
            t.scale.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&fs)
                        .arg(&mut rb)
                        .arg(&rc)
                        .arg(&S)
                        .arg(&n)
                        .launch(grid(n))
                }
                .expect("launch");
                cu.sync();
            }));
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 0..n {
                c[i] = a[i] + b[i];
            }
            acc::wait_all().expect("the region runs");
            t.add.acc.push(t0.elapsed());
            t.add.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&fa)
                        .arg(&ra)
                        .arg(&rb)
                        .arg(&mut rc)
                        .arg(&n)
                        .launch(grid(n))
                }
                .expect("launch");
                cu.sync();
            }));
            let t0 = Instant::now();
            let s = S;
            #[acc::parallel_loop]
            for i in 0..n {
                a[i] = b[i] + s * c[i];
            }
            acc::wait_all().expect("the region runs");
            t.triad.acc.push(t0.elapsed());
            t.triad.reference.push(timed(|| {
                unsafe {
                    cu.stream
                        .launch_builder(&ft)
                        .arg(&mut ra)
                        .arg(&rb)
                        .arg(&rc)
                        .arg(&S)
                        .arg(&n)
                        .launch(grid(n))
                }
                .expect("launch");
                cu.sync();
            }));
            let t0 = Instant::now();
            let mut sum = 0.0;
            #[acc::parallel_loop(reduction(+: sum))]
            for i in 0..n {
                sum += a[i] * b[i];
            }
            dot_acc = sum;
            t.dot.acc.push(t0.elapsed());
            t.dot.reference.push(timed(|| {
                let cfg = LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (256, 1, 1),
                    shared_mem_bytes: 0,
                };
                unsafe {
                    cu.stream
                        .launch_builder(&fd)
                        .arg(&ra)
                        .arg(&rb)
                        .arg(&mut partials)
                        .arg(&n)
                        .launch(cfg)
                }
                .expect("launch");
                let one = LaunchConfig {
                    grid_dim: (1, 1, 1),
                    block_dim: (1024, 1, 1),
                    shared_mem_bytes: 0,
                };
                unsafe {
                    cu.stream
                        .launch_builder(&ff)
                        .arg(&partials)
                        .arg(&mut out)
                        .arg(&blocks)
                        .launch(one)
                }
                .expect("launch");
                dot_ref = cu.stream.clone_dtoh(&out).expect("read")[0];
            }));
        }
    }
    // Both sides ran the same steps: the arrays must agree (nvcc fuses `b + s * c` into an
    // fma, acc rounds the product as Rust does, hence not bit for bit).
    let (ha, hb, hc) = (
        cu.stream.clone_dtoh(&ra).unwrap(),
        cu.stream.clone_dtoh(&rb).unwrap(),
        cu.stream.clone_dtoh(&rc).unwrap(),
    );
    for (name, r, x) in [("a", &ha, &*a), ("b", &hb, &*b), ("c", &hc, &*c)] {
        let worst = r
            .iter()
            .zip(x)
            .map(|(r, x)| ((r - x) / r.abs().max(1e-300)).abs())
            .fold(0.0f64, f64::max);
        assert!(
            worst <= 1e-12,
            "STREAM array {name} differs between acc and CUDA by {worst} (relative)"
        );
    }
    (dot_acc, dot_ref)
}
