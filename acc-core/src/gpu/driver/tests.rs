//! The launch routine over a fake backend that counts what it is asked: a launch made again
//! with the same arguments is replayed as the backend kept it, and any change (a scalar, an
//! array, the present table) assembles it again.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::*;
use crate::ir::Scalar;
use crate::present::{Absent, BufferId, Counter, DeviceMemory, ElemLayout, Leave, Release};

/// A backend whose launches do nothing but count.
#[derive(Default)]
struct Fake {
    kernels: KernelCache<LaunchLayout>,
    present: PresentTable,
    next: AtomicU64,
    /// Launches assembled (`begin`), and made again (`replay`).
    assembled: AtomicUsize,
    replayed: AtomicUsize,
}

impl DeviceMemory for Fake {
    fn alloc(&self, _: ElemLayout, _: usize) -> Result<BufferId> {
        Ok(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn upload(&self, _: BufferId, _: ElemLayout, _: usize, _: &[u8]) -> Result<()> {
        Ok(())
    }
    fn download(&self, _: BufferId, _: ElemLayout, _: usize, _: &mut [u8]) -> Result<()> {
        Ok(())
    }
    fn free(&self, _: BufferId) {}
}

struct FakeLaunch {
    keep: bool,
    deferred: bool,
}

impl GpuDriver for Fake {
    type Compiled = LaunchLayout;
    type Launch<'a> = FakeLaunch;
    fn name(&self) -> &'static str {
        "fake"
    }
    fn device_name(&self) -> String {
        "fake".into()
    }
    fn kernels(&self) -> &KernelCache<LaunchLayout> {
        &self.kernels
    }
    fn present(&self) -> &PresentTable {
        &self.present
    }
    fn wide_usize(&self) -> bool {
        true
    }
    fn grid_limits(&self) -> GridLimits {
        GridLimits {
            threads: 256,
            max_blocks: 1024,
            max_reduction_blocks: 1024,
            uniform: false,
            words: ("block", "thread"),
            spill_bytes: 1 << 30,
        }
    }
    fn compile(&self, kernel: &Kernel, variant: Variant) -> Result<LaunchLayout> {
        // As the real backends: a proven variant's kernel does not check its accesses.
        let caps = crate::ir::plan::Caps::cuda_like();
        let prepared = crate::ir::plan::prepare(kernel, &caps, variant).map_err(internal)?;
        // A checked kernel reports out-of-bounds accesses in its status words.
        LaunchLayout::new(&prepared.plan(&caps), (&[], 0), !variant.proven).map_err(internal)
    }
    fn layout(compiled: &LaunchLayout) -> &LaunchLayout {
        compiled
    }
    fn begin<'a>(
        &'a self,
        _: &'a Kernel,
        _: Arc<LaunchLayout>,
        _: Order<'a>,
    ) -> Result<FakeLaunch> {
        self.assembled.fetch_add(1, Ordering::Relaxed);
        Ok(FakeLaunch {
            keep: false,
            deferred: false,
        })
    }
    fn replay(&self, _: &Kernel, kept: &(dyn std::any::Any + Send), _: Order<'_>) -> Result<bool> {
        assert!(kept.is::<&str>(), "the launch's own kept value");
        self.replayed.fetch_add(1, Ordering::Relaxed);
        Ok(true)
    }
}

impl GpuLaunch for FakeLaunch {
    fn scalar(&mut self, _: ParamId, _: ScalarValue) -> Result<()> {
        Ok(())
    }
    fn array(&mut self, _: ParamId, _: ArrayPlace<'_>) -> Result<()> {
        Ok(())
    }
    fn ready(&mut self, _: &Grid, deferred: bool) -> Result<()> {
        self.deferred = deferred;
        Ok(())
    }
    fn dispatch(&mut self, _: usize, _: u32, _: &[i128]) -> Result<()> {
        Ok(())
    }
    fn keep(&mut self) {
        self.keep = true;
    }
    fn replay(&mut self) -> Option<Box<dyn std::any::Any + Send>> {
        self.keep
            .then(|| Box::new("kept") as Box<dyn std::any::Any + Send>)
    }
    fn finish(self, _: &mut [KernelArg<'_>], _: &Grid) -> Result<Option<Readback>> {
        Ok((!self.deferred).then(Readback::default))
    }
}

const SYNC: Order<'static> = Order {
    queue: Queue::Sync,
    waits: Some(&[]),
};

