//! Rodinia's srad (srad_v2, OpenACC version, `srad.cpp`): speckle reducing anisotropic
//! diffusion of an image. Each iteration sums the region of interest (a reduction) for the
//! speckle scale `q0sqr`, then one sweep computes the four directional derivatives `dN`, `dS`,
//! `dW`, `dE` and the diffusion coefficient `c` of every pixel, and a second sweep updates the
//! image `J` from them.
//!
//! The original's directives, kept: one `data create(iN, iS, jW, jE) create(dN, dS, dW, dE, c)
//! create(I) copyout(J)` region around all of it; `parallel loop` for the neighbour index
//! arrays, `kernels` for their clamped ends, `update device(I)` after the input is made,
//! `parallel loop` for `J = exp(I)`; in the time loop `parallel loop collapse(2)
//! reduction(+:sum,sum2)` over the region of interest and two `parallel loop collapse(2)`
//! sweeps. The original has no `update self`: `q0sqr` reaches the host through the reduction
//! and `J` through `copyout` at the region's end. The arithmetic keeps the original's types:
//! `float` data, with the `double` constants (`0.5*G2`, `.25*L`, `1.0/(1.0+den)`,
//! `0.25*lambda*D`) computed in `f64` and stored in `f32`.
//!
//! One change: Rodinia 3.1's OpenACC sweep stores the coefficient only when it saturates
//! (`if (ck < 0) {c[k] = 0;} else if (ck >= 1) {c[k] = 1;}`), leaving `c[k]` as it was
//! otherwise (a bug: the serial srad_v2 stores `c[k] = 1.0 / (1.0+den)` and then saturates);
//! the port stores the coefficient and saturates it, as the serial version does.
//!
//! Rodinia makes the input with `rand()/(float)RAND_MAX` (values in [0, 1]); the port makes
//! values of the same range with `unit`. Timed as the original's data region: the index
//! arrays, the input's transfer, `exp`, the iterations and the copy back of `J`.

use std::time::Instant;

use crate::{compare, unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str = "Rodinia 3.1, OpenACC version (openacc/srad/srad_v2/srad.cpp)";

/// The region of interest: rows `r1..=r2`, columns `c1..=c2` (the original's `y1 y2 x1 x2`).
#[derive(Clone, Copy, Debug)]
pub struct Roi {
    pub r1: usize,
    pub r2: usize,
    pub c1: usize,
    pub c2: usize,
}

/// The original's `main` from its data region on: `niter` iterations of SRAD on the
/// `rows` x `cols` image `exp(input)`, the result in `image` (the original's `J`; `input` is
/// its `I`).
#[acc::offload]
#[allow(clippy::too_many_arguments)]
pub fn srad(
    input: &[f32],
    image: &mut [f32],
    rows: usize,
    cols: usize,
    roi: Roi,
    lambda: f32,
    niter: usize,
) {
    let size_i = cols * rows;
    let Roi { r1, r2, c1, c2 } = roi;
    let size_r = (r2 - r1 + 1) * (c2 - c1 + 1);
    let mut i_n = vec![0i32; rows];
    let mut i_s = vec![0i32; rows];
    let mut j_w = vec![0i32; cols];
    let mut j_e = vec![0i32; cols];
    let mut d_n = vec![0f32; size_i];
    let mut d_s = vec![0f32; size_i];
    let mut d_w = vec![0f32; size_i];
    let mut d_e = vec![0f32; size_i];
    let mut c = vec![0f32; size_i];

    #[acc::data(
        create(i_n, i_s, j_w, j_e),
        create(d_n, d_s, d_w, d_e, c),
        create(input),
        copyout(image)
    )]
    {
        #[acc::parallel_loop]
        for i in 0..rows {
            i_n[i] = i as i32 - 1;
            i_s[i] = i as i32 + 1;
        }
        #[acc::parallel_loop]
        for j in 0..cols {
            j_w[j] = j as i32 - 1;
            j_e[j] = j as i32 + 1;
        }
        #[acc::kernels]
        {
            i_n[0] = 0;
            i_s[rows - 1] = rows as i32 - 1;
            j_w[0] = 0;
            j_e[cols - 1] = cols as i32 - 1;
        }

        // The original makes its random input here, on the host; `input` comes made.
        acc::update!(device(input));

        #[acc::parallel_loop]
        for k in 0..size_i {
            image[k] = (input[k] as f64).exp() as f32;
        }

        for _iter in 0..niter {
            let mut sum = 0f32;
            let mut sum2 = 0f32;
            #[acc::parallel_loop(collapse(2), reduction(+: sum, sum2))]
            for i in r1..=r2 {
                for j in c1..=c2 {
                    let tmp = image[i * cols + j];
                    sum += tmp;
                    sum2 += tmp * tmp;
                }
            }
            let mean_roi = sum / size_r as f32;
            let var_roi = (sum2 / size_r as f32) - mean_roi * mean_roi;
            let q0sqr = var_roi / (mean_roi * mean_roi);

            #[acc::parallel_loop(collapse(2))]
            for i in 0..rows {
                for j in 0..cols {
                    let k = i * cols + j;
                    let jc = image[k];

                    // directional derivatives
                    let d_nk = image[i_n[i] as usize * cols + j] - jc;
                    let d_sk = image[i_s[i] as usize * cols + j] - jc;
                    let d_wk = image[i * cols + j_w[j] as usize] - jc;
                    let d_ek = image[i * cols + j_e[j] as usize] - jc;

                    let g2 = (d_nk * d_nk + d_sk * d_sk + d_wk * d_wk + d_ek * d_ek) / (jc * jc);
                    let l = (d_nk + d_sk + d_wk + d_ek) / jc;

                    let num = (0.5 * g2 as f64 - (1.0 / 16.0) * (l * l) as f64) as f32;
                    let den = (1.0 + 0.25 * l as f64) as f32;
                    let qsqr = num / (den * den);

                    // diffusion coefficient (equ 33)
                    let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
                    let mut ck = (1.0 / (1.0 + den as f64)) as f32;

                    // saturate the diffusion coefficient
                    if ck < 0.0 {
                        ck = 0.0;
                    } else if ck > 1.0 {
                        ck = 1.0;
                    }
                    c[k] = ck;

                    d_n[k] = d_nk;
                    d_s[k] = d_sk;
                    d_w[k] = d_wk;
                    d_e[k] = d_ek;
                }
            }

            #[acc::parallel_loop(collapse(2))]
            for i in 0..rows {
                for j in 0..cols {
                    // current index
                    let k = i * cols + j;

                    // diffusion coefficients
                    let c_n = c[k];
                    let c_s = c[i_s[i] as usize * cols + j];
                    let c_w = c[k];
                    let c_e = c[i * cols + j_e[j] as usize];

                    // divergence (equ 58)
                    let d = c_n * d_n[k] + c_s * d_s[k] + c_w * d_w[k] + c_e * d_e[k];

                    // image update (equ 61)
                    image[k] = (image[k] as f64 + 0.25 * lambda as f64 * d as f64) as f32;
                }
            }
        }
    }
}

