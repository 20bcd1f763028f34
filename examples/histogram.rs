//! A histogram with `atomic update` (OpenACC 3.3 section 2.12): every element of a large
//! array of pseudo-random values adds one to its bin, many threads at once. On the GPUs a
//! flat loop that only adds into a small array is combined per block (per workgroup) in
//! shared memory first (`ACC_INFO` says so). Runs on the current device and checks every
//! bin against a plain loop.
//!
//! `cargo run --release --example histogram [n] [bins]` (default 2^24 values, 256 bins).

use std::time::Instant;

#[acc::parallel_loop(copyin(values), copy(bins))]
fn histogram(values: &[f32], bins: &mut [u32]) {
    for i in 0..values.len() {
        // Values in [0, 1): the bin is the value scaled to the number of bins.
        let b = ((values[i] * bins.len() as f32) as usize).min(bins.len() - 1);
        #[acc::atomic(update)]
        bins[b] += 1;
    }
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let n = args.next().and_then(Result::ok).unwrap_or(1 << 24);
    let nbins = args.next().and_then(Result::ok).unwrap_or(256).max(1);
    // A skewed distribution (squares of uniform values): the low bins are hot, which is where
    // atomics contend.
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let values: Vec<f32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let u = (s >> 40) as f32 / (1u64 << 24) as f32;
            u * u
        })
        .collect();
    let device = acc::get_device_type();
    let mut bins = vec![0u32; nbins];
    histogram(&values, &mut bins); // the first run compiles the kernel
    bins.fill(0);
    let t = Instant::now();
    histogram(&values, &mut bins);
    let elapsed = t.elapsed();

    let mut want = vec![0u32; nbins];
    for &v in &values {
        want[((v * nbins as f32) as usize).min(nbins - 1)] += 1;
    }
    assert_eq!(bins, want, "histogram differs from plain loops");
    assert_eq!(bins.iter().map(|&b| b as usize).sum::<usize>(), n);
    println!(
        "histogram: {n} values, {nbins} bins, device = {device} ({}), time = {:.3} ms (with transfers), first bin = {}, last bin = {}, verified",
        acc::get_property(0, device, acc::Property::Name),
        elapsed.as_secs_f64() * 1e3,
        bins[0],
        bins[nbins - 1]
    );
}
