//! `x % y` on `f32` and `f64` in kernels, exactly as Rust computes it (C's `fmod`: the
//! remainder of the truncated quotient, which is always representable, so there is one right
//! answer). GPUs have no such instruction, and `x - trunc(x / y) * y` is off whenever the
//! quotient rounds to an integer or the product rounds (`100.0 % (2.0 * PI)` differs in the last
//! place). This is musl's `fmod` in integer operations on the bits, written once for every
//! backend: long division of the significands, one step per bit of exponent difference (a
//! handful for ordinary operands, at most 277 for `f32` and 2,098 for `f64`).

use super::*;

/// The locals of one `fmod` and the layout of its float type.
#[derive(Clone, Copy)]
struct Fmod {
    /// The float type and the unsigned type of its bits.
    t: Scalar,
    u: Scalar,
    /// Bits in all, bits of the significand, the exponent's mask.
    w: i128,
    m: i128,
    e: i128,
    /// The operands' bits (then their significands, then the remainder's).
    ux: Var,
    uy: Var,
    /// `x`'s biased exponent, then the remainder's (signed: a subnormal's goes below zero
    /// while it is normalized).
    ex: Var,
    /// `x`'s sign bit.
    sx: Var,
    /// The result, and whether it is final.
    r: Var,
    done: Var,
}

impl Fmod {
    fn int(self, b: &mut KernelBuilder, v: i128, ty: Scalar) -> Value {
        b.lit_int(v, Some(ty))
    }

    /// `v -= 1` of an `i32` local.
    fn dec(self, b: &mut KernelBuilder, v: Var) {
        let x = b.get(v);
        let one = self.int(b, 1, Scalar::I32);
        let y = b.binary(BinaryOp::Sub, x, one);
        b.set(v, y);
    }

    /// `v << by` of a local of the bits' type.
    fn shl(self, b: &mut KernelBuilder, v: Var, by: i128) -> Value {
        let x = b.get(v);
        let s = self.int(b, by, Scalar::U32);
        b.binary(BinaryOp::Shl, x, s)
    }

    /// Whether `(v >> by) != 0`.
    fn bits_above(self, b: &mut KernelBuilder, v: Value, by: i128) -> Value {
        let s = self.int(b, by, Scalar::U32);
        let hi = b.binary(BinaryOp::Shr, v, s);
        let z = self.int(b, 0, self.u);
        b.binary(BinaryOp::Ne, hi, z)
    }

    /// `v = v op (1 - exp)`: a shift by how far exponent `exp` is below 1.
    fn shift_below_one(self, b: &mut KernelBuilder, v: Var, exp: Var, op: BinaryOp) {
        let e = b.get(exp);
        let one = self.int(b, 1, Scalar::I32);
        let amount = b.binary(BinaryOp::Sub, one, e);
        let amount = b.cast(amount, Scalar::U32);
        let x = b.get(v);
        let y = b.binary(op, x, amount);
        b.set(v, y);
    }

    /// A zero with `x`'s sign, from its sign bit (a driver may fold `0.0 * x` to `0.0`).
    fn signed_zero(self, b: &mut KernelBuilder) -> Value {
        let s = b.get(self.sx);
        b.bitcast(s, self.t)
    }

    fn finish(self, b: &mut KernelBuilder, v: Value) {
        b.set(self.r, v);
        let t = b.lit_bool(true);
        b.set(self.done, t);
    }

    fn not_done(self, b: &mut KernelBuilder) -> Value {
        let d = b.get(self.done);
        b.unary(UnaryOp::Not, d)
    }

