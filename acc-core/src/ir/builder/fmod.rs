//! `x % y` on `f32` and `f64` in kernels, exactly as Rust computes it (C's `fmod`: the
//! remainder of the truncated quotient, which is always representable, so there is one right
//! answer). GPUs have no such instruction, and `x - trunc(x / y) * y` is off whenever the
//! quotient rounds to an integer or the product rounds (`100.0 % (2.0 * PI)` differs in the last
//! place). This is musl's `fmod` in integer operations on the bits, written once for every
//! backend: long division of the significands, one step per bit of exponent difference (a
//! handful for ordinary operands, at most 277 for `f32` and 2,098 for `f64`).

use super::*;

impl KernelBuilder {
    /// `x % y` for floats of type `t` (`f32` or `f64`).
    pub(super) fn float_rem(&mut self, x: Value, y: Value, t: Scalar) -> Value {
        // The bits' type, their width, the significand's width, the exponent's mask.
        let (u, w, m, e) = match t {
            Scalar::F32 => (Scalar::U32, 32i128, 23i128, 0xffi128),
            _ => (Scalar::U64, 64, 52, 0x7ff),
        };
        let int = |b: &mut Self, v: i128, ty: Scalar| b.lit_int(v, Some(ty));
        let x = self.keep(x, t);
        let y = self.keep(y, t);
        let ux_v = self.bitcast(x, u);
        let ux = self.local("fmod.ux", Some(u), Some(ux_v));
        let uy_v = self.bitcast(y, u);
        let uy = self.local("fmod.uy", Some(u), Some(uy_v));
        // The biased exponents (signed: a subnormal's goes below zero while it is normalized).
        let exp_of = |b: &mut Self, v: Var| {
            let bits = b.get(v);
            let sh = int(b, m, Scalar::U32);
            let s = b.binary(BinaryOp::Shr, bits, sh);
            let mask = int(b, e, u);
            let ex = b.binary(BinaryOp::BitAnd, s, mask);
            b.cast(ex, Scalar::I32)
        };
        let ex_v = exp_of(self, ux);
        let ex = self.local("fmod.ex", Some(Scalar::I32), Some(ex_v));
        let ey_v = exp_of(self, uy);
        let ey = self.local("fmod.ey", Some(Scalar::I32), Some(ey_v));
        let sign = {
            let bits = self.get(ux);
            let s = int(self, 1i128 << (w - 1), u);
            self.binary(BinaryOp::BitAnd, bits, s)
        };
        let sx = self.local("fmod.sx", Some(u), Some(sign));
        let r = self.local("fmod.r", Some(t), Some(x));
        let f = self.lit_bool(false);
        let done = self.local("fmod.done", Some(Scalar::Bool), Some(f));
        let set_done = |b: &mut Self| {
            let tr = b.lit_bool(true);
            b.set(done, tr);
        };
        // `0 * x`: a zero with the sign of `x`, from its sign bit (a driver may fold `0.0 * x`
        // to `0.0`).
        let signed_zero = |b: &mut Self| {
            let s = b.get(sx);
            b.bitcast(s, t)
        };
        let shl1 = |b: &mut Self, v: Var| {
            let val = b.get(v);
            let one = int(b, 1, Scalar::U32);
            b.binary(BinaryOp::Shl, val, one)
        };

        // y zero or NaN, x infinite or NaN: NaN.
        let ay = shl1(self, uy);
        let zero_u = int(self, 0, u);
        let y_zero = self.binary(BinaryOp::Eq, ay, zero_u);
        let ay = shl1(self, uy);
        let inf2 = int(self, e << (m + 1), u);
        let y_nan = self.binary(BinaryOp::Gt, ay, inf2);
        let exv = self.get(ex);
        let emax = int(self, e, Scalar::I32);
        let x_inf = self.binary(BinaryOp::Eq, exv, emax);
        let c = self.binary(BinaryOp::Or, y_zero, y_nan);
        let special = self.binary(BinaryOp::Or, c, x_inf);
        self.if_(
            special,
            |b| {
                let p = b.binary(BinaryOp::Mul, x, y);
                let q = b.binary(BinaryOp::Mul, x, y);
                let nan = b.binary(BinaryOp::Div, p, q);
                b.set(r, nan);
                set_done(b);
            },
            |b| {
                // |x| <= |y|: x itself, or a zero when they are equal.
                let ax = shl1(b, ux);
                let ay = shl1(b, uy);
                let le = b.binary(BinaryOp::Le, ax, ay);
                b.if_(
                    le,
                    |b| {
                        let ax = shl1(b, ux);
                        let ay = shl1(b, uy);
                        let eq = b.binary(BinaryOp::Eq, ax, ay);
                        b.if_(
                            eq,
                            |b| {
                                let z = signed_zero(b);
                                b.set(r, z);
                            },
                            |_| {},
                        );
                        set_done(b);
                    },
                    |_| {},
                );
            },
        );
        let not_done = |b: &mut Self| {
            let d = b.get(done);
            b.unary(UnaryOp::Not, d)
        };
        let go = not_done(self);
        self.if_(
            go,
            |b| {
                // The significands, with the implicit bit; a subnormal's shifted up to it.
                for (uv, ev) in [(ux, ex), (uy, ey)] {
                    let e0 = b.get(ev);
                    let z = int(b, 0, Scalar::I32);
                    let sub = b.binary(BinaryOp::Eq, e0, z);
                    b.if_(
                        sub,
                        |b| {
                            let bits = b.get(uv);
                            let sh = int(b, w - m - 1, Scalar::U32);
                            let i0 = b.binary(BinaryOp::Shl, bits, sh);
                            let i = b.local("fmod.i", Some(u), Some(i0));
                            b.loop_(|b| {
                                let iv = b.get(i);
                                let top = int(b, w - 1, Scalar::U32);
                                let hi = b.binary(BinaryOp::Shr, iv, top);
                                let z = int(b, 0, u);
                                let set = b.binary(BinaryOp::Ne, hi, z);
                                b.if_(set, |b| b.break_(), |_| {});
                                let e1 = b.get(ev);
                                let one = int(b, 1, Scalar::I32);
                                let e2 = b.binary(BinaryOp::Sub, e1, one);
                                b.set(ev, e2);
                                let i2 = shl1(b, i);
                                b.set(i, i2);
                            });
                            let e1 = b.get(ev);
                            let one = int(b, 1, Scalar::I32);
                            let amount = b.binary(BinaryOp::Sub, one, e1);
                            let amount = b.cast(amount, Scalar::U32);
                            let bits = b.get(uv);
                            let shifted = b.binary(BinaryOp::Shl, bits, amount);
                            b.set(uv, shifted);
                        },
                        |b| {
                            let bits = b.get(uv);
                            let mant = int(b, (1i128 << m) - 1, u);
                            let f = b.binary(BinaryOp::BitAnd, bits, mant);
                            let implicit = int(b, 1i128 << m, u);
                            let f = b.binary(BinaryOp::BitOr, f, implicit);
                            b.set(uv, f);
                        },
                    );
                }
                // Long division: one bit of the quotient per step.
                b.loop_(|b| {
                    let exv = b.get(ex);
                    let eyv = b.get(ey);
                    let le = b.binary(BinaryOp::Le, exv, eyv);
                    b.if_(le, |b| b.break_(), |_| {});
                    Self::fmod_step(b, ux, uy, w, u, r, done, sx, t, true);
                    let sh = shl1(b, ux);
                    b.set(ux, sh);
                    let e1 = b.get(ex);
                    let one = int(b, 1, Scalar::I32);
                    let e2 = b.binary(BinaryOp::Sub, e1, one);
                    b.set(ex, e2);
                });
                let go = not_done(b);
                b.if_(
                    go,
                    |b| Self::fmod_step(b, ux, uy, w, u, r, done, sx, t, false),
                    |_| {},
                );
                let go = not_done(b);
                b.if_(
                    go,
                    |b| {
                        // Normalize the remainder and put its exponent and x's sign back.
                        b.loop_(|b| {
                            let bits = b.get(ux);
                            let sh = int(b, m, Scalar::U32);
                            let hi = b.binary(BinaryOp::Shr, bits, sh);
                            let z = int(b, 0, u);
                            let set = b.binary(BinaryOp::Ne, hi, z);
                            b.if_(set, |b| b.break_(), |_| {});
                            let s = shl1(b, ux);
                            b.set(ux, s);
                            let e1 = b.get(ex);
                            let one = int(b, 1, Scalar::I32);
                            let e2 = b.binary(BinaryOp::Sub, e1, one);
                            b.set(ex, e2);
                        });
                        let e1 = b.get(ex);
                        let z = int(b, 0, Scalar::I32);
                        let normal = b.binary(BinaryOp::Gt, e1, z);
                        b.if_(
                            normal,
                            |b| {
                                let bits = b.get(ux);
                                let implicit = int(b, 1i128 << m, u);
                                let f = b.binary(BinaryOp::Sub, bits, implicit);
                                let e1 = b.get(ex);
                                let e1 = b.cast(e1, u);
                                let sh = int(b, m, Scalar::U32);
                                let eb = b.binary(BinaryOp::Shl, e1, sh);
                                let f = b.binary(BinaryOp::BitOr, f, eb);
                                b.set(ux, f);
                            },
                            |b| {
                                let e1 = b.get(ex);
                                let one = int(b, 1, Scalar::I32);
                                let amount = b.binary(BinaryOp::Sub, one, e1);
                                let amount = b.cast(amount, Scalar::U32);
                                let bits = b.get(ux);
                                let f = b.binary(BinaryOp::Shr, bits, amount);
                                b.set(ux, f);
                            },
                        );
                        let bits = b.get(ux);
                        let s = b.get(sx);
                        let bits = b.binary(BinaryOp::BitOr, bits, s);
                        let v = b.bitcast(bits, t);
                        b.set(r, v);
                    },
                    |_| {},
                );
            },
            |_| {},
        );
        self.get(r)
    }

