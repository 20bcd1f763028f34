//! NPB CG (NPB3.3-ACC, the University of Houston's OpenACC C version, `CG/cg.c`): the
//! smallest eigenvalue of a large sparse symmetric positive definite matrix by inverse power
//! iteration, each step solving a linear system by 25 iterations of the conjugate gradient
//! method (`conj_grad`). The matrix is NPB's random sparse matrix (`makea`, `sparse`, `sprnvc`,
//! `vecset`, with NPB's generator `randlc`), built on the host as in the original.
//!
//! The original's directives, kept: `data copyin(colidx[0:nz], a[0:nz], rowstr[0:na+1])
//! create(x[0:na+2], z[0:na+2], p[0:na+2], q[0:na+2], r[0:na+2])` around the untimed and the
//! timed iterations; `kernels loop gang((n+127)/128) vector(128)` on the vector loops (with
//! `independent` where the original has it, and `gang((end+1023)/1024) vector(1024)` on the
//! `z`/`r` update); `parallel loop [gang worker vector] num_gangs((end+127)/128)
//! num_workers(4) vector_length(32) reduction(+: ..)` on the norms; in `conj_grad`, `data
//! present(colidx, rowstr, x, z, a, p, q, r)` around the whole routine, `parallel
//! num_gangs(end) num_workers(4) vector_length(32)` with `loop gang` over `loop worker vector
//! reduction(+:sum)` on the matrix-vector product, `parallel num_gangs((end+127)/128)
//! num_workers(4) vector_length(32)` with `loop gang worker vector reduction(+:d)` and
//! `reduction(+:rho)` on the dot products, and `parallel loop gang num_gangs(end)
//! num_workers(4) vector_length(32)` over `loop worker vector reduction(+:d)` on the residual's
//! product. Changed: acc asks for a loop reduction's variable on the enclosing `parallel`
//! construct, which 3.3 section 2.6.2 implies for C: `copy(d)` and `copy(rho)` are added to
//! the two dot products' `parallel` constructs. The scalars the C code declares at the top of
//! `conj_grad` and uses inside the loops (`tmp1`, `tmp2`, `tmp3`, the row sums) are locals of
//! the loop bodies, private to each iteration as the compilers make them.
//!
//! Timed as `cg.c` times itself (`T_bench`): the `NITER` iterations of the inverse power
//! method, inside the data region (the transfers and the untimed iteration before it).
//! Verified with NPB's value of `zeta` for the class (S and B), to 1e-10 as NPB does.

use std::time::Instant;

use crate::Outcome;

/// Where the port comes from.
pub const ORIGIN: &str =
    "NPB3.3-ACC CG (uhhpctools/openacc-npb, CG/CG/cg.c with CG/common/randdp.w2c.c)";

/// The condition number NPB gives the matrix.
const RCOND: f64 = 1.0e-1;

/// A class's sizes: `NA`, `NONZER`, `NITER`, `SHIFT`.
#[derive(Clone, Copy, Debug)]
pub struct Class {
    pub na: usize,
    pub nonzer: usize,
    pub niter: usize,
    pub shift: f64,
}

/// Class S and class B.
pub const CLASS_S: Class = Class {
    na: 1400,
    nonzer: 7,
    niter: 15,
    shift: 10.0,
};
pub const CLASS_B: Class = Class {
    na: 75000,
    nonzer: 13,
    niter: 75,
    shift: 60.0,
};

/// NPB's generator (`randlc` of `randdp.c`): `x = a * x (mod 2^46)`, returning `x * 2^-46`.
fn randlc(x: &mut f64, a: f64) -> f64 {
    const R23: f64 = 1.1920928955078125e-07;
    const R46: f64 = R23 * R23;
    const T23: f64 = 8.388608e+06;
    const T46: f64 = T23 * T23;
    let t1 = R23 * a;
    let a1 = t1.trunc();
    let a2 = a - T23 * a1;
    let t1 = R23 * *x;
    let x1 = t1.trunc();
    let x2 = *x - T23 * x1;
    let t1 = a1 * x2 + a2 * x1;
    let t2 = (R23 * t1).trunc();
    let z = t1 - T23 * t2;
    let t3 = T23 * z + a2 * x2;
    let t4 = (R46 * t3).trunc();
    *x = t3 - T46 * t4;
    R46 * *x
}

