//! Rodinia's backprop (OpenACC version, `backprop.c` and `backprop_kernel.c`): one training
//! step of a fully connected network of `in` input units, 16 hidden units and one output unit
//! (each layer with a threshold unit 0 that is always 1): the forward pass through both
//! layers, the output and hidden errors, and the weight adjustment with momentum.
//!
//! The original's directives, kept: in `bpnn_train_kernel`, `data copyin(input_units)
//! create(hidden_units, output_units) create(hidden_delta, output_delta)
//! create(input_prev_weights, hidden_prev_weights) copyin(target)` around the six calls; in
//! `bpnn_layerforward`, `kernels present(l1)` around `l1[0] = 1.0`, and `parallel loop
//! present(l1, l2, conn)` on the loop over the units `j` of the second layer with `loop
//! reduction(+: sum)` on its weighted sum over `k`; `parallel loop reduction(+: errsum)
//! present(delta, target, output)` in `bpnn_output_error`; `parallel loop reduction(+:
//! errsum) present(delta_h, delta_o, who, hidden)` with `loop reduction(+: sum)` inside in
//! `bpnn_hidden_error`; `parallel loop present(delta, ly, w, oldw)` with a bare `loop` inside
//! in `bpnn_adjust_weights` (and its host store `ly[0] = 1.0` before it, as written). The
//! original's `float **` matrices (one contiguous block, `conn[k][j]`) are flat `Vec<f32>`s of
//! `(n1 + 1) * (n2 + 1)` elements indexed `k * (n2 + 1) + j`, the same layout; its
//! `conn[0:n1+1][0:n2+1]` subarrays are the whole flat range. `SQUASH` and the `1.0`, `ETA`
//! and `MOMENTUM` terms are computed in `f64` and stored as `f32`, as the C promotions do.
//! acc maps the inner `loop reduction(+: sum)` loops, which name no level, sequentially inside
//! each iteration of `j` (ACC_INFO on wgpu), so at the large size 16 threads each sum 65,537
//! products; the original's spelling is kept all the same.
//!
//! Changed: the original has `create(input_weights, hidden_weights)`, so the device's weights
//! start undefined and the trained ones never come back (Rodinia's OpenACC backprop trains
//! garbage on a GPU and leaves the host's weights as they were); the port has
//! `copy(input_weights, hidden_weights)`, what the program means. `input_prev_weights` and
//! `hidden_prev_weights` stay `create`: the host's are all zero (`bpnn_zero_weights`), and
//! acc's device copies start zero-filled, so the step's momentum terms are the same.
//!
//! Inputs as Rodinia makes them: weights `rand() / RAND_MAX` in [0, 1] (`unit()` here), the
//! input units likewise (`load`), the target 0.1, the previous weights 0. The large size is
//! Rodinia's run (`backprop 65536`: 65,536 input units, 16 hidden, 1 output); the small one has
//! 32 input units, few enough that the hidden units do not saturate (with 65,536 inputs in
//! [0, 1] each hidden sum is about 16,000, `SQUASH` gives exactly 1.0 and the hidden deltas are
//! exactly 0, as in Rodinia). Timed as a caller of `bpnn_train_kernel` would: the data region,
//! transfers included.

use std::time::Instant;

