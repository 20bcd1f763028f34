//! SAXPY, `y = a * x + y`, as one `parallel loop`. Runs on the current device
//! (`ACC_DEVICE_TYPE`, default: the best one present) and checks the result.

use std::time::Instant;

#[acc::parallel_loop(copyin(x), copy(y))]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    for i in 0..y.len() {
        y[i] += a * x[i];
    }
}

fn main() {
    let n = 1 << 24;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let mut y: Vec<f32> = vec![1.0; n];
    let device = acc::get_device_type();
    let t = Instant::now();
    saxpy(2.0, &x, &mut y);
    let elapsed = t.elapsed();
    for (i, (&xi, &yi)) in x.iter().zip(&y).enumerate() {
        assert_eq!(yi, 2.0 * xi + 1.0, "y[{i}]");
    }
    println!(
        "saxpy: n = {n}, device = {device} ({}), time = {:.3} ms, verified",
        acc::get_property(0, device, acc::Property::Name),
        elapsed.as_secs_f64() * 1e3
    );
}