/// The generator's state (`common /urando/`).
struct Urando {
    amult: f64,
    tran: f64,
}

/// The benchmark: `zeta` after `niter` iterations, and the timed section's length.
#[acc::offload]
#[allow(clippy::needless_range_loop, unused_assignments)]
pub fn benchmark(class: Class) -> Result<(f64, std::time::Duration), String> {
    let Class {
        na,
        nonzer,
        niter,
        shift,
    } = class;
    let nz = na * (nonzer + 1) * (nonzer + 1);
    let naz = na * (nonzer + 1);
    let (firstrow, lastrow, firstcol, lastcol) = (0usize, na - 1, 0usize, na - 1);
    let naa = na;

    let mut colidx = vec![0i32; nz];
    let mut rowstr = vec![0i32; na + 1];
    let mut iv = vec![0i32; na];
    let mut arow = vec![0usize; na];
    let mut acol = vec![0i32; naz];
    let mut aelt = vec![0.0f64; naz];
    let mut a = vec![0.0f64; nz];
    let mut x = vec![0.0f64; na + 2];
    let mut z = vec![0.0f64; na + 2];
    let mut p = vec![0.0f64; na + 2];
    let mut q = vec![0.0f64; na + 2];
    let mut r = vec![0.0f64; na + 2];

    // Initialize the random number generator.
    let mut rng = Urando {
        tran: 314159265.0,
        amult: 1220703125.0,
    };
    let mut zeta = randlc(&mut rng.tran, rng.amult);

    makea(
        &mut rng,
        (naa, nz, nonzer, shift),
        (&mut a, &mut colidx, &mut rowstr),
        (firstrow, lastrow),
        (&mut arow, &mut acol, &mut aelt, &mut iv),
    )?;

    // Shift the column indices from (firstcol .. lastcol) to (0 .. lastcol - firstcol).
    for j in 0..lastrow - firstrow + 1 {
        for k in rowstr[j] as usize..rowstr[j + 1] as usize {
            colidx[k] -= firstcol as i32;
        }
    }

    let mut rnorm;
    let (mut norm_temp1, mut norm_temp2);
    let mut time = std::time::Duration::ZERO;
    #[acc::data(
        copyin(colidx[0..nz], a[0..nz], rowstr[0..na + 1]),
        create(x[0..na + 2], z[0..na + 2], p[0..na + 2], q[0..na + 2], r[0..na + 2])
    )]
    {
        // Set the starting vector to (1, 1, .... 1).
        let na_gangs = na + 1;
        #[acc::kernels_loop(gang(num: (na_gangs + 127) / 128), vector(length: 128))]
        for i in 0..na + 1 {
            x[i] = 1.0;
        }

        let end = lastcol - firstcol + 1;
        #[acc::kernels_loop(gang(num: (end + 127) / 128), vector(length: 128))]
        for j in 0..end {
            q[j] = 0.0;
            z[j] = 0.0;
            r[j] = 0.0;
            p[j] = 0.0;
        }

        zeta = 0.0;

        // Do one iteration untimed to init all code and data page tables (then reinit, start
        // timing, to niter its).
        for _it in 1..=1 {
            // The call to the conjugate gradient routine.
            rnorm = conj_grad(
                (&colidx, &rowstr, &a),
                (&mut x, &mut z, &mut p, &mut q, &mut r),
                (naa, nz, na, lastrow - firstrow + 1, lastcol - firstcol + 1),
            );

            // zeta = shift + 1/(x.z): first (x.z), and the norm of z, (z.z).
            norm_temp1 = 0.0;
            norm_temp2 = 0.0;
            #[acc::parallel_loop(
                num_gangs((end + 127) / 128),
                num_workers(4),
                vector_length(32),
                reduction(+: norm_temp2)
            )]
            for j in 0..end {
                norm_temp2 += z[j] * z[j];
            }

            norm_temp2 = 1.0 / norm_temp2.sqrt();

            // Normalize z to obtain x.
            #[acc::kernels_loop(gang(num: (end + 127) / 128), vector(length: 128))]
            for j in 0..end {
                x[j] = norm_temp2 * z[j];
            }
        }

        // Set the starting vector to (1, 1, .... 1).
        let na_gangs = na + 1;
        #[acc::kernels_loop(gang(num: (na_gangs + 127) / 128), vector(length: 128))]
        for i in 0..na + 1 {
            x[i] = 1.0;
        }

        zeta = 0.0;

        acc::wait_all().expect("the untimed iteration runs");
        let timer = Instant::now();

        // Main iteration for the inverse power method.
        for _it in 1..=niter {
            // The call to the conjugate gradient routine.
            rnorm = conj_grad(
                (&colidx, &rowstr, &a),
                (&mut x, &mut z, &mut p, &mut q, &mut r),
                (naa, nz, na, lastrow - firstrow + 1, lastcol - firstcol + 1),
            );
            let _ = rnorm;

            // zeta = shift + 1/(x.z): first (x.z), and the norm of z, (z.z).
            norm_temp1 = 0.0;
            norm_temp2 = 0.0;
            #[acc::parallel_loop(
                gang,
                worker,
                vector,
                num_gangs((end + 127) / 128),
                num_workers(4),
                vector_length(32),
                reduction(+: norm_temp1, norm_temp2)
            )]
            for j in 0..end {
                norm_temp1 += x[j] * z[j];
                norm_temp2 += z[j] * z[j];
            }

            norm_temp2 = 1.0 / norm_temp2.sqrt();

            zeta = shift + 1.0 / norm_temp1;

            // Normalize z to obtain x.
            #[acc::kernels_loop(gang(num: (end + 127) / 128), vector(length: 128))]
            for j in 0..end {
                x[j] = norm_temp2 * z[j];
            }
        }

        acc::wait_all().expect("the timed iterations run");
        time = timer.elapsed();
    }
    Ok((zeta, time))
}

