//! Rodinia's hotspot (OpenACC version, `hotspot.c`): the transient temperature of a chip,
//! a five-point stencil with clamped edges, `num_iterations` steps in one data region that
//! swaps the two grids between steps.
//!
//! The original's directives, kept: `kernels present(temp, power, result)` around the two
//! `loop independent` loops of `single_iteration`; `data create(result) copyin(power)
//! copy(temp)` around the time loop in `compute_tran_temp`. Rodinia reads the grids from files
//! (`temp_4096`, `power_4096`); the port makes grids of the same ranges. Timed as a user of
//! `compute_tran_temp` would: the data region, transfers included.

use std::time::Instant;

use crate::{compare, unit, Outcome};

/// Maximum power density possible (say 300 W for a 10 mm x 10 mm chip).
const MAX_PD: f64 = 3.0e6;
/// Required precision in degrees.
const PRECISION: f64 = 0.001;
const SPEC_HEAT_SI: f64 = 1.75e6;
const K_SI: f64 = 100.0;
/// Capacitance fitting factor.
const FACTOR_CHIP: f64 = 0.5;
const T_CHIP: f64 = 0.0005;
const CHIP_HEIGHT: f64 = 0.016;
const CHIP_WIDTH: f64 = 0.016;
/// Ambient temperature, assuming no package at all.
const AMB_TEMP: f64 = 80.0;

/// One step of the transient solver: `result` from `temp` and `power`.
#[acc::offload]
#[allow(clippy::too_many_arguments)]
fn single_iteration(
    result: &mut [f64],
    temp: &[f64],
    power: &[f64],
    row: usize,
    col: usize,
    step_cap: f64,
    (r_rx, r_ry, r_rz): (f64, f64, f64),
) {
    #[acc::kernels(present(temp, power, result))]
    {
        #[acc::r#loop(independent)]
        for r in 0..row {
            #[acc::r#loop(independent)]
            for c in 0..col {
                let s = if r == row - 1 { row - 1 } else { r + 1 };
                let n = if r == 0 { 0 } else { r - 1 };
                let w = if c == 0 { 0 } else { c - 1 };
                let e = if c == col - 1 { col - 1 } else { c + 1 };
                let delta = step_cap
                    * (power[r * col + c]
                        + (temp[s * col + c] + temp[n * col + c] - 2.0 * temp[r * col + c]) * r_ry
                        + (temp[r * col + e] + temp[r * col + w] - 2.0 * temp[r * col + c]) * r_rx
                        + (AMB_TEMP - temp[r * col + c]) * r_rz);
                result[r * col + c] = temp[r * col + c] + delta;
            }
        }
    }
}

/// The same step with the nest spelt `parallel loop collapse(2)`.
#[acc::offload]
#[allow(clippy::too_many_arguments)]
fn single_iteration_collapsed(
    result: &mut [f64],
    temp: &[f64],
    power: &[f64],
    row: usize,
    col: usize,
    step_cap: f64,
    (r_rx, r_ry, r_rz): (f64, f64, f64),
) {
    #[acc::parallel_loop(collapse(2), present(temp, power, result))]
    for r in 0..row {
        for c in 0..col {
            let s = if r == row - 1 { row - 1 } else { r + 1 };
            let n = if r == 0 { 0 } else { r - 1 };
            let w = if c == 0 { 0 } else { c - 1 };
            let e = if c == col - 1 { col - 1 } else { c + 1 };
            let delta = step_cap
                * (power[r * col + c]
                    + (temp[s * col + c] + temp[n * col + c] - 2.0 * temp[r * col + c]) * r_ry
                    + (temp[r * col + e] + temp[r * col + w] - 2.0 * temp[r * col + c]) * r_rx
                    + (AMB_TEMP - temp[r * col + c]) * r_rz);
            result[r * col + c] = temp[r * col + c] + delta;
        }
    }
}