use crate::{compare, unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str = "Rodinia 3.1 backprop, OpenACC version (openacc/backprop/backprop.c, backprop_kernel.c; Masa-731/gpu-rodinia)";

/// The learning rate.
const ETA: f64 = 0.3;
/// The momentum.
const MOMENTUM: f64 = 0.3;

/// The network: its sizes, units, deltas, target and weights (`BPNN`).
#[derive(Clone, Debug)]
pub struct Bpnn {
    pub input_n: usize,
    pub hidden_n: usize,
    pub output_n: usize,
    pub input_units: Vec<f32>,
    pub hidden_units: Vec<f32>,
    pub output_units: Vec<f32>,
    pub hidden_delta: Vec<f32>,
    pub output_delta: Vec<f32>,
    pub target: Vec<f32>,
    /// `(input_n + 1) x (hidden_n + 1)`, row `k` for input unit `k`.
    pub input_weights: Vec<f32>,
    /// `(hidden_n + 1) x (output_n + 1)`.
    pub hidden_weights: Vec<f32>,
    pub input_prev_weights: Vec<f32>,
    pub hidden_prev_weights: Vec<f32>,
}

/// The forward pass of one layer: `l2[1..=n2]` from `l1[0..=n1]` through `conn`.
#[acc::offload]
fn bpnn_layerforward(l1: &mut [f32], l2: &mut [f32], conn: &[f32], n1: usize, n2: usize) {
    // Set up the thresholding unit.
    #[acc::kernels(present(l1[0..n1 + 1]))]
    {
        l1[0] = 1.0;
    }

    // For each unit in the second layer.
    #[acc::parallel_loop(present(l1[0..n1 + 1], l2[0..n2 + 1], conn[0..(n1 + 1) * (n2 + 1)]))]
    for j in 1..=n2 {
        // Compute the weighted sum of its inputs.
        let mut sum = 0.0f32;
        #[acc::r#loop(reduction(+: sum))]
        for k in 0..=n1 {
            sum += conn[k * (n2 + 1) + j] * l1[k];
        }
        l2[j] = (1.0 / (1.0 + (-(sum as f64)).exp())) as f32;
    }
}

/// The output units' deltas, and the sum of their magnitudes.
#[acc::offload]
fn bpnn_output_error(delta: &mut [f32], target: &[f32], output: &[f32], nj: usize) -> f32 {
    let mut errsum = 0.0f32;
    #[acc::parallel_loop(
        reduction(+: errsum),
        present(delta[0..nj + 1], target[0..nj + 1], output[0..nj + 1])
    )]
    for j in 1..=nj {
        let o = output[j];
        let t = target[j];
        delta[j] = (o as f64 * (1.0 - o as f64) * (t - o) as f64) as f32;
        errsum += if delta[j] > 0.0 { delta[j] } else { -delta[j] };
    }
    errsum
}

/// The hidden units' deltas from the output deltas through `who`, and the sum of their
/// magnitudes.
#[acc::offload]
fn bpnn_hidden_error(
    delta_h: &mut [f32],
    nh: usize,
    delta_o: &[f32],
    no: usize,
    who: &[f32],
    hidden: &[f32],
) -> f32 {
    let mut errsum = 0.0f32;
    #[acc::parallel_loop(
        reduction(+: errsum),
        present(
            delta_h[0..nh + 1],
            delta_o[0..no + 1],
            who[0..(nh + 1) * (no + 1)],
            hidden[0..nh + 1]
        )
    )]
    for j in 1..=nh {
        let h = hidden[j];
        let mut sum = 0.0f32;
        #[acc::r#loop(reduction(+: sum))]
        for k in 1..=no {
            sum += delta_o[k] * who[j * (no + 1) + k];
        }
        delta_h[j] = (h as f64 * (1.0 - h as f64) * sum as f64) as f32;
        errsum += if delta_h[j] > 0.0 {
            delta_h[j]
        } else {
            -delta_h[j]
        };
    }
    errsum
}

/// Adjusts the weights `w` into the units of `delta` from the layer `ly`, with momentum
/// (`oldw` holds the previous changes).
#[acc::offload]
fn bpnn_adjust_weights(
    delta: &[f32],
    ndelta: usize,
    ly: &mut [f32],
    nly: usize,
    w: &mut [f32],
    oldw: &mut [f32],
) {
    // On the host, as written (the device's `ly[0]` is 1 already, from the forward pass).
    ly[0] = 1.0;
    let size = (nly + 1) * (ndelta + 1);
    #[acc::parallel_loop(present(delta[0..ndelta + 1], ly[0..nly + 1], w[0..size], oldw[0..size]))]
    for j in 1..=ndelta {
        #[acc::r#loop]
        for k in 0..=nly {
            let new_dw = ((ETA * delta[j] as f64 * ly[k] as f64)
                + (MOMENTUM * oldw[k * (ndelta + 1) + j] as f64)) as f32;
            w[k * (ndelta + 1) + j] += new_dw;
            oldw[k * (ndelta + 1) + j] = new_dw;
        }
    }
}