/// The conjugate gradient iterations (`conj_grad`): `z` approximates the solution of
/// `A z = x`; returns `||x - A z||`.
#[acc::offload]
#[allow(clippy::type_complexity, unused_assignments)]
fn conj_grad(
    (colidx, rowstr, a): (&[i32], &[i32], &[f64]),
    (x, z, p, q, r): (&mut [f64], &mut [f64], &mut [f64], &mut [f64], &mut [f64]),
    (naa, nz, na, nrows, ncols): (usize, usize, usize, usize, usize),
) -> f64 {
    let cgitmax = 25;
    let mut rho = 0.0f64;
    let mut sum = 0.0f64;
    #[acc::data(present(
        colidx[0..nz],
        rowstr[0..na + 1],
        x[0..na + 2],
        z[0..na + 2],
        a[0..nz],
        p[0..na + 2],
        q[0..na + 2],
        r[0..na + 2]
    ))]
    {
        // Initialize the CG algorithm.
        #[acc::kernels_loop(gang(num: (naa + 127) / 128), vector(length: 128), independent)]
        for j in 0..naa {
            q[j] = 0.0;
            z[j] = 0.0;
            r[j] = x[j];
            p[j] = r[j];
        }

        // rho = r.r
        #[acc::parallel_loop(
            gang,
            worker,
            vector,
            num_gangs((ncols + 127) / 128),
            num_workers(4),
            vector_length(32),
            reduction(+: rho)
        )]
        for j in 0..ncols {
            rho += r[j] * r[j];
        }

        // The conj grad iteration loop.
        for _cgit in 1..=cgitmax {
            // q = A.p
            let end = nrows;
            #[acc::parallel(num_gangs(end), num_workers(4), vector_length(32))]
            {
                #[acc::r#loop(gang)]
                for j in 0..end {
                    let tmp1 = rowstr[j] as usize;
                    let tmp2 = rowstr[j + 1] as usize;
                    let mut sum = 0.0;
                    #[acc::r#loop(worker, vector, reduction(+: sum))]
                    for k in tmp1..tmp2 {
                        let tmp3 = colidx[k] as usize;
                        sum += a[k] * p[tmp3];
                    }
                    q[j] = sum;
                }
            }

            // Obtain p.q
            let mut d = 0.0f64;
            let end = ncols;
            #[acc::parallel(
                num_gangs((end + 127) / 128),
                num_workers(4),
                vector_length(32),
                copy(d)
            )]
            {
                #[acc::r#loop(gang, worker, vector, reduction(+: d))]
                for j in 0..end {
                    d += p[j] * q[j];
                }
            }

            // Obtain alpha = rho / (p.q)
            let alpha = rho / d;

            // Save a temporary of rho
            let rho0 = rho;

            // Obtain z = z + alpha*p and r = r - alpha*q
            rho = 0.0;
            #[acc::kernels_loop(
                gang(num: (end + 1023) / 1024),
                vector(length: 1024),
                independent
            )]
            for j in 0..end {
                z[j] += alpha * p[j];
                r[j] -= alpha * q[j];
            }

            // rho = r.r
            #[acc::parallel(
                num_gangs((end + 127) / 128),
                num_workers(4),
                vector_length(32),
                copy(rho)
            )]
            {
                #[acc::r#loop(gang, worker, vector, reduction(+: rho))]
                for j in 0..end {
                    rho += r[j] * r[j];
                }
            }

            // Obtain beta
            let beta = rho / rho0;

            // p = r + beta*p
            #[acc::kernels_loop(gang(num: (end + 127) / 128), vector(length: 128), independent)]
            for j in 0..end {
                p[j] = r[j] + beta * p[j];
            }
        }

        // Compute the residual norm explicitly, ||r|| = ||x - A.z||: first, form A.z.
        let end = nrows;
        #[acc::parallel_loop(gang, num_gangs(end), num_workers(4), vector_length(32))]
        for j in 0..end {
            let tmp1 = rowstr[j] as usize;
            let tmp2 = rowstr[j + 1] as usize;
            let mut d = 0.0;
            #[acc::r#loop(worker, vector, reduction(+: d))]
            for k in tmp1..tmp2 {
                let tmp3 = colidx[k] as usize;
                d += a[k] * z[tmp3];
            }
            r[j] = d;
        }

        // At this point, r contains A.z
        sum = 0.0;
        #[acc::parallel_loop(
            gang,
            worker,
            vector,
            num_gangs((ncols + 127) / 128),
            num_workers(4),
            vector_length(32),
            reduction(+: sum)
        )]
        for j in 0..ncols {
            let d = x[j] - r[j];
            sum += d * d;
        }
    }
    sum.sqrt()
}

