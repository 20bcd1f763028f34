//! The bounds proof on sample kernels and launch arguments.

use super::*;
use crate::builder::KernelBuilder;
use crate::samples::{saxpy, GRID};

fn bytes(v: &[f32]) -> &[u8] {
    // SAFETY: f32 is plain data.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast(), std::mem::size_of_val(v)) }
}

#[test]
fn saxpy_over_its_own_length_is_in_bounds() {
    let (x, mut y) = (vec![0f32; 100], vec![0f32; 100]);
    let mut ys = y.clone();
    let k = saxpy(Scalar::F32);
    let args = [
        KernelArg::Scalar(ScalarValue::F32(2.0)),
        KernelArg::Read(bytes(&x)),
        KernelArg::Write(unsafe_bytes_mut(&mut y)),
    ];
    assert!(accesses_in_bounds(&k, &args));
    // `x` shorter than `y`: `x[i]` may be out of range.
    let short = vec![0f32; 99];
    let args = [
        KernelArg::Scalar(ScalarValue::F32(2.0)),
        KernelArg::Read(bytes(&short)),
        KernelArg::Write(unsafe_bytes_mut(&mut ys)),
    ];
    assert!(!accesses_in_bounds(&k, &args));
}

#[test]
fn loops_starting_at_a_variable_stay_below_their_end() {
    // `for k in 0..n { for i in k + 1..n { for j in k..n { m[i * n + j] .. m[k * n + j] } } }`:
    // in bounds exactly when `m` has n * n elements.
    let k = crate::samples::eliminate();
    for (len, ok) in [(16 * 16, true), (16 * 16 - 1, false)] {
        let mut m = vec![0u8; 8 * len];
        let args = [
            KernelArg::Write(&mut m),
            KernelArg::Scalar(ScalarValue::USize(16)),
        ];
        assert_eq!(accesses_in_bounds(&k, &args), ok, "{len} elements");
    }
}

fn unsafe_bytes_mut(v: &mut [f32]) -> &mut [u8] {
    // SAFETY: f32 is plain data, valid for any bits.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast(), std::mem::size_of_val(v)) }
}

/// `for j in 1..n-1 { for i in 1..m-1 { a[j*m+i] = b[j*m+i-1] } }` (collapsed).
fn stencil(offset: i128) -> Kernel {
    let mut b = KernelBuilder::new("stencil");
    let n = b.param_scalar("n", Scalar::USize);
    let m = b.param_scalar("m", Scalar::USize);
    let a = b.param_array("a", Scalar::F32, true);
    let src = b.param_array("b", Scalar::F32, false);
    let one = b.lit_int(1, None);
    let step = b.lit_int(1, None);
    let n1 = b.binary(BinaryOp::Sub, n, one);
    let one = b.lit_int(1, None);
    let trips_j = b.binary(BinaryOp::Sub, n1, one);
    let one = b.lit_int(1, None);
    let m1 = b.binary(BinaryOp::Sub, m, one);
    let one = b.lit_int(1, None);
    let trips_i = b.binary(BinaryOp::Sub, m1, one);
    let (s1, s2, step2) = (b.lit_int(1, None), b.lit_int(1, None), b.lit_int(1, None));
    b.for_(
        &[
            ("j", Some(Scalar::USize), s1, step, trips_j),
            ("i", Some(Scalar::USize), s2, step2, trips_i),
        ],
        GRID,
        &[],
        &[],
        |b, v| {
            let (j, i) = (b.get(v[0]), b.get(v[1]));
            let m = b.param_scalar_value(1);
            let jm = b.binary(BinaryOp::Mul, j, m);
            let k = b.binary(BinaryOp::Add, jm, i);
            let o = b.lit_int(offset, None);
            let ko = b.binary(BinaryOp::Add, k, o);
            let x = b.load(src, ko);
            let (j, i) = (b.get(v[0]), b.get(v[1]));
            let m = b.param_scalar_value(1);
            let jm = b.binary(BinaryOp::Mul, j, m);
            let k = b.binary(BinaryOp::Add, jm, i);
            b.store(a, k, x);
        },
    );
    b.finish().expect("valid IR")
}

