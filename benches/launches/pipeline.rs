//! The pipeline of `benches/launches.rs`: an array filled on the host block by block, each
//! block sent to the device and transformed there as soon as it is filled, so that the host
//! fills the next block while the GPU copies and computes (3.3 sections 2.14.4 and 2.16).
//! acc with `update device` and regions on three `async` queues, the same without `async`,
//! and hand-written CUDA (page-locked memory, `cuMemcpyHtoDAsync` and a kernel per block on
//! three streams). Each element takes 8192 dependent steps, so that a block's kernel takes
//! about as long as the host takes to fill the next block: the overlap is what is measured
//! (the time of the blocks, from the first fill to the last kernel's end).

use cudarc::driver::sys;
use cudarc::driver::{DevicePtr, LaunchConfig, PushKernelArg};

use std::time::{Duration, Instant};

use super::reference::Cuda;

/// The dependent steps per element (`benches/cuda/reference.cu`'s `pipeline_block` too).
const STEPS: usize = 8192;

/// What the host computes for element `i` of block `blk`.
fn value(i: usize, blk: usize) -> f64 {
    ((i * 7 + blk) % 101) as f64
}

/// Fills `x[lo..hi]` as block `blk`.
fn fill(x: &mut [f64], lo: usize, hi: usize, blk: usize) {
    for (i, v) in x[lo..hi].iter_mut().enumerate() {
        *v = value(lo + i, blk);
    }
}

/// The block's bounds.
fn bounds(n: usize, blocks: usize, blk: usize) -> (usize, usize) {
    let bs = n.div_ceil(blocks);
    ((blk * bs).min(n), ((blk + 1) * bs).min(n))
}

/// acc: each block's `update device` and region on queue `blk % 3 + 1` when `queued`, else
/// without `async`. Returns `y` and the time of the blocks (the data region's allocation and
/// the copy out of `y` left out: they are the same either way).
#[acc::offload]
pub fn pipeline(n: usize, blocks: usize, queued: bool) -> (Vec<f64>, Duration) {
    let mut x = vec![0.0f64; n];
    let mut y = vec![0.0f64; n];
    // Touched once first: the blocks' time is the pipeline's, not the first write's page
    // faults (CUDA's page-locked memory is resident from its allocation).
    x.fill(1.0);
    let time;
    #[acc::data(create(x), copyout(y))]
    {
        let start = Instant::now();
        for blk in 0..blocks {
            let (lo, hi) = bounds(n, blocks, blk);
            fill(&mut x, lo, hi, blk);
            // `async(ASYNC_SYNC)`: the same blocks without a queue (3.3 section 2.16.1).
            let q = if queued {
                (blk % 3) as i32 + 1
            } else {
                acc::ASYNC_SYNC
            };
            acc::update!(device(x[lo..hi]), async(q));
            #[acc::parallel_loop(present(x, y), async(q))]
            for i in lo..hi {
                let v = x[i];
                let mut s = 0.0;
                for _ in 0..STEPS {
                    s = s * 0.5 + v;
                }
                y[i] = s;
            }
        }
        acc::wait!();
        time = start.elapsed();
    }
    (y, time)
}

/// Hand-written CUDA: the host fills page-locked memory, each block is copied and computed
/// on one of three streams. Returns `y` and the time of the blocks.
pub fn pipeline_reference(cu: &Cuda, n: usize, blocks: usize) -> (Vec<f64>, Duration) {
    let ctx = cu.stream.context();
    let streams: Vec<_> = (0..3)
        .map(|_| ctx.new_stream().expect("a stream"))
        .collect();
    // SAFETY: filled before any copy reads it.
    let mut host = unsafe { ctx.alloc_pinned::<f64>(n) }.expect("page-locked memory");
    let hx = host
        .as_mut_slice()
        .expect("page-locked memory")
        .as_mut_ptr();
    let dx = cu.stream.alloc_zeros::<f64>(n).expect("x");
    let dy = cu.stream.alloc_zeros::<f64>(n).expect("y");
    cu.sync();
    let (px, _gx) = dx.device_ptr(&cu.stream);
    let (py, _gy) = dy.device_ptr(&cu.stream);
    let f = cu.f("pipeline_block");
    let start = Instant::now();
    for blk in 0..blocks {
        let (lo, hi) = bounds(n, blocks, blk);
        let s = &streams[blk % 3];
        // SAFETY: `hx` holds n elements; no copy of this block is in flight.
        let block = unsafe { std::slice::from_raw_parts_mut(hx.add(lo), hi - lo) };
        for (i, v) in block.iter_mut().enumerate() {
            *v = value(lo + i, blk);
        }
        // SAFETY: both ranges hold hi - lo elements; the host does not touch the block again.
        let r = unsafe {
            sys::cuMemcpyHtoDAsync_v2(
                px + (lo * 8) as u64,
                hx.add(lo).cast(),
                (hi - lo) * 8,
                s.cu_stream(),
            )
        };
        assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "copy in");
        let cfg = LaunchConfig {
            grid_dim: (((hi - lo).div_ceil(256) as u32).min(cu.sms * 8), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        unsafe {
            s.launch_builder(&f)
                .arg(&px)
                .arg(&py)
                .arg(&lo)
                .arg(&hi)
                .launch(cfg)
        }
        .expect("launch");
    }
    for s in &streams {
        s.synchronize().expect("the pipeline runs");
    }
    let time = start.elapsed();
    let mut y = vec![0.0f64; n];
    cu.stream.memcpy_dtoh(&dy, &mut y).expect("copy back");
    (y, time)
}