/// Launches saxpy with `a`, `x` and `y` on `dev`.
fn saxpy(dev: &Fake, k: &Kernel, a: f32, x: &[u8], y: &mut [u8]) {
    let mut args = [
        KernelArg::Scalar(ScalarValue::F32(a)),
        KernelArg::Read(x),
        KernelArg::Write(y),
    ];
    launch(dev, k, None, &mut args, SYNC).expect("launches");
}

/// (assembled, replayed) so far.
fn counts(dev: &Fake) -> (usize, usize) {
    (
        dev.assembled.load(Ordering::Relaxed),
        dev.replayed.load(Ordering::Relaxed),
    )
}

fn enter(dev: &Fake, host: &[u8]) {
    let elem = ElemLayout::from(crate::ir::Elem::Scalar(Scalar::F32));
    dev.present
        .enter(
            dev,
            host,
            elem,
            Named::unlocated("data"),
            Counter::Dynamic,
            Absent::Copyin,
        )
        .expect("entered");
}

#[test]
fn the_same_launch_again_is_replayed_and_any_change_assembles_it() {
    let dev = Fake::default();
    let k = crate::ir::samples::saxpy(Scalar::F32);
    let x = vec![0u8; 4 * 64];
    let mut y = vec![0u8; 4 * 64];
    enter(&dev, &x);
    enter(&dev, &y);
    // The first launch places the arrays and runs the host program; the second reuses both
    // and is kept; the ones after are replayed.
    for _ in 0..5 {
        saxpy(&dev, &k, 2.0, &x, &mut y);
    }
    assert_eq!(counts(&dev), (2, 3));
    // Another float: assembled (and kept) again, then replayed with it.
    saxpy(&dev, &k, 3.0, &x, &mut y);
    saxpy(&dev, &k, 3.0, &x, &mut y);
    assert_eq!(counts(&dev), (3, 4));
    // Another array of the same length, present too: assembled once (placed anew, and kept:
    // the grid and dispatches are those of the launch before), then replayed.
    let mut z = vec![0u8; 4 * 64];
    enter(&dev, &z);
    saxpy(&dev, &k, 3.0, &x, &mut z);
    saxpy(&dev, &k, 3.0, &x, &mut z);
    saxpy(&dev, &k, 3.0, &x, &mut z);
    assert_eq!(counts(&dev), (4, 6));
    // The present table changed (an array entered, another left): the launch is assembled,
    // its arrays looked up again.
    let gen = dev.present.generation();
    let w = vec![0u8; 4 * 64];
    enter(&dev, &w);
    dev.present
        .exit(
            &dev,
            (w.as_ptr() as usize, w.len()),
            None,
            Named::unlocated("w"),
            Leave {
                counter: Counter::Dynamic,
                finalize: false,
                release: Release::Delete,
            },
        )
        .expect("left");
    assert_ne!(dev.present.generation(), gen);
    saxpy(&dev, &k, 3.0, &x, &mut z);
    saxpy(&dev, &k, 3.0, &x, &mut z);
    assert_eq!(counts(&dev), (5, 7));
}

#[test]
fn a_launch_that_waits_is_never_replayed() {
    let dev = Fake::default();
    let k = crate::ir::samples::saxpy(Scalar::F32);
    // Not present: copied in and out at each launch, so each waits.
    let x = vec![0u8; 4 * 64];
    let mut y = vec![0u8; 4 * 64];
    for _ in 0..4 {
        saxpy(&dev, &k, 2.0, &x, &mut y);
    }
    assert_eq!(counts(&dev), (4, 0));
}