/// The same iterations in plain loops (sequential sums over the region of interest).
fn plain(input: &[f32], rows: usize, cols: usize, roi: Roi, lambda: f32, niter: usize) -> Vec<f32> {
    let size_i = rows * cols;
    let Roi { r1, r2, c1, c2 } = roi;
    let size_r = (r2 - r1 + 1) * (c2 - c1 + 1);
    let i_n: Vec<usize> = (0..rows).map(|i| i.saturating_sub(1)).collect();
    let i_s: Vec<usize> = (0..rows).map(|i| (i + 1).min(rows - 1)).collect();
    let j_w: Vec<usize> = (0..cols).map(|j| j.saturating_sub(1)).collect();
    let j_e: Vec<usize> = (0..cols).map(|j| (j + 1).min(cols - 1)).collect();
    let mut j_img: Vec<f32> = input.iter().map(|&x| (x as f64).exp() as f32).collect();
    let (mut d_n, mut d_s) = (vec![0f32; size_i], vec![0f32; size_i]);
    let (mut d_w, mut d_e) = (vec![0f32; size_i], vec![0f32; size_i]);
    let mut c = vec![0f32; size_i];
    for _ in 0..niter {
        let (mut sum, mut sum2) = (0f32, 0f32);
        for i in r1..=r2 {
            for j in c1..=c2 {
                let tmp = j_img[i * cols + j];
                sum += tmp;
                sum2 += tmp * tmp;
            }
        }
        let mean_roi = sum / size_r as f32;
        let var_roi = (sum2 / size_r as f32) - mean_roi * mean_roi;
        let q0sqr = var_roi / (mean_roi * mean_roi);
        for i in 0..rows {
            for j in 0..cols {
                let k = i * cols + j;
                let jc = j_img[k];
                d_n[k] = j_img[i_n[i] * cols + j] - jc;
                d_s[k] = j_img[i_s[i] * cols + j] - jc;
                d_w[k] = j_img[i * cols + j_w[j]] - jc;
                d_e[k] = j_img[i * cols + j_e[j]] - jc;
                let g2 = (d_n[k] * d_n[k] + d_s[k] * d_s[k] + d_w[k] * d_w[k] + d_e[k] * d_e[k])
                    / (jc * jc);
                let l = (d_n[k] + d_s[k] + d_w[k] + d_e[k]) / jc;
                let num = (0.5 * g2 as f64 - (1.0 / 16.0) * (l * l) as f64) as f32;
                let den = (1.0 + 0.25 * l as f64) as f32;
                let qsqr = num / (den * den);
                let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
                let ck = (1.0 / (1.0 + den as f64)) as f32;
                c[k] = ck.clamp(0.0, 1.0);
            }
        }
        for i in 0..rows {
            for j in 0..cols {
                let k = i * cols + j;
                let d = c[k] * d_n[k]
                    + c[i_s[i] * cols + j] * d_s[k]
                    + c[k] * d_w[k]
                    + c[i * cols + j_e[j]] * d_e[k];
                j_img[k] = (j_img[k] as f64 + 0.25 * lambda as f64 * d as f64) as f32;
            }
        }
    }
    j_img
}

