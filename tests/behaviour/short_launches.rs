//! Programs of many short launches (issue 16): a time loop of small regions on present data
//! whose scalar changes every step, with a sum the host reads every tenth step, and a wavefront
//! launching one region per anti-diagonal. Launches that return before the GPU ran them, and
//! proofs reused across steps, must give the answers of plain loops on every device.

use crate::devices::on_each_device;

#[path = "../../benches/launches/programs.rs"]
mod programs;

use programs::{tiny_regions as time_loop, transport_steps, wavefront_diagonals as wavefront};

#[test]
fn a_time_loop_of_small_regions_gives_the_plain_loops_answers() {
    let start: Vec<f64> = (0..300).map(|i| (i % 13) as f64).collect();
    let (mut want, mut total) = (start.clone(), 0.0);
    for step in 0..100 {
        let a = (step % 7) as f64;
        for v in want.iter_mut() {
            *v = *v * 0.5 + a;
        }
        if step % 10 == 9 {
            // Summed in another order on other devices: compared within a tolerance.
            total += want.iter().sum::<f64>();
        }
    }
    on_each_device(|ty| {
        let mut x = start.clone();
        let got = time_loop(&mut x, 100);
        assert_eq!(x, want, "on {ty}");
        assert!(
            (got - total).abs() <= 1e-9 * total.abs(),
            "{got} against {total} on {ty}"
        );
    });
}

/// The whole table, row by row.
fn score(a: &[u8], b: &[u8]) -> i32 {
    let n = a.len();
    let w = n + 1;
    let mut h = vec![0i32; w * w];
    for k in 0..w {
        h[k] = -(k as i32);
        h[k * w] = -(k as i32);
    }
    for i in 1..=n {
        for j in 1..=n {
            let m = if a[i - 1] == b[j - 1] { 2 } else { -1 };
            h[i * w + j] = (h[(i - 1) * w + j - 1] + m)
                .max(h[(i - 1) * w + j] - 1)
                .max(h[i * w + j - 1] - 1);
        }
    }
    h[n * w + n]
}

#[test]
fn a_wavefront_of_one_region_per_diagonal_scores_as_the_whole_table() {
    for n in [1usize, 7, 300] {
        let a: Vec<u8> = (0..n).map(|i| b"ACGT"[(i * 7 + i / 3) % 4]).collect();
        let b: Vec<u8> = (0..n).map(|i| b"ACGT"[(i * 5 + 1) % 4]).collect();
        let want = score(&a, &b);
        on_each_device(|ty| {
            let mut r = vec![0i32; 3 * (n + 1)];
            assert_eq!(wavefront(&mut r, &a, &b), want, "n = {n} on {ty}");
        });
    }
}

