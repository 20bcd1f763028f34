//! NPB MG (NPB3.3-ACC, the University of Houston's OpenACC C version, `MG/MG/mg.c`): a V-cycle
//! multigrid solver for the discrete Poisson problem `del^2 u = v` on a periodic `nx^3` grid,
//! `v` being zero but for ten charges +1 and ten charges -1 at the places of the largest and
//! smallest of `nx^3` random numbers (`zran3`, NPB's generator `randlc`). Each of the `nit`
//! iterations runs one V-cycle (`mg3P`: restriction `rprj3` down the levels, the smoother
//! `psinv` on the coarsest, then prolongation `interp`, residual `resid` and smoother on each
//! level up) and the residual `r = v - A u` on the finest grid; the result is the residual's
//! L2 norm (`norm2u3`). Each operator ends with `comm3`, the periodic boundaries (one process:
//! each face copied from the opposite interior plane).
//!
//! The grids are stored as the original stores them: one array each for `u` and `r` holding
//! every level (the finest at offset 0, level `k` at `ir[k]`, each `m1[k] x m2[k] x m3[k]`
//! with its ghost planes, indexed as the original's `I3D(a, n1, n2, i3, i2, i1)`,
//! `a[i3 * n2 * n1 + i2 * n1 + i1]`), and `v` of the same length (`NR`, the original's size
//! formula), of which the finest level is used.
//!
//! The original's directives, kept on the same loops: `data create(u[0:gnr], v[0:gnr],
//! r[0:gnr])` around the whole computation; in `resid`, `psinv`, `rprj3` and `interp` a `data
//! deviceptr(..) present(..)` region over their temporaries and the level's arrays, and per
//! sweep `parallel [loop gang] num_gangs(n3-2) num_workers(8 or 16) vector_length(64 or 128)`
//! with `loop gang` over `loop worker` over `loop vector` (`num_gangs(mm3-1)`,
//! `num_gangs(mm3-d3)` in `interp`); in `norm2u3` `data pcopyin(or)` and `parallel loop gang
//! reduction(+:s) reduction(max:temp) num_gangs(n3-2) num_workers(8) vector_length(128)` over
//! `loop worker` over `loop vector` (the reductions on the gang loop only, as written: acc
//! takes them for the whole nest); in `comm3` `data present(ou)` and three `parallel loop
//! gang num_gangs(..) vector_length(128)` over `loop vector`; in `zero3` `parallel
//! present(oz) num_gangs(n3) num_workers(8) vector_length(128)` with `loop gang`/`worker`/
//! `vector`; in `zran3` `update device(oz)` after the host has placed the charges. `zran3`
//! (the random numbers, the search for the ten largest and smallest with `bubble`, the
//! charges) runs on the host as in NPB, between `zero3` and `comm3` on the device.
//!
//! Changed, as an OpenACC user writing Rust would:
//! - The temporaries the original allocates with `acc_malloc` in each call (`u1`, `u2` in
//!   `resid`, `r1`, `r2` in `psinv`, `x1`, `y1` in `rprj3`, `z1`, `z2`, `z3` in `interp`, each
//!   the size of the level's grid) and names in `deviceptr` are `acc::DeviceVec`s, made zeroed
//!   in each call, which is what acc takes for `acc_malloc` memory in `deviceptr`.
//! - `mg3P` calls `resid(&u[ir[k]], &r[ir[k]], &r[ir[k]], ..)`, `v` and `r` the same array;
//!   Rust does not lend one array as `&` and `&mut` at once, so the port's `resid` takes `v`
//!   as an `Option`, `None` meaning `r` itself, and its second sweep is written twice, once
//!   reading `v` and once `r` (the same arithmetic; each point reads only its own `v`).
//! - Where `mg3P` reads one level of `r` or `u` and writes another of the same array
//!   (`rprj3`, `interp`), the array is split at the coarser level's offset (`split_at_mut`),
//!   the two parts passed as C passes two pointers into it.
//! - The scalars the C code declares at the top of a routine and assigns inside the loops
//!   (`i3`, `i2`, `i1` in `rprj3`, `x2`, `y2`, `a`) are locals of the loop bodies, private to
//!   each iteration as the compilers make them.
//! - `interp`'s branch for grids one point wide (`n1 == 3`, never taken: the finer grid of an
//!   `interp` is level 2 or above, at least 4 points wide) reads `I3D(ou, mm1, mm2, ..)` in its
//!   first loop where the serial NPB reads `z`; the port reads `z` (`oz`), as every other loop
//!   of that branch does.
//! - The debug output (`debug_vec`, `rep_nrm`, `showall`), the per-routine timers and the
//!   `mg.input` file are left out (NPB's defaults: no debug output, timers off). NPB's
//!   generator is `crate::ep`'s `randlc`/`vranlc` (the same operations; `mg.c` inlines
//!   `vranlc`'s loop).
//!
//! Timed as `mg.c` times itself (`T_bench`): from after the start-up iteration and the second
//! `zran3`, inside the data region, to after the region ends (the residual, its norm, the `nit`
//! iterations and the final norm). Verified as NPB does: the final `rnm2` within 1e-8 relative
//! of NPB's value for the class.

use std::time::{Duration, Instant};

use crate::ep::{randlc, vranlc};
use crate::Outcome;

mod zran3;
use zran3::zran3;

/// Where the port comes from.
pub const ORIGIN: &str = "NPB3.3-ACC MG (uhhpctools/openacc-npb, MG/MG/mg.c)";

