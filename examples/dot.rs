//! Dot product with `reduction(+: s)`. Runs on the current device and checks the result.

use std::time::Instant;

#[acc::offload]
fn dot(x: &[f64], y: &[f64]) -> f64 {
    let mut s = 0.0;
    #[acc::parallel_loop(copyin(x, y), reduction(+: s))]
    for i in 0..x.len() {
        s += x[i] * y[i];
    }
    s
}

fn main() {
    let n = 1 << 24;
    // Small integers: every partial sum is exact, so any summation order gives the same result.
    let x: Vec<f64> = (0..n).map(|i| (i % 10) as f64).collect();
    let y: Vec<f64> = (0..n).map(|i| (i % 3) as f64).collect();
    let device = acc::get_device_type();
    let t = Instant::now();
    let s = dot(&x, &y);
    let elapsed = t.elapsed();
    let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    assert_eq!(s, want, "dot product");
    println!(
        "dot: n = {n}, device = {device} ({}), time = {:.3} ms, result = {s}, verified",
        acc::get_property(0, device, acc::Property::Name),
        elapsed.as_secs_f64() * 1e3
    );
}
