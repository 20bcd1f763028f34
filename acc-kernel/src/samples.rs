//! Small kernels built as IR, shared by the backends' tests (feature `samples`): each backend
//! lowers and runs the same kernels, so none tests a private variant of them.

use super::args::{KernelArg, KernelOutput, ScalarValue};
use super::builder::{KernelBuilder, Var};
use super::*;

mod matmul;
pub use matmul::{
    matmul_accumulating, matmul_collapsed, matmul_collapsed_in_c, matmul_gang_vector, matmul_tiled,
};

/// A gang/vector loop (what `parallel_loop` gives a kernel).
pub const GRID: Option<Schedule> = Some(Schedule {
    gang: true,
    worker: false,
    vector: true,
});

/// `for i in 0..y.len() { y[i] = a * x[i] + y[i]; }` over the grid. Parameters: `a`
/// (scalar), `x` (read), `y` (written).
pub fn saxpy(elem: Scalar) -> Kernel {
    let mut b = KernelBuilder::new("saxpy");
    let a = b.param_scalar("a", elem);
    let x = b.param_array("x", elem, false);
    let y = b.param_array("y", elem, true);
    let start = b.lit_int(0, None);
    let n = b.len(y);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let ax = b.binary(BinaryOp::Mul, a, xi);
            let i = b.get(v[0]);
            let yi = b.load(y, i);
            let sum = b.binary(BinaryOp::Add, ax, yi);
            let i = b.get(v[0]);
            b.store(y, i, sum);
        },
    );
    b.finish().expect("valid IR")
}

/// The matrix-vector product as an OpenACC user writes it: a gang loop over the rows of the
/// `n`-column matrix `a`, a vector loop with `reduction(+: s)`, then `y[i] = s`. Parameters:
/// `a`, `x` (read), `y` (written), `n` (`usize`).
pub fn matvec() -> Kernel {
    let mut b = KernelBuilder::new("matvec");
    let a = b.param_array("a", Scalar::F32, false);
    let x = b.param_array("x", Scalar::F32, false);
    let y = b.param_array("y", Scalar::F32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let gang = Some(Schedule {
        gang: true,
        ..Schedule::default()
    });
    let vector = Some(Schedule {
        vector: true,
        ..Schedule::default()
    });
    let start = b.lit_int(0, None);
    let rows = b.len(y);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        rows,
        false,
        gang,
        &[],
        &[],
        |b, v| {
            let s = b.reduction_local("s", Scalar::F32, ReduceOp::Add);
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                vector,
                &[(s, ReduceOp::Add)],
                &[],
                |b, w| {
                    let (i, j) = (b.get(v[0]), b.get(w[0]));
                    let row = b.binary(BinaryOp::Mul, i, n);
                    let at = b.binary(BinaryOp::Add, row, j);
                    let aij = b.load(a, at);
                    let j = b.get(w[0]);
                    let xj = b.load(x, j);
                    let p = b.binary(BinaryOp::Mul, aij, xj);
                    let cur = b.get(s);
                    let next = b.binary(BinaryOp::Add, cur, p);
                    b.set(s, next);
                },
            );
            let i = b.get(v[0]);
            let total = b.get(s);
            b.store(y, i, total);
        },
    );
    b.finish().expect("valid IR")
}