/// A class's sizes: the grid is `nx^3` points (a power of two), `nit` V-cycles.
#[derive(Clone, Copy, Debug)]
pub struct Class {
    pub nx: usize,
    pub nit: usize,
}

/// Class S, A and B.
pub const CLASS_S: Class = Class { nx: 32, nit: 4 };
pub const CLASS_A: Class = Class { nx: 256, nit: 4 };
pub const CLASS_B: Class = Class { nx: 256, nit: 20 };

/// The class letter `mg.c` gives a size (`U` for none of NPB's).
fn letter(class: Class) -> char {
    match (class.nx, class.nit) {
        (32, 4) => 'S',
        (128, 4) => 'W',
        (256, 4) => 'A',
        (256, 20) => 'B',
        (512, 20) => 'C',
        (1024, 50) => 'D',
        (2048, 50) => 'E',
        _ => 'U',
    }
}

/// NPB's value of the residual's L2 norm for a class.
fn verify_value(letter: char) -> Option<f64> {
    Some(match letter {
        'S' => 0.5307707005734e-04,
        'W' => 0.6467329375339e-05,
        'A' => 0.2433365309069e-05,
        'B' => 0.1800564401355e-05,
        'C' => 0.5706732285740e-06,
        'D' => 0.1583275060440e-09,
        'E' => 0.8157592357404e-10,
        _ => return None,
    })
}

/// The original's globals (`common /mg3/`, `/grid/`): the levels' sizes and offsets.
struct Grid {
    lt: usize,
    lb: usize,
    nx: Vec<usize>,
    ny: Vec<usize>,
    nz: Vec<usize>,
    m1: Vec<usize>,
    m2: Vec<usize>,
    m3: Vec<usize>,
    ir: Vec<usize>,
    is1: usize,
    is2: usize,
    is3: usize,
    ie1: usize,
    ie2: usize,
    ie3: usize,
}

/// The size of the arrays `u`, `v`, `r` (`globals.h`'s `NR`, for a cubic grid of `2^lm`).
fn nr(lm: usize) -> usize {
    let nm = 2 + (1usize << lm);
    let nv = nm * nm * nm;
    (nv + nm * nm + 5 * nm + 7 * lm + 6) / 7 * 8
}

/// A temporary of `n` doubles in device memory (the original's `acc_malloc`).
fn scratch(n: usize) -> Result<acc::DeviceVec<f64>, String> {
    acc::DeviceVec::zeroed(n).map_err(|e| format!("mg: a temporary of {n} doubles: {e}"))
}

/// The benchmark: the final `rnm2` and the timed section's length.
#[acc::offload]
#[allow(unused_assignments, unused_variables)]
pub fn benchmark(class: Class) -> Result<(f64, Duration), String> {
    if class.nx < 4 || !class.nx.is_power_of_two() {
        return Err(format!(
            "mg: nx = {}: the grid is a power of two, at least 4",
            class.nx
        ));
    }
    let lt = class.nx.trailing_zeros() as usize;
    let nit = class.nit;
    let maxlevel = lt + 1;
    let mut g = Grid {
        lt,
        lb: 1,
        nx: vec![0; maxlevel + 1],
        ny: vec![0; maxlevel + 1],
        nz: vec![0; maxlevel + 1],
        m1: vec![0; maxlevel + 1],
        m2: vec![0; maxlevel + 1],
        m3: vec![0; maxlevel + 1],
        ir: vec![0; maxlevel + 1],
        is1: 0,
        is2: 0,
        is3: 0,
        ie1: 0,
        ie2: 0,
        ie3: 0,
    };
    g.nx[lt] = class.nx;
    g.ny[lt] = class.nx;
    g.nz[lt] = class.nx;

    let a = [-8.0 / 3.0, 0.0, 1.0 / 6.0, 1.0 / 12.0];
    let c = if matches!(letter(class), 'A' | 'S' | 'W') {
        // Coefficients for the S(a) smoother.
        [-3.0 / 8.0, 1.0 / 32.0, -1.0 / 64.0, 0.0]
    } else {
        // Coefficients for the S(b) smoother.
        [-3.0 / 17.0, 1.0 / 33.0, -1.0 / 61.0, 0.0]
    };
    let k = lt;

    let gnr = nr(lt);
    let mut u = vec![0.0f64; gnr];
    let mut v = vec![0.0f64; gnr];
    let mut r = vec![0.0f64; gnr];
    let (mut rnm2, mut rnmu, mut old2, mut oldu) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let mut timer = Instant::now();

    #[acc::data(create(u[0..gnr], v[0..gnr], r[0..gnr]))]
    {
        let (n1, n2, n3) = setup(&mut g);
        if g.ir[1] + g.m1[1] * g.m2[1] * g.m3[1] > gnr {
            return Err(format!("mg: the levels need more than NR = {gnr} points"));
        }
        zero3(&mut u, n1, n2, n3);
        zran3(&mut v, n1, n2, n3, g.nx[lt], g.ny[lt], &g);

        (rnm2, rnmu) = norm2u3(&v, n1, n2, n3, g.nx[lt], g.ny[lt], g.nz[lt]);

        resid(&u, Some(&v), &mut r, n1, n2, n3, &a)?;
        (rnm2, rnmu) = norm2u3(&r, n1, n2, n3, g.nx[lt], g.ny[lt], g.nz[lt]);
        old2 = rnm2;
        oldu = rnmu;

        // One iteration for startup.
        mg3p(&mut u, &v, &mut r, &a, &c, n1, n2, n3, &g)?;
        resid(&u, Some(&v), &mut r, n1, n2, n3, &a)?;
        let (n1, n2, n3) = setup(&mut g);
        zero3(&mut u, n1, n2, n3);
        zran3(&mut v, n1, n2, n3, g.nx[lt], g.ny[lt], &g);

        acc::wait_all().map_err(|e| format!("mg: the start-up iteration: {e}"))?;
        timer = Instant::now();

        resid(&u, Some(&v), &mut r, n1, n2, n3, &a)?;
        (rnm2, rnmu) = norm2u3(&r, n1, n2, n3, g.nx[lt], g.ny[lt], g.nz[lt]);
        old2 = rnm2;
        oldu = rnmu;

        for _it in 1..=nit {
            mg3p(&mut u, &v, &mut r, &a, &c, n1, n2, n3, &g)?;
            resid(&u, Some(&v), &mut r, n1, n2, n3, &a)?;
        }

        (rnm2, rnmu) = norm2u3(&r, n1, n2, n3, g.nx[lt], g.ny[lt], g.nz[lt]);
    }
    let time = timer.elapsed();
    Ok((rnm2, time))
}

