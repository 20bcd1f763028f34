//! Matrix products spelt the ways programs write them: with `tile(16, 16)`, as `collapse(2)`,
//! as a gang loop over a vector loop, and accumulating in the result array.

use super::*;
use crate::builder::Value;

/// `r * n + c`, the index of row `r`, column `c` of an `n`-column matrix.
fn at(b: &mut KernelBuilder, r: Var, c: Var, n: Value) -> Value {
    let (r, c) = (b.get(r), b.get(c));
    let row = b.binary(BinaryOp::Mul, r, n);
    b.binary(BinaryOp::Add, row, c)
}

/// `c = a b` for `n x n` f32 matrices with `tile(16, 16)`: each element's `k` loop runs in
/// chunks staged through shared memory (`tile::chunks`). Parameters: `a`, `b` (read), `c`
/// (written), `n` (`usize`).
pub fn matmul_tiled() -> Kernel {
    matmul_nest("matmul_tiled", &[Some(16), Some(16)])
}

/// `c = a b` as [`matmul_tiled`], with `collapse(2)` instead of `tile(16, 16)`: acc tiles it
/// 16 x 16 itself (`tile::auto_tile`).
pub fn matmul_collapsed() -> Kernel {
    matmul_nest("matmul_collapsed", &[])
}

/// The matrix product nest with `tile` sizes `tile` (none: collapsed).
fn matmul_nest(name: &str, tile: &[Option<u32>]) -> Kernel {
    let mut b = KernelBuilder::new(name);
    let a = b.param_array("a", Scalar::F32, false);
    let bm = b.param_array("b", Scalar::F32, false);
    let c = b.param_array("c", Scalar::F32, true);
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
        tile,
        GRID,
        &[],
        &[],
        |b, v| {
            let zero = b.lit_float(0.0, Some(Scalar::F32));
            let s = b.local("s", Some(Scalar::F32), Some(zero));
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
                |b, w| {
                    let (i, k) = (b.get(v[0]), b.get(w[0]));
                    let row = b.binary(BinaryOp::Mul, i, n);
                    let at = b.binary(BinaryOp::Add, row, k);
                    let x = b.load(a, at);
                    let (k, j) = (b.get(w[0]), b.get(v[1]));
                    let row = b.binary(BinaryOp::Mul, k, n);
                    let at = b.binary(BinaryOp::Add, row, j);
                    let y = b.load(bm, at);
                    let p = b.binary(BinaryOp::Mul, x, y);
                    let cur = b.get(s);
                    let next = b.binary(BinaryOp::Add, cur, p);
                    b.set(s, next);
                },
            );
            let (i, j) = (b.get(v[0]), b.get(v[1]));
            let row = b.binary(BinaryOp::Mul, i, n);
            let at = b.binary(BinaryOp::Add, row, j);
            let sv = b.get(s);
            b.store(c, at, sv);
        },
    );
    b.finish().expect("valid IR")
}