/// The same twelve regions as plain loops.
fn transport_plain(q: &mut [f64], nx: usize, nz: usize, steps: usize) -> f64 {
    let (vars, n, dt, c) = (3, nx * nz, 0.1, 0.25);
    let (mut flux, mut tend) = (vec![0.0f64; vars * n], vec![0.0f64; vars * n]);
    let mut mass = 0.0;
    for _ in 0..steps {
        for v in 0..vars {
            for k in 0..nz {
                q[v * n + k * nx] = q[v * n + k * nx + nx - 2];
                q[v * n + k * nx + nx - 1] = q[v * n + k * nx + 1];
            }
            for i in 0..nx {
                q[v * n + i] = q[v * n + nx + i];
                q[v * n + (nz - 1) * nx + i] = q[v * n + (nz - 2) * nx + i];
            }
        }
        let cells = |lo_k: usize, hi_k: usize, lo_i: usize, hi_i: usize| {
            (0..vars).flat_map(move |v| {
                (lo_k..hi_k).flat_map(move |k| (lo_i..hi_i).map(move |i| (v, v * n + k * nx + i)))
            })
        };
        for (_, at) in cells(1, nz - 1, 0, nx - 1) {
            flux[at] = c * q[at] + 0.05 * (q[at] - q[at + 1]);
        }
        for (_, at) in cells(1, nz - 1, 1, nx - 1) {
            tend[at] = flux[at - 1] - flux[at];
        }
        for (_, at) in cells(1, nz - 1, 1, nx - 1) {
            q[at] += dt * tend[at];
        }
        for (_, at) in cells(0, nz - 1, 1, nx - 1) {
            flux[at] = 0.5 * c * (q[at] + q[at + nx]) - 0.02 * (q[at + nx] - q[at]);
        }
        for (v, at) in cells(1, nz - 1, 1, nx - 1) {
            let k = (at - v * n) / nx;
            let source = if v == 0 { 1e-3 * (k as f64) } else { 0.0 };
            tend[at] = flux[at - nx] - flux[at] + source;
        }
        for (_, at) in cells(1, nz - 1, 1, nx - 1) {
            q[at] = q[at] + dt * tend[at];
        }
        for (_, at) in cells(1, nz - 1, 1, nx - 1) {
            tend[at] = q[at - 1] + q[at + 1] + q[at - nx] + q[at + nx] - 4.0 * q[at];
        }
        for (_, at) in cells(1, nz - 1, 1, nx - 1) {
            q[at] += 0.01 * tend[at];
        }
        for x in q.iter_mut() {
            *x = x.max(0.0);
        }
        mass = (1..nz - 1)
            .flat_map(|k| (1..nx - 1).map(move |i| k * nx + i))
            .map(|at| q[at])
            .sum();
    }
    mass
}

/// Twelve different regions in a row, each reading what the one before wrote: on nvidia
/// their first launches return before their kernels are compiled (each compiles on a thread
/// of its own), and must still run in order.
#[test]
fn a_first_time_step_of_twelve_kernels_runs_them_in_order() {
    let (nx, nz) = (40, 24);
    let start: Vec<f64> = (0..3 * nx * nz).map(|i| ((i * 7) % 11) as f64).collect();
    let mut want = start.clone();
    let mass = transport_plain(&mut want, nx, nz, 3);
    on_each_device(|ty| {
        let mut q = start.clone();
        let got = transport_steps(&mut q, nx, nz, 3);
        assert_eq!(q, want, "on {ty}");
        assert!(
            (got - mass).abs() <= 1e-9 * mass.abs(),
            "{got} against {mass} on {ty}"
        );
    });
}

/// A long region, then pairs of short ones (recorded while the GPU is busy, and submitted
/// together, on nvidia), with the host between them reading `x` back, summing it in a region
/// that waits, and writing `y` for a region after: every result in program order.
#[acc::offload]
fn busy_then_short(x: &mut Vec<u64>, y: &mut Vec<u64>, rounds: u64, heavy: u64) -> Vec<u64> {
    let n = x.len();
    let mut seen = Vec::new();
    #[acc::data(copy(x), copy(y))]
    {
        #[acc::parallel_loop]
        for i in 0..n {
            let mut v = y[i];
            for k in 0..heavy {
                v = v.wrapping_mul(6364136223846793005).wrapping_add(k);
            }
            y[i] = v;
        }
        for r in 0..rounds {
            #[acc::parallel_loop]
            for i in 0..n {
                x[i] = x[i].wrapping_mul(3).wrapping_add(r + i as u64);
            }
            #[acc::parallel_loop]
            for i in 0..n {
                x[i] = x[i].wrapping_mul(5) ^ (y[i] >> 40) ^ r;
            }
            if r % 25 == 24 {
                acc::update!(self(x));
                seen.push(x[n - 1]);
                y[0] = x[0];
                acc::update!(device(y[0..1]));
            }
            if r % 40 == 39 {
                let mut s = 0u64;
                #[acc::parallel_loop(reduction(+: s))]
                for i in 0..n {
                    s += x[i] % 1000;
                }
                seen.push(s);
            }
        }
    }
    seen
}

