//! The cost of launching a region whose data is present, against a bare CUDA launch.

use super::*;

/// The long kernel's steps (about 0.2 ms on an H100).
pub(super) const SPIN: u64 = 50_000;

/// A region over one element of present data against a one-thread kernel: the time until
/// each call returns (`enqueue`: the region needs no waiting, see the top of this file; the
/// reference launches without synchronizing), and the time until it has run (`complete`:
/// with `acc::wait_all()` and the reference's synchronize); and `busy`: the time until the
/// call returns when it comes while a long one-thread kernel (`SPIN` steps on `y`) runs, as
/// in a time loop whose GPU is behind its host (acc records such a launch, see
/// acc-device/src/cuda/recorded.rs).
#[acc::offload]
pub(super) fn launch_cost(
    x: &mut Vec<f64>,
    y: &mut Vec<f64>,
    reps: usize,
    cu: &Cuda,
    [enqueue, complete, busy]: [&mut Times; 3],
) {
    let mut rx = cu.upload(x);
    let mut ry = cu.upload(y);
    let f = cu.f("touch");
    let spin = cu.f("spin");
    let steps = SPIN;
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    #[acc::data(copy(x, y))]
    {
        for _ in 0..reps {
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 0..1 {
                x[i] += 1.0;
            }
            enqueue.acc.push(t0.elapsed());
            acc::wait_all().expect("the region runs");
            enqueue.reference.push(timed(|| {
                unsafe { cu.stream.launch_builder(&f).arg(&mut rx).launch(one) }
                    .map(drop)
                    .expect("launch")
            }));
            cu.sync();
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 0..1 {
                x[i] += 1.0;
            }
            acc::wait_all().expect("the region runs");
            complete.acc.push(t0.elapsed());
            complete.reference.push(timed(|| {
                unsafe { cu.stream.launch_builder(&f).arg(&mut rx).launch(one) }.expect("launch");
                cu.sync();
            }));
        }
        // Apart from the loop above: interleaved with it, acc's idle launch, which then came
        // right after waiting for a long kernel, took 7 to 13 us instead of 4 to 5 (with
        // `ACC_CUDA_GRAPHS=0` too), which would blur those figures.
        for _ in 0..reps {
            #[acc::parallel_loop]
            for i in 0..1 {
                let mut v = y[i];
                for _step in 0..steps {
                    v = v * 0.999 + 1.0;
                }
                y[i] = v;
            }
            let t0 = Instant::now();
            #[acc::parallel_loop]
            for i in 0..1 {
                x[i] += 1.0;
            }
            busy.acc.push(t0.elapsed());
            acc::wait_all().expect("the regions run");
            unsafe {
                cu.stream
                    .launch_builder(&spin)
                    .arg(&mut ry)
                    .arg(&SPIN)
                    .launch(one)
            }
            .expect("launch");
            busy.reference.push(timed(|| {
                unsafe { cu.stream.launch_builder(&f).arg(&mut rx).launch(one) }
                    .map(drop)
                    .expect("launch")
            }));
            cu.sync();
        }
    }
}