/// `c += a b` for `n x n` f32 matrices as C writes it without a scalar: a parallel loop over
/// rows, a sequential loop over columns, and the sum accumulated in `c[i * n + j]` by the
/// innermost sequential `k` loop ([`super::promote`] keeps the element in a register).
/// Parameters: `a`, `b` (read), `c` (read and written), `n` (`usize`).
pub fn matmul_accumulating() -> Kernel {
    let mut b = KernelBuilder::new("matmul_accumulating");
    let a = b.param_array("a", Scalar::F32, false);
    let bm = b.param_array("b", Scalar::F32, false);
    let c = b.param_array("c", Scalar::F32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let parallel = Some(Schedule {
        gang: true,
        vector: true,
        ..Schedule::default()
    });
    let start = b.lit_int(0, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        parallel,
        &[],
        &[],
        |b, iv| {
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                None,
                &[],
                &[],
                |b, jv| {
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
                            let at = |b: &mut KernelBuilder, r: Var, c: Var| at(b, r, c, n);
                            let (ik, kj, ij) = (
                                at(b, iv[0], kv[0]),
                                at(b, kv[0], jv[0]),
                                at(b, iv[0], jv[0]),
                            );
                            let (aik, bkj, cij) = (b.load(a, ik), b.load(bm, kj), b.load(c, ij));
                            let p = b.binary(BinaryOp::Mul, aik, bkj);
                            let s = b.binary(BinaryOp::Add, cij, p);
                            let ij = at(b, iv[0], jv[0]);
                            b.store(c, ij, s);
                        },
                    );
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

/// `c = a b` for `n x n` f32 matrices as a gang loop over rows around a vector loop over
/// columns, each element's sum a sequential `k` loop: acc tiles the pair 16 x 16 as it would
/// `collapse(2)` (`tile::auto_tile`). Parameters: `a`, `b` (read), `c` (written), `n`
/// (`usize`).
pub fn matmul_gang_vector() -> Kernel {
    let mut b = KernelBuilder::new("matmul_gang_vector");
    let a = b.param_array("a", Scalar::F32, false);
    let bm = b.param_array("b", Scalar::F32, false);
    let c = b.param_array("c", Scalar::F32, true);
    let n = b.param_scalar("n", Scalar::USize);
    let level = |gang: bool| {
        Some(Schedule {
            gang,
            vector: !gang,
            ..Schedule::default()
        })
    };
    let start = b.lit_int(0, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        start,
        n,
        false,
        level(true),
        &[],
        &[],
        |b, iv| {
            let start = b.lit_int(0, None);
            b.for_range(
                "j",
                Some(Scalar::USize),
                start,
                n,
                false,
                level(false),
                &[],
                &[],
                |b, jv| {
                    let zero = b.lit_float(0.0, Some(Scalar::F32));
                    let s = b.local("s", Some(Scalar::F32), Some(zero));
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
                            let at = |b: &mut KernelBuilder, r: Var, c: Var| at(b, r, c, n);
                            let (ik, kj) = (at(b, iv[0], kv[0]), at(b, kv[0], jv[0]));
                            let (x, y) = (b.load(a, ik), b.load(bm, kj));
                            let p = b.binary(BinaryOp::Mul, x, y);
                            let cur = b.get(s);
                            let next = b.binary(BinaryOp::Add, cur, p);
                            b.set(s, next);
                        },
                    );
                    let (i, j) = (b.get(iv[0]), b.get(jv[0]));
                    let row = b.binary(BinaryOp::Mul, i, n);
                    let ij = b.binary(BinaryOp::Add, row, j);
                    let sv = b.get(s);
                    b.store(c, ij, sv);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

/// `c = a b` as `collapse(2)` written as C often writes it, without a scalar:
/// `c[i * n + j] = 0; for k in 0..n { c[i * n + j] += a[i * n + k] * b[k * n + j] }`. The
/// element is kept in a register across the `k` loop (`promote`), which makes the sum a scalar
/// one, and acc tiles the nest 16 x 16 as for [`matmul_collapsed`]. Parameters: `a`, `b`
/// (read), `c` (written), `n` (`usize`).
pub fn matmul_collapsed_in_c() -> Kernel {
    let mut b = KernelBuilder::new("matmul_collapsed_in_c");
    let a = b.param_array("a", Scalar::F32, false);
    let bm = b.param_array("b", Scalar::F32, false);
    let c = b.param_array("c", Scalar::F32, true);
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
        &[],
        GRID,
        &[],
        &[],
        |b, v| {
            let at = |b: &mut KernelBuilder, r: Var, c: Var| at(b, r, c, n);
            let ij = at(b, v[0], v[1]);
            let zero = b.lit_float(0.0, Some(Scalar::F32));
            b.store(c, ij, zero);
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
                |b, w| {
                    let (ik, kj, ij) = (at(b, v[0], w[0]), at(b, w[0], v[1]), at(b, v[0], v[1]));
                    let (x, y, cij) = (b.load(a, ik), b.load(bm, kj), b.load(c, ij));
                    let p = b.binary(BinaryOp::Mul, x, y);
                    let s = b.binary(BinaryOp::Add, cij, p);
                    let ij = at(b, v[0], v[1]);
                    b.store(c, ij, s);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}
