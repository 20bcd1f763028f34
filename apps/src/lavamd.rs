//! Rodinia's lavaMD (OpenACC version, `main.c` and `kernel/kernel_acc.c`): the potential and
//! forces on particles in a 3-D grid of `boxes1d`³ boxes, each particle interacting with every
//! particle of its own box and of the (up to 26) neighbouring boxes.
//!
//! The original's directives, kept: `data copy(fv) copyin(box, rv, qv)` around the call of
//! `kernel_acc` in `main`; `parallel loop present(box, rv, qv, fv)` on the loop over home boxes
//! `l`, and `loop seq` on the loops over the boxes `k` (home and neighbours), the home box's
//! particles `i` and the other box's particles `j`. The original's pointers into the particle
//! arrays (`rA = &rv[first_i]`, `fA = &fv[first_i]`, `rB`, `qB`) are subslices here, and its
//! structs (`FOUR_VECTOR`, `THREE_VECTOR`, `box_str` with its `nei` list) are
//! `#[derive(acc::DeviceCopy)]` structs of the same fields. As in the original, each home box
//! is one iteration of the parallel loop, its 27 x 100 x 100 interactions run in order inside
//! it (the CUDA reference gives each particle a thread instead).
//!
//! Inputs as Rodinia makes them: `alpha` 0.5, positions and charges `(rand() % 10 + 1) / 10`,
//! tenths from 0.1 to 1.0 (from `unit` instead of `rand`), forces starting at zero. The large
//! size is Rodinia's usual `-boxes1d 16` with its 100 particles a box (`NUMBER_PAR_PER_BOX`);
//! the small one has 3³ boxes of 40 particles, so that the middle box has all 26 neighbours
//! while the 27 x 40 x 40 inner iterations of one box stay under the 65,535 loop iterations
//! that Mesa's llvmpipe runs in one invocation (CI's software Vulkan). Timed as `main` times the
//! kernel: the data region, transfers included.

use std::time::Instant;

