//! NPB EP (NPB3.3-ACC, the University of Houston's OpenACC C version, `EP/ep.c`): the
//! "embarrassingly parallel" benchmark. 2^(M+1) uniform pseudorandom numbers (NPB's linear
//! congruential generator, `randlc`) are taken in pairs; the pairs inside the unit circle give
//! Gaussian deviates by the Marsaglia polar method, whose sums (`sx`, `sy`) and counts in
//! concentric square annuli (`q`) are the result. The numbers are made in batches of `NK` pairs,
//! `blksize` batches at a time: each batch finds its starting seed by binary exponentiation of
//! the multiplier, fills its column of the block's array `xx` and tallies its column of `qq`.
//!
//! The original's directives, kept: `data create(xx[0:blksize*2*NK], qq[0:blksize*NQ])
//! copyout(q[0:NQ])` around the whole computation; `parallel num_gangs((NQ+127)/128)
//! vector_length(128) present(q)` with `loop gang vector` zeroing `q`; per block, `parallel
//! num_gangs(blksize) vector_length(128) present(qq)` with `loop gang` over `loop vector`
//! zeroing `qq`; `parallel num_gangs((blksize+255)/256) num_workers(1) vector_length(256)
//! present(xx, qq)` with `loop gang worker vector reduction(+:sx,sy)` on the batch loop; and
//! `parallel num_gangs(NQ) num_workers(4) vector_length(32) present(q, qq)` with `loop gang
//! reduction(+:gc)` over `loop worker vector reduction(+:sum_qi)` summing the counts.
//! Changed: the original inlines `randlc` by hand into the batch loop (the seed search and
//! `vranlc`); the port calls `randlc` as an `#[acc::routine(seq)]` (the same operations);
//! and acc asks for the loop reductions' variables on the enclosing `parallel` construct
//! (`copy(sx, sy)`, `copy(gc)`), which 3.3 section 2.6.2 implies for C. `MK` and `BLKSIZE`,
//! constants in the original, are arguments: the large size (class B) uses the original's 16
//! and 2048; the small one (class S) 14 and 256, so that lavapipe, CI's wgpu device, runs it
//! (see `size`; neither changes the numbers EP makes).
//!
//! Timed as `ep.c` times itself: timer 0 runs from after `q` is zeroed, inside the data region,
//! to after the region ends (the copy-out of `q` included). Verified with NPB's values of `sx`
//! and `sy` for an official class (S: M = 24; B: M = 30), and the counts against `gc`.

use std::time::Instant;

use crate::Outcome;

/// Where the port comes from.
pub const ORIGIN: &str =
    "NPB3.3-ACC EP (uhhpctools/openacc-npb, EP/EP/ep.c with EP/common/randdp.w2c.c)";

/// Log2 of the pairs of a batch (the original's `MK`; the small size uses fewer, see `size`).
const MK: u32 = 16;
/// Annuli counted.
const NQ: usize = 10;
const EPSILON: f64 = 1.0e-8;
/// The generator's multiplier and seed.
const A: f64 = 1220703125.0;
const S: f64 = 271828183.0;
/// Batches per block (the original's `BLKSIZE`; the small size uses fewer, see `size`).
const BLKSIZE: usize = 2048;

const R23: f64 = 1.1920928955078125e-07;
const R46: f64 = R23 * R23;
const T23: f64 = 8.388608e+06;
const T46: f64 = T23 * T23;

