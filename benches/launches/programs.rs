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