/// Generates the test problem (`makea`): a sparse matrix with a prescribed sparsity
/// distribution, in compressed rows (`a`, `colidx`, `rowstr`).
#[allow(clippy::type_complexity)]
fn makea(
    rng: &mut Urando,
    (n, nz, nonzer, shift): (usize, usize, usize, f64),
    (a, colidx, rowstr): (&mut [f64], &mut [i32], &mut [i32]),
    (firstrow, lastrow): (usize, usize),
    (arow, acol, aelt, iv): (&mut [usize], &mut [i32], &mut [f64], &mut [i32]),
) -> Result<(), String> {
    let mut ivc = vec![0i32; nonzer + 1];
    let mut vc = vec![0.0f64; nonzer + 1];

    // nn1 is the smallest power of two not less than n.
    let mut nn1 = 1;
    loop {
        nn1 *= 2;
        if nn1 >= n {
            break;
        }
    }

    // Generate nonzero positions and save them for the use in sparse.
    for iouter in 0..n {
        let mut nzv = nonzer;
        sprnvc(rng, n, nzv, nn1, &mut vc, &mut ivc);
        vecset(&mut vc, &mut ivc, &mut nzv, iouter as i32 + 1, 0.5);
        arow[iouter] = nzv;
        for ivelt in 0..nzv {
            acol[iouter * (nonzer + 1) + ivelt] = ivc[ivelt] - 1;
            aelt[iouter * (nonzer + 1) + ivelt] = vc[ivelt];
        }
    }

    // ... make the sparse matrix from the list of elements with duplicates (iv is used as
    // workspace).
    sparse(
        (a, colidx, rowstr),
        (n, nz, nonzer),
        (arow, acol, aelt),
        (firstrow, lastrow),
        iv,
        RCOND,
        shift,
    )
}