/// NPB's generator: `x = a * x (mod 2^46)`, returning `x * 2^-46`.
#[acc::routine(seq)]
pub fn randlc(x: &mut f64, a: f64) -> f64 {
    // Break A into two parts such that A = 2^23 * A1 + A2.
    let t1 = R23 * a;
    let a1 = (t1 as i32) as f64;
    let a2 = a - T23 * a1;
    // Break X into two parts such that X = 2^23 * X1 + X2, compute
    // Z = A1 * X2 + A2 * X1  (mod 2^23), and then X = 2^23 * Z + A2 * X2  (mod 2^46).
    let t1 = R23 * *x;
    let x1 = (t1 as i32) as f64;
    let x2 = *x - T23 * x1;
    let t1 = a1 * x2 + a2 * x1;
    let t2 = ((R23 * t1) as i32) as f64;
    let z = t1 - T23 * t2;
    let t3 = T23 * z + a2 * x2;
    let t4 = ((R46 * t3) as i32) as f64;
    *x = t3 - T46 * t4;
    R46 * *x
}

/// NPB's `vranlc`: `n` numbers of the sequence into `y`.
#[acc::routine(seq)]
pub fn vranlc(n: usize, x: &mut f64, a: f64, y: &mut [f64]) {
    for i in 0..n {
        y[i] = randlc(x, a);
    }
}

/// What EP gives: the sums, the counts and the number of pairs.
#[derive(Clone, Debug)]
pub struct Sums {
    pub sx: f64,
    pub sy: f64,
    pub q: [f64; NQ],
    pub gc: f64,
}

/// EP for 2^(m+1) numbers, as `ep.c`'s `main` computes them: the sums and the timed section's
/// length.
#[acc::offload]
#[allow(clippy::needless_range_loop, unused_assignments)]
pub fn embar(m: u32, mk: u32, block: usize) -> (Sums, std::time::Duration) {
    let nk = 1usize << mk;
    let mm = m - mk;
    let nn = 1usize << mm;
    let mut blksize = block;
    if nn < blksize {
        blksize = nn;
    }
    let numblks = nn.div_ceil(blksize);
    let np = nn;
    let mut xx = vec![0.0f64; blksize * 2 * nk];
    let mut qq = vec![0.0f64; blksize * NQ];
    let mut q = [0.0f64; NQ];
    let mut dum = [1.0f64, 1.0, 1.0];
    let (mut sx, mut sy, mut gc) = (0.0f64, 0.0f64, 0.0f64);
    let mut t1: f64;
    let mut an = 0.0f64;
    let k_offset: isize = -1;
    let mut timer = Instant::now();

    #[acc::data(create(xx[0..blksize * 2 * nk], qq[0..blksize * NQ]), copyout(q[0..NQ]))]
    {
        // Call the generator once (the original's warm-up, whose result is dead).
        let (mut d0, d1) = (dum[0], dum[1]);
        vranlc(0, &mut d0, d1, &mut []);
        let a = dum[2];
        dum[0] = randlc(&mut dum[1], a);

        #[acc::parallel(num_gangs((NQ + 127) / 128), vector_length(128), present(q[0..NQ]))]
        {
            #[acc::r#loop(gang, vector)]
            for i in 0..NQ {
                q[i] = 0.0;
            }
        }

        acc::wait_all().expect("q is zeroed");
        timer = Instant::now();

        // Compute AN = A ^ (2 * nk) (mod 2^46).
        t1 = A;
        for _ in 0..mk + 1 {
            let a = t1;
            randlc(&mut t1, a);
        }
        an = t1;

        for blk in 0..numblks {
            let koff = blk * blksize;
            if koff + blksize > np {
                blksize = np - blk * blksize;
            }

            #[acc::parallel(num_gangs(blksize), vector_length(128), present(qq[0..blksize * NQ]))]
            {
                #[acc::r#loop(gang)]
                for k in 0..blksize {
                    #[acc::r#loop(vector)]
                    for i in 0..NQ {
                        qq[k * NQ + i] = 0.0;
                    }
                }
            }

            // Each instance of this loop may be performed independently.
            #[acc::parallel(
                num_gangs((blksize + 255) / 256),
                num_workers(1),
                vector_length(256),
                present(xx[0..blksize * 2 * nk], qq[0..blksize * NQ]),
                copy(sx, sy)
            )]
            {
                #[acc::r#loop(gang, worker, vector, reduction(+: sx, sy))]
                for k in 1..=blksize {
                    let mut kk = (k_offset + k as isize) as usize + koff;
                    let mut t1 = S;
                    let mut t2 = an;

                    // Find starting seed t1 for this kk.
                    for _ in 1..=100 {
                        let ik = kk / 2;
                        if 2 * ik != kk {
                            randlc(&mut t1, t2);
                        }
                        if ik == 0 {
                            break;
                        }
                        let a = t2;
                        randlc(&mut t2, a);
                        kk = ik;
                    }

                    // Compute uniform pseudorandom numbers (vranlc, into column k - 1).
                    for i in 0..2 * nk {
                        xx[i * blksize + (k - 1)] = randlc(&mut t1, A);
                    }

                    // Compute Gaussian deviates by acceptance-rejection method and tally
                    // counts in concentric square annuli.
                    let mut tmp_sx = 0.0;
                    let mut tmp_sy = 0.0;
                    for i in 0..nk {
                        let x1 = 2.0 * xx[2 * i * blksize + (k - 1)] - 1.0;
                        let x2 = 2.0 * xx[(2 * i + 1) * blksize + (k - 1)] - 1.0;
                        let t1 = x1 * x1 + x2 * x2;
                        if t1 <= 1.0 {
                            let t2 = (-2.0 * t1.ln() / t1).sqrt();
                            let t3 = x1 * t2;
                            let t4 = x2 * t2;
                            let l = t3.abs().max(t4.abs()) as usize;
                            qq[l * blksize + (k - 1)] += 1.0;
                            tmp_sx += t3;
                            tmp_sy += t4;
                        }
                    }
                    sx += tmp_sx;
                    sy += tmp_sy;
                }
            }

            #[acc::parallel(
                num_gangs(NQ),
                num_workers(4),
                vector_length(32),
                present(q[0..NQ], qq[0..blksize * NQ]),
                copy(gc)
            )]
            {
                #[acc::r#loop(gang, reduction(+: gc))]
                for i in 0..NQ {
                    let mut sum_qi = 0.0;
                    #[acc::r#loop(worker, vector, reduction(+: sum_qi))]
                    for k in 0..blksize {
                        sum_qi += qq[i * blksize + k];
                    }
                    // sum of each column of qq: q[i]
                    q[i] += sum_qi;
                    // final sum of q
                    gc += sum_qi;
                }
            }
        }
    }
    let time = timer.elapsed();
    (Sums { sx, sy, q, gc }, time)
}