/// `for j in 0..n { b[j] = if j > 0 { a[j - 1] } else { a[j] } + if j + 1 < n { a[j + 1] }
/// else { 0 } }`, the neighbours of a boundary guarded by branches.
fn neighbours(strict: bool) -> Kernel {
    let mut b = KernelBuilder::new("neighbours");
    let n = b.param_scalar("n", Scalar::USize);
    let a = b.param_array("a", Scalar::F32, false);
    let out = b.param_array("b", Scalar::F32, true);
    let zero = b.lit_int(0, None);
    b.for_range(
        "j",
        Some(Scalar::USize),
        zero,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let left = b.local("left", Some(Scalar::F32), None);
            let j = b.get(v[0]);
            let zero = b.lit_int(0, None);
            // `j >= 0` proves nothing about `j - 1`.
            let cond = b.binary(if strict { BinaryOp::Gt } else { BinaryOp::Ge }, j, zero);
            b.if_(
                cond,
                |b| {
                    let j = b.get(v[0]);
                    let one = b.lit_int(1, None);
                    let k = b.binary(BinaryOp::Sub, j, one);
                    let x = b.load(a, k);
                    b.set(left, x);
                },
                |b| {
                    let j = b.get(v[0]);
                    let x = b.load(a, j);
                    b.set(left, x);
                },
            );
            let j = b.get(v[0]);
            let one = b.lit_int(1, None);
            let k = b.binary(BinaryOp::Add, j, one);
            let n = b.param_scalar_value(0);
            let cond = b.binary(BinaryOp::Lt, k, n);
            b.if_(
                cond,
                |b| {
                    let j = b.get(v[0]);
                    let one = b.lit_int(1, None);
                    let k = b.binary(BinaryOp::Add, j, one);
                    let x = b.load(a, k);
                    let l = b.get(left);
                    let s = b.binary(BinaryOp::Add, l, x);
                    let j = b.get(v[0]);
                    b.store(out, j, s);
                },
                |_| {},
            );
        },
    );
    b.finish().expect("valid IR")
}

/// `for i in 0..n { out[i] = (i + big) as f32 }`: in bounds whatever `big` is; its
/// `usize` values fit 32 bits only for a small `big`.
#[test]
fn index_values_fit_32_bits_only_where_every_usize_does() {
    let mut b = KernelBuilder::new("offsets");
    let n = b.param_scalar("n", Scalar::USize);
    let _ = b.param_scalar("big", Scalar::USize);
    let out = b.param_array("out", Scalar::F32, true);
    let zero = b.lit_int(0, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let big = b.param_scalar_value(1);
            let s = b.binary(BinaryOp::Add, i, big);
            let x = b.cast(s, Scalar::F32);
            let i = b.get(v[0]);
            b.store(out, i, x);
        },
    );
    let k = b.finish().expect("valid IR");
    let n = 64usize;
    for (big, fits) in [(5u64, true), (1u64 << 40, false)] {
        let mut out = vec![0f32; n];
        let args = [
            KernelArg::Scalar(ScalarValue::USize(n as u64)),
            KernelArg::Scalar(ScalarValue::USize(big)),
            KernelArg::Write(unsafe_bytes_mut(&mut out)),
        ];
        let proof = prove(&k, &args, true);
        assert!(proof.in_bounds, "big {big}");
        assert_eq!(proof.fits_32, fits, "big {big}");
    }
}