/// The levels' sizes and offsets (`setup`); returns the finest grid's `n1, n2, n3`.
fn setup(g: &mut Grid) -> (usize, usize, usize) {
    let lt = g.lt;
    let mut ng = vec![[0usize; 3]; lt + 2];
    ng[lt] = [g.nx[lt], g.ny[lt], g.nz[lt]];
    for k in (1..lt).rev() {
        for ax in 0..3 {
            ng[k][ax] = ng[k + 1][ax] / 2;
        }
    }
    for k in (1..=lt).rev() {
        g.nx[k] = ng[k][0];
        g.ny[k] = ng[k][1];
        g.nz[k] = ng[k][2];
    }
    for k in (1..=lt).rev() {
        g.m1[k] = 2 + ng[k][0];
        g.m2[k] = 2 + ng[k][1];
        g.m3[k] = 2 + ng[k][2];
    }

    let k = lt;
    g.is1 = 2 + ng[k][0] - ng[lt][0];
    g.ie1 = 1 + ng[k][0];
    let n1 = 3 + g.ie1 - g.is1;
    g.is2 = 2 + ng[k][1] - ng[lt][1];
    g.ie2 = 1 + ng[k][1];
    let n2 = 3 + g.ie2 - g.is2;
    g.is3 = 2 + ng[k][2] - ng[lt][2];
    g.ie3 = 1 + ng[k][2];
    let n3 = 3 + g.ie3 - g.is3;

    g.ir[lt] = 0;
    for j in (1..lt).rev() {
        g.ir[j] = g.ir[j + 1] + g.m1[j + 1] * g.m2[j + 1] * g.m3[j + 1];
    }
    (n1, n2, n3)
}

/// The multigrid V-cycle (`mg3P`).
#[allow(clippy::too_many_arguments)]
fn mg3p(
    u: &mut [f64],
    v: &[f64],
    r: &mut [f64],
    a: &[f64; 4],
    c: &[f64; 4],
    n1: usize,
    n2: usize,
    n3: usize,
    g: &Grid,
) -> Result<(), String> {
    let (lt, lb, ir) = (g.lt, g.lb, &g.ir);
    let (m1, m2, m3) = (&g.m1, &g.m2, &g.m3);

    // Down cycle: restrict the residual from the fine grid to the coarse.
    for k in (lb + 1..=lt).rev() {
        let j = k - 1;
        let (fine, coarse) = r.split_at_mut(ir[j]);
        rprj3(
            &fine[ir[k]..],
            (m1[k], m2[k], m3[k]),
            coarse,
            (m1[j], m2[j], m3[j]),
        )?;
    }

    let k = lb;
    // Compute an approximate solution on the coarsest grid.
    zero3(&mut u[ir[k]..], m1[k], m2[k], m3[k]);
    psinv(&r[ir[k]..], &mut u[ir[k]..], m1[k], m2[k], m3[k], c)?;

    for k in lb + 1..=lt - 1 {
        let j = k - 1;

        // Prolongate from level k-1 to k.
        zero3(&mut u[ir[k]..], m1[k], m2[k], m3[k]);
        let (fine, coarse) = u.split_at_mut(ir[j]);
        interp(
            coarse,
            (m1[j], m2[j], m3[j]),
            &mut fine[ir[k]..],
            (m1[k], m2[k], m3[k]),
        )?;

        // Compute the residual for level k (`v` is `r` itself).
        resid(&u[ir[k]..], None, &mut r[ir[k]..], m1[k], m2[k], m3[k], a)?;

        // Apply the smoother.
        psinv(&r[ir[k]..], &mut u[ir[k]..], m1[k], m2[k], m3[k], c)?;
    }

    let j = lt - 1;
    let k = lt;
    let (fine, coarse) = u.split_at_mut(ir[j]);
    interp(coarse, (m1[j], m2[j], m3[j]), fine, (n1, n2, n3))?;
    let _ = k;
    resid(u, Some(v), r, n1, n2, n3, a)?;
    psinv(r, u, n1, n2, n3, c)?;
    Ok(())
}