/// The same batches in plain loops (a batch at a time).
fn plain(m: u32, mk: u32) -> Sums {
    let nk = 1usize << mk;
    let nn = 1usize << (m - mk);
    let mut t1 = A;
    for _ in 0..mk + 1 {
        let a = t1;
        randlc(&mut t1, a);
    }
    let an = t1;
    let (mut sx, mut sy, mut q) = (0.0, 0.0, [0.0; NQ]);
    let mut x = vec![0.0; 2 * nk];
    for batch in 0..nn {
        let (mut kk, mut t1, mut t2) = (batch, S, an);
        for _ in 1..=100 {
            let ik = kk / 2;
            if 2 * ik != kk {
                randlc(&mut t1, t2);
            }
            if ik == 0 {
                break;
            }
            let a = t2;
            randlc(&mut t2, a);
            kk = ik;
        }
        vranlc(2 * nk, &mut t1, A, &mut x);
        let (mut bx, mut by) = (0.0, 0.0);
        for p in x.chunks_exact(2) {
            let (x1, x2) = (2.0 * p[0] - 1.0, 2.0 * p[1] - 1.0);
            let t = x1 * x1 + x2 * x2;
            if t <= 1.0 {
                let f = (-2.0 * t.ln() / t).sqrt();
                let (t3, t4) = (x1 * f, x2 * f);
                q[t3.abs().max(t4.abs()) as usize] += 1.0;
                bx += t3;
                by += t4;
            }
        }
        sx += bx;
        sy += by;
    }
    Sums {
        sx,
        sy,
        q,
        gc: q.iter().sum(),
    }
}