/// The same step with the nest spelt `parallel loop gang` over `loop vector`.
#[acc::offload]
#[allow(clippy::too_many_arguments)]
fn single_iteration_gang_vector(
    result: &mut [f64],
    temp: &[f64],
    power: &[f64],
    row: usize,
    col: usize,
    step_cap: f64,
    (r_rx, r_ry, r_rz): (f64, f64, f64),
) {
    #[acc::parallel_loop(gang, present(temp, power, result))]
    for r in 0..row {
        #[acc::r#loop(vector)]
        for c in 0..col {
            let s = if r == row - 1 { row - 1 } else { r + 1 };
            let n = if r == 0 { 0 } else { r - 1 };
            let w = if c == 0 { 0 } else { c - 1 };
            let e = if c == col - 1 { col - 1 } else { c + 1 };
            let delta = step_cap
                * (power[r * col + c]
                    + (temp[s * col + c] + temp[n * col + c] - 2.0 * temp[r * col + c]) * r_ry
                    + (temp[r * col + e] + temp[r * col + w] - 2.0 * temp[r * col + c]) * r_rx
                    + (AMB_TEMP - temp[r * col + c]) * r_rz);
            result[r * col + c] = temp[r * col + c] + delta;
        }
    }
}

/// The step's spellings the suite compares (`acc-apps --spellings`).
type Step = fn(&mut [f64], &[f64], &[f64], usize, usize, f64, (f64, f64, f64));

/// Each spelling of the step: its name and function.
const SPELLINGS: [(&str, Step); 3] = [
    (
        "kernels, loop independent x2 (as written)",
        single_iteration,
    ),
    ("parallel loop collapse(2)", single_iteration_collapsed),
    (
        "parallel loop gang / loop vector",
        single_iteration_gang_vector,
    ),
];

/// Times each spelling of the step over the same steps in one data region (after one warm-up
/// step each), checking that every spelling gives the first one's grid: the spelling's name
/// and its time.
pub fn spellings(large: bool) -> Result<Vec<(&'static str, std::time::Duration)>, String> {
    let (n, steps) = size(large);
    let (start, power) = input(n, n);
    let (step_cap, r) = coefficients(n, n);
    let mut out = Vec::new();
    let mut first: Option<Vec<f64>> = None;
    for (name, step) in SPELLINGS {
        let (mut temp, mut result) = (start.clone(), vec![0.0; n * n]);
        let time = spelling_time(
            step,
            (&mut temp, &mut result, &power),
            (n, steps),
            step_cap,
            r,
        );
        match &first {
            None => first = Some(temp),
            Some(want) => {
                compare(name, &temp, want, 0.0)?;
            }
        }
        out.push((name, time));
    }
    Ok(out)
}

/// `steps` steps of `step` (plus a warm-up step before the clock starts), in one data region.
#[acc::offload]
fn spelling_time(
    step: Step,
    (temp, result, power): (&mut Vec<f64>, &mut Vec<f64>, &[f64]),
    (n, steps): (usize, usize),
    step_cap: f64,
    r: (f64, f64, f64),
) -> std::time::Duration {
    let mut times = Vec::new();
    #[acc::data(copy(temp, result), copyin(power))]
    {
        step(result, temp, power, n, n, step_cap, r);
        std::mem::swap(temp, result);
        acc::wait_all().expect("the warm-up step runs");
        let t = Instant::now();
        for _ in 1..steps {
            step(result, temp, power, n, n, step_cap, r);
            std::mem::swap(temp, result);
        }
        acc::wait_all().expect("the steps run");
        times.push(t.elapsed());
    }
    times.iter().sum()
}

/// The step's coefficients for a grid of `row` x `col`: `step / Cap` and `1/Rx, 1/Ry, 1/Rz`.
fn coefficients(row: usize, col: usize) -> (f64, (f64, f64, f64)) {
    let grid_height = CHIP_HEIGHT / row as f64;
    let grid_width = CHIP_WIDTH / col as f64;
    let cap = FACTOR_CHIP * SPEC_HEAT_SI * T_CHIP * grid_width * grid_height;
    let rx = grid_width / (2.0 * K_SI * T_CHIP * grid_height);
    let ry = grid_height / (2.0 * K_SI * T_CHIP * grid_width);
    let rz = T_CHIP / (K_SI * grid_height * grid_width);
    let max_slope = MAX_PD / (FACTOR_CHIP * T_CHIP * SPEC_HEAT_SI);
    let step = PRECISION / max_slope;
    (step / cap, (1.0 / rx, 1.0 / ry, 1.0 / rz))
}