use crate::{compare, unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str =
    "Rodinia 3.1 lavaMD, OpenACC version (openacc/lavaMD/main.c, kernel/kernel_acc.c; milladgit/rodinia)";

/// Rodinia's particles per box.
const NUMBER_PAR_PER_BOX: usize = 100;

/// A particle's potential (`v`) and position, or the potential and force on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
pub struct FourVector {
    pub v: f64,
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// A distance.
#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
pub struct ThreeVector {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// A neighbour box: its place in the grid, its number and its first particle.
#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
pub struct NeiStr {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    pub number: i32,
    pub offset: i64,
}

/// A home box: its place, number, first particle and `nn` neighbours.
#[derive(Clone, Copy, Debug, Default, PartialEq, acc::DeviceCopy)]
#[repr(C)]
pub struct BoxStr {
    pub x: i32,
    pub y: i32,
    pub z: i32,
    pub number: i32,
    pub offset: i64,
    pub nn: i32,
    pub nei: [NeiStr; 26],
}

/// The potential's parameter.
#[derive(Clone, Copy, Debug)]
pub struct ParStr {
    pub alpha: f64,
}

/// The problem's dimensions.
#[derive(Clone, Copy, Debug)]
pub struct DimStr {
    pub boxes1d_arg: usize,
    pub number_boxes: usize,
    /// Particles per box (`NUMBER_PAR_PER_BOX` in the original).
    pub par_per_box: usize,
    pub space_elem: usize,
}

/// The interactions: `fv` gets, for each particle, the potential and force from the particles
/// of its box and its neighbour boxes.
#[acc::offload]
#[allow(clippy::needless_range_loop)]
pub fn kernel_acc(
    par: ParStr,
    dim: DimStr,
    boxes: &[BoxStr],
    rv: &[FourVector],
    qv: &[f64],
    fv: &mut [FourVector],
) {
    // inputs
    let alpha = par.alpha;
    let a2 = 2.0 * alpha * alpha;
    let number_boxes = dim.number_boxes;
    let space_elem = dim.space_elem;
    let npb = dim.par_per_box;

    // process interactions
    #[acc::parallel_loop(present(boxes[0..number_boxes], rv[0..space_elem], qv[0..space_elem], fv[0..space_elem]))]
    for l in 0..number_boxes {
        // home box: box parameters, and its particles in the common arrays
        let first_i = boxes[l].offset as usize;
        let r_a = &rv[first_i..first_i + npb];
        let f_a = &mut fv[first_i..first_i + npb];

        // for the home box and each neighbour box
        #[acc::r#loop(seq)]
        for k in 0..(1 + boxes[l].nn as usize) {
            // neighbour box: the home box first, then the neighbours
            let pointer = if k == 0 {
                l
            } else {
                boxes[l].nei[k - 1].number as usize
            };
            let first_j = boxes[pointer].offset as usize;
            let r_b = &rv[first_j..first_j + npb];
            let q_b = &qv[first_j..first_j + npb];

            // for each particle of the home box
            #[acc::r#loop(seq)]
            for i in 0..npb {
                // for each particle of the current (home or neighbour) box
                #[acc::r#loop(seq)]
                for j in 0..npb {
                    // coefficients
                    let r2 = r_a[i].v + r_b[j].v
                        - (r_a[i].x * r_b[j].x + r_a[i].y * r_b[j].y + r_a[i].z * r_b[j].z);
                    let u2 = a2 * r2;
                    let vij = (-u2).exp();
                    let fs = 2.0 * vij;
                    let d = ThreeVector {
                        x: r_a[i].x - r_b[j].x,
                        y: r_a[i].y - r_b[j].y,
                        z: r_a[i].z - r_b[j].z,
                    };
                    let fxij = fs * d.x;
                    let fyij = fs * d.y;
                    let fzij = fs * d.z;

                    // forces
                    f_a[i].v += q_b[j] * vij;
                    f_a[i].x += q_b[j] * fxij;
                    f_a[i].y += q_b[j] * fyij;
                    f_a[i].z += q_b[j] * fzij;
                }
            }
        }
    }
}

/// `main`'s kernel step: `kernel_acc` in its data region. `fv` starts at zero, as the kernel
/// adds to it.
#[acc::offload]
pub fn lava_md(
    par_cpu: ParStr,
    dim_cpu: DimStr,
    box_cpu: &[BoxStr],
    rv_cpu: &[FourVector],
    qv_cpu: &[f64],
    fv_cpu: &mut [FourVector],
) {
    let number_boxes = dim_cpu.number_boxes;
    let space_elem = dim_cpu.space_elem;
    #[acc::data(copy(fv_cpu[0..space_elem]), copyin(box_cpu[0..number_boxes], rv_cpu[0..space_elem], qv_cpu[0..space_elem]))]
    {
        kernel_acc(par_cpu, dim_cpu, box_cpu, rv_cpu, qv_cpu, fv_cpu);
    }
}

/// The boxes of a `boxes1d`³ grid with their neighbour lists, as `main` builds them.
fn boxes(dim: &DimStr) -> Vec<BoxStr> {
    let b = dim.boxes1d_arg as i32;
    let mut boxes = vec![BoxStr::default(); dim.number_boxes];
    let mut nh = 0;
    for i in 0..b {
        for j in 0..b {
            for k in 0..b {
                let home = &mut boxes[nh];
                home.x = k;
                home.y = j;
                home.z = i;
                home.number = nh as i32;
                home.offset = (nh * dim.par_per_box) as i64;
                home.nn = 0;
                for l in -1..2 {
                    for m in -1..2 {
                        for n in -1..2 {
                            let inside = (i + l) >= 0
                                && (j + m) >= 0
                                && (k + n) >= 0
                                && (i + l) < b
                                && (j + m) < b
                                && (k + n) < b;
                            if inside && !(l == 0 && m == 0 && n == 0) {
                                let number = (i + l) * b * b + (j + m) * b + (k + n);
                                home.nei[home.nn as usize] = NeiStr {
                                    x: k + n,
                                    y: j + m,
                                    z: i + l,
                                    number,
                                    offset: number as i64 * dim.par_per_box as i64,
                                };
                                home.nn += 1;
                            }
                        }
                    }
                }
                nh += 1;
            }
        }
    }
    boxes
}

/// A tenth from 0.1 to 1.0, as `(rand() % 10 + 1) / 10`.
fn tenth(seed: u64, i: usize) -> f64 {
    ((unit(seed, i as u64) * 10.0).floor() + 1.0) / 10.0
}

/// Positions and charges as Rodinia draws them.
fn input(space_elem: usize) -> (Vec<FourVector>, Vec<f64>) {
    let rv = (0..space_elem)
        .map(|i| FourVector {
            v: tenth(21, i),
            x: tenth(22, i),
            y: tenth(23, i),
            z: tenth(24, i),
        })
        .collect();
    let qv = (0..space_elem).map(|i| tenth(25, i)).collect();
    (rv, qv)
}

/// The same interactions in plain loops.
fn plain(
    alpha: f64,
    dim: &DimStr,
    boxes: &[BoxStr],
    rv: &[FourVector],
    qv: &[f64],
) -> Vec<FourVector> {
    let a2 = 2.0 * alpha * alpha;
    let npb = dim.par_per_box;
    let mut fv = vec![FourVector::default(); dim.space_elem];
    for (l, home) in boxes.iter().enumerate() {
        let first_i = home.offset as usize;
        let others = std::iter::once(l).chain(
            home.nei[..home.nn as usize]
                .iter()
                .map(|n| n.number as usize),
        );
        for other in others {
            let first_j = boxes[other].offset as usize;
            for i in 0..npb {
                let a = rv[first_i + i];
                let f = &mut fv[first_i + i];
                for j in 0..npb {
                    let b = rv[first_j + j];
                    let q = qv[first_j + j];
                    let r2 = a.v + b.v - (a.x * b.x + a.y * b.y + a.z * b.z);
                    let vij = (-(a2 * r2)).exp();
                    let fs = 2.0 * vij;
                    f.v += q * vij;
                    f.x += q * (fs * (a.x - b.x));
                    f.y += q * (fs * (a.y - b.y));
                    f.z += q * (fs * (a.z - b.z));
                }
            }
        }
    }
    fv
}

/// Boxes per side and particles per box of each size: 3 and 40 (CI), 16 and Rodinia's 100.
fn size(large: bool) -> (usize, usize) {
    if large {
        (16, NUMBER_PAR_PER_BOX)
    } else {
        (3, 40)
    }
}

/// Runs the kernel on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    let (boxes1d, par_per_box) = size(large);
    run(boxes1d, par_per_box)
}

/// The CUDA reference's arguments for the same size: boxes per side, particles per box.
pub fn cuda_args(large: bool) -> Vec<String> {
    let (boxes1d, par_per_box) = size(large);
    vec![boxes1d.to_string(), par_per_box.to_string()]
}

/// `boxes1d`³ boxes of `par_per_box` particles on the current device, timed and verified.
pub fn run(boxes1d: usize, par_per_box: usize) -> Result<Outcome, String> {
    let par = ParStr { alpha: 0.5 };
    let number_boxes = boxes1d * boxes1d * boxes1d;
    let dim = DimStr {
        boxes1d_arg: boxes1d,
        number_boxes,
        par_per_box,
        space_elem: number_boxes * par_per_box,
    };
    let box_cpu = boxes(&dim);
    let (rv, qv) = input(dim.space_elem);
    let mut fv = vec![FourVector::default(); dim.space_elem];
    let t = Instant::now();
    lava_md(par, dim, &box_cpu, &rv, &qv, &mut fv);
    let time = t.elapsed();
    let want = crate::plain_result("lavamd", (boxes1d, par_per_box), || {
        plain(par.alpha, &dim, &box_cpu, &rv, &qv)
    });
    // The same additions in the same order on every device; only `exp` differs, computed by
    // acc's own code on the GPUs (within 1e-13 of std's). A force component sums terms of both
    // signs, so its relative error can grow by the cancellation: 1e-9 leaves room for that.
    let flat =
        |f: &[FourVector]| -> Vec<f64> { f.iter().flat_map(|p| [p.v, p.x, p.y, p.z]).collect() };
    let worst = compare("lavamd fv", &flat(&fv), &flat(&want), 1e-9)?;
    Ok(Outcome {
        time,
        checksum: fv.iter().map(|p| p.v + p.x + p.y + p.z).sum(),
        verified: format!("against plain loops, worst relative difference {worst:.1e}"),
    })
}
