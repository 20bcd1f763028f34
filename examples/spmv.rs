//! Sparse matrix-vector product in CSR form (the kernel of conjugate gradients and of most
//! implicit solvers): a gang per row, its vector threads over the row's nonzeros with a `+`
//! reduction (`vector_length(32)`: rows are short; on nvidia a warp per row), the column
//! indices read indirectly. The matrix is the 2-D Laplacian (five points) on an `m` x `m`
//! grid, assembled on the host; `y = A x` runs `reps` times inside one data region, as an
//! iterative solver would. Runs on the current device and checks `y` against plain loops.
//!
//! `cargo run --release --example spmv [m] [reps]` (default 1024: a million rows; 50 products).

use std::time::Instant;

/// CSR: row `r`'s nonzeros are `vals[row_start[r]..row_start[r + 1]]` in columns `cols[..]`.
struct Csr {
    row_start: Vec<usize>,
    cols: Vec<u32>,
    vals: Vec<f64>,
}

fn laplacian(m: usize) -> Csr {
    let (mut row_start, mut cols, mut vals) = (vec![0], Vec::new(), Vec::new());
    for i in 0..m {
        for j in 0..m {
            let mut put = |c: usize, v: f64| {
                cols.push(c as u32);
                vals.push(v);
            };
            if i > 0 {
                put((i - 1) * m + j, -1.0);
            }
            if j > 0 {
                put(i * m + j - 1, -1.0);
            }
            put(i * m + j, 4.0);
            if j + 1 < m {
                put(i * m + j + 1, -1.0);
            }
            if i + 1 < m {
                put((i + 1) * m + j, -1.0);
            }
            row_start.push(cols.len());
        }
    }
    Csr {
        row_start,
        cols,
        vals,
    }
}

#[acc::offload]
fn multiply(row_start: &[usize], cols: &[u32], vals: &[f64], x: &[f64], y: &mut [f64]) {
    #[acc::parallel_loop(gang, vector_length(32), present(row_start, cols, vals, x, y))]
    for r in 0..y.len() {
        let mut sum = 0.0;
        #[acc::r#loop(vector, reduction(+: sum))]
        for k in row_start[r]..row_start[r + 1] {
            sum += vals[k] * x[cols[k] as usize];
        }
        y[r] = sum;
    }
}

#[acc::offload]
fn products(a: &Csr, x: &mut Vec<f64>, y: &mut Vec<f64>, reps: usize) {
    let (row_start, cols, vals) = (&a.row_start, &a.cols, &a.vals);
    #[acc::data(copyin(row_start, cols, vals), copy(x), create(y))]
    {
        for _ in 0..reps {
            multiply(row_start, cols, vals, x, y);
            // The next product multiplies the result, scaled back to keep its size (the
            // Laplacian's largest eigenvalue is below 8).
            #[acc::parallel_loop(present(x, y))]
            for i in 0..x.len() {
                x[i] = y[i] * 0.125;
            }
        }
        acc::update!(self(y));
    }
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>());
    let m = args.next().and_then(Result::ok).unwrap_or(1024).max(2);
    let reps = args.next().and_then(Result::ok).unwrap_or(50).max(1);
    let a = laplacian(m);
    let n = m * m;
    let start: Vec<f64> = (0..n)
        .map(|i| ((i * 7919) % 1000) as f64 / 1000.0)
        .collect();
    let device = acc::get_device_type();
    // A first, small run compiles the kernels, which the timing leaves out.
    let small = laplacian(2);
    products(&small, &mut vec![1.0; 4], &mut vec![0.0; 4], 1);
    let (mut x, mut y) = (start.clone(), vec![0.0; n]);
    let t = Instant::now();
    products(&a, &mut x, &mut y, reps);
    let elapsed = t.elapsed();

    // Plain loops: the same sums in the same order within each row.
    let (mut wx, mut wy) = (start, vec![0.0; n]);
    for _ in 0..reps {
        for r in 0..n {
            let mut sum = 0.0;
            for k in a.row_start[r]..a.row_start[r + 1] {
                sum += a.vals[k] * wx[a.cols[k] as usize];
            }
            wy[r] = sum;
        }
        for i in 0..n {
            wx[i] = wy[i] * 0.125;
        }
    }
    // A row's five products are summed in another order on a GPU's vector lanes: allow the
    // last bits of the row's terms (a row that cancels to about zero has no relative error
    // to speak of).
    let worst = y
        .iter()
        .zip(&wy)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let scale = wy.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
    assert!(
        worst <= 1e-12 * scale,
        "spmv differs from plain loops by {worst} (largest |y| {scale})"
    );
    let nnz = a.vals.len();
    println!(
        "spmv: {n} rows, {nnz} nonzeros, {reps} products, device = {device} ({}), time = {:.3} s with transfers ({:.2} GFLOP/s), y[n/2] = {:.6e}, verified",
        acc::get_property(0, device, acc::Property::Name),
        elapsed.as_secs_f64(),
        2.0 * nnz as f64 * reps as f64 / elapsed.as_secs_f64() / 1e9,
        y[n / 2]
    );
}