    /// One step of the long division: `i = ux - uy`; when it does not borrow, the remainder
    /// is `i` (and an exact zero ends the division with a zero of `x`'s sign, breaking out of the loop
    /// when `in_loop`).
    #[allow(clippy::too_many_arguments)]
    fn fmod_step(
        b: &mut Self,
        ux: Var,
        uy: Var,
        w: i128,
        u: Scalar,
        r: Var,
        done: Var,
        sx: Var,
        t: Scalar,
        in_loop: bool,
    ) {
        let a = b.get(ux);
        let c = b.get(uy);
        let d = b.binary(BinaryOp::Sub, a, c);
        let i = b.local("fmod.i", Some(u), Some(d));
        let iv = b.get(i);
        let top = b.lit_int(w - 1, Some(Scalar::U32));
        let hi = b.binary(BinaryOp::Shr, iv, top);
        let z = b.lit_int(0, Some(u));
        let no_borrow = b.binary(BinaryOp::Eq, hi, z);
        b.if_(
            no_borrow,
            |b| {
                let iv = b.get(i);
                let z = b.lit_int(0, Some(u));
                let exact = b.binary(BinaryOp::Eq, iv, z);
                b.if_(
                    exact,
                    |b| {
                        let s = b.get(sx);
                        let v = b.bitcast(s, t);
                        b.set(r, v);
                        let tr = b.lit_bool(true);
                        b.set(done, tr);
                        if in_loop {
                            b.break_();
                        }
                    },
                    |b| {
                        let iv = b.get(i);
                        b.set(ux, iv);
                    },
                );
            },
            |_| {},
        );
    }
}