/// `for i in 0..n { out[keys[i] as usize % m] = 1.0 }`: a loaded key is any `u32`, and
/// the remainder bounds the index whatever it is.
#[test]
fn a_remainder_of_a_loaded_value_is_in_bounds() {
    let mut b = KernelBuilder::new("bins");
    let n = b.param_scalar("n", Scalar::USize);
    let _ = b.param_scalar("m", Scalar::USize);
    let keys = b.param_array("keys", Scalar::U32, false);
    let out = b.param_array("out", Scalar::F32, true);
    let zero = b.lit_int(0, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let key = b.load(keys, i);
            let key = b.cast(key, Scalar::USize);
            let m = b.param_scalar_value(1);
            let bin = b.binary(BinaryOp::Rem, key, m);
            let one = b.lit_float(1.0, Some(Scalar::F32));
            b.store(out, bin, one);
        },
    );
    let k = b.finish().expect("valid IR");
    let keys = vec![0u32; 100];
    let mut out = vec![0f32; 16];
    let key_bytes: &[u8] = unsafe {
        std::slice::from_raw_parts(keys.as_ptr().cast(), std::mem::size_of_val(&keys[..]))
    };
    for (m, ok) in [(16u64, true), (17, false)] {
        let args = [
            KernelArg::Scalar(ScalarValue::USize(100)),
            KernelArg::Scalar(ScalarValue::USize(m)),
            KernelArg::Read(key_bytes),
            KernelArg::Write(unsafe_bytes_mut(&mut out)),
        ];
        let proof = prove(&k, &args, true);
        assert_eq!(proof.in_bounds, ok, "m {m}");
        // A key may be any u32: its usize copy fits 32 bits.
        assert_eq!(proof.fits_32, ok, "m {m}");
    }
}

/// `for j in 0..n { j = j * 2; a[j] = 0 }` (`for mut j`): the variable leaves the loop's
/// range, and the access is not proven.
#[test]
fn a_loop_variable_the_body_changes_has_no_range() {
    let mut b = KernelBuilder::new("doubled");
    let n = b.param_scalar("n", Scalar::USize);
    let a = b.param_array("a", Scalar::F32, true);
    let zero = b.lit_int(0, None);
    b.for_range(
        "j",
        Some(Scalar::USize),
        zero,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let j = b.get(v[0]);
            let two = b.lit_int(2, None);
            let d = b.binary(BinaryOp::Mul, j, two);
            b.set(v[0], d);
            let j = b.get(v[0]);
            let z = b.lit_float(0.0, None);
            b.store(a, j, z);
        },
    );
    let k = b.finish().expect("valid IR");
    let mut out = vec![0f32; 40];
    let args = [
        KernelArg::Scalar(ScalarValue::USize(40)),
        KernelArg::Write(unsafe_bytes_mut(&mut out)),
    ];
    assert!(!accesses_in_bounds(&k, &args));
}

/// `for i in 0..n { let b = bytes[i]; if b + 1 == 0 { out[i + n] = 1 } }` on `u8`: the sum
/// wraps for `b = 255`, so the branch runs, and its access is not proven.
#[test]
fn a_comparison_that_wraps_narrows_nothing() {
    let mut b = KernelBuilder::new("wraps");
    let n = b.param_scalar("n", Scalar::USize);
    let bytes = b.param_array("bytes", Scalar::U8, false);
    let out = b.param_array("out", Scalar::F32, true);
    let zero = b.lit_int(0, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let x = b.load(bytes, i);
            let byte = b.local("b", Some(Scalar::U8), Some(x));
            let bv = b.get(byte);
            let one = b.lit_int(1, None);
            let sum = b.binary(BinaryOp::Add, bv, one);
            let zero = b.lit_int(0, None);
            let wrapped = b.binary(BinaryOp::Eq, sum, zero);
            b.if_(
                wrapped,
                |b| {
                    let i = b.get(v[0]);
                    let at = b.binary(BinaryOp::Add, i, n);
                    let z = b.lit_float(1.0, None);
                    b.store(out, at, z);
                },
                |_| {},
            );
        },
    );
    let k = b.finish().expect("valid IR");
    let bytes_in = vec![255u8; 10];
    let mut o = vec![0f32; 10];
    let args = [
        KernelArg::Scalar(ScalarValue::USize(10)),
        KernelArg::Read(&bytes_in),
        KernelArg::Write(unsafe_bytes_mut(&mut o)),
    ];
    assert!(!accesses_in_bounds(&k, &args));
}

