//! The cost of launching a region whose data is present, against a bare CUDA launch.

use super::*;

/// A region over one element of present data against a one-thread kernel: the time until
/// each call returns (`enqueue`: the region needs no waiting, see the top of this file; the
/// reference launches without synchronizing), and the time until it has run (`complete`:
/// with `acc::wait_all()` and the reference's synchronize).
#[acc::offload]
pub(super) fn launch_cost(
    x: &mut Vec<f64>,
    reps: usize,
    cu: &Cuda,
    enqueue: &mut Times,
    complete: &mut Times,
) {
    let mut rx = cu.upload(x);
    let f = cu.f("touch");
    let one = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    #[acc::data(copy(x))]
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
    }
}