/// NPB's verification values of `sx` and `sy` for the official classes' M.
fn official(m: u32) -> Option<(f64, f64)> {
    Some(match m {
        24 => (-3.247834652034740e+3, -6.958407078382297e+3),
        25 => (-2.863319731645753e+3, -6.320053679109499e+3),
        28 => (-4.295875165629892e+3, -1.580732573678431e+4),
        30 => (4.033815542441498e+4, -2.660669192809235e+4),
        32 => (4.764367927995374e+4, -8.084072988043731e+4),
        36 => (1.982481200946593e+5, -1.020596636361769e+5),
        40 => (-5.319717441530e+05, -3.688834557731e+05),
        _ => return None,
    })
}

/// M, MK and the batches per block of each size: class S (M = 24) and class B (M = 30), the
/// latter with the original's MK = 16 and BLKSIZE = 2048. "MK can be set for convenience on a
/// given system, since it does not affect the results" (ep.c), nor does the block size, except
/// for the order in which `sx` and `sy` are summed; the small size sets both so that CI's wgpu
/// device (lavapipe) can run it: a batch of 2^16 pairs makes 196,608 loop iterations in one
/// invocation, and lavapipe stops an invocation's loops after 65,535 (MK = 14 makes 49,152),
/// and the original's one block of every batch would make `xx` 256 MiB, more than it will
/// allocate (blocks of 256 batches of 2^14 pairs make it 64 MiB).
fn size(large: bool) -> (u32, u32, usize) {
    if large {
        (30, MK, BLKSIZE)
    } else {
        (24, 14, 256)
    }
}

/// Runs EP on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    let (m, mk, block) = size(large);
    run(m, mk, block)
}

/// The CUDA reference's arguments for the same size: M.
pub fn cuda_args(large: bool) -> Vec<String> {
    vec![size(large).0.to_string()]
}

/// EP for 2^(m+1) numbers in batches of 2^mk pairs, `block` batches at a time, on the current
/// device, timed and verified.
pub fn run(m: u32, mk: u32, block: usize) -> Result<Outcome, String> {
    if m < mk {
        return Err(format!(
            "ep: M = {m}: batches take 2^{mk} pairs, so M must be at least {mk}"
        ));
    }
    if block == 0 {
        return Err("ep: a block holds at least one batch".into());
    }
    let (got, time) = embar(m, mk, block);
    let counted: f64 = got.q.iter().sum();
    if counted != got.gc {
        return Err(format!(
            "ep: the counts add up to {counted}, the pairs counted (gc) are {}",
            got.gc
        ));
    }
    let verified = match official(m) {
        Some((vx, vy)) => {
            let ex = ((got.sx - vx) / vx).abs();
            let ey = ((got.sy - vy) / vy).abs();
            if !(ex <= EPSILON && ey <= EPSILON) {
                return Err(format!(
                    "ep: sx = {:e}, sy = {:e}; NPB's values are {vx:e}, {vy:e} (relative errors {ex:e}, {ey:e}, more than {EPSILON:e})",
                    got.sx, got.sy
                ));
            }
            format!(
                "NPB's sx and sy for M = {m} within {:.1e}; {} Gaussian pairs, counts adding up",
                ex.max(ey),
                got.gc
            )
        }
        None => {
            let want = crate::plain_result("ep", (m, mk), || plain(m, mk));
            crate::compare("ep counts", &got.q, &want.q, 0.0)?;
            let worst = crate::compare("ep sums", &[got.sx, got.sy], &[want.sx, want.sy], EPSILON)?;
            format!("against plain loops: counts equal, sums within {worst:.1e}")
        }
    };
    Ok(Outcome {
        time,
        checksum: got.sx + got.sy,
        verified,
    })
}