/// `for i in 0..n { if i >= limit { a[i + 1000] = 0 } }`: with `limit` at least `n` the
/// branch never runs, and its access is not held against the launch.
#[test]
fn a_branch_no_iteration_takes_is_not_checked() {
    let mut b = KernelBuilder::new("dead");
    let n = b.param_scalar("n", Scalar::USize);
    let limit = b.param_scalar("limit", Scalar::USize);
    let a = b.param_array("a", Scalar::F32, true);
    let zero = b.lit_int(0, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let far = b.binary(BinaryOp::Ge, i, limit);
            b.if_(
                far,
                |b| {
                    let i = b.get(v[0]);
                    let k = b.lit_int(1000, None);
                    let at = b.binary(BinaryOp::Add, i, k);
                    let z = b.lit_float(0.0, None);
                    b.store(a, at, z);
                },
                |_| {},
            );
        },
    );
    let k = b.finish().expect("valid IR");
    for (limit, ok) in [(40u64, true), (39, false)] {
        let mut out = vec![0f32; 40];
        let args = [
            KernelArg::Scalar(ScalarValue::USize(40)),
            KernelArg::Scalar(ScalarValue::USize(limit)),
            KernelArg::Write(unsafe_bytes_mut(&mut out)),
        ];
        assert_eq!(accesses_in_bounds(&k, &args), ok, "limit {limit}");
    }
}

#[test]
fn branch_conditions_bound_the_accesses_they_guard() {
    let n = 40usize;
    let src = vec![0f32; n];
    for (strict, ok) in [(true, true), (false, false)] {
        let mut out = vec![0f32; n];
        let args = [
            KernelArg::Scalar(ScalarValue::USize(n as u64)),
            KernelArg::Read(bytes(&src)),
            KernelArg::Write(unsafe_bytes_mut(&mut out)),
        ];
        assert_eq!(
            accesses_in_bounds(&neighbours(strict), &args),
            ok,
            "strict {strict}"
        );
    }
}

#[test]
fn a_collapsed_stencil_is_proven_and_one_past_the_end_is_not() {
    let (n, m) = (30usize, 20usize);
    let src = vec![0f32; n * m];
    let mut a = vec![0f32; n * m];
    // Reads b[j*m + i + k]: the largest index is (n-2)*m + (m-2) + k.
    for (k, ok) in [(0, true), (m as i128 + 1, true), (m as i128 + 2, false)] {
        let args = [
            KernelArg::Scalar(ScalarValue::USize(n as u64)),
            KernelArg::Scalar(ScalarValue::USize(m as u64)),
            KernelArg::Write(unsafe_bytes_mut(&mut a)),
            KernelArg::Read(bytes(&src)),
        ];
        assert_eq!(accesses_in_bounds(&stencil(k), &args), ok, "offset {k}");
    }
}

/// `for i in 0..n { if i == 0 { b[i] = a[i] } else { b[i] = a[i - 1] } }` (with `!=` when
/// `flip`, the branches swapped): the branch where `i` is not 0 reads `a[i - 1]` from 0.
fn shifted(flip: bool) -> Kernel {
    let mut b = KernelBuilder::new("shifted");
    let n = b.param_scalar("n", Scalar::USize);
    let a = b.param_array("a", Scalar::F32, false);
    let out = b.param_array("b", Scalar::F32, true);
    let zero = b.lit_int(0, None);
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        n,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let i = b.get(v[0]);
            let zero = b.lit_int(0, None);
            let cond = b.binary(if flip { BinaryOp::Ne } else { BinaryOp::Eq }, i, zero);
            let first = |b: &mut KernelBuilder| {
                let i = b.get(v[0]);
                let x = b.load(a, i);
                let i = b.get(v[0]);
                b.store(out, i, x);
            };
            let rest = |b: &mut KernelBuilder| {
                let i = b.get(v[0]);
                let one = b.lit_int(1, None);
                let k = b.binary(BinaryOp::Sub, i, one);
                let x = b.load(a, k);
                let i = b.get(v[0]);
                b.store(out, i, x);
            };
            if flip {
                b.if_(cond, rest, first);
            } else {
                b.if_(cond, first, rest);
            }
        },
    );
    b.finish().expect("valid IR")
}