/// Generates a sparse matrix from a list of [col, row, element] triples (`sparse`).
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn sparse(
    (a, colidx, rowstr): (&mut [f64], &mut [i32], &mut [i32]),
    (n, nz, nozer): (usize, usize, usize),
    (arow, acol, aelt): (&[usize], &[i32], &[f64]),
    (firstrow, lastrow): (usize, usize),
    nzloc: &mut [i32],
    rcond: f64,
    shift: f64,
) -> Result<(), String> {
    let w = nozer + 1;
    // How many rows of result.
    let nrows = lastrow - firstrow + 1;

    // ... count the number of triples in each row.
    for j in 0..nrows + 1 {
        rowstr[j] = 0;
    }
    for i in 0..n {
        for nza in 0..arow[i] {
            let j = acol[i * w + nza] as usize + 1;
            rowstr[j] += arow[i] as i32;
        }
    }
    rowstr[0] = 0;
    for j in 1..nrows + 1 {
        rowstr[j] += rowstr[j - 1];
    }
    let nza = rowstr[nrows] - 1;

    // ... rowstr(j) now is the location of the first nonzero of row j of a.
    if nza > nz as i32 {
        return Err(format!(
            "cg: space for matrix elements exceeded in sparse: nza, nzmax = {nza}, {nz}"
        ));
    }

    // ... preload data pages.
    for j in 0..nrows {
        for k in rowstr[j] as usize..rowstr[j + 1] as usize {
            a[k] = 0.0;
            colidx[k] = -1;
        }
        nzloc[j] = 0;
    }

    // ... generate actual values by summing duplicates.
    let mut size = 1.0f64;
    let ratio = rcond.powf(1.0 / n as f64);
    for i in 0..n {
        for nza in 0..arow[i] {
            let j = acol[i * w + nza] as usize;
            let scale = size * aelt[i * w + nza];
            for nzrow in 0..arow[i] {
                let jcol = acol[i * w + nzrow];
                let mut va = aelt[i * w + nzrow] * scale;

                // ... add the identity * rcond to the generated matrix to bound the smallest
                // eigenvalue from below by rcond.
                if jcol as usize == j && j == i {
                    va = va + rcond - shift;
                }

                let mut found = None;
                for k in rowstr[j] as usize..rowstr[j + 1] as usize {
                    if colidx[k] > jcol {
                        // ... insert colidx here orderly.
                        let mut kk = rowstr[j + 1] as isize - 2;
                        while kk >= k as isize {
                            let u = kk as usize;
                            if colidx[u] > -1 {
                                a[u + 1] = a[u];
                                colidx[u + 1] = colidx[u];
                            }
                            kk -= 1;
                        }
                        colidx[k] = jcol;
                        a[k] = 0.0;
                        found = Some(k);
                        break;
                    } else if colidx[k] == -1 {
                        colidx[k] = jcol;
                        found = Some(k);
                        break;
                    } else if colidx[k] == jcol {
                        // ... mark the duplicated entry.
                        nzloc[j] += 1;
                        found = Some(k);
                        break;
                    }
                }
                let Some(k) = found else {
                    return Err(format!("cg: internal error in sparse: i={i}"));
                };
                a[k] += va;
            }
        }
        size *= ratio;
    }

    // ... remove empty entries and generate final results.
    for j in 1..nrows {
        nzloc[j] += nzloc[j - 1];
    }
    for j in 0..nrows {
        let j1 = if j > 0 {
            (rowstr[j] - nzloc[j - 1]) as usize
        } else {
            0
        };
        let j2 = (rowstr[j + 1] - nzloc[j]) as usize;
        let mut nza = rowstr[j] as usize;
        for k in j1..j2 {
            a[k] = a[nza];
            colidx[k] = colidx[nza];
            nza += 1;
        }
    }
    for j in 1..nrows + 1 {
        rowstr[j] -= nzloc[j - 1];
    }
    Ok(())
}

