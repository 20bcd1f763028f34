//! Rodinia's nw (OpenACC version, `needle.cpp`): Needleman-Wunsch global alignment of two
//! sequences, the score matrix filled one anti-diagonal at a time, first the top-left
//! triangle and then the bottom-right one, each diagonal a parallel loop.
//!
//! The original's directives, kept: `data copy(input_itemsets[:max_rows * max_cols],
//! referrence[:max_rows * max_cols])` around both sweeps, and `parallel loop
//! present(input_itemsets[:max_rows * max_cols], referrence[:max_rows * max_cols])` on the
//! `idx` loop of each diagonal. The original calls its host function `maximum` in the loops
//! (nvc makes a device version of it unasked); acc calls only routines from a region, so
//! `maximum` carries `routine(seq)`. Rodinia makes the two sequences with `rand() % 10 + 1`
//! (`srand(7)`); the port takes them from `unit()` in the same range, and scores them with
//! the same BLOSUM62 table. Timed as the program's data region: transfers included (as in
//! the original, `referrence`, which the loops only read, is `copy`: copied back at the end,
//! which is why `needle` takes it as `&mut`).

use std::time::Instant;

use crate::{unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str = "Rodinia 3.1, OpenACC version (needle.cpp)";

/// BLOSUM62, in the original's order (A R N D C Q E G H I L K M F P S T W Y V B Z X *).
#[rustfmt::skip]
const BLOSUM62: [[i32; 24]; 24] = [
    [ 4, -1, -2, -2,  0, -1, -1,  0, -2, -1, -1, -1, -1, -2, -1,  1,  0, -3, -2,  0, -2, -1,  0, -4],
    [-1,  5,  0, -2, -3,  1,  0, -2,  0, -3, -2,  2, -1, -3, -2, -1, -1, -3, -2, -3, -1,  0, -1, -4],
    [-2,  0,  6,  1, -3,  0,  0,  0,  1, -3, -3,  0, -2, -3, -2,  1,  0, -4, -2, -3,  3,  0, -1, -4],
    [-2, -2,  1,  6, -3,  0,  2, -1, -1, -3, -4, -1, -3, -3, -1,  0, -1, -4, -3, -3,  4,  1, -1, -4],
    [ 0, -3, -3, -3,  9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1, -3, -3, -2, -4],
    [-1,  1,  0,  0, -3,  5,  2, -2,  0, -3, -2,  1,  0, -3, -1,  0, -1, -2, -1, -2,  0,  3, -1, -4],
    [-1,  0,  0,  2, -4,  2,  5, -2,  0, -3, -3,  1, -2, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4],
    [ 0, -2,  0, -1, -3, -2, -2,  6, -2, -4, -4, -2, -3, -3, -2,  0, -2, -2, -3, -3, -1, -2, -1, -4],
    [-2,  0,  1, -1, -3,  0,  0, -2,  8, -3, -3, -1, -2, -1, -2, -1, -2, -2,  2, -3,  0,  0, -1, -4],
    [-1, -3, -3, -3, -1, -3, -3, -4, -3,  4,  2, -3,  1,  0, -3, -2, -1, -3, -1,  3, -3, -3, -1, -4],
    [-1, -2, -3, -4, -1, -2, -3, -4, -3,  2,  4, -2,  2,  0, -3, -2, -1, -2, -1,  1, -4, -3, -1, -4],
    [-1,  2,  0, -1, -3,  1,  1, -2, -1, -3, -2,  5, -1, -3, -1,  0, -1, -3, -2, -2,  0,  1, -1, -4],
    [-1, -1, -2, -3, -1,  0, -2, -3, -2,  1,  2, -1,  5,  0, -2, -1, -1, -1, -1,  1, -3, -1, -1, -4],
    [-2, -3, -3, -3, -2, -3, -3, -3, -1,  0,  0, -3,  0,  6, -4, -2, -2,  1,  3, -1, -3, -3, -1, -4],
    [-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4,  7, -1, -1, -4, -3, -2, -2, -1, -2, -4],
    [ 1, -1,  1,  0, -1,  0,  0,  0, -1, -2, -2,  0, -1, -2, -1,  4,  1, -3, -2, -2,  0,  0,  0, -4],
    [ 0, -1,  0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1,  1,  5, -2, -2,  0, -1, -1,  0, -4],
    [-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1,  1, -4, -3, -2, 11,  2, -3, -4, -3, -2, -4],
    [-2, -2, -2, -3, -2, -1, -2, -3,  2, -1, -1, -2, -1,  3, -3, -2, -2,  2,  7, -1, -3, -2, -1, -4],
    [ 0, -3, -3, -3, -1, -2, -2, -3, -3,  3,  1, -2,  1, -1, -2, -2,  0, -3, -1,  4, -3, -2, -1, -4],
    [-2, -1,  3,  4, -3,  0,  1, -1,  0, -3, -4,  0, -3, -3, -2,  0, -1, -4, -3, -3,  4,  1, -1, -4],
    [-1,  0,  0,  1, -3,  3,  4, -2,  0, -3, -3,  1, -1, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4],
    [ 0, -1, -1, -1, -2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -2,  0,  0, -2, -1, -1, -1, -1, -1, -4],
    [-4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4,  1],
];

/// The largest of three scores, as the original's `maximum` chooses it.
#[acc::routine(seq)]
fn maximum(a: i32, b: i32, c: i32) -> i32 {
    let k = if a <= b { b } else { a };
    if k <= c {
        c
    } else {
        k
    }
}

/// The two sweeps of the original's `runTest`, in its data region: the top-left triangle
/// diagonal by diagonal (`i` up), then the bottom-right one (`i` down).
#[acc::offload]
pub fn needle(
    input_itemsets: &mut [i32],
    referrence: &mut [i32],
    max_rows: usize,
    max_cols: usize,
    penalty: i32,
) {
    let size = max_rows * max_cols;
    #[acc::data(copy(input_itemsets[..size], referrence[..size]))]
    {
        // Compute top-left matrix.
        for i in 0..max_cols - 2 {
            #[acc::parallel_loop(present(input_itemsets[..size], referrence[..size]))]
            for idx in 0..=i {
                let index = (idx + 1) * max_cols + (i + 1 - idx);
                input_itemsets[index] = maximum(
                    input_itemsets[index - 1 - max_cols] + referrence[index],
                    input_itemsets[index - 1] - penalty,
                    input_itemsets[index - max_cols] - penalty,
                );
            }
        }
        // Compute bottom-right matrix.
        for i in (0..=max_cols - 4).rev() {
            #[acc::parallel_loop(present(input_itemsets[..size], referrence[..size]))]
            for idx in 0..=i {
                let index = (max_cols - idx - 2) * max_cols + idx + max_cols - i - 2;
                input_itemsets[index] = maximum(
                    input_itemsets[index - 1 - max_cols] + referrence[index],
                    input_itemsets[index - 1] - penalty,
                    input_itemsets[index - max_cols] - penalty,
                );
            }
        }
    }
}

/// The same sweeps in plain loops.
fn plain(input_itemsets: &mut [i32], referrence: &[i32], max_cols: usize, penalty: i32) {
    let max3 = |a: i32, b: i32, c: i32| a.max(b).max(c);
    for i in 0..max_cols - 2 {
        for idx in 0..=i {
            let index = (idx + 1) * max_cols + (i + 1 - idx);
            input_itemsets[index] = max3(
                input_itemsets[index - 1 - max_cols] + referrence[index],
                input_itemsets[index - 1] - penalty,
                input_itemsets[index - max_cols] - penalty,
            );
        }
    }
    for i in (0..=max_cols - 4).rev() {
        for idx in 0..=i {
            let index = (max_cols - idx - 2) * max_cols + idx + max_cols - i - 2;
            input_itemsets[index] = max3(
                input_itemsets[index - 1 - max_cols] + referrence[index],
                input_itemsets[index - 1] - penalty,
                input_itemsets[index - max_cols] - penalty,
            );
        }
    }
}

/// The original's input: two sequences of residues 1 to 10 (`rand() % 10 + 1` there), the
/// reference matrix of their BLOSUM62 scores, and the score matrix with its first row and
/// column set to the gap penalties.
fn input(max_rows: usize, max_cols: usize, penalty: i32) -> (Vec<i32>, Vec<i32>) {
    let mut input_itemsets = vec![0i32; max_rows * max_cols];
    let mut referrence = vec![0i32; max_rows * max_cols];
    let residues = |seed: u64, n: usize| -> Vec<usize> {
        (0..n as u64)
            .map(|i| 1 + (10.0 * unit(seed, i)) as usize)
            .collect()
    };
    // The sequence down the rows and the one across the columns (their element 0 unused).
    let (down, across) = (residues(1, max_rows), residues(2, max_cols));
    for i in 1..max_rows {
        for j in 1..max_cols {
            referrence[i * max_cols + j] = BLOSUM62[down[i]][across[j]];
        }
    }
    for i in 1..max_rows {
        input_itemsets[i * max_cols] = -(i as i32) * penalty;
    }
    for (j, v) in input_itemsets.iter_mut().enumerate().take(max_cols).skip(1) {
        *v = -(j as i32) * penalty;
    }
    (input_itemsets, referrence)
}

/// The sequence length and the gap penalty of each size: 64 (CI) and 8192, penalty 10.
fn size(large: bool) -> (usize, i32) {
    if large {
        (8192, 10)
    } else {
        (64, 10)
    }
}

/// Runs the alignment on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    let (n, penalty) = size(large);
    run(n, penalty)
}