#[test]
fn a_branch_where_a_variable_is_not_its_first_value_starts_after_it() {
    for flip in [false, true] {
        let k = shifted(flip);
        let (a, mut out) = (vec![0f32; 10], vec![0f32; 10]);
        let args = [
            KernelArg::Scalar(ScalarValue::USize(10)),
            KernelArg::Read(bytes(&a)),
            KernelArg::Write(unsafe_bytes_mut(&mut out)),
        ];
        assert!(accesses_in_bounds(&k, &args), "flip = {flip}");
        // One more iteration than `b` holds: out of bounds.
        let mut short = vec![0f32; 9];
        let args = [
            KernelArg::Scalar(ScalarValue::USize(10)),
            KernelArg::Read(bytes(&a)),
            KernelArg::Write(unsafe_bytes_mut(&mut short)),
        ];
        assert!(!accesses_in_bounds(&k, &args), "flip = {flip}");
    }
}

/// The three-diagonal wavefront of `benches/launches/programs.rs` as the macro builds it: for
/// `i in lo..hi`, `j = d - i`; `r[cur + i] = -d` on the table's edge, else the best of
/// `r[prev2 + i - 1]`, `r[prev + i - 1]` and `r[prev + i]` (a `u8` comparison of `a[i - 1]`
/// and `b[j - 1]`).
fn wavefront() -> Kernel {
    let mut b = KernelBuilder::new("wavefront");
    let a = b.param_array("a", Scalar::U8, false);
    let bb = b.param_array("b", Scalar::U8, false);
    let names = ["cur", "d", "hi", "lo", "prev", "prev2"];
    for n in names {
        b.param_scalar(n, Scalar::USize);
    }
    let r = b.param_array("r", Scalar::I32, true);
    let (lo, hi) = (b.param_scalar_value(5), b.param_scalar_value(4));
    b.for_range(
        "i",
        Some(Scalar::USize),
        lo,
        hi,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let (d, i) = (b.param_scalar_value(3), b.get(v[0]));
            let jv = b.binary(BinaryOp::Sub, d, i);
            let j = b.local("j", Some(Scalar::USize), Some(jv));
            let (i, zero) = (b.get(v[0]), b.lit_int(0, Some(Scalar::USize)));
            let c1 = b.binary(BinaryOp::Eq, i, zero);
            let (jj, zero) = (b.get(j), b.lit_int(0, Some(Scalar::USize)));
            let c2 = b.binary(BinaryOp::Eq, jj, zero);
            let edge = b.binary(BinaryOp::Or, c1, c2);
            let at = |b: &mut KernelBuilder, base: u32, minus: bool| {
                let (p, i) = (b.param_scalar_value(base), b.get(v[0]));
                let s = b.binary(BinaryOp::Add, p, i);
                if minus {
                    let one = b.lit_int(1, Some(Scalar::USize));
                    b.binary(BinaryOp::Sub, s, one)
                } else {
                    s
                }
            };
            b.if_(
                edge,
                |b| {
                    let d = b.param_scalar_value(3);
                    let d = b.cast(d, Scalar::I32);
                    let x = b.unary(UnaryOp::Neg, d);
                    let k = at(b, 2, false);
                    b.store(r, k, x);
                },
                |b| {
                    let (i, one) = (b.get(v[0]), b.lit_int(1, Some(Scalar::USize)));
                    let k = b.binary(BinaryOp::Sub, i, one);
                    let x = b.load(a, k);
                    let (jj, one) = (b.get(j), b.lit_int(1, Some(Scalar::USize)));
                    let k = b.binary(BinaryOp::Sub, jj, one);
                    let y = b.load(bb, k);
                    let same = b.binary(BinaryOp::Eq, x, y);
                    let (two, minus) = (
                        b.lit_int(2, Some(Scalar::I32)),
                        b.lit_int(-1, Some(Scalar::I32)),
                    );
                    let m = b.select(same, two, minus);
                    let k = at(b, 6, true);
                    let diag = b.load(r, k);
                    let diag = b.binary(BinaryOp::Add, diag, m);
                    let k = at(b, 5, true);
                    let up = b.load(r, k);
                    let k = at(b, 5, false);
                    let left = b.load(r, k);
                    let gt = b.binary(BinaryOp::Gt, diag, up);
                    let best = b.select(gt, diag, up);
                    let gt = b.binary(BinaryOp::Gt, best, left);
                    let x = b.select(gt, best, left);
                    let k = at(b, 2, false);
                    b.store(r, k, x);
                },
            );
        },
    );
    b.finish().expect("valid IR")
}

