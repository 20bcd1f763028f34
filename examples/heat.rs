//! Heat diffusion on a square plate, the whole time loop inside one `kernels` region: the
//! region's sequential `for` over the steps holds two loop nests that `kernels` proves
//! independent (each row writes only its own row). On a GPU the host drives the time loop and
//! launches both nests over the whole grid each step (a gang per row, its threads along the
//! row); elsewhere the region runs as written. Runs on the current device (`ACC_DEVICE_TYPE`,
//! default: the best one present) and checks the result against plain loops.
//!
//! `cargo run --release --example heat [n] [steps]` (default 1024 x 1024, 100 steps).

use std::time::Instant;

#[acc::kernels(copy(u), create(v))]
fn diffuse(u: &mut [f64], v: &mut [f64], n: usize, steps: usize) {
    for _ in 0..steps {
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                let k = i * n + j;
                v[k] = u[k] + 0.2 * (u[k - 1] + u[k + 1] + u[k - n] + u[k + n] - 4.0 * u[k]);
            }
        }
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                u[i * n + j] = v[i * n + j];
            }
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let n = args.next().and_then(Result::ok).unwrap_or(1024).max(3);
    let steps = args.next().and_then(Result::ok).unwrap_or(100);
    // A hot edge and a hot spot on a cold plate.
    let start: Vec<f64> = (0..n * n)
        .map(|k| {
            let (i, j) = (k / n, k % n);
            if i == 0 || (i == n / 2 && j == n / 2) {
                100.0
            } else {
                0.0
            }
        })
        .collect();
    let device = acc::get_device_type();
    let (mut u, mut v) = (start.clone(), start.clone());
    let t = Instant::now();
    diffuse(&mut u, &mut v, n, steps);
    let elapsed = t.elapsed();

    // The same steps in plain loops.
    let (mut want, mut next) = (start.clone(), start);
    let t = Instant::now();
    for _ in 0..steps {
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                let k = i * n + j;
                next[k] = want[k]
                    + 0.2 * (want[k - 1] + want[k + 1] + want[k - n] + want[k + n] - 4.0 * want[k]);
            }
        }
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                want[i * n + j] = next[i * n + j];
            }
        }
    }
    let plain = t.elapsed();
    // Every device computes each point with the same f64 operations in the same order; a GPU
    // driver may fuse a multiply and an add (wgpu), so allow the last bits.
    let worst = u
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs() / b.abs().max(1e-300))
        .fold(0.0, f64::max);
    assert!(
        worst < 1e-12,
        "heat differs from plain loops by {worst} (relative)"
    );
    println!(
        "heat: {n}x{n}, {steps} steps, device = {device} ({}), time = {:.3} s (plain loops: {:.3} s), centre = {:.6}, verified",
        acc::get_property(0, device, acc::Property::Name),
        elapsed.as_secs_f64(),
        plain.as_secs_f64(),
        u[(n / 2) * n + n / 2]
    );
}