/// The input image `I`: Rodinia's range, values in [0, 1).
fn input(rows: usize, cols: usize) -> Vec<f32> {
    (0..(rows * cols) as u64)
        .map(|i| unit(1, i) as f32)
        .collect()
}

/// The image, region of interest, lambda and iterations of each size: 64² with a 16 x 16
/// region and 10 iterations (CI); 4096² with the original's region (rows and columns 0 to
/// 127, from its `run` script) and 100 iterations.
fn size(large: bool) -> (usize, Roi, f32, usize) {
    if large {
        (
            4096,
            Roi {
                r1: 0,
                r2: 127,
                c1: 0,
                c2: 127,
            },
            0.5,
            100,
        )
    } else {
        (
            64,
            Roi {
                r1: 0,
                r2: 15,
                c1: 0,
                c2: 15,
            },
            0.5,
            10,
        )
    }
}

/// Runs SRAD on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    let (n, roi, lambda, niter) = size(large);
    run(n, n, roi, lambda, niter)
}

/// The CUDA reference's arguments for the same size (the original's:
/// `rows cols y1 y2 x1 x2 lambda iterations`).
pub fn cuda_args(large: bool) -> Vec<String> {
    let (n, roi, lambda, niter) = size(large);
    vec![
        n.to_string(),
        n.to_string(),
        roi.r1.to_string(),
        roi.r2.to_string(),
        roi.c1.to_string(),
        roi.c2.to_string(),
        lambda.to_string(),
        niter.to_string(),
    ]
}

/// `niter` iterations on a `rows` x `cols` image on the current device, timed and verified.
pub fn run(
    rows: usize,
    cols: usize,
    roi: Roi,
    lambda: f32,
    niter: usize,
) -> Result<Outcome, String> {
    if roi.r1 > roi.r2 || roi.c1 > roi.c2 || roi.r2 >= rows || roi.c2 >= cols {
        return Err(format!(
            "the region of interest {roi:?} is not inside {rows} x {cols}"
        ));
    }
    let start = input(rows, cols);
    let mut image = vec![0f32; rows * cols];
    let t = Instant::now();
    srad(&start, &mut image, rows, cols, roi, lambda, niter);
    let time = t.elapsed();
    let want = crate::plain_result("srad", (rows, cols, roi, lambda, niter), || {
        plain(&start, rows, cols, roi, lambda, niter)
    });
    let got: Vec<f64> = image.iter().map(|&v| v as f64).collect();
    let want: Vec<f64> = want.iter().map(|&v| v as f64).collect();
    let worst = compare("srad J", &got, &want, TOLERANCE)?;
    Ok(Outcome {
        time,
        checksum: got.iter().sum(),
        verified: format!(
            "against plain loops, worst relative difference {worst:.1e}, {:.1} ms",
            time.as_secs_f64() * 1e3
        ),
    })
}

/// The sweeps are the same `f32`/`f64` operations in the same order on every device, but the
/// region-of-interest sums are a reduction, which multicore and the GPUs add in another order
/// than the plain loops: `q0sqr` then differs in its last bits, which moves every coefficient
/// computed from it, iteration after iteration (the variance is a difference of two close
/// sums, which magnifies the sums' rounding). Sums in order against exactly rounded sums,
/// with this input: `J` differs by up to 2.8e-6 relative at the small size, 6.1e-4 at 1024²
/// and 1.5e-4 at 4096² (100 iterations, a 128² region).
const TOLERANCE: f64 = 2e-3;