#[test]
fn every_diagonal_of_a_wavefront_is_in_bounds_and_fits_32_bits() {
    let k = wavefront();
    let prepared = Prepared::new(&k).expect("types");
    let n = 100usize;
    let w = n + 1;
    let (a, b) = (vec![0u8; n], vec![0u8; n]);
    let mut r = vec![0u8; 4 * 3 * w];
    let mut short = vec![0u8; 4 * (3 * w - 1)];
    for d in 0..=2 * n {
        let lo = d.saturating_sub(n);
        let hi = if d > n { n + 1 } else { d + 1 };
        let (cur, prev, prev2) = ((d % 3) * w, ((d + 2) % 3) * w, ((d + 1) % 3) * w);
        let scalars = [cur, d, hi, lo, prev, prev2];
        for (table, ok) in [(&mut r, true), (&mut short, false)] {
            let mut args = vec![KernelArg::Read(&a), KernelArg::Read(&b)];
            args.extend(
                scalars
                    .iter()
                    .map(|&x| KernelArg::Scalar(ScalarValue::USize(x as u64))),
            );
            args.push(KernelArg::Write(table));
            let p = prepared.prove(&k, &args, true);
            // The short table misses the last cell of the third diagonal only.
            let want = ok || !(cur == 2 * w && hi == w);
            assert_eq!(p.in_bounds, want, "d = {d}, table ok: {ok}");
            assert_eq!(p.fits_32, want, "d = {d}");
        }
    }
}

/// `for i in 0..10 { if i >= 5 { b[i] = a[i - 5] } else { b[i] = a[i - 5] } }` with the
/// `i` of both `i - 5` one expression: its range is that of its place, so the branch where
/// `i < 5` is not proven by the range the other branch found (there `i - 5` wraps).
#[test]
fn an_expression_shared_by_two_branches_has_the_range_of_each_place() {
    let mut b = KernelBuilder::new("shared");
    let a = b.param_array("a", Scalar::F32, false);
    let out = b.param_array("b", Scalar::F32, true);
    let (zero, ten) = (
        b.lit_int(0, Some(Scalar::USize)),
        b.lit_int(10, Some(Scalar::USize)),
    );
    b.for_range(
        "i",
        Some(Scalar::USize),
        zero,
        ten,
        false,
        GRID,
        &[],
        &[],
        |b, v| {
            let (i, five) = (b.get(v[0]), b.lit_int(5, Some(Scalar::USize)));
            let cond = b.binary(BinaryOp::Ge, i, five);
            let shared = b.get(v[0]);
            let five = b.lit_int(5, Some(Scalar::USize));
            let k = b.binary(BinaryOp::Sub, shared, five);
            let body = |b: &mut KernelBuilder| {
                let x = b.load(a, k);
                let i = b.get(v[0]);
                b.store(out, i, x);
            };
            b.if_(cond, body, body);
        },
    );
    let k = b.finish().expect("valid IR");
    let (x, mut y) = (vec![0f32; 10], vec![0f32; 10]);
    let args = [
        KernelArg::Read(bytes(&x)),
        KernelArg::Write(unsafe_bytes_mut(&mut y)),
    ];
    assert!(!accesses_in_bounds(&k, &args));
}