/// The smoother, an approximate inverse: `u = u + C r` (`psinv`; assumes `c[3] = 0`, as NPB
/// does).
#[acc::offload]
fn psinv(
    or: &[f64],
    ou: &mut [f64],
    n1: usize,
    n2: usize,
    n3: usize,
    c: &[f64; 4],
) -> Result<(), String> {
    let c0 = c[0];
    let c1 = c[1];
    let c2 = c[2];
    let mut r1 = scratch(n3 * n2 * n1)?;
    let mut r2 = scratch(n3 * n2 * n1)?;

    #[acc::data(
        deviceptr(r1, r2),
        present(ou[0..n3 * n2 * n1]),
        present(or[0..n3 * n2 * n1])
    )]
    {
        #[acc::parallel_loop(gang, num_gangs(n3 - 2), num_workers(16), vector_length(64))]
        for i3 in 1..n3 - 1 {
            #[acc::r#loop(worker)]
            for i2 in 1..n2 - 1 {
                #[acc::r#loop(vector)]
                for i1 in 0..n1 {
                    r1[i3 * n2 * n1 + i2 * n1 + i1] = or[i3 * n2 * n1 + (i2 - 1) * n1 + i1]
                        + or[i3 * n2 * n1 + (i2 + 1) * n1 + i1]
                        + or[(i3 - 1) * n2 * n1 + i2 * n1 + i1]
                        + or[(i3 + 1) * n2 * n1 + i2 * n1 + i1];
                    r2[i3 * n2 * n1 + i2 * n1 + i1] = or[(i3 - 1) * n2 * n1 + (i2 - 1) * n1 + i1]
                        + or[(i3 - 1) * n2 * n1 + (i2 + 1) * n1 + i1]
                        + or[(i3 + 1) * n2 * n1 + (i2 - 1) * n1 + i1]
                        + or[(i3 + 1) * n2 * n1 + (i2 + 1) * n1 + i1];
                }
            }
        }
        #[acc::parallel_loop(gang, num_gangs(n3 - 2), num_workers(16), vector_length(64))]
        for i3 in 1..n3 - 1 {
            #[acc::r#loop(worker)]
            for i2 in 1..n2 - 1 {
                #[acc::r#loop(vector)]
                for i1 in 1..n1 - 1 {
                    ou[i3 * n2 * n1 + i2 * n1 + i1] = ou[i3 * n2 * n1 + i2 * n1 + i1]
                        + c0 * or[i3 * n2 * n1 + i2 * n1 + i1]
                        + c1 * (or[i3 * n2 * n1 + i2 * n1 + i1 - 1]
                            + or[i3 * n2 * n1 + i2 * n1 + i1 + 1]
                            + r1[i3 * n2 * n1 + i2 * n1 + i1])
                        + c2 * (r2[i3 * n2 * n1 + i2 * n1 + i1]
                            + r1[i3 * n2 * n1 + i2 * n1 + i1 - 1]
                            + r1[i3 * n2 * n1 + i2 * n1 + i1 + 1]);
                    // Assume c[3] = 0 (+ c[3] * (r2[i1 - 1] + r2[i1 + 1]) otherwise).
                }
            }
        }
    }

    // Exchange boundary points.
    comm3(ou, n1, n2, n3);
    Ok(())
}

/// The residual `r = v - A u` (`resid`; assumes `a[1] = 0`, as NPB does). `ov` is `None` where
/// the original passes `r` itself as `v`.
#[acc::offload]
#[allow(clippy::too_many_arguments)]
fn resid(
    ou: &[f64],
    ov: Option<&[f64]>,
    or: &mut [f64],
    n1: usize,
    n2: usize,
    n3: usize,
    a: &[f64; 4],
) -> Result<(), String> {
    let a0 = a[0];
    let a2 = a[2];
    let a3 = a[3];
    let mut u1 = scratch(n3 * n2 * n1)?;
    let mut u2 = scratch(n3 * n2 * n1)?;

    #[acc::data(
        deviceptr(u1, u2),
        present(ou[0..n3 * n2 * n1]),
        present(or[0..n3 * n2 * n1])
    )]
    {
        #[acc::parallel(num_gangs(n3 - 2), num_workers(8), vector_length(128))]
        {
            #[acc::r#loop(gang)]
            for i3 in 1..n3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 1..n2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 0..n1 {
                        u1[i3 * n2 * n1 + i2 * n1 + i1] = ou[i3 * n2 * n1 + (i2 - 1) * n1 + i1]
                            + ou[i3 * n2 * n1 + (i2 + 1) * n1 + i1]
                            + ou[(i3 - 1) * n2 * n1 + i2 * n1 + i1]
                            + ou[(i3 + 1) * n2 * n1 + i2 * n1 + i1];
                        u2[i3 * n2 * n1 + i2 * n1 + i1] = ou
                            [(i3 - 1) * n2 * n1 + (i2 - 1) * n1 + i1]
                            + ou[(i3 - 1) * n2 * n1 + (i2 + 1) * n1 + i1]
                            + ou[(i3 + 1) * n2 * n1 + (i2 - 1) * n1 + i1]
                            + ou[(i3 + 1) * n2 * n1 + (i2 + 1) * n1 + i1];
                    }
                }
            }
        }
        if let Some(ov) = ov {
            #[acc::parallel(
                num_gangs(n3 - 2),
                num_workers(8),
                vector_length(128),
                present(ov[0..n3 * n2 * n1])
            )]
            {
                #[acc::r#loop(gang)]
                for i3 in 1..n3 - 1 {
                    #[acc::r#loop(worker)]
                    for i2 in 1..n2 - 1 {
                        #[acc::r#loop(vector)]
                        for i1 in 1..n1 - 1 {
                            // Assume a[1] = 0.
                            or[i3 * n2 * n1 + i2 * n1 + i1] = ov[i3 * n2 * n1 + i2 * n1 + i1]
                                - a0 * ou[i3 * n2 * n1 + i2 * n1 + i1]
                                - a2 * (u2[i3 * n2 * n1 + i2 * n1 + i1]
                                    + u1[i3 * n2 * n1 + i2 * n1 + i1 - 1]
                                    + u1[i3 * n2 * n1 + i2 * n1 + i1 + 1])
                                - a3 * (u2[i3 * n2 * n1 + i2 * n1 + i1 - 1]
                                    + u2[i3 * n2 * n1 + i2 * n1 + i1 + 1]);
                        }
                    }
                }
            }
        } else {
            // The same sweep with `v` the array `r` itself.
            #[acc::parallel(num_gangs(n3 - 2), num_workers(8), vector_length(128))]
            {
                #[acc::r#loop(gang)]
                for i3 in 1..n3 - 1 {
                    #[acc::r#loop(worker)]
                    for i2 in 1..n2 - 1 {
                        #[acc::r#loop(vector)]
                        for i1 in 1..n1 - 1 {
                            or[i3 * n2 * n1 + i2 * n1 + i1] = or[i3 * n2 * n1 + i2 * n1 + i1]
                                - a0 * ou[i3 * n2 * n1 + i2 * n1 + i1]
                                - a2 * (u2[i3 * n2 * n1 + i2 * n1 + i1]
                                    + u1[i3 * n2 * n1 + i2 * n1 + i1 - 1]
                                    + u1[i3 * n2 * n1 + i2 * n1 + i1 + 1])
                                - a3 * (u2[i3 * n2 * n1 + i2 * n1 + i1 - 1]
                                    + u2[i3 * n2 * n1 + i2 * n1 + i1 + 1]);
                        }
                    }
                }
            }
        }
    }

    // Exchange boundary data.
    comm3(or, n1, n2, n3);
    Ok(())
}

