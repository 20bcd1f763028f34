//! miniWeather's plain-Rust twin: the same loops without directives, run on the machine's
//! threads in bands of rows (one thread takes minutes at the large size), which
//! [`super::run`] compares the port's state against.

use super::*;

/// What the plain loops give: the state at the end and the totals.
#[derive(Clone, Debug)]
pub(super) struct Plain {
    pub(super) state: Vec<f64>,
    pub(super) mass0: f64,
    pub(super) te0: f64,
    pub(super) mass: f64,
    pub(super) te: f64,
    pub(super) steps: usize,
}

/// Runs `f(first_row, planes)` on the machine's threads, each call given a band of rows of the
/// `NUM_VARS` planes of `a` (`[NUM_VARS][rows][row_len]`), the bands covering every row once:
/// the plain loops' cells are independent within each loop, so they run on threads in bands
/// (one thread's loops at the large size take minutes); each cell's operations are the same.
fn bands<F>(a: &mut [f64], rows: usize, row_len: usize, f: F)
where
    F: Fn(usize, [&mut [f64]; NUM_VARS]) + Sync,
{
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let band = rows.div_ceil(threads).max(1);
    let mut planes = a.chunks_mut(rows * row_len);
    let mut next = || {
        planes
            .next()
            .expect("NUM_VARS planes")
            .chunks_mut(band * row_len)
    };
    let (p0, p1, p2, p3) = (next(), next(), next(), next());
    let f = &f;
    std::thread::scope(|s| {
        for (b, (((c0, c1), c2), c3)) in p0.zip(p1).zip(p2).zip(p3).enumerate() {
            s.spawn(move || f(b * band, [c0, c1, c2, c3]));
        }
    });
}

/// The domain's mass and total energy, summed in order.
fn plain_totals(g: &Grid, init: &Initial, state: &[f64]) -> (f64, f64) {
    let Grid { nx, nz, dx, dz } = *g;
    let (sx, sz) = (nx + 2 * HS, nz + 2 * HS);
    let (mut mass, mut te) = (0.0f64, 0.0f64);
    for k in 0..nz {
        for i in 0..nx {
            let at = |ll: usize| ll * sz * sx + (k + HS) * sx + i + HS;
            let r = state[at(ID_DENS)] + init.hy_dens_cell[HS + k];
            let u = state[at(ID_UMOM)] / r;
            let w = state[at(ID_WMOM)] / r;
            let th = (state[at(ID_RHOT)] + init.hy_dens_theta_cell[HS + k]) / r;
            let p = C0 * (r * th).powf(GAMM);
            let t = th / (P0 / p).powf(RD / CP);
            let ke = r * (u * u + w * w);
            let ie = r * CV * t;
            mass += r * dx * dz;
            te += (ke + ie) * dx * dz;
        }
    }
    (mass, te)
}

/// The interpolated value and third derivative of a four-cell stencil.
fn interpolate(s: [f64; 4]) -> (f64, f64) {
    (
        -s[0] / 12.0 + 7.0 * s[1] / 12.0 + 7.0 * s[2] / 12.0 - s[3] / 12.0,
        -s[0] + 3.0 * s[1] - 3.0 * s[2] + s[3],
    )
}