/// The CUDA reference's arguments for the same size.
pub fn cuda_args(large: bool) -> Vec<String> {
    let (n, penalty) = size(large);
    vec![n.to_string(), penalty.to_string()]
}

/// Aligns two sequences of `n` residues with gap penalty `penalty` on the current device,
/// timed and verified.
pub fn run(n: usize, penalty: i32) -> Result<Outcome, String> {
    if n < 3 {
        return Err(format!(
            "nw needs sequences of at least 3 residues (its bottom-right sweep starts at {n} - 3), got {n}"
        ));
    }
    let (max_rows, max_cols) = (n + 1, n + 1);
    let (start, mut referrence) = input(max_rows, max_cols, penalty);
    let mut input_itemsets = start.clone();
    let t = Instant::now();
    needle(
        &mut input_itemsets,
        &mut referrence,
        max_rows,
        max_cols,
        penalty,
    );
    let time = t.elapsed();
    let want = crate::plain_result("nw", (n, penalty), || {
        let mut want = start;
        plain(&mut want, &referrence, max_cols, penalty);
        want
    });
    // Integer scores: the same on every device, element for element.
    if let Some(i) = (0..want.len()).find(|&i| input_itemsets[i] != want[i]) {
        return Err(format!(
            "nw input_itemsets[{i}] (row {}, column {}) = {}, the plain loops give {}",
            i / max_cols,
            i % max_cols,
            input_itemsets[i],
            want[i]
        ));
    }
    Ok(Outcome {
        time,
        checksum: input_itemsets.iter().map(|&v| v as i64).sum::<i64>() as f64,
        verified: format!(
            "against plain loops, all {} scores identical",
            input_itemsets.len()
        ),
    })
}
