//! Host ↔ device transfers of a large array through acc (`copyin` at a data region's start,
//! `copyout` at its end, `update device`, `update self`) against the link's speed: a bare
//! copy between page-locked host memory and the device, as a CUDA program that allocated
//! its arrays with `cudaMallocHost` moves them. acc's arrays are ordinary (pageable) `Vec`s.

use super::*;

/// Bytes moved: 256 MiB, hotspot's grid at 4096² doubles... times two.
pub(super) const BYTES: usize = 256 << 20;

/// The four transfers' times through acc and the bare page-locked copies they are compared
/// with: `[copyin, copyout, update device, update self]`.
#[acc::offload]
pub(super) fn transfers(reps: usize, cu: &Cuda, t: [&mut Times; 4]) {
    let n = BYTES / 8;
    let mut x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let [copyin, copyout, device, host] = t;
    // SAFETY: the pinned buffer is written (by the copy from the device) before it is read.
    let mut pinned = unsafe { cu.stream.context().alloc_pinned::<f64>(n) }.expect("pinned");
    let mut d = cu.upload(&x);
    for rep in 0..reps {
        let t0 = Instant::now();
        acc::enter_data!(copyin(x));
        copyin.acc.push(t0.elapsed());
        let t0 = Instant::now();
        acc::update!(device(x));
        device.acc.push(t0.elapsed());
        // A change on the host that `update self` overwrites with the device's copy.
        x[rep % n] += 1.0;
        let t0 = Instant::now();
        acc::update!(self(x));
        host.acc.push(t0.elapsed());
        let t0 = Instant::now();
        acc::exit_data!(copyout(x));
        copyout.acc.push(t0.elapsed());
        for times in [&mut copyin.reference, &mut device.reference] {
            times.push(timed(|| {
                cu.stream.memcpy_htod(&pinned, &mut d).expect("copy in");
                cu.sync();
            }));
        }
        for times in [&mut copyout.reference, &mut host.reference] {
            times.push(timed(|| {
                cu.stream.memcpy_dtoh(&d, &mut pinned).expect("copy out");
                cu.sync();
            }));
        }
    }
    // What came back is what went: each change was overwritten by `update self`.
    assert!(
        x.iter().enumerate().all(|(i, v)| *v == i as f64),
        "the transfers' data"
    );
}