/// Projects onto the next coarser grid with a trilinear finite element projection:
/// `s = r' = P r` (`rprj3`).
#[acc::offload]
fn rprj3(
    or: &[f64],
    (m1k, m2k, m3k): (usize, usize, usize),
    os: &mut [f64],
    (m1j, m2j, m3j): (usize, usize, usize),
) -> Result<(), String> {
    let mut x1 = scratch(m3k * m2k * m1k)?;
    let mut y1 = scratch(m3k * m2k * m1k)?;

    let d1 = if m1k == 3 { 2 } else { 1 };
    let d2 = if m2k == 3 { 2 } else { 1 };
    let d3 = if m3k == 3 { 2 } else { 1 };

    #[acc::data(
        deviceptr(x1, y1),
        present(or[0..m3k * m2k * m1k]),
        present(os[0..m3j * m2j * m1j])
    )]
    {
        #[acc::parallel_loop(gang, num_gangs(m3j - 2), num_workers(8), vector_length(128))]
        for j3 in 1..m3j - 1 {
            let i3 = 2 * j3 - d3;
            #[acc::r#loop(worker)]
            for j2 in 1..m2j - 1 {
                let i2 = 2 * j2 - d2;
                #[acc::r#loop(vector)]
                for j1 in 1..m1j {
                    let i1 = 2 * j1 - d1;
                    x1[i3 * m2k * m1k + i2 * m1k + i1] = or[(i3 + 1) * m2k * m1k + i2 * m1k + i1]
                        + or[(i3 + 1) * m2k * m1k + (i2 + 2) * m1k + i1]
                        + or[i3 * m2k * m1k + (i2 + 1) * m1k + i1]
                        + or[(i3 + 2) * m2k * m1k + (i2 + 1) * m1k + i1];
                    y1[i3 * m2k * m1k + i2 * m1k + i1] = or[i3 * m2k * m1k + i2 * m1k + i1]
                        + or[(i3 + 2) * m2k * m1k + i2 * m1k + i1]
                        + or[i3 * m2k * m1k + (i2 + 2) * m1k + i1]
                        + or[(i3 + 2) * m2k * m1k + (i2 + 2) * m1k + i1];
                }
            }
        }
        #[acc::parallel_loop(gang, num_gangs(m3j - 2), num_workers(8), vector_length(128))]
        for j3 in 1..m3j - 1 {
            let i3 = 2 * j3 - d3;
            #[acc::r#loop(worker)]
            for j2 in 1..m2j - 1 {
                let i2 = 2 * j2 - d2;
                #[acc::r#loop(vector)]
                for j1 in 1..m1j - 1 {
                    let i1 = 2 * j1 - d1;
                    let y2 = or[i3 * m2k * m1k + i2 * m1k + i1 + 1]
                        + or[(i3 + 2) * m2k * m1k + i2 * m1k + i1 + 1]
                        + or[i3 * m2k * m1k + (i2 + 2) * m1k + i1 + 1]
                        + or[(i3 + 2) * m2k * m1k + (i2 + 2) * m1k + i1 + 1];
                    let x2 = or[(i3 + 1) * m2k * m1k + i2 * m1k + i1 + 1]
                        + or[(i3 + 1) * m2k * m1k + (i2 + 2) * m1k + i1 + 1]
                        + or[i3 * m2k * m1k + (i2 + 1) * m1k + i1 + 1]
                        + or[(i3 + 2) * m2k * m1k + (i2 + 1) * m1k + i1 + 1];
                    os[j3 * m2j * m1j + j2 * m1j + j1] = 0.5
                        * or[(i3 + 1) * m2k * m1k + (i2 + 1) * m1k + i1 + 1]
                        + 0.25
                            * (or[(i3 + 1) * m2k * m1k + (i2 + 1) * m1k + i1]
                                + or[(i3 + 1) * m2k * m1k + (i2 + 1) * m1k + i1 + 2]
                                + x2)
                        + 0.125
                            * (x1[i3 * m2k * m1k + i2 * m1k + i1]
                                + x1[i3 * m2k * m1k + i2 * m1k + i1 + 2]
                                + y2)
                        + 0.0625
                            * (y1[i3 * m2k * m1k + i2 * m1k + i1]
                                + y1[i3 * m2k * m1k + i2 * m1k + i1 + 2]);
                }
            }
        }
    }

    comm3(os, m1j, m2j, m3j);
    Ok(())
}

