//! Rodinia's pathfinder (OpenACC version, `pathfinder.cpp`): the cheapest path down a grid
//! of weights, one row at a time, each cell taking the cheapest of the three cells above it;
//! `rows - 1` steps in one data region that swaps the two rows between steps.
//!
//! The original's directives: `parallel loop` on the column loop, kept, and `data
//! create(src[0:cols]) copy(dst[0:cols], data[0:rows*cols])` around the time loop, kept but
//! for `create(src)`, which is `copyout(src[0..cols])` here. After an odd number of steps
//! (`rows` = 1000 makes 999) the variables hold each other's rows when the region ends; as in C,
//! `dst` then gets the row it holds (the older one) and the newest, in the `create`d buffer, is
//! never copied to the host (the original then prints host memory the device never wrote).
//! With `copyout(src)` both rows come back, whichever variable holds each, and the port checks
//! the newest. (acc refused the original's clauses at the region's end until issue 42:
//! "`dst` no longer holds the data its clause made present".)
//!
//! The original's `wall(i, j)` macro is `data[i*rows+j]`, unparenthesised, so `wall(t+1, n)`
//! reads `data[t + 1*rows + n]`; the port reads row `t + 1`, `data[(t + 1) * cols + n]`, as
//! Rodinia's OpenMP and CUDA versions do.
//!
//! `min` is declared in the loop's body (the original declares it before the loop and lets
//! the compiler privatize it). Rodinia fills the grid with `rand() % 10` (`srand(9)`); the
//! port takes the weights from `unit()` in the same range. Timed as the program times itself:
//! the data region, transfers included (as in the original, the grid, which the loop only
//! reads, is `copy`: copied back at the end, which is why `pathfinder` takes it as `&mut`).

use std::time::Instant;

use crate::{unit, Outcome};

/// Where the port comes from.
pub const ORIGIN: &str = "Rodinia 3.1, OpenACC version (pathfinder.cpp)";

/// The original's `run`: `rows - 1` steps down the grid `wall` (`rows` x `cols`, row-major),
/// starting from `result` (its first row). The rows are swapped before each step, as the
/// original swaps `src` and `dst`: after an even number of steps the newest row is in
/// `result`, after an odd number in `src`.
#[acc::offload]
pub fn pathfinder(wall: &mut [i32], result: &mut [i32], src: &mut [i32], rows: usize, cols: usize) {
    let (mut src, mut dst) = (src, result);
    // The original's `create(src[0:cols])` is `copyout` (see the module's notes).
    #[acc::data(copyout(src[0..cols]), copy(dst[0..cols], wall[0..rows * cols]))]
    {
        for t in 0..rows - 1 {
            std::mem::swap(&mut src, &mut dst);
            #[acc::parallel_loop]
            for n in 0..cols {
                let mut min = src[n];
                if n > 0 {
                    min = min.min(src[n - 1]);
                }
                if n < cols - 1 {
                    min = min.min(src[n + 1]);
                }
                dst[n] = wall[(t + 1) * cols + n] + min;
            }
        }
    }
}

/// The same steps in plain loops; returns the last row.
fn plain(wall: &[i32], rows: usize, cols: usize) -> Vec<i32> {
    let mut src = wall[..cols].to_vec();
    let mut dst = vec![0; cols];
    for t in 0..rows - 1 {
        for n in 0..cols {
            let lo = n.saturating_sub(1);
            let hi = (n + 1).min(cols - 1);
            dst[n] = wall[(t + 1) * cols + n] + *src[lo..=hi].iter().min().unwrap();
        }
        std::mem::swap(&mut src, &mut dst);
    }
    src
}

/// Rodinia's input: weights 0 to 9 (`rand() % 10` there).
fn input(rows: usize, cols: usize) -> Vec<i32> {
    (0..(rows * cols) as u64)
        .map(|i| (10.0 * unit(1, i)) as i32)
        .collect()
}

/// The columns and rows of each size: 2000 x 100 (CI) and 100000 x 1000.
fn size(large: bool) -> (usize, usize) {
    if large {
        (100_000, 1000)
    } else {
        (2000, 100)
    }
}

/// Runs the search on the current device at the small or large size, timed and verified.
pub fn run_size(large: bool) -> Result<Outcome, String> {
    let (cols, rows) = size(large);
    run(cols, rows)
}

/// The CUDA reference's arguments for the same size (the original's: width, then rows).
pub fn cuda_args(large: bool) -> Vec<String> {
    let (cols, rows) = size(large);
    vec![cols.to_string(), rows.to_string()]
}

/// `rows - 1` steps over a grid `cols` wide on the current device, timed and verified.
pub fn run(cols: usize, rows: usize) -> Result<Outcome, String> {
    if rows < 1 || cols < 1 {
        return Err(format!(
            "pathfinder needs a grid of at least 1 x 1, got {cols} x {rows}"
        ));
    }
    let mut wall = input(rows, cols);
    let mut result = wall[..cols].to_vec();
    let mut src = vec![0i32; cols];
    let t = Instant::now();
    pathfinder(&mut wall, &mut result, &mut src, rows, cols);
    let time = t.elapsed();
    let got = if (rows - 1) % 2 == 0 { &result } else { &src };
    let want = crate::plain_result("pathfinder", (cols, rows), || plain(&wall, rows, cols));
    // Integer sums: the same on every device, element for element.
    if let Some(n) = (0..cols).find(|&n| got[n] != want[n]) {
        return Err(format!(
            "pathfinder dst[{n}] = {}, the plain loops give {}",
            got[n], want[n]
        ));
    }
    Ok(Outcome {
        time,
        checksum: got.iter().map(|&v| v as i64).sum::<i64>() as f64,
        verified: format!("against plain loops, all {cols} path costs identical"),
    })
}