/// One training step in the original's data region: the output and hidden errors.
#[acc::offload]
pub fn bpnn_train_kernel(net: &mut Bpnn) -> (f32, f32) {
    let (inp, hid, out) = (net.input_n, net.hidden_n, net.output_n);
    let input_units = &mut net.input_units[..];
    let hidden_units = &mut net.hidden_units[..];
    let output_units = &mut net.output_units[..];
    let input_weights = &mut net.input_weights[..];
    let hidden_weights = &mut net.hidden_weights[..];
    let target = &net.target[..];
    let hidden_delta = &mut net.hidden_delta[..];
    let output_delta = &mut net.output_delta[..];
    let hidden_prev_weights = &mut net.hidden_prev_weights[..];
    let input_prev_weights = &mut net.input_prev_weights[..];
    let (out_err, hid_err);

    #[acc::data(
        copyin(input_units[0..inp + 1]),
        create(hidden_units[0..hid + 1], output_units[0..out + 1]),
        copy(input_weights[0..(inp + 1) * (hid + 1)], hidden_weights[0..(hid + 1) * (out + 1)]),
        create(hidden_delta[0..hid + 1], output_delta[0..out + 1]),
        create(
            input_prev_weights[0..(inp + 1) * (hid + 1)],
            hidden_prev_weights[0..(hid + 1) * (out + 1)]
        ),
        copyin(target[0..out + 1])
    )]
    {
        bpnn_layerforward(input_units, hidden_units, input_weights, inp, hid);
        bpnn_layerforward(hidden_units, output_units, hidden_weights, hid, out);
        out_err = bpnn_output_error(output_delta, target, output_units, out);
        hid_err = bpnn_hidden_error(
            hidden_delta,
            hid,
            output_delta,
            out,
            hidden_weights,
            hidden_units,
        );
        bpnn_adjust_weights(
            output_delta,
            out,
            hidden_units,
            hid,
            hidden_weights,
            hidden_prev_weights,
        );
        bpnn_adjust_weights(
            hidden_delta,
            hid,
            input_units,
            inp,
            input_weights,
            input_prev_weights,
        );
    }
    (out_err, hid_err)
}

/// A new network (`bpnn_create`) with its input units loaded (`load`), as Rodinia's
/// `backprop_face` makes it.
fn input(n_in: usize, n_hidden: usize, n_out: usize) -> Bpnn {
    let weights =
        |seed: u64, n: usize| -> Vec<f32> { (0..n as u64).map(|i| unit(seed, i) as f32).collect() };
    let mut input_units = vec![0.0f32; n_in + 1];
    for (k, u) in input_units.iter_mut().enumerate().skip(1) {
        *u = unit(3, k as u64) as f32;
    }
    Bpnn {
        input_n: n_in,
        hidden_n: n_hidden,
        output_n: n_out,
        input_units,
        hidden_units: vec![0.0; n_hidden + 1],
        output_units: vec![0.0; n_out + 1],
        hidden_delta: vec![0.0; n_hidden + 1],
        output_delta: vec![0.0; n_out + 1],
        target: vec![0.1; n_out + 1],
        input_weights: weights(1, (n_in + 1) * (n_hidden + 1)),
        hidden_weights: weights(2, (n_hidden + 1) * (n_out + 1)),
        input_prev_weights: vec![0.0; (n_in + 1) * (n_hidden + 1)],
        hidden_prev_weights: vec![0.0; (n_hidden + 1) * (n_out + 1)],
    }
}

/// The same step in plain loops: the trained input and hidden weights and the two errors.
fn plain(mut net: Bpnn) -> (Vec<f32>, Vec<f32>, f32, f32) {
    let squash = |x: f32| (1.0 / (1.0 + (-(x as f64)).exp())) as f32;
    let abs = |x: f32| if x > 0.0 { x } else { -x };
    let forward = |l1: &mut [f32], l2: &mut [f32], conn: &[f32], n1: usize, n2: usize| {
        l1[0] = 1.0;
        for j in 1..=n2 {
            let mut sum = 0.0f32;
            for k in 0..=n1 {
                sum += conn[k * (n2 + 1) + j] * l1[k];
            }
            l2[j] = squash(sum);
        }
    };
    let adjust =
        |delta: &[f32], nd: usize, ly: &[f32], nly: usize, w: &mut [f32], oldw: &mut [f32]| {
            for j in 1..=nd {
                for k in 0..=nly {
                    let i = k * (nd + 1) + j;
                    let new_dw = ((ETA * delta[j] as f64 * ly[k] as f64)
                        + (MOMENTUM * oldw[i] as f64)) as f32;
                    w[i] += new_dw;
                    oldw[i] = new_dw;
                }
            }
        };
    let (inp, hid, out) = (net.input_n, net.hidden_n, net.output_n);
    forward(
        &mut net.input_units,
        &mut net.hidden_units,
        &net.input_weights,
        inp,
        hid,
    );
    forward(
        &mut net.hidden_units,
        &mut net.output_units,
        &net.hidden_weights,
        hid,
        out,
    );
    let mut out_err = 0.0f32;
    for j in 1..=out {
        let (o, t) = (net.output_units[j], net.target[j]);
        net.output_delta[j] = (o as f64 * (1.0 - o as f64) * (t - o) as f64) as f32;
        out_err += abs(net.output_delta[j]);
    }
    let mut hid_err = 0.0f32;
    for j in 1..=hid {
        let h = net.hidden_units[j];
        let mut sum = 0.0f32;
        for k in 1..=out {
            sum += net.output_delta[k] * net.hidden_weights[j * (out + 1) + k];
        }
        net.hidden_delta[j] = (h as f64 * (1.0 - h as f64) * sum as f64) as f32;
        hid_err += abs(net.hidden_delta[j]);
    }
    adjust(
        &net.output_delta,
        out,
        &net.hidden_units,
        hid,
        &mut net.hidden_weights,
        &mut net.hidden_prev_weights,
    );
    adjust(
        &net.hidden_delta,
        hid,
        &net.input_units,
        inp,
        &mut net.input_weights,
        &mut net.input_prev_weights,
    );
    (net.input_weights, net.hidden_weights, out_err, hid_err)
}