/// The same time loop in plain loops (the same `f64` operations in the same order in each
/// cell; see `bands`).
pub(super) fn plain(g: &Grid, init: &Initial, sim_time: f64) -> Plain {
    let Grid { nx, nz, dx, dz } = *g;
    let (sx, sz) = (nx + 2 * HS, nz + 2 * HS);
    let (fx, fz) = (nx + 1, nz + 1);
    let hy = init;
    let mut state = init.state.clone();
    let mut state_tmp = init.state.clone();
    let mut flux = vec![0.0f64; fz * fx * NUM_VARS];
    let mut tend = vec![0.0f64; nz * nx * NUM_VARS];

    let (mass0, te0) = plain_totals(g, init, &state);
    let mut dt = init.dt;
    let mut etime = 0.0f64;
    let mut steps = 0;
    let mut direction_switch = true;
    while etime < sim_time {
        if etime + dt > sim_time {
            dt = sim_time - etime;
        }
        let dirs = if direction_switch {
            [DIR_X, DIR_Z]
        } else {
            [DIR_Z, DIR_X]
        };
        for dir in dirs {
            // (the forcing is state_tmp, the output is state_tmp, the stage's dt)
            for (forcing_tmp, out_tmp, sdt) in [
                (false, true, dt / 3.0),
                (true, true, dt / 2.0),
                (true, false, dt / 1.0),
            ] {
                let forcing: &mut Vec<f64> = if forcing_tmp {
                    &mut state_tmp
                } else {
                    &mut state
                };
                // The halos.
                for ll in 0..NUM_VARS {
                    if dir == DIR_X {
                        // periodic
                        for k in 0..nz {
                            let row = ll * sz * sx + (k + HS) * sx;
                            forcing[row] = forcing[row + nx + HS - 2];
                            forcing[row + 1] = forcing[row + nx + HS - 1];
                            forcing[row + nx + HS] = forcing[row + HS];
                            forcing[row + nx + HS + 1] = forcing[row + HS + 1];
                        }
                    } else {
                        // walls at the bottom and top
                        let hc = &hy.hy_dens_cell;
                        for i in 0..sx {
                            let row = |k: usize| ll * sz * sx + k * sx + i;
                            let (bottom, top) = (forcing[row(HS)], forcing[row(nz + HS - 1)]);
                            let v = if ll == ID_WMOM {
                                [0.0; 4]
                            } else if ll == ID_UMOM {
                                [
                                    bottom / hc[HS] * hc[0],
                                    bottom / hc[HS] * hc[1],
                                    top / hc[nz + HS - 1] * hc[nz + HS],
                                    top / hc[nz + HS - 1] * hc[nz + HS + 1],
                                ]
                            } else {
                                [bottom, bottom, top, top]
                            };
                            for (v, k) in v.into_iter().zip([0, 1, nz + HS, nz + HS + 1]) {
                                forcing[row(k)] = v;
                            }
                        }
                    }
                }
                let forcing: &[f64] = forcing;
                // The fluxes, at the interfaces (k, i): k < nz and i <= nx in x, k <= nz and
                // i < nx in z.
                let hv_coef = if dir == DIR_X {
                    -HV_BETA * dx / (16.0 * sdt)
                } else {
                    -HV_BETA * dz / (16.0 * sdt)
                };
                bands(&mut flux, fz, fx, |k0, f| {
                    for kb in 0..f[0].len() / fx {
                        let k = k0 + kb;
                        for i in 0..fx {
                            let (mut vals, mut d3) = ([0.0f64; NUM_VARS], [0.0f64; NUM_VARS]);
                            let (r, u, mut w, t, p);
                            if dir == DIR_X {
                                if k == nz {
                                    continue;
                                }
                                for ll in 0..NUM_VARS {
                                    let at = ll * sz * sx + (k + HS) * sx + i;
                                    (vals[ll], d3[ll]) =
                                        interpolate(std::array::from_fn(|s| forcing[at + s]));
                                }
                                r = vals[ID_DENS] + hy.hy_dens_cell[k + HS];
                                u = vals[ID_UMOM] / r;
                                w = vals[ID_WMOM] / r;
                                t = (vals[ID_RHOT] + hy.hy_dens_theta_cell[k + HS]) / r;
                                p = C0 * (r * t).powf(GAMM);
                                f[ID_DENS][kb * fx + i] = r * u - hv_coef * d3[ID_DENS];
                                f[ID_UMOM][kb * fx + i] = r * u * u + p - hv_coef * d3[ID_UMOM];
                                f[ID_WMOM][kb * fx + i] = r * u * w - hv_coef * d3[ID_WMOM];
                                f[ID_RHOT][kb * fx + i] = r * u * t - hv_coef * d3[ID_RHOT];
                            } else {
                                if i == nx {
                                    continue;
                                }
                                for ll in 0..NUM_VARS {
                                    let at = ll * sz * sx + k * sx + i + HS;
                                    (vals[ll], d3[ll]) =
                                        interpolate(std::array::from_fn(|s| forcing[at + s * sx]));
                                }
                                r = vals[ID_DENS] + hy.hy_dens_int[k];
                                u = vals[ID_UMOM] / r;
                                w = vals[ID_WMOM] / r;
                                t = (vals[ID_RHOT] + hy.hy_dens_theta_int[k]) / r;
                                p = C0 * (r * t).powf(GAMM) - hy.hy_pressure_int[k];
                                if k == 0 || k == nz {
                                    w = 0.0;
                                    d3[ID_DENS] = 0.0;
                                }
                                f[ID_DENS][kb * fx + i] = r * w - hv_coef * d3[ID_DENS];
                                f[ID_UMOM][kb * fx + i] = r * w * u - hv_coef * d3[ID_UMOM];
                                f[ID_WMOM][kb * fx + i] = r * w * w + p - hv_coef * d3[ID_WMOM];
                                f[ID_RHOT][kb * fx + i] = r * w * t - hv_coef * d3[ID_RHOT];
                            }
                        }
                    }
                });
                // The tendencies.
                let flux: &[f64] = &flux;
                bands(&mut tend, nz, nx, |k0, mut t| {
                    for kb in 0..t[0].len() / nx {
                        let k = k0 + kb;
                        for (ll, t) in t.iter_mut().enumerate() {
                            for i in 0..nx {
                                let f1 = ll * fz * fx + k * fx + i;
                                t[kb * nx + i] = if dir == DIR_X {
                                    -(flux[f1 + 1] - flux[f1]) / dx
                                } else {
                                    -(flux[f1 + fx] - flux[f1]) / dz
                                };
                                if dir == DIR_Z && ll == ID_WMOM {
                                    t[kb * nx + i] -=
                                        forcing[ID_DENS * sz * sx + (k + HS) * sx + i + HS] * GRAV;
                                }
                            }
                        }
                    }
                });
                // The update: state_out = state + dt * tend, in the interior rows.
                let tend: &[f64] = &tend;
                let update = |k0: usize, out: &mut [&mut [f64]; NUM_VARS], init: Option<&[f64]>| {
                    for kb in 0..out[0].len() / sx {
                        let k = k0 + kb;
                        if k < HS || k >= nz + HS {
                            continue;
                        }
                        for (ll, out) in out.iter_mut().enumerate() {
                            for i in 0..nx {
                                let at = kb * sx + i + HS;
                                let from = match init {
                                    Some(s) => s[ll * sz * sx + k * sx + i + HS],
                                    None => out[at],
                                };
                                out[at] = from + sdt * tend[ll * nz * nx + (k - HS) * nx + i];
                            }
                        }
                    }
                };
                if out_tmp {
                    let state: &[f64] = &state;
                    bands(&mut state_tmp, sz, sx, |k0, mut out| {
                        update(k0, &mut out, Some(state))
                    });
                } else {
                    bands(&mut state, sz, sx, |k0, mut out| update(k0, &mut out, None));
                }
            }
        }
        direction_switch = !direction_switch;
        etime += dt;
        steps += 1;
    }
    let (mass, te) = plain_totals(g, init, &state);
    Plain {
        state,
        mass0,
        te0,
        mass,
        te,
        steps,
    }
}