    /// The significand of `(v, exp)` with its implicit bit; a subnormal's shifted up to it,
    /// its exponent lowered as far.
    fn significand(self, b: &mut KernelBuilder, v: Var, exp: Var) {
        let e0 = b.get(exp);
        let z = self.int(b, 0, Scalar::I32);
        let subnormal = b.binary(BinaryOp::Eq, e0, z);
        b.if_(
            subnormal,
            |b| {
                let i0 = self.shl(b, v, self.w - self.m - 1);
                let i = b.local("fmod.i", Some(self.u), Some(i0));
                b.loop_(|b| {
                    let iv = b.get(i);
                    let top = self.bits_above(b, iv, self.w - 1);
                    b.if_(top, |b| b.break_(), |_| {});
                    self.dec(b, exp);
                    let i2 = self.shl(b, i, 1);
                    b.set(i, i2);
                });
                self.shift_below_one(b, v, exp, BinaryOp::Shl);
            },
            |b| {
                let bits = b.get(v);
                let mant = self.int(b, (1i128 << self.m) - 1, self.u);
                let f = b.binary(BinaryOp::BitAnd, bits, mant);
                let implicit = self.int(b, 1i128 << self.m, self.u);
                let f = b.binary(BinaryOp::BitOr, f, implicit);
                b.set(v, f);
            },
        );
    }

    /// One step of the long division: `i = ux - uy`; when it does not borrow, the remainder
    /// is `i`, and an exact zero ends the division (breaking out of the loop when `in_loop`).
    fn step(self, b: &mut KernelBuilder, in_loop: bool) {
        let a = b.get(self.ux);
        let c = b.get(self.uy);
        let d = b.binary(BinaryOp::Sub, a, c);
        let i = b.local("fmod.i", Some(self.u), Some(d));
        let iv = b.get(i);
        let borrow = self.bits_above(b, iv, self.w - 1);
        b.if_(
            borrow,
            |_| {},
            |b| {
                let iv = b.get(i);
                let z = self.int(b, 0, self.u);
                let exact = b.binary(BinaryOp::Eq, iv, z);
                b.if_(
                    exact,
                    |b| {
                        let zero = self.signed_zero(b);
                        self.finish(b, zero);
                        if in_loop {
                            b.break_();
                        }
                    },
                    |b| {
                        let iv = b.get(i);
                        b.set(self.ux, iv);
                    },
                );
            },
        );
    }

    /// The remainder's bits, normalized, with its exponent and `x`'s sign put back.
    fn assemble(self, b: &mut KernelBuilder) {
        b.loop_(|b| {
            let bits = b.get(self.ux);
            let normal = self.bits_above(b, bits, self.m);
            b.if_(normal, |b| b.break_(), |_| {});
            let s = self.shl(b, self.ux, 1);
            b.set(self.ux, s);
            self.dec(b, self.ex);
        });
        let e1 = b.get(self.ex);
        let z = self.int(b, 0, Scalar::I32);
        let normal = b.binary(BinaryOp::Gt, e1, z);
        b.if_(
            normal,
            |b| {
                let bits = b.get(self.ux);
                let implicit = self.int(b, 1i128 << self.m, self.u);
                let f = b.binary(BinaryOp::Sub, bits, implicit);
                let e1 = b.get(self.ex);
                let e1 = b.cast(e1, self.u);
                let sh = self.int(b, self.m, Scalar::U32);
                let eb = b.binary(BinaryOp::Shl, e1, sh);
                let f = b.binary(BinaryOp::BitOr, f, eb);
                b.set(self.ux, f);
            },
            |b| self.shift_below_one(b, self.ux, self.ex, BinaryOp::Shr),
        );
        let bits = b.get(self.ux);
        let s = b.get(self.sx);
        let bits = b.binary(BinaryOp::BitOr, bits, s);
        let v = b.bitcast(bits, self.t);
        b.set(self.r, v);
    }
}