/// The layer sizes of each size: 32 x 16 x 1 (CI) and Rodinia's 65,536 x 16 x 1.
fn size(large: bool) -> (usize, usize, usize) {
    if large {
        (65536, 16, 1)
    } else {
        (32, 16, 1)
    }
}

/// Runs the training step on the current device at the small or large size, timed and
/// verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    let (n_in, n_hidden, n_out) = size(large);
    run(n_in, n_hidden, n_out)
}

/// The CUDA reference's arguments for the same size.
pub fn cuda_args(large: bool) -> Vec<String> {
    let (n_in, n_hidden, n_out) = size(large);
    vec![n_in.to_string(), n_hidden.to_string(), n_out.to_string()]
}

/// One training step of an `n_in` x `n_hidden` x `n_out` network on the current device, timed
/// and verified.
pub fn run(n_in: usize, n_hidden: usize, n_out: usize) -> Result<Outcome, String> {
    if n_in == 0 || n_hidden == 0 || n_out == 0 {
        return Err(format!(
            "backprop needs at least one unit in each layer, got {n_in} x {n_hidden} x {n_out}"
        ));
    }
    let start = input(n_in, n_hidden, n_out);
    let mut net = start.clone();
    let t = Instant::now();
    let (out_err, hid_err) = bpnn_train_kernel(&mut net);
    let time = t.elapsed();
    let (want_iw, want_hw, want_eo, want_eh) =
        crate::plain_result("backprop", (n_in, n_hidden, n_out), || plain(start));
    let wide = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
    // The devices sum the forward pass's products and the error sums in other orders than the
    // plain loops (and acc's `exp` on the GPUs may differ from std's in its last f64 bit): a
    // sum may differ in its last f32 bits, and a squashed unit by an f32 ulp (6e-8). The output
    // unit sits near saturation (o about 0.9999, 1 - o about 1.2e-4) and its delta takes
    // o (1 - o): an ulp of o is 5e-4 of the output delta, of `out_err`, and of the hidden
    // deltas and `hid_err` that are proportional to it; 2e-3 allows two ulps and the sums' own
    // order. A weight changes by ETA times a delta times a unit: a hidden weight by about 3e-5,
    // so 1e-3 of the change is 3e-8, under 1e-6 of the smallest hidden weight here (0.077),
    // plus an ulp of rounding (1.2e-7); the input weights change by less than 1e-8 (by exactly
    // 0 at the large size, where the hidden units saturate to 1). Hence 1e-5 for the weights.
    let worst_w = compare(
        "backprop input_weights",
        &wide(&net.input_weights),
        &wide(&want_iw),
        1e-5,
    )?
    .max(compare(
        "backprop hidden_weights",
        &wide(&net.hidden_weights),
        &wide(&want_hw),
        1e-5,
    )?);
    let worst_e = compare(
        "backprop errors (out_err, hid_err)",
        &[out_err as f64, hid_err as f64],
        &[want_eo as f64, want_eh as f64],
        2e-3,
    )?;
    let checksum = net
        .input_weights
        .iter()
        .chain(&net.hidden_weights)
        .map(|&w| w as f64)
        .sum();
    Ok(Outcome {
        time,
        checksum,
        verified: format!(
            "against plain loops, weights within {worst_w:.1e}, errors within {worst_e:.1e} (out_err {out_err:e}, hid_err {hid_err:e})"
        ),
    })
}
