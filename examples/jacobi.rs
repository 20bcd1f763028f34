//! Jacobi relaxation on a 4096 x 4096 grid: OpenACC's classic example, a `data`
//! region around two `parallel loop`s per sweep (one with `reduction(max: err)`). Runs on the
//! current device and verifies the grid and the error against the same sweeps as plain loops.
//!
//! `cargo run --release --example jacobi [n] [iterations]`

use std::time::Instant;

#[acc::offload]
fn jacobi(a: &mut Vec<f64>, anew: &mut Vec<f64>, n: usize, m: usize, iters: usize) -> f64 {
    let mut err = 0.0;
    #[acc::data(copy(a), create(anew))]
    {
        for _ in 0..iters {
            err = 0.0;
            #[acc::parallel_loop(reduction(max: err))]
            for j in 1..n - 1 {
                #[acc::r#loop(vector)]
                for i in 1..m - 1 {
                    anew[j * m + i] = 0.25
                        * (a[j * m + i + 1]
                            + a[j * m + i - 1]
                            + a[(j - 1) * m + i]
                            + a[(j + 1) * m + i]);
                    err = f64::max(err, (anew[j * m + i] - a[j * m + i]).abs());
                }
            }
            #[acc::parallel_loop(collapse(2))]
            for j in 1..n - 1 {
                for i in 1..m - 1 {
                    a[j * m + i] = anew[j * m + i];
                }
            }
        }
    }
    err
}

/// The same sweeps as plain Rust loops: the reference.
fn jacobi_reference(a: &mut [f64], anew: &mut [f64], n: usize, m: usize, iters: usize) -> f64 {
    let mut err = 0.0;
    for _ in 0..iters {
        err = 0.0;
        for j in 1..n - 1 {
            for i in 1..m - 1 {
                anew[j * m + i] = 0.25
                    * (a[j * m + i + 1]
                        + a[j * m + i - 1]
                        + a[(j - 1) * m + i]
                        + a[(j + 1) * m + i]);
                err = f64::max(err, (anew[j * m + i] - a[j * m + i]).abs());
            }
        }
        for j in 1..n - 1 {
            for i in 1..m - 1 {
                a[j * m + i] = anew[j * m + i];
            }
        }
    }
    err
}

/// A grid whose top edge is held at 1.
fn initial(n: usize, m: usize) -> Vec<f64> {
    let mut a = vec![0.0; n * m];
    a[..m].fill(1.0);
    a
}

fn main() {
    let mut args = std::env::args()
        .skip(1)
        .map(|a| a.parse::<usize>().expect("sizes are integers"));
    let n = args.next().unwrap_or(4096);
    let iters = args.next().unwrap_or(100);
    let m = n;

    let device = acc::get_device_type();
    let mut a = initial(n, m);
    let mut anew = a.clone();
    let t = Instant::now();
    let err = jacobi(&mut a, &mut anew, n, m, iters);
    let t_acc = t.elapsed().as_secs_f64();

    let mut r = initial(n, m);
    let mut rnew = r.clone();
    let t = Instant::now();
    let err_ref = jacobi_reference(&mut r, &mut rnew, n, m, iters);
    let t_ref = t.elapsed().as_secs_f64();

    // Max is exact whatever the order, and each point's update is the same expression, so the
    // results agree bit for bit.
    assert_eq!(err, err_ref, "final error");
    if let Some(k) = (0..a.len()).find(|&k| a[k] != r[k]) {
        panic!(
            "grid differs at ({}, {}): {} vs {}",
            k / m,
            k % m,
            a[k],
            r[k]
        );
    }
    println!(
        "jacobi: {n}x{m}, {iters} iterations, device = {device} ({}), time = {:.3} s \
         (plain loops: {:.3} s), error = {err:.6e}, verified",
        acc::get_property(0, device, acc::Property::Name),
        t_acc,
        t_ref
    );
}