/// A proof kept for its guards gives, for every launch it answers, the verdict a walk of the
/// kernel with that launch's values gives: the wavefront at every diagonal of several sizes,
/// and launches with scalars drawn at random (most of them out of bounds somewhere), on one
/// `Prepared` so that kept proofs answer most of them.
#[test]
fn kept_proofs_answer_as_a_walk_would() {
    let k = wavefront();
    let prepared = Prepared::new(&k).expect("types");
    let (a, b) = (vec![0u8; 300], vec![0u8; 300]);
    let mut table = vec![0u8; 4 * 3 * 301];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut random = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    let mut launches = Vec::new();
    for n in [50usize, 100, 300] {
        let w = n + 1;
        for d in 0..=2 * n {
            let lo = d.saturating_sub(n);
            let hi = if d > n { n + 1 } else { d + 1 };
            let (cur, prev, prev2) = ((d % 3) * w, ((d + 2) % 3) * w, ((d + 1) % 3) * w);
            launches.push((n, [cur, d, hi, lo, prev, prev2]));
        }
    }
    for _ in 0..3000 {
        let n = 1 + random(300) as usize;
        let s = [(); 6].map(|_| random(2 * n as u64 + 3) as usize);
        launches.push((n, s));
    }
    let mut agreed = 0;
    for (n, scalars) in launches {
        let len = 4 * (3 * (n + 1) - random(2) as usize);
        let mut args = vec![KernelArg::Read(&a[..n]), KernelArg::Read(&b[..n])];
        args.extend(
            scalars
                .iter()
                .map(|&x| KernelArg::Scalar(ScalarValue::USize(x as u64))),
        );
        args.push(KernelArg::Write(&mut table[..len]));
        for widths in [false, true] {
            let kept = prepared.prove(&k, &args, widths);
            let walked = prepared.prove_concrete(&k, &args, widths);
            assert_eq!(
                kept, walked,
                "n = {n}, scalars {scalars:?}, widths {widths}"
            );
            agreed += kept.in_bounds as usize;
        }
    }
    assert!(agreed > 1000, "most diagonals are in bounds ({agreed})");
}

/// The wavefront's diagonals reuse a handful of kept proofs: one walk per shape of the
/// bounds, not one per diagonal.
#[test]
fn a_wavefront_walks_once_per_shape_of_its_bounds() {
    let k = wavefront();
    let prepared = Prepared::new(&k).expect("types");
    let n = 1000usize;
    let w = n + 1;
    let (a, b) = (vec![0u8; n], vec![0u8; n]);
    let mut r = vec![0u8; 4 * 3 * w];
    for d in 0..=2 * n {
        let lo = d.saturating_sub(n);
        let hi = if d > n { n + 1 } else { d + 1 };
        let (cur, prev, prev2) = ((d % 3) * w, ((d + 2) % 3) * w, ((d + 1) % 3) * w);
        let mut args = vec![KernelArg::Read(&a), KernelArg::Read(&b)];
        args.extend(
            [cur, d, hi, lo, prev, prev2]
                .iter()
                .map(|&x| KernelArg::Scalar(ScalarValue::USize(x as u64))),
        );
        args.push(KernelArg::Write(&mut r));
        assert!(prepared.prove(&k, &args, true).in_bounds, "d = {d}");
    }
    let g = prepared.general.lock().unwrap();
    assert!(!g.off, "the wavefront's proofs are affine in its inputs");
    assert!(
        g.walks <= 12,
        "{} walks for {} diagonals",
        g.walks,
        2 * n + 1
    );
    let guards: Vec<usize> = g.proofs.iter().map(|(_, guards, _)| guards.len()).collect();
    eprintln!("{} walks; guards of the kept proofs: {guards:?}", g.walks);
}

