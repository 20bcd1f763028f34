//! A pipeline over blocks with async queues (OpenACC 3.3 sections 2.14.4 and 2.16): the host
//! prepares block `b` of a large signal while the device still transfers and filters the
//! blocks before it. Each block goes to the device with `update device(x[lo..hi]) async(q)`,
//! is filtered by a region on the same queue, and comes back with `update self(y[lo..hi])
//! async(q)`, three queues taking the blocks in turn; `wait` then waits for all. The same
//! filter without queues (one block after another) is timed beside it, and both results are
//! checked against plain loops.
//!
//! `cargo run --release --example async_pipeline [n] [blocks]` (default 2^25 samples, 16).

use std::time::Instant;

/// The value of sample `i` of the signal (what the host "produces" for each block).
fn sample(i: usize) -> f32 {
    ((i % 1000) as f32 * 0.001).sin() + ((i % 37) as f32 - 18.0) * 0.01
}

/// Sample `i` of `x` smoothed by a five-tap filter (the edges clamped).
#[acc::routine(seq)]
fn filtered(x: &[f32], i: usize) -> f32 {
    let last = x.len() - 1;
    let (m2, m1) = (i.saturating_sub(2), i.saturating_sub(1));
    let (p1, p2) = ((i + 1).min(last), (i + 2).min(last));
    0.1 * x[m2] + 0.2 * x[m1] + 0.4 * x[i] + 0.2 * x[p1] + 0.1 * x[p2]
}

#[acc::offload]
fn pipeline(n: usize, blocks: usize, queues: bool) -> Vec<f32> {
    let mut x = vec![0.0f32; n];
    let mut y = vec![0.0f32; n];
    let bs = n.div_ceil(blocks);
    #[acc::data(create(x, y))]
    {
        for b in 0..blocks {
            let (lo, hi) = (b * bs, ((b + 1) * bs).min(n));
            // The filter reads two samples on each side: the block sends them too.
            let (slo, shi) = (lo.saturating_sub(2), (hi + 2).min(n));
            for i in slo..shi {
                x[i] = sample(i);
            }
            let q = if queues {
                (b % 3) as i32 + 1
            } else {
                acc::ASYNC_SYNC
            };
            acc::update!(device(x[slo..shi]), async(q));
            #[acc::parallel_loop(present(x, y), async(q))]
            for i in lo..hi {
                y[i] = filtered(&x, i);
            }
            acc::update!(self(y[lo..hi]), async(q));
        }
        acc::wait!();
    }
    y
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let n = args.next().and_then(Result::ok).unwrap_or(1 << 25).max(8);
    let blocks = args
        .next()
        .and_then(Result::ok)
        .unwrap_or(16)
        .clamp(1, n / 4);
    let device = acc::get_device_type();
    pipeline(1024, 2, true); // compiles the kernels outside the timing
    let t = Instant::now();
    let y = pipeline(n, blocks, true);
    let queued = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let y_sync = pipeline(n, blocks, false);
    let synchronous = t.elapsed().as_secs_f64();

    let x: Vec<f32> = (0..n).map(sample).collect();
    let want: Vec<f32> = (0..n).map(|i| filtered(&x, i)).collect();
    for (got, what) in [(&y, "with queues"), (&y_sync, "without queues")] {
        if let Some(i) = (0..n).find(|&i| got[i].to_bits() != want[i].to_bits()) {
            panic!(
                "async_pipeline {what}: sample {i} is {} against {}",
                got[i], want[i]
            );
        }
    }
    println!(
        "async_pipeline: {n} samples in {blocks} blocks, device = {device} ({}), time = {queued:.3} s on 3 queues, {synchronous:.3} s one block after another, same bits as plain loops",
        acc::get_property(0, device, acc::Property::Name),
    );
}