/// Adds the trilinear interpolation of the correction from the coarser grid to the current
/// approximation: `u = u + Q u'` (`interp`).
#[acc::offload]
fn interp(
    oz: &[f64],
    (mm1, mm2, mm3): (usize, usize, usize),
    ou: &mut [f64],
    (n1, n2, n3): (usize, usize, usize),
) -> Result<(), String> {
    let mut z1 = scratch(mm3 * mm2 * mm1)?;
    let mut z2 = scratch(mm3 * mm2 * mm1)?;
    let mut z3 = scratch(mm3 * mm2 * mm1)?;

    #[acc::data(
        deviceptr(z1, z2, z3),
        present(oz[0..mm3 * mm2 * mm1]),
        present(ou[0..n3 * n2 * n1])
    )]
    {
        if n1 != 3 && n2 != 3 && n3 != 3 {
            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 0..mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 0..mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 0..mm1 {
                        z1[i3 * mm2 * mm1 + i2 * mm1 + i1] = oz
                            [i3 * mm2 * mm1 + (i2 + 1) * mm1 + i1]
                            + oz[i3 * mm2 * mm1 + i2 * mm1 + i1];
                        z2[i3 * mm2 * mm1 + i2 * mm1 + i1] = oz
                            [(i3 + 1) * mm2 * mm1 + i2 * mm1 + i1]
                            + oz[i3 * mm2 * mm1 + i2 * mm1 + i1];
                        z3[i3 * mm2 * mm1 + i2 * mm1 + i1] = oz
                            [(i3 + 1) * mm2 * mm1 + (i2 + 1) * mm1 + i1]
                            + oz[(i3 + 1) * mm2 * mm1 + i2 * mm1 + i1]
                            + z1[i3 * mm2 * mm1 + i2 * mm1 + i1];
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 0..mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 0..mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 0..mm1 - 1 {
                        ou[2 * i3 * n2 * n1 + 2 * i2 * n1 + 2 * i1] = ou
                            [2 * i3 * n2 * n1 + 2 * i2 * n1 + 2 * i1]
                            + oz[i3 * mm2 * mm1 + i2 * mm1 + i1];
                        ou[2 * i3 * n2 * n1 + 2 * i2 * n1 + 2 * i1 + 1] = ou
                            [2 * i3 * n2 * n1 + 2 * i2 * n1 + 2 * i1 + 1]
                            + 0.5
                                * (oz[i3 * mm2 * mm1 + i2 * mm1 + i1 + 1]
                                    + oz[i3 * mm2 * mm1 + i2 * mm1 + i1]);
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 0..mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 0..mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 0..mm1 - 1 {
                        ou[2 * i3 * n2 * n1 + (2 * i2 + 1) * n1 + 2 * i1] = ou
                            [2 * i3 * n2 * n1 + (2 * i2 + 1) * n1 + 2 * i1]
                            + 0.5 * z1[i3 * mm2 * mm1 + i2 * mm1 + i1];
                        ou[2 * i3 * n2 * n1 + (2 * i2 + 1) * n1 + 2 * i1 + 1] = ou
                            [2 * i3 * n2 * n1 + (2 * i2 + 1) * n1 + 2 * i1 + 1]
                            + 0.25
                                * (z1[i3 * mm2 * mm1 + i2 * mm1 + i1]
                                    + z1[i3 * mm2 * mm1 + i2 * mm1 + i1 + 1]);
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 0..mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 0..mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 0..mm1 - 1 {
                        ou[(2 * i3 + 1) * n2 * n1 + 2 * i2 * n1 + 2 * i1] = ou
                            [(2 * i3 + 1) * n2 * n1 + 2 * i2 * n1 + 2 * i1]
                            + 0.5 * z2[i3 * mm2 * mm1 + i2 * mm1 + i1];
                        ou[(2 * i3 + 1) * n2 * n1 + 2 * i2 * n1 + 2 * i1 + 1] = ou
                            [(2 * i3 + 1) * n2 * n1 + 2 * i2 * n1 + 2 * i1 + 1]
                            + 0.25
                                * (z2[i3 * mm2 * mm1 + i2 * mm1 + i1]
                                    + z2[i3 * mm2 * mm1 + i2 * mm1 + i1 + 1]);
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 0..mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 0..mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 0..mm1 - 1 {
                        ou[(2 * i3 + 1) * n2 * n1 + (2 * i2 + 1) * n1 + 2 * i1] = ou
                            [(2 * i3 + 1) * n2 * n1 + (2 * i2 + 1) * n1 + 2 * i1]
                            + 0.25 * z3[i3 * mm2 * mm1 + i2 * mm1 + i1];
                        ou[(2 * i3 + 1) * n2 * n1 + (2 * i2 + 1) * n1 + 2 * i1 + 1] = ou
                            [(2 * i3 + 1) * n2 * n1 + (2 * i2 + 1) * n1 + 2 * i1 + 1]
                            + 0.125
                                * (z3[i3 * mm2 * mm1 + i2 * mm1 + i1]
                                    + z3[i3 * mm2 * mm1 + i2 * mm1 + i1 + 1]);
                    }
                }
            }
        } else {
            let (d1, t1) = if n1 == 3 { (2, 1) } else { (1, 0) };
            let (d2, t2) = if n2 == 3 { (2, 1) } else { (1, 0) };
            let (d3, t3) = if n3 == 3 { (2, 1) } else { (1, 0) };

            #[acc::parallel_loop(gang, num_gangs(mm3 - d3), num_workers(8), vector_length(128))]
            for i3 in d3..=mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in d2..=mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in d1..=mm1 - 1 {
                        ou[(2 * i3 - d3 - 1) * n2 * n1 + (2 * i2 - d2 - 1) * n1 + 2 * i1
                            - d1
                            - 1] =
                            ou[(2 * i3 - d3 - 1) * n2 * n1 + (2 * i2 - d2 - 1) * n1 + 2 * i1
                                - d1
                                - 1]
                                + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1];
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - d3), num_workers(8), vector_length(128))]
            for i3 in d3..=mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in d2..=mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 1..=mm1 - 1 {
                        ou[(2 * i3 - d3 - 1) * n2 * n1 + (2 * i2 - d2 - 1) * n1 + 2 * i1
                            - t1
                            - 1] =
                            ou[(2 * i3 - d3 - 1) * n2 * n1 + (2 * i2 - d2 - 1) * n1 + 2 * i1
                                - t1
                                - 1]
                                + 0.5
                                    * (oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]);
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - d3), num_workers(8), vector_length(128))]
            for i3 in d3..=mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 1..=mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in d1..=mm1 - 1 {
                        ou[(2 * i3 - d3 - 1) * n2 * n1 + (2 * i2 - t2 - 1) * n1 + 2 * i1
                            - d1
                            - 1] =
                            ou[(2 * i3 - d3 - 1) * n2 * n1 + (2 * i2 - t2 - 1) * n1 + 2 * i1
                                - d1
                                - 1]
                                + 0.5
                                    * (oz[(i3 - 1) * mm2 * mm1 + i2 * mm1 + i1 - 1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]);
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - d3), num_workers(8), vector_length(128))]
            for i3 in d3..=mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 1..=mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 1..=mm1 - 1 {
                        ou[(2 * i3 - d3 - 1) * n2 * n1 + (2 * i2 - t2 - 1) * n1 + 2 * i1
                            - t1
                            - 1] =
                            ou[(2 * i3 - d3 - 1) * n2 * n1 + (2 * i2 - t2 - 1) * n1 + 2 * i1
                                - t1
                                - 1]
                                + 0.25
                                    * (oz[(i3 - 1) * mm2 * mm1 + i2 * mm1 + i1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1]
                                        + oz[(i3 - 1) * mm2 * mm1 + i2 * mm1 + i1 - 1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]);
                    }
                }
            }

            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 1..=mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in d2..=mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in d1..=mm1 - 1 {
                        ou[(2 * i3 - t3 - 1) * n2 * n1 + (2 * i2 - d2 - 1) * n1 + 2 * i1
                            - d1
                            - 1] =
                            ou[(2 * i3 - t3 - 1) * n2 * n1 + (2 * i2 - d2 - 1) * n1 + 2 * i1
                                - d1
                                - 1]
                                + 0.5
                                    * (oz[i3 * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]);
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 1..=mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in d2..=mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 1..=mm1 - 1 {
                        ou[(2 * i3 - t3 - 1) * n2 * n1 + (2 * i2 - d2 - 1) * n1 + 2 * i1
                            - t1
                            - 1] =
                            ou[(2 * i3 - t3 - 1) * n2 * n1 + (2 * i2 - d2 - 1) * n1 + 2 * i1
                                - t1
                                - 1]
                                + 0.25
                                    * (oz[i3 * mm2 * mm1 + (i2 - 1) * mm1 + i1]
                                        + oz[i3 * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]);
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 1..=mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 1..=mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in d1..=mm1 - 1 {
                        ou[(2 * i3 - t3 - 1) * n2 * n1 + (2 * i2 - t2 - 1) * n1 + 2 * i1
                            - d1
                            - 1] =
                            ou[(2 * i3 - t3 - 1) * n2 * n1 + (2 * i2 - t2 - 1) * n1 + 2 * i1
                                - d1
                                - 1]
                                + 0.25
                                    * (oz[i3 * mm2 * mm1 + i2 * mm1 + i1 - 1]
                                        + oz[i3 * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]
                                        + oz[(i3 - 1) * mm2 * mm1 + i2 * mm1 + i1 - 1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]);
                    }
                }
            }
            #[acc::parallel_loop(gang, num_gangs(mm3 - 1), num_workers(8), vector_length(128))]
            for i3 in 1..=mm3 - 1 {
                #[acc::r#loop(worker)]
                for i2 in 1..=mm2 - 1 {
                    #[acc::r#loop(vector)]
                    for i1 in 1..=mm1 - 1 {
                        ou[(2 * i3 - t3 - 1) * n2 * n1 + (2 * i2 - t2 - 1) * n1 + 2 * i1
                            - t1
                            - 1] =
                            ou[(2 * i3 - t3 - 1) * n2 * n1 + (2 * i2 - t2 - 1) * n1 + 2 * i1
                                - t1
                                - 1]
                                + 0.125
                                    * (oz[i3 * mm2 * mm1 + i2 * mm1 + i1]
                                        + oz[i3 * mm2 * mm1 + (i2 - 1) * mm1 + i1]
                                        + oz[i3 * mm2 * mm1 + i2 * mm1 + i1 - 1]
                                        + oz[i3 * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]
                                        + oz[(i3 - 1) * mm2 * mm1 + i2 * mm1 + i1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1]
                                        + oz[(i3 - 1) * mm2 * mm1 + i2 * mm1 + i1 - 1]
                                        + oz[(i3 - 1) * mm2 * mm1 + (i2 - 1) * mm1 + i1 - 1]);
                    }
                }
            }
        }
    }
    Ok(())
}