/// The transient solver: `num_iterations` steps, the grids swapped after each. As in the
/// original, `temp` alone is copied back: after an even number of steps it holds the newest
/// temperatures (`run` asks for an even number).
#[acc::offload]
pub fn compute_tran_temp(
    result: &mut [f64],
    num_iterations: usize,
    temp: &mut [f64],
    power: &[f64],
    row: usize,
    col: usize,
) {
    let (step_cap, r) = coefficients(row, col);
    let (mut result, mut temp) = (result, temp);
    #[acc::data(create(result), copyin(power), copy(temp))]
    {
        for _ in 0..num_iterations {
            single_iteration(result, temp, power, row, col, step_cap, r);
            std::mem::swap(&mut result, &mut temp);
        }
    }
}

/// The same steps in plain loops.
fn plain(temp: &mut Vec<f64>, power: &[f64], row: usize, col: usize, steps: usize) {
    let (step_cap, (r_rx, r_ry, r_rz)) = coefficients(row, col);
    let mut result = vec![0.0; row * col];
    for _ in 0..steps {
        for r in 0..row {
            for c in 0..col {
                let s = if r == row - 1 { row - 1 } else { r + 1 };
                let n = if r == 0 { 0 } else { r - 1 };
                let w = if c == 0 { 0 } else { c - 1 };
                let e = if c == col - 1 { col - 1 } else { c + 1 };
                let t = |i: usize, j: usize| temp[i * col + j];
                let delta = step_cap
                    * (power[r * col + c]
                        + (t(s, c) + t(n, c) - 2.0 * t(r, c)) * r_ry
                        + (t(r, e) + t(r, w) - 2.0 * t(r, c)) * r_rx
                        + (AMB_TEMP - t(r, c)) * r_rz);
                result[r * col + c] = t(r, c) + delta;
            }
        }
        std::mem::swap(&mut result, temp);
    }
}

/// Rodinia's input ranges: temperatures of 323-343 K, power densities up to 0.005.
fn input(row: usize, col: usize) -> (Vec<f64>, Vec<f64>) {
    let n = (row * col) as u64;
    let temp = (0..n).map(|i| 323.0 + 20.0 * unit(1, i)).collect();
    let power = (0..n).map(|i| 0.005 * unit(2, i)).collect();
    (temp, power)
}

/// The grid side and the steps of each size: 64² and 4 steps (CI), 4096² and 100 steps.
fn size(large: bool) -> (usize, usize) {
    if large {
        (4096, 100)
    } else {
        (64, 4)
    }
}

/// Runs the solver on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    let (n, steps) = size(large);
    run(n, n, steps)
}

/// The CUDA reference's arguments for the same size.
pub fn cuda_args(large: bool) -> Vec<String> {
    let (n, steps) = size(large);
    vec![n.to_string(), n.to_string(), steps.to_string()]
}

/// `steps` steps on a `row` x `col` chip on the current device, timed and verified.
pub fn run(row: usize, col: usize, steps: usize) -> Result<Outcome, String> {
    if steps % 2 != 0 {
        return Err(format!(
            "hotspot copies back `temp` alone, as Rodinia does: {steps} steps would leave the newest temperatures in `result`; ask for an even number"
        ));
    }
    let (start, power) = input(row, col);
    let mut temp = start.clone();
    let mut result = vec![0.0; row * col];
    let t = Instant::now();
    compute_tran_temp(&mut result, steps, &mut temp, &power, row, col);
    let time = t.elapsed();
    let want = crate::plain_result("hotspot", (row, col, steps), || {
        let mut want = start;
        plain(&mut want, &power, row, col, steps);
        want
    });
    // The same f64 operations in the same order on every device.
    let worst = compare("hotspot temp", &temp, &want, 1e-12)?;
    Ok(Outcome {
        time,
        checksum: temp.iter().sum(),
        verified: format!("against plain loops, worst relative difference {worst:.1e}"),
    })
}