/// Generates a sparse n-vector (`v`, `iv`) having `nz` nonzeros (`sprnvc`).
fn sprnvc(rng: &mut Urando, n: usize, nz: usize, nn1: usize, v: &mut [f64], iv: &mut [i32]) {
    let mut nzv = 0;
    while nzv < nz {
        let vecelt = randlc(&mut rng.tran, rng.amult);

        // Generate an integer between 1 and n in a portable manner.
        let vecloc = randlc(&mut rng.tran, rng.amult);
        let i = icnvrt(vecloc, nn1) + 1;
        if i > n as i32 {
            continue;
        }

        // Was this integer generated already?
        if iv[..nzv].contains(&i) {
            continue;
        }
        v[nzv] = vecelt;
        iv[nzv] = i;
        nzv += 1;
    }
}

/// Scales a double precision number x in (0,1) by a power of 2 and chops it.
fn icnvrt(x: f64, ipwr2: usize) -> i32 {
    (ipwr2 as f64 * x) as i32
}

/// Sets the `i`th element of the sparse vector (`v`, `iv`) with `nzv` nonzeros to `val`.
fn vecset(v: &mut [f64], iv: &mut [i32], nzv: &mut usize, i: i32, val: f64) {
    let mut set = false;
    for k in 0..*nzv {
        if iv[k] == i {
            v[k] = val;
            set = true;
        }
    }
    if !set {
        v[*nzv] = val;
        iv[*nzv] = i;
        *nzv += 1;
    }
}

/// NPB's value of `zeta` for a class, and the class's letter.
fn official(class: Class) -> Option<(char, f64)> {
    match (class.na, class.nonzer, class.niter, class.shift) {
        (1400, 7, 15, s) if s == 10.0 => Some(('S', 8.5971775078648)),
        (7000, 8, 15, s) if s == 12.0 => Some(('W', 10.362595087124)),
        (14000, 11, 15, s) if s == 20.0 => Some(('A', 17.130235054029)),
        (75000, 13, 75, s) if s == 60.0 => Some(('B', 22.712745482631)),
        (150000, 15, 75, s) if s == 110.0 => Some(('C', 28.973605592845)),
        _ => None,
    }
}

/// The class of each size: S (CI) and B.
fn size(large: bool) -> Class {
    if large {
        CLASS_B
    } else {
        CLASS_S
    }
}

/// Runs CG on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    run(size(large))
}

/// The CUDA reference's arguments for the same size: NA, NONZER, NITER, SHIFT.
pub fn cuda_args(large: bool) -> Vec<String> {
    let c = size(large);
    vec![
        c.na.to_string(),
        c.nonzer.to_string(),
        c.niter.to_string(),
        c.shift.to_string(),
    ]
}

/// CG at `class`'s sizes on the current device, timed and verified with NPB's `zeta`.
pub fn run(class: Class) -> Result<Outcome, String> {
    let Some((letter, want)) = official(class) else {
        return Err(format!(
            "cg: {class:?} is not an NPB class, and NPB's zeta is all the port verifies against"
        ));
    };
    let (zeta, time) = benchmark(class)?;
    let err = ((zeta - want) / want).abs();
    if !(err <= 1.0e-10) {
        return Err(format!(
            "cg: zeta = {zeta:.13e}, NPB's for class {letter} is {want:.13e} (relative error {err:e}, more than 1e-10)"
        ));
    }
    Ok(Outcome {
        time,
        checksum: zeta,
        verified: format!("NPB's zeta for class {letter} within {err:.1e}"),
    })
}