/// The L2 norm and the uniform norm of the interior of a grid (`norm2u3`): `(rnm2, rnmu)`.
#[acc::offload]
#[allow(clippy::too_many_arguments)]
fn norm2u3(
    or: &[f64],
    n1: usize,
    n2: usize,
    n3: usize,
    nx: usize,
    ny: usize,
    nz: usize,
) -> (f64, f64) {
    let dn = 1.0 * nx as f64 * ny as f64 * nz as f64;

    let mut s = 0.0f64;
    let mut rnmu = 0.0f64;
    let mut temp = rnmu;
    #[acc::data(pcopyin(or[0..n3 * n2 * n1]))]
    {
        #[acc::parallel_loop(
            gang,
            reduction(+: s),
            reduction(max: temp),
            num_gangs(n3 - 2),
            num_workers(8),
            vector_length(128)
        )]
        for i3 in 1..n3 - 1 {
            #[acc::r#loop(worker)]
            for i2 in 1..n2 - 1 {
                #[acc::r#loop(vector)]
                for i1 in 1..n1 - 1 {
                    s = s + or[i3 * n2 * n1 + i2 * n1 + i1].powf(2.0);
                    let a = or[i3 * n2 * n1 + i2 * n1 + i1].abs();
                    temp = temp.max(a);
                }
            }
        }
    }
    rnmu = temp;
    ((s / dn).sqrt(), rnmu)
}

