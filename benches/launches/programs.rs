//! The short-launch programs of `benches/launches.rs`, which the behaviour suite runs too
//! (`tests/behaviour/short_launches.rs`) on every device: one source for what is timed and what
//! is checked.

// `if d > n { d - n } else { 0 }`: the bounds as OpenACC codes write them.
#![allow(clippy::implicit_saturating_sub)]

/// The tiny-region loop: `steps` updates of `x`, with the sum of `x` every tenth step added
/// to the result.
#[acc::offload]
pub fn tiny_regions(x: &mut Vec<f64>, steps: usize) -> f64 {
    let n = x.len();
    let mut total = 0.0;
    #[acc::data(copy(x))]
    {
        for step in 0..steps {
            let a = (step % 7) as f64;
            #[acc::parallel_loop]
            for i in 0..n {
                x[i] = x[i] * 0.5 + a;
            }
            if step % 10 == 9 {
                let mut s = 0.0;
                #[acc::parallel_loop(reduction(+: s))]
                for i in 0..n {
                    s += x[i];
                }
                total += s;
            }
        }
    }
    total
}

/// The wavefront keeping only three anti-diagonals (`r` holds 3 x (n + 1) cells, diagonal `d`
/// at `(d % 3) * (n + 1)`, cell (i, d - i) at index i), as memory-frugal codes do: each
/// region's accesses are contiguous, so it is a short launch. Returns the score of (n, n).
#[acc::offload]
pub fn wavefront_diagonals(r: &mut Vec<i32>, a: &[u8], b: &[u8]) -> i32 {
    let n = a.len();
    let w = n + 1;
    #[acc::data(copy(r), copyin(a, b))]
    {
        for d in 0..=2 * n {
            let lo = if d > n { d - n } else { 0 };
            let hi = if d > n { n + 1 } else { d + 1 };
            let (cur, prev, prev2) = ((d % 3) * w, ((d + 2) % 3) * w, ((d + 1) % 3) * w);
            #[acc::parallel_loop]
            for i in lo..hi {
                let j = d - i;
                if i == 0 || j == 0 {
                    r[cur + i] = -(d as i32);
                } else {
                    let m = if a[i - 1] == b[j - 1] { 2 } else { -1 };
                    let diag = r[prev2 + i - 1] + m;
                    let up = r[prev + i - 1] - 1;
                    let left = r[prev + i] - 1;
                    let best = if diag > up { diag } else { up };
                    r[cur + i] = if best > left { best } else { left };
                }
            }
        }
    }
    r[(2 * n % 3) * w + n]
}

/// A first time step of a small 2-D transport code: twelve different regions (halos, fluxes
/// and tendencies in x and z, updates, a smoothing pass, a limiter and a sum), each launched
/// once per step, as an atmosphere code's first step launches its kernels. `q` holds `vars`
/// fields of `nx` x `nz` cells; returns the sum of the first field after `steps` steps.
#[acc::offload]
pub fn transport_steps(q: &mut Vec<f64>, nx: usize, nz: usize, steps: usize) -> f64 {
    let vars = 3;
    let n = nx * nz;
    let mut flux = vec![0.0f64; vars * n];
    let mut tend = vec![0.0f64; vars * n];
    let (dt, c) = (0.1, 0.25);
    let mut mass = 0.0;
    #[acc::data(copy(q), create(flux, tend))]
    {
        for _ in 0..steps {
            // 1. Periodic halos in x.
            #[acc::parallel_loop(collapse(2))]
            for v in 0..vars {
                for k in 0..nz {
                    q[v * n + k * nx] = q[v * n + k * nx + nx - 2];
                    q[v * n + k * nx + nx - 1] = q[v * n + k * nx + 1];
                }
            }
            // 2. Walls in z.
            #[acc::parallel_loop(collapse(2))]
            for v in 0..vars {
                for i in 0..nx {
                    q[v * n + i] = q[v * n + nx + i];
                    q[v * n + (nz - 1) * nx + i] = q[v * n + (nz - 2) * nx + i];
                }
            }
            // 3. Upwind fluxes in x.
            #[acc::parallel_loop(collapse(3))]
            for v in 0..vars {
                for k in 1..nz - 1 {
                    for i in 0..nx - 1 {
                        let at = v * n + k * nx + i;
                        flux[at] = c * q[at] + 0.05 * (q[at] - q[at + 1]);
                    }
                }
            }
            // 4. Tendencies in x.
            #[acc::parallel_loop(collapse(3))]
            for v in 0..vars {
                for k in 1..nz - 1 {
                    for i in 1..nx - 1 {
                        let at = v * n + k * nx + i;
                        tend[at] = flux[at - 1] - flux[at];
                    }
                }
            }
            // 5. Update in x.
            #[acc::parallel_loop(collapse(3))]
            for v in 0..vars {
                for k in 1..nz - 1 {
                    for i in 1..nx - 1 {
                        q[v * n + k * nx + i] += dt * tend[v * n + k * nx + i];
                    }
                }
            }
            // 6. Centred fluxes in z.
            #[acc::parallel_loop(collapse(3))]
            for v in 0..vars {
                for k in 0..nz - 1 {
                    for i in 1..nx - 1 {
                        let at = v * n + k * nx + i;
                        flux[at] = 0.5 * c * (q[at] + q[at + nx]) - 0.02 * (q[at + nx] - q[at]);
                    }
                }
            }
            // 7. Tendencies in z, with a source in the first field.
            #[acc::parallel_loop(collapse(3))]
            for v in 0..vars {
                for k in 1..nz - 1 {
                    for i in 1..nx - 1 {
                        let at = v * n + k * nx + i;
                        let source = if v == 0 { 1e-3 * (k as f64) } else { 0.0 };
                        tend[at] = flux[at - nx] - flux[at] + source;
                    }
                }
            }
            // 8. Update in z.
            #[acc::parallel_loop(collapse(3))]
            for v in 0..vars {
                for k in 1..nz - 1 {
                    for i in 1..nx - 1 {
                        let at = v * n + k * nx + i;
                        q[at] = q[at] + dt * tend[at];
                    }
                }
            }
            // 9. A smoothing operator into `tend`.
            #[acc::parallel_loop(gang)]
            for k in 1..nz - 1 {
                #[acc::r#loop(vector)]
                for i in 1..nx - 1 {
                    for v in 0..vars {
                        let at = v * n + k * nx + i;
                        tend[at] = q[at - 1] + q[at + 1] + q[at - nx] + q[at + nx] - 4.0 * q[at];
                    }
                }
            }
            // 10. Its application.
            #[acc::parallel_loop(collapse(2))]
            for k in 1..nz - 1 {
                for i in 1..nx - 1 {
                    for v in 0..vars {
                        q[v * n + k * nx + i] += 0.01 * tend[v * n + k * nx + i];
                    }
                }
            }
            // 11. A limiter: no negative amounts.
            #[acc::parallel_loop]
            for at in 0..vars * n {
                q[at] = q[at].max(0.0);
            }
            // 12. The first field's total.
            let mut s = 0.0;
            #[acc::parallel_loop(collapse(2), reduction(+: s))]
            for k in 1..nz - 1 {
                for i in 1..nx - 1 {
                    s += q[k * nx + i];
                }
            }
            mass = s;
        }
    }
    mass
}