impl KernelBuilder {
    /// `x % y` for floats of type `t` (`f32` or `f64`).
    pub(super) fn float_rem(&mut self, x: Value, y: Value, t: Scalar) -> Value {
        let (u, w, m, e) = match t {
            Scalar::F32 => (Scalar::U32, 32i128, 23i128, 0xffi128),
            _ => (Scalar::U64, 64, 52, 0x7ff),
        };
        let x = self.keep(x, t);
        let y = self.keep(y, t);
        let bits = |b: &mut Self, v: Value, name: &str| {
            let bits = b.bitcast(v, u);
            b.local(name, Some(u), Some(bits))
        };
        let (ux, uy) = (bits(self, x, "fmod.ux"), bits(self, y, "fmod.uy"));
        let exponent = |b: &mut Self, v: Var, name: &str| {
            let bits = b.get(v);
            let sh = b.lit_int(m, Some(Scalar::U32));
            let s = b.binary(BinaryOp::Shr, bits, sh);
            let mask = b.lit_int(e, Some(u));
            let ex = b.binary(BinaryOp::BitAnd, s, mask);
            let ex = b.cast(ex, Scalar::I32);
            b.local(name, Some(Scalar::I32), Some(ex))
        };
        let (ex, ey) = (exponent(self, ux, "fmod.ex"), exponent(self, uy, "fmod.ey"));
        let sign = {
            let bits = self.get(ux);
            let s = self.lit_int(1i128 << (w - 1), Some(u));
            self.binary(BinaryOp::BitAnd, bits, s)
        };
        let sx = self.local("fmod.sx", Some(u), Some(sign));
        let r = self.local("fmod.r", Some(t), Some(x));
        let f = self.lit_bool(false);
        let done = self.local("fmod.done", Some(Scalar::Bool), Some(f));
        let fm = Fmod {
            t,
            u,
            w,
            m,
            e,
            ux,
            uy,
            ex,
            sx,
            r,
            done,
        };

        // y zero or NaN, x infinite or NaN: NaN.
        let ay = fm.shl(self, uy, 1);
        let zero = fm.int(self, 0, u);
        let y_zero = self.binary(BinaryOp::Eq, ay, zero);
        let ay = fm.shl(self, uy, 1);
        let inf = fm.int(self, fm.e << (m + 1), u);
        let y_nan = self.binary(BinaryOp::Gt, ay, inf);
        let exv = self.get(ex);
        let emax = fm.int(self, fm.e, Scalar::I32);
        let x_inf = self.binary(BinaryOp::Eq, exv, emax);
        let c = self.binary(BinaryOp::Or, y_zero, y_nan);
        let special = self.binary(BinaryOp::Or, c, x_inf);
        self.if_(
            special,
            |b| {
                let p = b.binary(BinaryOp::Mul, x, y);
                let q = b.binary(BinaryOp::Mul, x, y);
                let nan = b.binary(BinaryOp::Div, p, q);
                fm.finish(b, nan);
            },
            |b| {
                // |x| <= |y|: x itself (already in `r`), or a zero when they are equal.
                let ax = fm.shl(b, ux, 1);
                let ay = fm.shl(b, uy, 1);
                let le = b.binary(BinaryOp::Le, ax, ay);
                b.if_(
                    le,
                    |b| {
                        let ax = fm.shl(b, ux, 1);
                        let ay = fm.shl(b, uy, 1);
                        let eq = b.binary(BinaryOp::Eq, ax, ay);
                        let x = b.get(r);
                        let zero = fm.signed_zero(b);
                        let v = b.select(eq, zero, x);
                        fm.finish(b, v);
                    },
                    |_| {},
                );
            },
        );
        let go = fm.not_done(self);
        self.if_(
            go,
            |b| {
                fm.significand(b, ux, ex);
                fm.significand(b, uy, ey);
                // Long division: one bit of the quotient per step.
                b.loop_(|b| {
                    let exv = b.get(ex);
                    let eyv = b.get(ey);
                    let le = b.binary(BinaryOp::Le, exv, eyv);
                    b.if_(le, |b| b.break_(), |_| {});
                    fm.step(b, true);
                    let sh = fm.shl(b, ux, 1);
                    b.set(ux, sh);
                    fm.dec(b, ex);
                });
                let go = fm.not_done(b);
                b.if_(go, |b| fm.step(b, false), |_| {});
                let go = fm.not_done(b);
                b.if_(go, |b| fm.assemble(b), |_| {});
            },
            |_| {},
        );
        self.get(r)
    }
}
