//! Rodinia's lud (OpenACC version, `lud_openacc.c`): LU decomposition without pivoting, in
//! place, Doolittle's order. For each row `i`, one parallel loop over `j` computes row `i` of
//! `U` and a second one column `i` of `L`, each element a dot product over `k < i`.
//!
//! The original's directives: `data copy(matrix[:(size*size)]) local(i,j,k,sum)` around the
//! `i` loop, and for each of the two `j` loops `kernels loop independent gang, vector(8)`, with
//! `loop gang, vector(32)` on the `k` loop inside. Kept: the data region with `copy` of the
//! whole matrix, `kernels loop independent gang` on each `j` loop and `loop vector(32)` on each
//! `k` loop. Changed, because acc refuses them or gives a wrong result:
//!
//! - `local(i,j,k,sum)` (a PGI clause of OpenACC's first drafts): acc has no such clause
//!   (``unknown clause `local` on `data` ``); `j`, `k` and `sum` are locals of the loops in
//!   Rust, private to each iteration as `local` made them.
//! - `vector(8)` on the `j` loops and `gang` on the `k` loops: levels nest gang, worker,
//!   vector, so acc refuses a gang or vector loop inside a vector loop (``a `gang` loop cannot
//!   be inside a `vector` loop``, ``a `vector` loop cannot be inside a `vector` loop``). Each
//!   `j` iteration is a gang, and its `k` loop is shared by the gang's vector lanes.
//!
//! The `k` loops' sums have no reduction clause, as in the original: in `kernels` acc finds
//! them (ACC_INFO: "recognized"), as PGI does.
//!
//! Rodinia reads its matrix from a file; the port makes a diagonally dominant one (no pivoting
//! needed) with `unit`: off-diagonal elements in [0.5, 1) and `4 * size` on the diagonal, so
//! every element of `L` and `U` stays away from zero and relative differences stay meaningful.
//! Timed as `lud.c` times `lud_openacc`: the data region, transfers included.

use std::time::Instant;

use crate::{compare, unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str = "Rodinia 2.0.1, OpenACC version (openacc/lud/lud_openacc.c)";

/// LU decomposition of the `size` x `size` matrix in place: `U` on and above the diagonal,
/// `L` (unit diagonal, not stored) below it.
#[acc::offload]
pub fn lud_openacc(matrix: &mut [f32], size: usize) {
    #[acc::data(copy(matrix[0..size * size]))]
    {
        for i in 0..size {
            #[acc::kernels_loop(independent, gang)]
            for j in i..size {
                let mut sum = matrix[i * size + j];
                #[acc::r#loop(vector(length: 32))]
                for k in 0..i {
                    sum -= matrix[i * size + k] * matrix[k * size + j];
                }
                matrix[i * size + j] = sum;
            }
            #[acc::kernels_loop(independent, gang)]
            for j in i + 1..size {
                let mut sum = matrix[j * size + i];
                #[acc::r#loop(vector(length: 32))]
                for k in 0..i {
                    sum -= matrix[j * size + k] * matrix[k * size + i];
                }
                matrix[j * size + i] = sum / matrix[i * size + i];
            }
        }
    }
}

/// The same loops, sequential.
fn plain(a: &mut [f32], size: usize) {
    for i in 0..size {
        for j in i..size {
            let mut sum = a[i * size + j];
            for k in 0..i {
                sum -= a[i * size + k] * a[k * size + j];
            }
            a[i * size + j] = sum;
        }
        for j in i + 1..size {
            let mut sum = a[j * size + i];
            for k in 0..i {
                sum -= a[j * size + k] * a[k * size + i];
            }
            a[j * size + i] = sum / a[i * size + i];
        }
    }
}

/// A diagonally dominant matrix: `4 * size` on the diagonal, elements in [0.5, 1) elsewhere.
fn input(size: usize) -> Vec<f32> {
    (0..size * size)
        .map(|idx| {
            if idx / size == idx % size {
                4.0 * size as f32
            } else {
                0.5 + 0.5 * unit(3, idx as u64) as f32
            }
        })
        .collect()
}

/// The matrix side of each size: 64 (CI), 4096.
fn size(large: bool) -> usize {
    if large {
        4096
    } else {
        64
    }
}

/// Runs the decomposition on the current device at the small or large size, timed and
/// verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    run(size(large))
}

/// The CUDA reference's arguments for the same size: the matrix side.
pub fn cuda_args(large: bool) -> Vec<String> {
    vec![size(large).to_string()]
}

/// The decomposition of a `size` x `size` matrix on the current device, timed and verified.
pub fn run(size: usize) -> Result<Outcome, String> {
    let start = input(size);
    let mut matrix = start.clone();
    let t = Instant::now();
    lud_openacc(&mut matrix, size);
    let time = t.elapsed();
    let want = crate::plain_result("lud", size, || {
        let mut want = start;
        plain(&mut want, size);
        want
    });
    let got: Vec<f64> = matrix.iter().map(|&v| v as f64).collect();
    let want: Vec<f64> = want.iter().map(|&v| v as f64).collect();
    let worst = compare("lud matrix", &got, &want, TOLERANCE)?;
    Ok(Outcome {
        time,
        checksum: got.iter().sum(),
        verified: format!(
            "against plain loops, worst relative difference {worst:.1e}, {:.1} ms",
            time.as_secs_f64() * 1e3
        ),
    })
}

/// Each element is the same `f32` operations on every device except for the order of its
/// `k` sum: the host and multicore add the terms in order (the plain loops' bits), the GPUs
/// combine the vector lanes' partial sums in a tree. Every numerator stays above about 0.25,
/// so the reordering moves an element by a few `f32` roundings of the sum at most: sums in
/// order against exactly rounded sums differ by up to 9e-7 (64), 8e-6 (1024) and 1.4e-5
/// (4096) relative (measured with this input), below this tolerance.
const TOLERANCE: f64 = 1e-4;
