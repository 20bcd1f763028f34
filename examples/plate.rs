//! A plate relaxed until it converges, written as a Rust programmer writes it: the grid is a
//! struct whose fields go in the data clauses (`copy(self.t, self.next)`), the data region
//! sits on the `while` loop that runs until the largest change is small (as C puts
//! `#pragma acc data` before a loop), each sweep walks the rows of the new grid with
//! `chunks_exact_mut(n).enumerate()` (a gang per row, its points over the gang's threads) and
//! reads the old rows as subslices, the two grids are
//! swapped with `std::mem::swap` between sweeps (the device's copies follow them), and the
//! heat of a few probe rows is summed by a reduction over part of a `Vec`
//! (`reduction(+: heat[0..4])`). Runs on the current device (`ACC_DEVICE_TYPE`, default: the
//! best one present) and checks every point against the same sweeps in plain loops.
//!
//! `cargo run --release --example plate [n] [max sweeps]` (default 256 x 256, at most 5,000 sweeps).

use std::time::Instant;

/// A square plate of `n` x `n` temperatures, and the grid the next sweep writes.
struct Plate {
    t: Vec<f64>,
    next: Vec<f64>,
    n: usize,
}

impl Plate {
    /// A cold plate with one hot edge (row 0 at 100 degrees).
    fn new(n: usize) -> Plate {
        let t: Vec<f64> = (0..n * n)
            .map(|k| if k < n { 100.0 } else { 0.0 })
            .collect();
        Plate {
            next: t.clone(),
            t,
            n,
        }
    }

    /// Jacobi sweeps until no point changes by more than `tol` or `max_sweeps` have run;
    /// returns the sweeps made and the last largest change.
    #[acc::offload]
    fn relax(&mut self, tol: f64, max_sweeps: usize) -> (usize, f64) {
        let n = self.n;
        let (mut sweeps, mut change) = (0, f64::INFINITY);
        #[acc::data(copy(self.t, self.next))]
        while change > tol && sweeps < max_sweeps {
            change = 0.0;
            #[acc::parallel_loop(present(self.t, self.next), reduction(max: change))]
            for (i, row) in self.next.chunks_exact_mut(n).enumerate() {
                if i > 0 && i < n - 1 {
                    let up = &self.t[(i - 1) * n..i * n];
                    let here = &self.t[i * n..(i + 1) * n];
                    let down = &self.t[(i + 1) * n..(i + 2) * n];
                    // The row's points spread over the gang's threads.
                    #[acc::r#loop(vector, reduction(max: change))]
                    for j in 1..n - 1 {
                        row[j] = 0.25 * (up[j] + down[j] + here[j - 1] + here[j + 1]);
                        change = change.max((row[j] - here[j]).abs());
                    }
                }
            }
            std::mem::swap(&mut self.t, &mut self.next);
            sweeps += 1;
        }
        (sweeps, change)
    }

    /// The heat of four probe rows (a quarter, half, three quarters and the last but one),
    /// added to what `heat` holds after its first element.
    #[acc::offload]
    fn probe(&self, heat: &mut Vec<f64>) {
        let n = self.n;
        #[acc::parallel_loop(copyin(self.t), reduction(+: heat[1..5]))]
        for j in 0..n {
            heat[1] += self.t[(n / 4) * n + j];
            heat[2] += self.t[(n / 2) * n + j];
            heat[3] += self.t[(3 * n / 4) * n + j];
            heat[4] += self.t[(n - 2) * n + j];
        }
    }
}

/// The same sweeps in plain loops.
fn relax_plain(t: &mut Vec<f64>, next: &mut Vec<f64>, n: usize, tol: f64, max: usize) -> usize {
    let (mut sweeps, mut change) = (0, f64::INFINITY);
    while change > tol && sweeps < max {
        change = 0.0;
        for i in 1..n - 1 {
            for j in 1..n - 1 {
                let v = 0.25
                    * (t[(i - 1) * n + j]
                        + t[(i + 1) * n + j]
                        + t[i * n + j - 1]
                        + t[i * n + j + 1]);
                change = change.max((v - t[i * n + j]).abs());
                next[i * n + j] = v;
            }
        }
        std::mem::swap(t, next);
        sweeps += 1;
    }
    sweeps
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let n = args.next().and_then(Result::ok).unwrap_or(256).max(8);
    let max_sweeps = args.next().and_then(Result::ok).unwrap_or(5000);
    let tol = 1e-3;
    let device = acc::get_device_type();

    let mut plate = Plate::new(n);
    let t = Instant::now();
    let (sweeps, change) = plate.relax(tol, max_sweeps);
    let mut heat = vec![-1.0; 6];
    plate.probe(&mut heat);
    let elapsed = t.elapsed();

    let want = Plate::new(n);
    let (mut wt, mut wnext) = (want.t, want.next);
    let t = Instant::now();
    let want_sweeps = relax_plain(&mut wt, &mut wnext, n, tol, max_sweeps);
    let plain = t.elapsed();
    // Every device computes each point with the same f64 operations in the same order, and
    // the largest change is exact, so the sweeps and the temperatures agree bit for bit.
    assert_eq!(sweeps, want_sweeps, "the number of sweeps differs");
    assert!(plate.t == wt, "the plate differs from plain loops");
    for (p, i) in [n / 4, n / 2, 3 * n / 4, n - 2].into_iter().enumerate() {
        let row: f64 = (0..n).map(|j| wt[i * n + j]).sum();
        let err = (heat[1 + p] - (row - 1.0)).abs();
        assert!(
            err <= 1e-9 * row.abs().max(1.0),
            "probe {p}: {} against {}",
            heat[1 + p],
            row - 1.0
        );
    }
    assert_eq!(
        (heat[0], heat[5]),
        (-1.0, -1.0),
        "elements outside the subarray changed"
    );
    println!(
        "plate: {n}x{n}, {sweeps} sweeps to a change of {change:.2e}, device = {device} ({}), time = {:.3} s (plain loops: {:.3} s), middle row's heat = {:.3}, same bits as plain loops",
        acc::get_property(0, device, acc::Property::Name),
        elapsed.as_secs_f64(),
        plain.as_secs_f64(),
        heat[2] + 1.0
    );
}