/// The same on kernels with branches on loop variables, a product of two scalars (not affine:
/// walked every time) and negative offsets, with scalars and array lengths drawn at random.
#[test]
fn kept_proofs_answer_as_a_walk_would_on_branches_and_products() {
    let kernels = [
        stencil(0),
        stencil(21),
        neighbours(true),
        neighbours(false),
        shifted(false),
        shifted(true),
    ];
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    };
    let data = vec![0u8; 4 * 2000];
    let mut out = vec![0u8; 4 * 2000];
    let mut in_bounds = 0;
    for k in &kernels {
        let prepared = Prepared::new(k).expect("types");
        for _ in 0..2000 {
            let mut args = Vec::new();
            for p in &k.params {
                match p.kind {
                    ParamKind::Scalar(_) => {
                        args.push(KernelArg::Scalar(ScalarValue::USize(random(45))))
                    }
                    ParamKind::Array {
                        writable: false, ..
                    } => args.push(KernelArg::Read(&data[..4 * random(1200) as usize])),
                    ParamKind::Array { .. } => {}
                }
            }
            let len = 4 * random(1200) as usize;
            let at = k
                .params
                .iter()
                .position(|p| matches!(p.kind, ParamKind::Array { writable: true, .. }))
                .expect("a written array");
            args.insert(at, KernelArg::Write(&mut out[..len]));
            for widths in [false, true] {
                let kept = prepared.prove(k, &args, widths);
                let walked = prepared.prove_concrete(k, &args, widths);
                assert_eq!(kept, walked, "{}: {widths}", k.name);
                in_bounds += kept.in_bounds as usize;
            }
        }
    }
    assert!(in_bounds > 3000, "{in_bounds} launches in bounds");
}

/// `for i in 0..n { for j in 0..cols { a[if j < m { i * m + j } else { usize::MAX }] = 0 } }`:
/// an `ndarray` index checked per axis (`a[[i, j]]` of an `n x m` array).
fn per_axis(cols_param: bool) -> Kernel {
    let mut b = KernelBuilder::new("per_axis");
    let n = b.param_scalar("n", Scalar::USize);
    let m = b.param_scalar("m", Scalar::USize);
    let cols = b.param_scalar("cols", Scalar::USize);
    let a = b.param_array("a", Scalar::F32, true);
    let _ = (n, m, cols);
    let (s1, s2) = (b.lit_int(0, None), b.lit_int(0, None));
    let (st1, st2) = (b.lit_int(1, None), b.lit_int(1, None));
    let n = b.param_scalar_value(0);
    let inner = b.param_scalar_value(if cols_param { 2 } else { 1 });
    b.for_(
        &[
            ("i", Some(Scalar::USize), s1, st1, n),
            ("j", Some(Scalar::USize), s2, st2, inner),
        ],
        GRID,
        &[],
        &[],
        |b, v| {
            let (i, j) = (b.get(v[0]), b.get(v[1]));
            let m = b.param_scalar_value(1);
            let ok = b.binary(BinaryOp::Lt, j, m);
            let m = b.param_scalar_value(1);
            let im = b.binary(BinaryOp::Mul, i, m);
            let j = b.get(v[1]);
            let flat = b.binary(BinaryOp::Add, im, j);
            let max = b.lit_int(u64::MAX as i128, Some(Scalar::USize));
            let index = b.select(ok, flat, max);
            let zero = b.lit_float(0.0, None);
            b.store(a, index, zero);
        },
    );
    b.finish().expect("valid IR")
}

#[test]
fn an_index_checked_per_axis_is_proven_where_the_loop_stays_in_its_axis() {
    let (n, m) = (7usize, 5usize);
    let mut a = vec![0f32; n * m];
    // The inner loop over the axis's own length: the check always holds, the select takes
    // the offset; one past it: the check may fail, and usize::MAX is out of bounds.
    for (cols, by_param, ok) in [(m, false, true), (m, true, true), (m + 1, true, false)] {
        let args = [
            KernelArg::Scalar(ScalarValue::USize(n as u64)),
            KernelArg::Scalar(ScalarValue::USize(m as u64)),
            KernelArg::Scalar(ScalarValue::USize(cols as u64)),
            KernelArg::Write(unsafe_bytes_mut(&mut a)),
        ];
        assert_eq!(
            accesses_in_bounds(&per_axis(by_param), &args),
            ok,
            "{cols} columns"
        );
    }
}