/// A five-point stencil as gang rows over vector columns, the centre row's window named by
/// `cache(a[c - 1..c + 2])` (3.3 section 2.10), which the GPU backends stage in shared memory
/// ([`super::cache_staging`]). Parameters: `a` (read), `b` (written), `n` rows, `m` columns (`usize`).
pub fn stencil_cached() -> Kernel {
    let mut b = KernelBuilder::new("stencil_cached");
    let a = b.param_array("a", Scalar::F32, false);
    let out = b.param_array("b", Scalar::F32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let m = b.param_scalar("m", Scalar::USize);
    let gang = Some(Schedule {
        gang: true,
        ..Schedule::default()
    });
    let vector = Some(Schedule {
        vector: true,
        ..Schedule::default()
    });
    let (one, one2) = (b.lit_int(1, None), b.lit_int(1, None));
    let last_row = b.binary(BinaryOp::Sub, n, one2);
    b.for_range(
        "j",
        Some(Scalar::USize),
        one,
        last_row,
        false,
        gang,
        &[],
        &[],
        |b, v| {
            let (one, one2) = (b.lit_int(1, None), b.lit_int(1, None));
            let last_col = b.binary(BinaryOp::Sub, m, one2);
            b.for_range(
                "i",
                Some(Scalar::USize),
                one,
                last_col,
                false,
                vector,
                &[],
                &[],
                |b, w| {
                    let centre = |b: &mut KernelBuilder| {
                        let (j, i) = (b.get(v[0]), b.get(w[0]));
                        let row = b.binary(BinaryOp::Mul, j, m);
                        b.binary(BinaryOp::Add, row, i)
                    };
                    let c = centre(b);
                    let one = b.lit_int(1, None);
                    let start = b.binary(BinaryOp::Sub, c, one);
                    b.cache(a, start, 3, 0);
                    let c = b.local("c", Some(Scalar::USize), None);
                    let at = centre(b);
                    b.set(c, at);
                    let mut sum = None;
                    for (op, by) in [
                        (BinaryOp::Sub, None),
                        (BinaryOp::Add, None),
                        (BinaryOp::Sub, Some(m)),
                        (BinaryOp::Add, Some(m)),
                    ] {
                        let cv = b.get(c);
                        let d = match by {
                            Some(m) => m,
                            None => b.lit_int(1, None),
                        };
                        let at = b.binary(op, cv, d);
                        let x = b.load(a, at);
                        sum = Some(match sum {
                            None => x,
                            Some(s) => b.binary(BinaryOp::Add, s, x),
                        });
                    }
                    let cv = b.get(c);
                    let x = b.load(a, cv);
                    let four = b.lit_float(4.0, None);
                    let x4 = b.binary(BinaryOp::Mul, four, x);
                    let v = b.binary(BinaryOp::Sub, sum.expect("four terms"), x4);
                    let cv = b.get(c);
                    b.store(out, cv, v);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

/// A row's softmax as an OpenACC user writes it: a gang loop over the `n`-column rows of `x`
/// whose iteration has three vector loops (the maximum, the sum of exponentials, the scaled
/// elements) with a scalar between them. Parameters: `x` (read), `y` (written), `n` (`usize`).
pub fn softmax() -> Kernel {
    let mut b = KernelBuilder::new("softmax");
    let x = b.param_array("x", Scalar::F32, false);
    let y = b.param_array("y", Scalar::F32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let gang = Some(Schedule {
        gang: true,
        ..Schedule::default()
    });
    let vector = Some(Schedule {
        vector: true,
        ..Schedule::default()
    });
    let start = b.lit_int(0, None);
    let len = b.len(x);
    let rows = b.binary(BinaryOp::Div, len, n);
    // x[i * n + j], the element of the iteration's row.
    let at = |b: &mut KernelBuilder, i: Var, j: Var| {
        let (i, j) = (b.get(i), b.get(j));
        let row = b.binary(BinaryOp::Mul, i, n);
        b.binary(BinaryOp::Add, row, j)
    };
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        rows,
        false,
        gang,
        &[],
        &[],
        |b, v| {
            let hi = b.reduction_local("hi", Scalar::F32, ReduceOp::Max);
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                vector.clone(),
                &[(hi, ReduceOp::Max)],
                &[],
                |b, w| {
                    let k = at(b, v[0], w[0]);
                    let xk = b.load(x, k);
                    let cur = b.get(hi);
                    let next = b.math(MathFn::Max, &[cur, xk]);
                    b.set(hi, next);
                },
            );
            let s = b.reduction_local("s", Scalar::F32, ReduceOp::Add);
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                vector.clone(),
                &[(s, ReduceOp::Add)],
                &[],
                |b, w| {
                    let k = at(b, v[0], w[0]);
                    let xk = b.load(x, k);
                    let m = b.get(hi);
                    let d = b.binary(BinaryOp::Sub, xk, m);
                    let e = b.math(MathFn::Exp, &[d]);
                    let cur = b.get(s);
                    let next = b.binary(BinaryOp::Add, cur, e);
                    b.set(s, next);
                },
            );
            let one = b.lit_float(1.0, Some(Scalar::F32));
            let total = b.get(s);
            let inv = b.binary(BinaryOp::Div, one, total);
            let scale = b.local("scale", Some(Scalar::F32), Some(inv));
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                vector,
                &[],
                &[],
                |b, w| {
                    let k = at(b, v[0], w[0]);
                    let xk = b.load(x, k);
                    let m = b.get(hi);
                    let d = b.binary(BinaryOp::Sub, xk, m);
                    let e = b.math(MathFn::Exp, &[d]);
                    let sc = b.get(scale);
                    let val = b.binary(BinaryOp::Mul, e, sc);
                    let k = at(b, v[0], w[0]);
                    b.store(y, k, val);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

/// `b = aᵀ` for an n x n matrix, the nest tiled 32 x 32 (3.3 section 2.9.8): the stores run
/// along `i`, so adjacent threads take adjacent `i`, and the reads of `a`, which run along `j`,
/// go through a tile in shared memory ([`tile::expand`](super::tile::expand)).
pub fn transpose() -> Kernel {
    let mut b = KernelBuilder::new("transpose");
    let a = b.param_array("a", Scalar::F32, false);
    let out = b.param_array("b", Scalar::F32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let (z0, o0, z1, o1) = (
        b.lit_int(0, None),
        b.lit_int(1, None),
        b.lit_int(0, None),
        b.lit_int(1, None),
    );
    b.for_tiled(
        &[
            ("i", Some(Scalar::USize), z0, o0, n),
            ("j", Some(Scalar::USize), z1, o1, n),
        ],
        &[Some(32), Some(32)],
        GRID,
        &[],
        &[],
        |b, v| {
            let (i, j) = (b.get(v[0]), b.get(v[1]));
            let row = b.binary(BinaryOp::Mul, i, n);
            let from = b.binary(BinaryOp::Add, row, j);
            let x = b.load(a, from);
            let (i, j) = (b.get(v[0]), b.get(v[1]));
            let col = b.binary(BinaryOp::Mul, j, n);
            let to = b.binary(BinaryOp::Add, col, i);
            b.store(out, to, x);
        },
    );
    b.finish().expect("valid IR")
}

/// Rows smoothed through an array private to each gang iteration (`private(t)` on the gang
/// loop, 3.3 section 2.9.10): one vector loop copies the row into `t`, the next reads each
/// element's neighbours from it, so the block keeps `t` in shared memory
/// ([`GangPhases::shared_arrays`]).
pub fn row_smooth() -> Kernel {
    let mut b = KernelBuilder::new("row_smooth");
    let x = b.param_array("x", Scalar::F32, false);
    let y = b.param_array("y", Scalar::F32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let gang = Some(Schedule {
        gang: true,
        ..Schedule::default()
    });
    let vector = Some(Schedule {
        vector: true,
        ..Schedule::default()
    });
    let start = b.lit_int(0, None);
    let len = b.len(x);
    let rows = b.binary(BinaryOp::Div, len, n);
    let t = b.local_array("t", Scalar::F32, 256);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        rows,
        false,
        gang,
        &[],
        &[t],
        |b, v| {
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                vector.clone(),
                &[],
                &[],
                |b, w| {
                    let (i, j) = (b.get(v[0]), b.get(w[0]));
                    let row = b.binary(BinaryOp::Mul, i, n);
                    let k = b.binary(BinaryOp::Add, row, j);
                    let xk = b.load(x, k);
                    let j = b.get(w[0]);
                    b.set_elem(t, j, xk);
                },
            );
            let one = b.lit_int(1, None);
            let last = b.binary(BinaryOp::Sub, n, one);
            b.for_range(
                "j",
                Some(Scalar::USize),
                one,
                last,
                false,
                vector,
                &[],
                &[],
                |b, w| {
                    let j = b.get(w[0]);
                    let one = b.lit_int(1, None);
                    let left = b.binary(BinaryOp::Sub, j, one);
                    let right = b.binary(BinaryOp::Add, j, one);
                    let (l, c, r) = (b.get_elem(t, left), b.get_elem(t, j), b.get_elem(t, right));
                    let lc = b.binary(BinaryOp::Add, l, c);
                    let sum = b.binary(BinaryOp::Add, lc, r);
                    let third = b.lit_float(1.0 / 3.0, Some(Scalar::F32));
                    let val = b.binary(BinaryOp::Mul, sum, third);
                    let i = b.get(v[0]);
                    let row = b.binary(BinaryOp::Mul, i, n);
                    let k = b.binary(BinaryOp::Add, row, j);
                    b.store(y, k, val);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

/// Rows smoothed `sweeps` times through two arrays private to each gang iteration: a
/// sequential loop around two vector loops, which every thread of the gang's block runs in
/// step, synchronizing between the loops ([`gang_phases::Step::Sequential`](super::gang_phases::Step::Sequential)). Parameters: `x`
/// (read), `y` (written), `n` (`usize`, the row length, at most 256), `sweeps` (`usize`).
pub fn row_sweeps() -> Kernel {
    let mut b = KernelBuilder::new("row_sweeps");
    let x = b.param_array("x", Scalar::F32, false);
    let y = b.param_array("y", Scalar::F32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let sweeps = b.param_scalar("sweeps", Scalar::USize);
    let gang = Some(Schedule {
        gang: true,
        ..Schedule::default()
    });
    let vector = Some(Schedule {
        vector: true,
        ..Schedule::default()
    });
    let start = b.lit_int(0, None);
    let len = b.len(x);
    let rows = b.binary(BinaryOp::Div, len, n);
    let t = b.local_array("t", Scalar::F32, 256);
    let u = b.local_array("u", Scalar::F32, 256);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        rows,
        false,
        gang,
        &[],
        &[t, u],
        |b, v| {
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                vector.clone(),
                &[],
                &[],
                |b, w| {
                    let (i, j) = (b.get(v[0]), b.get(w[0]));
                    let row = b.binary(BinaryOp::Mul, i, n);
                    let k = b.binary(BinaryOp::Add, row, j);
                    let xk = b.load(x, k);
                    let j = b.get(w[0]);
                    b.set_elem(t, j, xk);
                },
            );
            let start = b.lit_int(0, None);
            b.for_range(
                "s",
                Some(Scalar::USize),
                start,
                sweeps,
                false,
                None,
                &[],
                &[],
                |b, _| {
                    let one = b.lit_int(1, None);
                    let last = b.binary(BinaryOp::Sub, n, one);
                    b.for_range(
                        "j",
                        Some(Scalar::USize),
                        one,
                        last,
                        false,
                        vector.clone(),
                        &[],
                        &[],
                        |b, w| {
                            let j = b.get(w[0]);
                            let one = b.lit_int(1, None);
                            let left = b.binary(BinaryOp::Sub, j, one);
                            let right = b.binary(BinaryOp::Add, j, one);
                            let (l, r) = (b.get_elem(t, left), b.get_elem(t, right));
                            let sum = b.binary(BinaryOp::Add, l, r);
                            let half = b.lit_float(0.5, Some(Scalar::F32));
                            let val = b.binary(BinaryOp::Mul, sum, half);
                            let j = b.get(w[0]);
                            b.set_elem(u, j, val);
                        },
                    );
                    let one = b.lit_int(1, None);
                    let last = b.binary(BinaryOp::Sub, n, one);
                    b.for_range(
                        "j",
                        Some(Scalar::USize),
                        one,
                        last,
                        false,
                        vector.clone(),
                        &[],
                        &[],
                        |b, w| {
                            let j = b.get(w[0]);
                            let uj = b.get_elem(u, j);
                            let j = b.get(w[0]);
                            b.set_elem(t, j, uj);
                        },
                    );
                },
            );
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                vector.clone(),
                &[],
                &[],
                |b, w| {
                    let j = b.get(w[0]);
                    let tj = b.get_elem(t, j);
                    let (i, j) = (b.get(v[0]), b.get(w[0]));
                    let row = b.binary(BinaryOp::Mul, i, n);
                    let k = b.binary(BinaryOp::Add, row, j);
                    b.store(y, k, tj);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

/// Forward elimination of an `n x n` f64 matrix in place: a sequential loop over `k` that the
/// host drives (`segments`), around a gang loop over the rows below `k` whose iterations read
/// their factor before a vector loop that overwrites it (a barrier between them). Parameters:
/// `m` (written), `n` (`usize`).
pub fn eliminate() -> Kernel {
    let mut b = KernelBuilder::new("eliminate");
    let m = b.param_array("m", Scalar::F64, true);
    let n = b.param_scalar("n", Scalar::USize);
    let gang = Some(Schedule {
        gang: true,
        ..Schedule::default()
    });
    let vector = Some(Schedule {
        vector: true,
        ..Schedule::default()
    });
    let start = b.lit_int(0, None);
    b.for_range(
        "k",
        Some(Scalar::USize),
        start,
        n,
        false,
        None,
        &[],
        &[],
        |b, kv| {
            let k = b.get(kv[0]);
            let one = b.lit_int(1, None);
            let below = b.binary(BinaryOp::Add, k, one);
            b.for_range(
                "i",
                Some(Scalar::USize),
                below,
                n,
                false,
                gang,
                &[],
                &[],
                |b, iv| {
                    let at = |b: &mut KernelBuilder, row: Var, col: Var| {
                        let (r, c) = (b.get(row), b.get(col));
                        let base = b.binary(BinaryOp::Mul, r, n);
                        b.binary(BinaryOp::Add, base, c)
                    };
                    let ik = at(b, iv[0], kv[0]);
                    let kk = at(b, kv[0], kv[0]);
                    let (mik, mkk) = (b.load(m, ik), b.load(m, kk));
                    let factor = b.binary(BinaryOp::Div, mik, mkk);
                    let f = b.local("f", None, Some(factor));
                    let k = b.get(kv[0]);
                    b.for_range(
                        "j",
                        Some(Scalar::USize),
                        k,
                        n,
                        false,
                        vector,
                        &[],
                        &[],
                        |b, jv| {
                            let ij = at(b, iv[0], jv[0]);
                            let kj = at(b, kv[0], jv[0]);
                            let (mij, mkj) = (b.load(m, ij), b.load(m, kj));
                            let fv = b.get(f);
                            let p = b.binary(BinaryOp::Mul, fv, mkj);
                            let d = b.binary(BinaryOp::Sub, mij, p);
                            let ij = at(b, iv[0], jv[0]);
                            b.store(m, ij, d);
                        },
                    );
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

/// `for i in 0..n, j in 0..m tile(8, 32) { out[i * m + j] = i * m + j; s += 1; }` over the
/// grid (u32 values, a sum reduced into scalar parameter 3, `s`). Parameters: `out`
/// (written), `n`, `m` (`usize` scalars), `s`.
pub fn tiled() -> Kernel {
    let mut b = KernelBuilder::new("tiled");
    let out = b.param_array("out", Scalar::U32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let m = b.param_scalar("m", Scalar::USize);
    let _ = b.param_scalar("s", Scalar::U32);
    let s = b.reduction_local("s", Scalar::U32, ReduceOp::Add);
    b.reduce_into(s, ReduceOp::Add, 3);
    let (z0, o0, z1, o1) = (
        b.lit_int(0, None),
        b.lit_int(1, None),
        b.lit_int(0, None),
        b.lit_int(1, None),
    );
    b.for_tiled(
        &[
            ("i", Some(Scalar::USize), z0, o0, n),
            ("j", Some(Scalar::USize), z1, o1, m),
        ],
        &[Some(8), Some(32)],
        GRID,
        &[(s, ReduceOp::Add)],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let m = b.param_scalar_value(2);
            let row = b.binary(BinaryOp::Mul, i, m);
            let j = b.get(v[1]);
            let at = b.binary(BinaryOp::Add, row, j);
            let value = b.cast(at, Scalar::U32);
            b.store(out, at, value);
            let cur = b.get(s);
            let one = b.lit_int(1, Some(Scalar::U32));
            let next = b.binary(BinaryOp::Add, cur, one);
            b.set(s, next);
        },
    );
    b.finish().expect("valid IR")
}

/// Runs [`tiled`] through `launch` (a device's) at shapes the tiles divide and do not, and
/// checks that every element was written once and counted.
pub fn check_tiled<E: std::fmt::Debug>(
    mut launch: impl FnMut(&Kernel, &mut [KernelArg<'_>]) -> Result<KernelOutput, E>,
) {
    let k = tiled();
    for (n, m) in [(37usize, 53usize), (8, 32), (1, 1000), (300, 7)] {
        let mut out = vec![u32::MAX; n * m];
        // SAFETY: u32 elements; any bytes form a valid u32.
        let bytes =
            unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), 4 * out.len()) };
        let r = launch(
            &k,
            &mut [
                KernelArg::Write(bytes),
                KernelArg::Scalar(ScalarValue::USize(n as u64)),
                KernelArg::Scalar(ScalarValue::USize(m as u64)),
                KernelArg::Scalar(ScalarValue::U32(0)),
            ],
        )
        .expect("runs");
        assert!(
            out.iter().enumerate().all(|(i, &v)| v == i as u32),
            "{n} x {m}"
        );
        assert_eq!(
            r.reductions,
            vec![(3, ScalarValue::U32((n * m) as u32))],
            "{n} x {m}"
        );
    }
}

/// `for i in 0..x.len() { s = s op x[i]; }` over the grid, reduced with `op` into scalar
/// parameter 1 (`s`). Parameters: `x` (read), `s` (scalar).
pub fn reduce(elem: Scalar, op: ReduceOp) -> Kernel {
    let mut b = KernelBuilder::new("reduce");
    let x = b.param_array("x", elem, false);
    let _ = b.param_scalar("s", elem);
    let s = b.reduction_local("s", elem, op);
    b.reduce_into(s, op, 1);
    let start = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[(s, op)],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let cur = b.get(s);
            let next = match op {
                ReduceOp::Max => b.math(MathFn::Max, &[cur, xi]),
                ReduceOp::Min => b.math(MathFn::Min, &[cur, xi]),
                ReduceOp::Add => b.binary(BinaryOp::Add, cur, xi),
                // (A complex product needs pairs: [`complex_product`].)
                ReduceOp::Mul | ReduceOp::ComplexMul => b.binary(BinaryOp::Mul, cur, xi),
                ReduceOp::BitAnd | ReduceOp::And => b.binary(BinaryOp::BitAnd, cur, xi),
                ReduceOp::BitOr | ReduceOp::Or => b.binary(BinaryOp::BitOr, cur, xi),
                ReduceOp::BitXor => b.binary(BinaryOp::BitXor, cur, xi),
            };
            b.set(s, next);
        },
    );
    b.finish().expect("valid IR")
}

/// `for i in 0..re.len() { p *= Complex::new(re[i], im[i]); }` over the grid, a complex product
/// (`ReduceOp::ComplexMul`) into scalar parameters 2 and 3 (`p.re`, `p.im`). Parameters: `re`,
/// `im` (read), `p.re`, `p.im` (scalars).
pub fn complex_product(elem: Scalar) -> Kernel {
    let mut b = KernelBuilder::new("complex_product");
    let re = b.param_array("re", elem, false);
    let im = b.param_array("im", elem, false);
    let _ = b.param_scalar("p.re", elem);
    let _ = b.param_scalar("p.im", elem);
    let p = b.complex_reduction_local("p", elem, ReduceOp::Mul, 2, 3);
    let start = b.lit_int(0, None);
    let n = b.len(re);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[(p, ReduceOp::Mul)],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let r = b.load(re, i);
            let i = b.get(v[0]);
            let m = b.load(im, i);
            let z = b.complex(r, m);
            let cur = b.get(p);
            let next = b.binary(BinaryOp::Mul, cur, z);
            b.set(p, next);
        },
    );
    b.finish().expect("valid IR")
}

/// The layout of `#[repr(C)] struct Particle { x: f64, v: f64, hits: u32 }`.
pub static PARTICLE: StructLayout = StructLayout {
    name: "Particle",
    size: 24,
    fields: &[
        StructField {
            name: "x",
            offset: 0,
            ty: Some(Scalar::F64),
            array: None,
        },
        StructField {
            name: "v",
            offset: 8,
            ty: Some(Scalar::F64),
            array: None,
        },
        StructField {
            name: "hits",
            offset: 16,
            ty: Some(Scalar::U32),
            array: None,
        },
    ],
};

/// `for i in 0..p.len() { p[i].x += p[i].v * dt; atomic p[i].hits += 1 }` over the grid, on
/// an array of [`PARTICLE`]s. Parameters: `dt` (f64), `p` (written).
pub fn particles() -> Kernel {
    let mut b = KernelBuilder::new("particles");
    let dt = b.param_scalar("dt", Scalar::F64);
    let p = b.param_array("p", Elem::Struct(&PARTICLE), true);
    let start = b.lit_int(0, None);
    let n = b.len(p);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let (px, pv, hits) = (b.field(p, "x"), b.field(p, "v"), b.field(p, "hits"));
            let i = b.get(v[0]);
            let vi = b.load(pv, i);
            let step = b.binary(BinaryOp::Mul, vi, dt);
            let i = b.get(v[0]);
            let xi = b.load(px, i);
            let x = b.binary(BinaryOp::Add, xi, step);
            let i = b.get(v[0]);
            b.store(px, i, x);
            let i = b.get(v[0]);
            let one = b.lit_int(1, Some(Scalar::U32));
            b.atomic(hits, i, AtomicOp::Update(BinaryOp::Add), one, None, None);
        },
    );
    b.finish().expect("valid IR")
}

/// `for i in 0..keys.len() { hist[keys[i] as usize % hist.len()] += 1 }` with an atomic update,
/// as a gang/vector loop: a histogram of `elem` counts (privatized per block where the target
/// combines `elem` in its own memory, [`super::privatize::privatized`]).
pub fn histogram(elem: Scalar) -> Kernel {
    let mut b = KernelBuilder::new("histogram");
    let keys = b.param_array("keys", Scalar::U32, false);
    let hist = b.param_array("hist", elem, true);
    let start = b.lit_int(0, Some(Scalar::USize));
    let n = b.len(keys);
    let sched = Schedule {
        gang: true,
        worker: false,
        vector: true,
    };
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        Some(sched),
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let k = b.load(keys, i);
            let k = b.cast(k, Scalar::USize);
            let len = b.len(hist);
            let slot = b.binary(BinaryOp::Rem, k, len);
            let one = if elem.is_float() {
                b.lit_float(1.0, Some(elem))
            } else {
                b.lit_int(1, Some(elem))
            };
            b.atomic(hist, slot, AtomicOp::Update(BinaryOp::Add), one, None, None);
        },
    );
    b.finish().expect("histogram builds")
}

/// `for i in 0..x.len() { sums[keys[i] as usize % 40] += x[i]; }` over the grid with
/// `reduction(+: sums)`, an f32 array of 40 elements (kmeans' per-cluster sums): an
/// element-wise array reduction of more elements than a warp has lanes. Parameters: `x`
/// (f32), `keys` (u32), both read, `sums` (f32, the reduction's result).
pub fn bin_sums() -> Kernel {
    let mut b = KernelBuilder::new("bin_sums");
    let x = b.param_array("x", Scalar::F32, false);
    let keys = b.param_array("keys", Scalar::U32, false);
    let into = b.param_array("sums", Scalar::F32, true);
    let sums = b.reduction_local_array("sums", Scalar::F32, 40, ReduceOp::Add);
    let _ = into;
    b.reduce_into(sums, ReduceOp::Add, 2);
    let start = b.lit_int(0, None);
    let n = b.len(x);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        GRID,
        &[(sums, ReduceOp::Add)],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let key = b.load(keys, i);
            let key = b.cast(key, Scalar::USize);
            let bins = b.lit_int(40, Some(Scalar::USize));
            let k = b.binary(BinaryOp::Rem, key, bins);
            let i = b.get(v[0]);
            let xi = b.load(x, i);
            let cur = b.get_elem(sums, k);
            let k = b.binary(BinaryOp::Rem, key, bins);
            let next = b.binary(BinaryOp::Add, cur, xi);
            b.set_elem(sums, k, next);
        },
    );
    b.finish().expect("valid IR")
}