#[test]
fn short_regions_behind_a_long_one_keep_their_order_with_the_host() {
    let (n, rounds, heavy) = (4096usize, 120u64, 20_000u64);
    let start_x: Vec<u64> = (0..n as u64).map(|i| i * 11 + 1).collect();
    let start_y: Vec<u64> = (0..n as u64).map(|i| i ^ 0x5555).collect();
    let (mut x, mut y) = (start_x.clone(), start_y.clone());
    for v in y.iter_mut() {
        for k in 0..heavy {
            *v = v.wrapping_mul(6364136223846793005).wrapping_add(k);
        }
    }
    let mut seen = Vec::new();
    for r in 0..rounds {
        for (i, v) in x.iter_mut().enumerate() {
            *v = v.wrapping_mul(3).wrapping_add(r + i as u64);
        }
        for (v, w) in x.iter_mut().zip(&y) {
            *v = v.wrapping_mul(5) ^ (w >> 40) ^ r;
        }
        if r % 25 == 24 {
            seen.push(x[n - 1]);
            y[0] = x[0];
        }
        if r % 40 == 39 {
            seen.push(x.iter().map(|v| v % 1000).sum());
        }
    }
    on_each_device(|ty| {
        let (mut gx, mut gy) = (start_x.clone(), start_y.clone());
        let got = busy_then_short(&mut gx, &mut gy, rounds, heavy);
        assert_eq!(got, seen, "what the host saw, on {ty}");
        assert!(gx == x && gy == y, "the arrays on {ty}");
    });
}

/// `v[i] = v[i] * 0.5 + a`, on whichever present array it is given.
#[acc::offload]
fn halve_and_add(v: &mut Vec<f64>, a: f64) {
    let n = v.len();
    #[acc::parallel_loop]
    for i in 0..n {
        v[i] = v[i] * 0.5 + a;
    }
}

/// Steps of `halve_and_add`, each on `x` or `y` with its own `a`, inside one data region; the
/// host sets `x[0]` and sends it to the device after step `poke`.
#[acc::offload]
fn repeated_steps(x: &mut Vec<f64>, y: &mut Vec<f64>, steps: &[(f64, bool)], poke: usize) {
    #[acc::data(copy(x), copy(y))]
    {
        for (s, &(a, on_y)) in steps.iter().enumerate() {
            if on_y {
                halve_and_add(y, a);
            } else {
                halve_and_add(x, a);
            }
            if s == poke {
                acc::update!(self(x[0..1]));
                x[0] += 100.0;
                acc::update!(device(x[0..1]));
            }
        }
    }
}

/// A region launched again with exactly the same arguments is made again as it was (on
/// nvidia, without assembling it): a changed scalar, another array, or data the host sent
/// between launches must each still be seen.
#[test]
fn a_region_launched_again_sees_each_change_of_its_arguments_and_data() {
    let steps: Vec<(f64, bool)> = [(1.5, false); 4]
        .into_iter()
        .chain([(-0.25, false); 3])
        .chain([(-0.25, true); 3])
        .chain([(2.0, false), (2.0, false), (2.0, true), (2.0, false)])
        .collect();
    let poke = 8;
    let start_x: Vec<f64> = (0..500).map(|i| (i % 17) as f64).collect();
    let start_y: Vec<f64> = (0..500).map(|i| (i % 5) as f64 * 3.0).collect();
    let (mut want_x, mut want_y) = (start_x.clone(), start_y.clone());
    for (s, &(a, on_y)) in steps.iter().enumerate() {
        let v = if on_y { &mut want_y } else { &mut want_x };
        for e in v.iter_mut() {
            *e = *e * 0.5 + a;
        }
        if s == poke {
            want_x[0] += 100.0;
        }
    }
    on_each_device(|ty| {
        let (mut x, mut y) = (start_x.clone(), start_y.clone());
        repeated_steps(&mut x, &mut y, &steps, poke);
        assert_eq!(x, want_x, "x on {ty}");
        assert_eq!(y, want_y, "y on {ty}");
    });
}