/// The periodic boundaries (`comm3`, one process): each ghost plane is the opposite interior
/// plane.
#[acc::offload]
fn comm3(ou: &mut [f64], n1: usize, n2: usize, n3: usize) {
    #[acc::data(present(ou[0..n3 * n2 * n1]))]
    {
        #[acc::parallel_loop(gang, num_gangs(n3 - 2), vector_length(128))]
        for i3 in 1..n3 - 1 {
            #[acc::r#loop(vector)]
            for i2 in 1..n2 - 1 {
                ou[i3 * n2 * n1 + i2 * n1] = ou[i3 * n2 * n1 + i2 * n1 + n1 - 2];
                ou[i3 * n2 * n1 + i2 * n1 + n1 - 1] = ou[i3 * n2 * n1 + i2 * n1 + 1];
            }
        }

        #[acc::parallel_loop(gang, num_gangs(n3 - 2), vector_length(128))]
        for i3 in 1..n3 - 1 {
            #[acc::r#loop(vector)]
            for i1 in 0..n1 {
                ou[i3 * n2 * n1 + i1] = ou[i3 * n2 * n1 + (n2 - 2) * n1 + i1];
                ou[i3 * n2 * n1 + (n2 - 1) * n1 + i1] = ou[i3 * n2 * n1 + n1 + i1];
            }
        }

        #[acc::parallel_loop(gang, num_gangs(n2), vector_length(128))]
        for i2 in 0..n2 {
            #[acc::r#loop(vector)]
            for i1 in 0..n1 {
                ou[i2 * n1 + i1] = ou[(n3 - 2) * n2 * n1 + i2 * n1 + i1];
                ou[(n3 - 1) * n2 * n1 + i2 * n1 + i1] = ou[n2 * n1 + i2 * n1 + i1];
            }
        }
    }
}

/// Zeroes a grid (`zero3`) on the device.
#[acc::offload]
fn zero3(oz: &mut [f64], n1: usize, n2: usize, n3: usize) {
    #[acc::parallel(
        present(oz[0..n3 * n2 * n1]),
        num_gangs(n3),
        num_workers(8),
        vector_length(128)
    )]
    {
        #[acc::r#loop(gang)]
        for i3 in 0..n3 {
            #[acc::r#loop(worker)]
            for i2 in 0..n2 {
                #[acc::r#loop(vector)]
                for i1 in 0..n1 {
                    oz[i3 * n2 * n1 + i2 * n1 + i1] = 0.0;
                }
            }
        }
    }
}

/// The class of each size: S (CI) and B (the GPU benchmark; 25 s on the multicore device with
/// two cores of a shared machine, so well inside a minute on sixteen).
fn size(large: bool) -> Class {
    if large {
        CLASS_B
    } else {
        CLASS_S
    }
}

/// Runs MG on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    run(size(large))
}

/// The CUDA reference's arguments for the same size: NX and NIT.
pub fn cuda_args(large: bool) -> Vec<String> {
    let c = size(large);
    vec![c.nx.to_string(), c.nit.to_string()]
}

/// MG at `class`'s sizes on the current device, timed and verified with NPB's `rnm2`.
pub fn run(class: Class) -> Result<Outcome, String> {
    let letter = letter(class);
    let Some(want) = verify_value(letter) else {
        return Err(format!(
            "mg: {class:?} is not an NPB class, and NPB's L2 norm is all the port verifies against"
        ));
    };
    let (rnm2, time) = benchmark(class)?;
    let err = ((rnm2 - want) / want).abs();
    if !(err <= 1.0e-8) {
        return Err(format!(
            "mg: the L2 norm is {rnm2:.13e}, NPB's for class {letter} is {want:.13e} (relative error {err:e}, more than 1e-8)"
        ));
    }
    Ok(Outcome {
        time,
        checksum: rnm2,
        verified: format!("NPB's L2 norm for class {letter} within {err:.1e}"),
    })
}
