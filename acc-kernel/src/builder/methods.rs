//! std's numeric methods (docs/guide/regions.md) in IR. Those a device has an instruction for are a
//! [`MathFn`]; the others are built here from IR operations, following std's own definitions
//! (`core::num`, `std::f64`), so every backend computes them alike, from one place.
//!
//! Where std panics (`isqrt` of a negative number, `ilog2` of zero or less, a division by
//! zero), a kernel does not stop: as for integer overflow (docs/guide/regions.md), the result is what
//! the wrapping arithmetic gives.

use super::{KernelBuilder, Ty, Value};
use crate::{BinaryOp, MathFn, Scalar};

/// The unsigned integer type of the same width.
fn unsigned(t: Scalar) -> Scalar {
    match t {
        Scalar::I8 => Scalar::U8,
        Scalar::I16 => Scalar::U16,
        Scalar::I32 => Scalar::U32,
        Scalar::I64 => Scalar::U64,
        Scalar::ISize => Scalar::USize,
        other => other,
    }
}

/// The unsigned integer type of a float's bits.
fn float_bits(t: Scalar) -> Scalar {
    if t == Scalar::F32 {
        Scalar::U32
    } else {
        Scalar::U64
    }
}

/// Width in bits.
fn bits(t: Scalar) -> u32 {
    t.size() * 8
}

/// The number of arguments of a method built here, the receiver included.
fn arity(name: &str) -> usize {
    match name {
        "log" | "copysign" | "rem_euclid" | "div_euclid" | "abs_diff" | "wrapping_add"
        | "wrapping_sub" | "wrapping_mul" | "wrapping_shl" | "wrapping_shr" | "saturating_add"
        | "saturating_sub" | "saturating_mul" | "rotate_left" | "rotate_right" => 2,
        _ => 1,
    }
}

impl KernelBuilder {
    /// `args[0].name(args[1..])`, a numeric method of std (docs/guide/regions.md). A method that is not
    /// one, or not for the receiver's type, is recorded as a failure naming it.
    pub fn method(&mut self, name: &str, args: &[Value]) -> Value {
        if args.first().is_some_and(|a| a.im.is_some()) {
            return self.complex_method(name, args);
        }
        if let Some(Ty::Known(t)) = args.first().map(|a| self.ty(a.ty)) {
            if t.is_half() {
                return self.half_method(t, name, args);
            }
        }
        if let Some(f) = MathFn::from_name(name) {
            return self.math(f, args);
        }
        match self.method_of_known(name, args) {
            Some(v) => v,
            // The failure is recorded; the value stands in for the result.
            None => args
                .first()
                .copied()
                .unwrap_or_else(|| self.lit_int(0, None)),
        }
    }

    /// `ty::name(args..)`: a method called through its type (`f64::sqrt(x)`,
    /// `u32::count_ones(n)`), which fixes the receiver's type.
    pub fn method_of(&mut self, ty: Scalar, name: &str, args: &[Value]) -> Value {
        if ty.is_half() && name.starts_with("from_") {
            // `f16::from_f32(x)`: the argument is not an `f16`.
            return self.half_method(ty, name, args);
        }
        if let Some(x) = args.first() {
            let t = self.new_var(Ty::Known(ty));
            self.unify(x.ty, t, name);
        }
        self.method(name, args)
    }

    /// `ty::from_bits(v)`: the float with the bits of `v`.
    pub fn from_bits(&mut self, ty: Scalar, v: Value) -> Value {
        if ty.is_half() {
            let t = self.new_var(Ty::Known(Scalar::U16));
            self.unify(v.ty, t, "from_bits");
            let f = self.half_to_f32(v, ty);
            return self.retype(f, ty);
        }
        let t = self.new_var(Ty::Known(float_bits(ty)));
        self.unify(v.ty, t, "from_bits");
        self.bitcast(v, ty)
    }

    /// `ty::MAX` (`max`) or `ty::MIN` of a numeric type (`i32::max_value()`).
    pub fn type_limit(&mut self, ty: Scalar, max: bool) -> Value {
        match ty {
            Scalar::F32 => self.lit_float(if max { f32::MAX } else { f32::MIN } as f64, Some(ty)),
            Scalar::F64 => self.lit_float(if max { f64::MAX } else { f64::MIN }, Some(ty)),
            t => self.lit_int(super::int_limit(t, max), Some(t)),
        }
    }

    fn method_of_known(&mut self, name: &str, args: &[Value]) -> Option<Value> {
        let Some(&x) = args.first() else {
            self.fail(format!("`.{name}()` without a receiver"));
            return None;
        };
        let t = self.known_type(x, name)?;
        if args.len() != arity(name) {
            self.fail(format!(
                "`.{name}()` takes {} arguments, got {}",
                arity(name) - 1,
                args.len() - 1
            ));
            return None;
        }
        let y = args.get(1).copied();
        if let Some(y) = y {
            // The second operand is the receiver's type, but for shift and rotation counts.
            let other = if matches!(
                name,
                "wrapping_shl" | "wrapping_shr" | "rotate_left" | "rotate_right"
            ) {
                self.new_var(Ty::Known(Scalar::U32))
            } else {
                x.ty
            };
            self.unify(y.ty, other, name);
        }
        let v = if t.is_float() {
            self.float_method(name, x, y, t)
        } else if t.is_int() {
            self.int_method(name, x, y, t)
        } else {
            None
        };
        if v.is_none() {
            self.fail(format!("`{t}::{name}` is not supported on kernel devices"));
        }
        v
    }

    /// The receiver's type: rustc knew it (a method call needs it); an unsuffixed literal
    /// takes Rust's default.
    fn known_type(&mut self, x: Value, name: &str) -> Option<Scalar> {
        let t = match self.ty(x.ty) {
            Ty::Known(t) => return Some(t),
            Ty::AnyInt => Scalar::I32,
            Ty::AnyFloat => Scalar::F64,
            Ty::Unknown => {
                self.fail(format!("`.{name}()` on a value of unknown type"));
                return None;
            }
            Ty::Complex(_) => {
                self.fail(format!("`.{name}()` on a complex number"));
                return None;
            }
        };
        let v = self.new_var(Ty::Known(t));
        self.unify(x.ty, v, name);
        Some(t)
    }

    /// `v` kept in a fresh local, for a value a composition uses more than once (the IR is a
    /// tree: a shared expression would be computed at each use).
    /// `v` held in a new local of type `t`: later uses read the local, so an expression used
    /// many times is computed once.
    pub(super) fn keep(&mut self, v: Value, t: Scalar) -> Value {
        let l = self.local("acc_m", Some(t), Some(v));
        self.get(l)
    }

    fn int(&mut self, v: i128, t: Scalar) -> Value {
        self.lit_int(v, Some(t))
    }

    fn float(&mut self, v: f64, t: Scalar) -> Value {
        self.lit_float(v, Some(t))
    }

    /// `v as to` for `v` of type `from` (nothing when they are the same).
    fn convert(&mut self, v: Value, from: Scalar, to: Scalar) -> Value {
        if from == to {
            v
        } else {
            self.cast(v, to)
        }
    }

    fn float_method(&mut self, name: &str, x: Value, y: Option<Value>, t: Scalar) -> Option<Value> {
        use BinaryOp::*;
        let u = float_bits(t);
        let sign = 1i128 << (bits(t) - 1);
        let exponent: i128 = if t == Scalar::F32 {
            0x7f80_0000
        } else {
            0x7ff0_0000_0000_0000
        };
        Some(match (name, y) {
            // std: `self.ln() / base.ln()`.
            ("log", Some(b)) => {
                let (l, lb) = (self.math(MathFn::Ln, &[x]), self.math(MathFn::Ln, &[b]));
                self.binary(Div, l, lb)
            }
            ("exp_m1", _) => self.exp_m1(x, t),
            ("ln_1p", _) => self.ln_1p(x, t),
            // std: `(ax + ax / (hypot(1, 1 / ax) + 1 / ax)).ln_1p().copysign(self)`.
            ("asinh", _) => {
                let x = self.keep(x, t);
                let ax = self.math(MathFn::Abs, &[x]);
                let ax = self.keep(ax, t);
                let one = self.float(1.0, t);
                let ix = self.binary(Div, one, ax);
                let ix = self.keep(ix, t);
                let one = self.float(1.0, t);
                let h = self.math(MathFn::Hypot, &[one, ix]);
                let d = self.binary(Add, h, ix);
                let q = self.binary(Div, ax, d);
                let s = self.binary(Add, ax, q);
                let l = self.ln_1p(s, t);
                self.copysign(l, x, t)
            }
            // std: NaN below 1, else `(x + (x - 1).sqrt() * (x + 1).sqrt()).ln()`.
            ("acosh", _) => {
                let x = self.keep(x, t);
                let one = self.float(1.0, t);
                let below = self.binary(Lt, x, one);
                let one = self.float(1.0, t);
                let xm = self.binary(Sub, x, one);
                let one = self.float(1.0, t);
                let xp = self.binary(Add, x, one);
                let (sm, sp) = (
                    self.math(MathFn::Sqrt, &[xm]),
                    self.math(MathFn::Sqrt, &[xp]),
                );
                let p = self.binary(Mul, sm, sp);
                let s = self.binary(Add, x, p);
                let l = self.math(MathFn::Ln, &[s]);
                let nan = self.float(f64::NAN, t);
                self.select(below, nan, l)
            }
            // std: `0.5 * ((2.0 * self) / (1.0 - self)).ln_1p()`.
            ("atanh", _) => {
                let x = self.keep(x, t);
                let two = self.float(2.0, t);
                let n = self.binary(Mul, two, x);
                let one = self.float(1.0, t);
                let d = self.binary(Sub, one, x);
                let q = self.binary(Div, n, d);
                let l = self.ln_1p(q, t);
                let half = self.float(0.5, t);
                self.binary(Mul, half, l)
            }
            ("copysign", Some(s)) => self.copysign(x, s, t),
            // The constants std multiplies by.
            ("to_degrees", _) => {
                let c = if t == Scalar::F32 {
                    (180.0f64 / std::f64::consts::PI) as f32 as f64
                } else {
                    180.0f64 / std::f64::consts::PI
                };
                let c = self.float(c, t);
                self.binary(Mul, x, c)
            }
            ("to_radians", _) => {
                let c = if t == Scalar::F32 {
                    (std::f32::consts::PI / 180.0f32) as f64
                } else {
                    std::f64::consts::PI / 180.0
                };
                let c = self.float(c, t);
                self.binary(Mul, x, c)
            }
            // On the bits: the magnitude against the exponent's all-ones, the sign bit.
            ("is_nan" | "is_infinite" | "is_finite", _) => {
                let b = self.bitcast(x, u);
                let m = self.int(sign - 1, u);
                let magnitude = self.binary(BitAnd, b, m);
                let e = self.int(exponent, u);
                let op = match name {
                    "is_nan" => Gt,
                    "is_infinite" => Eq,
                    _ => Lt,
                };
                self.binary(op, magnitude, e)
            }
            ("is_sign_negative" | "is_sign_positive", _) => {
                let b = self.bitcast(x, u);
                let s = self.int(sign, u);
                self.binary(if name == "is_sign_negative" { Ge } else { Lt }, b, s)
            }
            ("to_bits", _) => self.bitcast(x, u),
            // std: `r = self % rhs; if r < 0 { r + rhs.abs() } else { r }`.
            ("rem_euclid", Some(b)) => {
                let b = self.keep(b, t);
                let r = self.binary(Rem, x, b);
                let r = self.keep(r, t);
                let zero = self.float(0.0, t);
                let neg = self.binary(Lt, r, zero);
                let ab = self.math(MathFn::Abs, &[b]);
                let up = self.binary(Add, r, ab);
                self.select(neg, up, r)
            }
            // std: `q = (self / rhs).trunc(); if self % rhs < 0 { q -/+ 1 (by rhs's sign) }`.
            ("div_euclid", Some(b)) => {
                let (x, b) = (self.keep(x, t), self.keep(b, t));
                let q = self.binary(Div, x, b);
                let q = self.math(MathFn::Trunc, &[q]);
                let q = self.keep(q, t);
                let r = self.binary(Rem, x, b);
                let zero = self.float(0.0, t);
                let neg = self.binary(Lt, r, zero);
                let zero = self.float(0.0, t);
                let positive = self.binary(Gt, b, zero);
                let one = self.float(1.0, t);
                let down = self.binary(Sub, q, one);
                let one = self.float(1.0, t);
                let up = self.binary(Add, q, one);
                let step = self.select(positive, down, up);
                self.select(neg, step, q)
            }
            _ => return None,
        })
    }

    /// `x.exp_m1()`: with u = exp(x), `(u - 1) * x / ln(u)` (Kahan), which keeps the relative
    /// accuracy that `exp(x) - 1` loses near 0; x itself where u rounds to 1, -1 where u - 1
    /// does, and u where 1 no longer counts (inf included).
    fn exp_m1(&mut self, x: Value, t: Scalar) -> Value {
        use BinaryOp::*;
        let x = self.keep(x, t);
        let u = self.math(MathFn::Exp, &[x]);
        let u = self.keep(u, t);
        let one = self.float(1.0, t);
        let um1 = self.binary(Sub, u, one);
        let um1 = self.keep(um1, t);
        let l = self.math(MathFn::Ln, &[u]);
        let p = self.binary(Mul, um1, x);
        let r = self.binary(Div, p, l);
        let big = self.binary(Eq, um1, u);
        let r = self.select(big, u, r);
        let m1 = self.float(-1.0, t);
        let low = self.binary(Eq, um1, m1);
        let m1 = self.float(-1.0, t);
        let r = self.select(low, m1, r);
        let one = self.float(1.0, t);
        let tiny = self.binary(Eq, u, one);
        self.select(tiny, x, r)
    }

    /// `x.ln_1p()`: with u = 1 + x, `ln(u) * x / (u - 1)` (Kahan), exact where u rounds to 1,
    /// and ln(u) where 1 no longer counts (inf included).
    fn ln_1p(&mut self, x: Value, t: Scalar) -> Value {
        use BinaryOp::*;
        let x = self.keep(x, t);
        let one = self.float(1.0, t);
        let u = self.binary(Add, one, x);
        let u = self.keep(u, t);
        let one = self.float(1.0, t);
        let um1 = self.binary(Sub, u, one);
        let um1 = self.keep(um1, t);
        let l = self.math(MathFn::Ln, &[u]);
        let l = self.keep(l, t);
        let p = self.binary(Mul, l, x);
        let r = self.binary(Div, p, um1);
        let big = self.binary(Eq, um1, u);
        let r = self.select(big, l, r);
        let one = self.float(1.0, t);
        let tiny = self.binary(Eq, u, one);
        self.select(tiny, x, r)
    }

    /// `x.copysign(s)`: the magnitude bits of `x`, the sign bit of `s`.
    fn copysign(&mut self, x: Value, s: Value, t: Scalar) -> Value {
        use BinaryOp::*;
        let u = float_bits(t);
        let sign = 1i128 << (bits(t) - 1);
        let (bx, bs) = (self.bitcast(x, u), self.bitcast(s, u));
        let m = self.int(sign - 1, u);
        let magnitude = self.binary(BitAnd, bx, m);
        let sb = self.int(sign, u);
        let sign = self.binary(BitAnd, bs, sb);
        let r = self.binary(BitOr, magnitude, sign);
        self.bitcast(r, t)
    }

    /// An integer method built here, by family (each a match of its own); `None` for a name
    /// that is not one, or a method not for the receiver's type (`is_positive` of an unsigned
    /// type) or missing its operand.
    fn int_method(&mut self, name: &str, x: Value, y: Option<Value>, t: Scalar) -> Option<Value> {
        match name {
            "is_positive" | "is_negative" | "wrapping_add" | "wrapping_sub" | "wrapping_mul"
            | "wrapping_neg" | "wrapping_shl" | "wrapping_shr" | "abs_diff" => {
                self.wrapping_method(name, x, y, t)
            }
            "rem_euclid" | "div_euclid" => self.euclid_method(name, x, y, t),
            "saturating_add" | "saturating_sub" | "saturating_mul" => {
                self.saturating_method(name, x, y, t)
            }
            "count_ones" | "count_zeros" | "leading_zeros" | "trailing_zeros" | "reverse_bits"
            | "swap_bytes" | "rotate_left" | "rotate_right" => self.bit_method(name, x, y, t),
            "is_power_of_two" | "next_power_of_two" | "ilog2" | "isqrt" => {
                self.power_method(name, x, y, t)
            }
            _ => None,
        }
    }

    /// The sign tests, wrapping arithmetic (what device arithmetic does anyway) and `abs_diff`.
    fn wrapping_method(
        &mut self,
        name: &str,
        x: Value,
        y: Option<Value>,
        t: Scalar,
    ) -> Option<Value> {
        use BinaryOp::*;
        let w = bits(t);
        let signed = t.is_signed();
        Some(match (name, y) {
            ("is_positive" | "is_negative", _) if signed => {
                let zero = self.int(0, t);
                self.binary(if name == "is_positive" { Gt } else { Lt }, x, zero)
            }
            // Device arithmetic wraps (docs/guide/regions.md).
            ("wrapping_add", Some(b)) => self.binary(Add, x, b),
            ("wrapping_sub", Some(b)) => self.binary(Sub, x, b),
            ("wrapping_mul", Some(b)) => self.binary(Mul, x, b),
            ("wrapping_neg", _) => {
                let zero = self.int(0, t);
                self.binary(Sub, zero, x)
            }
            // The count modulo the width, as std.
            ("wrapping_shl" | "wrapping_shr", Some(n)) => {
                let mask = self.int(w as i128 - 1, Scalar::U32);
                let n = self.binary(BitAnd, n, mask);
                self.binary(if name == "wrapping_shl" { Shl } else { Shr }, x, n)
            }
            // std: the difference of the two as the unsigned type, wrapping.
            ("abs_diff", Some(b)) => {
                let ut = unsigned(t);
                let (x, b) = (self.keep(x, t), self.keep(b, t));
                let less = self.binary(Lt, x, b);
                let (ux, ub) = (self.convert(x, t, ut), self.convert(b, t, ut));
                let (ux, ub) = (self.keep(ux, ut), self.keep(ub, ut));
                let up = self.binary(Sub, ub, ux);
                let down = self.binary(Sub, ux, ub);
                self.select(less, up, down)
            }
            _ => return None,
        })
    }

    /// Euclidean division and remainder: for unsigned types the plain ones.
    fn euclid_method(
        &mut self,
        name: &str,
        x: Value,
        y: Option<Value>,
        t: Scalar,
    ) -> Option<Value> {
        use BinaryOp::*;
        let signed = t.is_signed();
        Some(match (name, y) {
            ("rem_euclid", Some(b)) if signed => {
                // std: `r = self % rhs; if r < 0 { r.wrapping_add(rhs.wrapping_abs()) } else { r }`.
                let b = self.keep(b, t);
                let r = self.binary(Rem, x, b);
                let r = self.keep(r, t);
                let zero = self.int(0, t);
                let neg = self.binary(Lt, r, zero);
                let ab = self.math(MathFn::Abs, &[b]);
                let up = self.binary(Add, r, ab);
                self.select(neg, up, r)
            }
            ("rem_euclid", Some(b)) => self.binary(Rem, x, b),
            ("div_euclid", Some(b)) if signed => {
                // std: `q = self / rhs; if self % rhs < 0 { q -/+ 1 (by rhs's sign) } else { q }`.
                let (x, b) = (self.keep(x, t), self.keep(b, t));
                let q = self.binary(Div, x, b);
                let q = self.keep(q, t);
                let r = self.binary(Rem, x, b);
                let zero = self.int(0, t);
                let neg = self.binary(Lt, r, zero);
                let zero = self.int(0, t);
                let positive = self.binary(Gt, b, zero);
                let one = self.int(1, t);
                let down = self.binary(Sub, q, one);
                let one = self.int(1, t);
                let up = self.binary(Add, q, one);
                let step = self.select(positive, down, up);
                self.select(neg, step, q)
            }
            ("div_euclid", Some(b)) => self.binary(Div, x, b),
            _ => return None,
        })
    }

    /// Saturating arithmetic: the wrapped result, or the bound it overflowed past.
    fn saturating_method(
        &mut self,
        name: &str,
        x: Value,
        y: Option<Value>,
        t: Scalar,
    ) -> Option<Value> {
        use BinaryOp::*;
        let signed = t.is_signed();
        let (min, max) = (super::int_limit(t, false), super::int_limit(t, true));
        Some(match (name, y) {
            ("saturating_add" | "saturating_sub", Some(b)) => {
                let add = name == "saturating_add";
                let (x, b) = (self.keep(x, t), self.keep(b, t));
                let r = self.binary(if add { Add } else { Sub }, x, b);
                let r = self.keep(r, t);
                if signed {
                    // Overflow: for `+`, the operands share a sign the result lacks; for `-`,
                    // they differ and the result's differs from the left one's.
                    let xr = self.binary(BitXor, x, r);
                    let other = if add {
                        self.binary(BitXor, b, r)
                    } else {
                        self.binary(BitXor, x, b)
                    };
                    let both = self.binary(BitAnd, xr, other);
                    let zero = self.int(0, t);
                    let overflow = self.binary(Lt, both, zero);
                    let bound = self.bound_by_sign(x, t);
                    self.select(overflow, bound, r)
                } else if add {
                    let wrapped = self.binary(Lt, r, x);
                    let m = self.int(max, t);
                    self.select(wrapped, m, r)
                } else {
                    let below = self.binary(Lt, x, b);
                    let zero = self.int(0, t);
                    self.select(below, zero, r)
                }
            }
            ("saturating_mul", Some(b)) => {
                let (x, b) = (self.keep(x, t), self.keep(b, t));
                let r = self.binary(Mul, x, b);
                let r = self.keep(r, t);
                // A divisor that is never 0 (nor -1, whose quotient can overflow).
                let zero = self.int(0, t);
                let b_zero = self.binary(Eq, b, zero);
                let one = self.int(1, t);
                let safe = if signed {
                    let m1 = self.int(-1, t);
                    let b_m1 = self.binary(Eq, b, m1);
                    let either = self.binary(Or, b_zero, b_m1);
                    self.select(either, one, b)
                } else {
                    self.select(b_zero, one, b)
                };
                // The product overflowed where dividing it back does not give `x`.
                let back = self.binary(Div, r, safe);
                let differs = self.binary(Ne, back, x);
                let zero = self.int(0, t);
                let b_nonzero = self.binary(Ne, b, zero);
                let mut overflow = self.binary(And, b_nonzero, differs);
                if signed {
                    // x * -1 overflows for x = MIN only.
                    let lo = self.int(min, t);
                    let x_min = self.binary(Eq, x, lo);
                    let m1 = self.int(-1, t);
                    let b_is_m1 = self.binary(Eq, b, m1);
                    overflow = self.select(b_is_m1, x_min, overflow);
                    // MIN when the true product is negative (the signs differ), else MAX.
                    let xb = self.binary(BitXor, x, b);
                    let bound = self.bound_by_sign(xb, t);
                    self.select(overflow, bound, r)
                } else {
                    let m = self.int(max, t);
                    self.select(overflow, m, r)
                }
            }
            _ => return None,
        })
    }

    /// Counting, reversing, swapping and rotating bits. The counts and reversals use the
    /// devices' 32-bit instructions: a 64-bit value by its halves, a narrower one zero-extended.
    fn bit_method(&mut self, name: &str, x: Value, y: Option<Value>, t: Scalar) -> Option<Value> {
        use BinaryOp::*;
        let w = bits(t);
        Some(match (name, y) {
            ("count_ones" | "count_zeros", _) => {
                let ones = if w == 64 {
                    let (lo, hi) = self.halves(x, t);
                    let (a, b) = (
                        self.math(MathFn::CountOnes32, &[lo]),
                        self.math(MathFn::CountOnes32, &[hi]),
                    );
                    self.binary(Add, a, b)
                } else {
                    let z = self.widen32(x, t);
                    self.math(MathFn::CountOnes32, &[z])
                };
                if name == "count_ones" {
                    ones
                } else {
                    let w = self.int(w as i128, Scalar::U32);
                    self.binary(Sub, w, ones)
                }
            }
            ("leading_zeros", _) => self.leading_zeros(x, t),
            ("trailing_zeros", _) => {
                if w == 64 {
                    let (lo, hi) = self.halves(x, t);
                    let zero = self.int(0, Scalar::U32);
                    let lo_zero = self.binary(Eq, lo, zero);
                    let th = self.math(MathFn::TrailingZeros32, &[hi]);
                    let k = self.int(32, Scalar::U32);
                    let high = self.binary(Add, k, th);
                    let low = self.math(MathFn::TrailingZeros32, &[lo]);
                    self.select(lo_zero, high, low)
                } else {
                    // The zero-extended value has 32 trailing zeros for 0: std counts `w`.
                    let z = self.widen32(x, t);
                    let n = self.math(MathFn::TrailingZeros32, &[z]);
                    let wv = self.int(w as i128, Scalar::U32);
                    self.math(MathFn::Min, &[n, wv])
                }
            }
            ("reverse_bits", _) => {
                if w == 64 {
                    let (lo, hi) = self.halves(x, t);
                    let (rl, rh) = (
                        self.math(MathFn::ReverseBits32, &[lo]),
                        self.math(MathFn::ReverseBits32, &[hi]),
                    );
                    self.join(rl, rh, t)
                } else {
                    let z = self.widen32(x, t);
                    let r = self.math(MathFn::ReverseBits32, &[z]);
                    let k = self.int(32 - w as i128, Scalar::U32);
                    let r = self.binary(Shr, r, k);
                    self.convert(r, Scalar::U32, t)
                }
            }
            ("swap_bytes", _) => {
                if w == 8 {
                    x
                } else if w == 64 {
                    let (lo, hi) = self.halves(x, t);
                    let (sl, sh) = (self.swap32(lo), self.swap32(hi));
                    self.join(sl, sh, t)
                } else {
                    let z = self.widen32(x, t);
                    let s = self.swap32(z);
                    let k = self.int(32 - w as i128, Scalar::U32);
                    let s = self.binary(Shr, s, k);
                    self.convert(s, Scalar::U32, t)
                }
            }
            // On the unsigned bits: the count modulo the width, the two shifted parts joined.
            ("rotate_left" | "rotate_right", Some(n)) => {
                let ut = unsigned(t);
                let ux = self.convert(x, t, ut);
                let ux = self.keep(ux, ut);
                let mask = self.int(w as i128 - 1, Scalar::U32);
                let k = self.binary(BitAnd, n, mask);
                let k = self.keep(k, Scalar::U32);
                let wv = self.int(w as i128, Scalar::U32);
                let rest = self.binary(Sub, wv, k);
                let mask = self.int(w as i128 - 1, Scalar::U32);
                let rest = self.binary(BitAnd, rest, mask);
                let (first, second) = if name == "rotate_left" {
                    (Shl, Shr)
                } else {
                    (Shr, Shl)
                };
                let a = self.binary(first, ux, k);
                let b = self.binary(second, ux, rest);
                let r = self.binary(BitOr, a, b);
                self.convert(r, ut, t)
            }
            _ => return None,
        })
    }

    /// Powers of two, integer logarithms and square roots.
    fn power_method(&mut self, name: &str, x: Value, y: Option<Value>, t: Scalar) -> Option<Value> {
        use BinaryOp::*;
        let w = bits(t);
        let signed = t.is_signed();
        Some(match (name, y) {
            ("is_power_of_two", _) if !signed => {
                let x = self.keep(x, t);
                let zero = self.int(0, t);
                let nonzero = self.binary(Ne, x, zero);
                let one = self.int(1, t);
                let below = self.binary(Sub, x, one);
                let both = self.binary(BitAnd, x, below);
                let zero = self.int(0, t);
                let single = self.binary(Eq, both, zero);
                self.binary(And, nonzero, single)
            }
            // std: 1 for 0 and 1, else 1 << (w - (x - 1).leading_zeros()), which wraps to 0
            // past the largest power of two.
            ("next_power_of_two", _) if !signed => {
                let x = self.keep(x, t);
                let one = self.int(1, t);
                let small = self.binary(Le, x, one);
                let one = self.int(1, t);
                let below = self.binary(Sub, x, one);
                let lz = self.leading_zeros(below, t);
                let lz = self.keep(lz, Scalar::U32);
                let zero = self.int(0, Scalar::U32);
                let over = self.binary(Eq, lz, zero);
                let wv = self.int(w as i128, Scalar::U32);
                let shift = self.binary(Sub, wv, lz);
                let one = self.int(1, t);
                let p = self.binary(Shl, one, shift);
                let zero = self.int(0, t);
                let p = self.select(over, zero, p);
                let one = self.int(1, t);
                self.select(small, one, p)
            }
            ("ilog2", _) => {
                let lz = self.leading_zeros(x, t);
                let top = self.int(w as i128 - 1, Scalar::U32);
                self.binary(Sub, top, lz)
            }
            ("isqrt", _) => self.isqrt(x, t),
            _ => return None,
        })
    }

    /// MIN where `v` is negative, else MAX.
    fn bound_by_sign(&mut self, v: Value, t: Scalar) -> Value {
        let zero = self.int(0, t);
        let neg = self.binary(BinaryOp::Lt, v, zero);
        let (lo, hi) = (
            self.int(super::int_limit(t, false), t),
            self.int(super::int_limit(t, true), t),
        );
        self.select(neg, lo, hi)
    }

    /// A narrow integer's bits, zero-extended to `u32`.
    fn widen32(&mut self, x: Value, t: Scalar) -> Value {
        let ut = unsigned(t);
        let u = self.convert(x, t, ut);
        self.convert(u, ut, Scalar::U32)
    }

    /// A 64-bit integer's low and high halves, as `u32`s.
    fn halves(&mut self, x: Value, t: Scalar) -> (Value, Value) {
        let u = self.convert(x, t, Scalar::U64);
        let u = self.keep(u, Scalar::U64);
        let lo = self.cast(u, Scalar::U32);
        let k = self.int(32, Scalar::U32);
        let hi = self.binary(BinaryOp::Shr, u, k);
        let hi = self.cast(hi, Scalar::U32);
        (self.keep(lo, Scalar::U32), self.keep(hi, Scalar::U32))
    }

    /// The 64-bit integer of type `t` whose high half is `hi` and low half `lo` (`u32`s).
    fn join(&mut self, hi: Value, lo: Value, t: Scalar) -> Value {
        let h = self.cast(hi, Scalar::U64);
        let k = self.int(32, Scalar::U32);
        let h = self.binary(BinaryOp::Shl, h, k);
        let l = self.cast(lo, Scalar::U64);
        let r = self.binary(BinaryOp::BitOr, h, l);
        self.convert(r, Scalar::U64, t)
    }

    /// The bytes of a `u32` in reverse order.
    fn swap32(&mut self, x: Value) -> Value {
        use BinaryOp::*;
        let u = Scalar::U32;
        let x = self.keep(x, u);
        let mut parts = Vec::new();
        for (shift, left, mask) in [
            (24, false, 0xff),
            (8, false, 0xff00),
            (8, true, 0xff_0000),
            (24, true, 0xff00_0000u32 as i128),
        ] {
            let k = self.int(shift, u);
            let s = self.binary(if left { Shl } else { Shr }, x, k);
            let m = self.int(mask, u);
            parts.push(self.binary(BitAnd, s, m));
        }
        let a = self.binary(BitOr, parts[0], parts[1]);
        let b = self.binary(BitOr, parts[2], parts[3]);
        self.binary(BitOr, a, b)
    }

    /// `x.leading_zeros()` as a `u32`.
    fn leading_zeros(&mut self, x: Value, t: Scalar) -> Value {
        use BinaryOp::*;
        let w = bits(t);
        if w == 64 {
            let (lo, hi) = self.halves(x, t);
            let zero = self.int(0, Scalar::U32);
            let hi_zero = self.binary(Eq, hi, zero);
            let ll = self.math(MathFn::LeadingZeros32, &[lo]);
            let k = self.int(32, Scalar::U32);
            let low = self.binary(Add, k, ll);
            let high = self.math(MathFn::LeadingZeros32, &[hi]);
            self.select(hi_zero, low, high)
        } else {
            // The zero-extended value has 32 - w more.
            let z = self.widen32(x, t);
            let n = self.math(MathFn::LeadingZeros32, &[z]);
            let k = self.int(32 - w as i128, Scalar::U32);
            self.binary(Sub, n, k)
        }
    }

    /// `x.isqrt()`: an estimate from the bits of `x` as an `f32`, three Newton steps in
    /// integers (which leave it within 1 of the root), then a step down or up to the floor of
    /// the root.
    fn isqrt(&mut self, x: Value, t: Scalar) -> Value {
        use BinaryOp::*;
        let wt = if bits(t) == 64 {
            Scalar::U64
        } else {
            Scalar::U32
        };
        let ut = unsigned(t);
        let n = self.convert(x, t, ut);
        let n = self.convert(n, ut, wt);
        let n = self.keep(n, wt);
        // The estimate from the float's bits (exponent halved: within 3.5% of the root), not
        // from `sqrt`: a float root here made NVIDIA's Vulkan compiler fail on kernels of
        // integer methods once f32 `sqrt` was corrected in f64.
        let f = self.cast(n, Scalar::F32);
        let fb = self.bitcast(f, Scalar::U32);
        let one32 = self.int(1, Scalar::U32);
        let half = self.binary(Shr, fb, one32);
        let magic = self.int(0x1FBD_1DF5, Scalar::U32);
        let eb = self.binary(Add, half, magic);
        let s = self.bitcast(eb, Scalar::F32);
        let r0 = self.cast(s, wt);
        let one = self.int(1, wt);
        let mut r0 = self.math(MathFn::Max, &[r0, one]);
        r0 = self.keep(r0, wt);
        // Two Newton steps (3.5% -> 6e-4 -> 2e-7 of the root), then the one below.
        for _ in 0..2 {
            let one = self.int(1, wt);
            let d = self.math(MathFn::Max, &[r0, one]);
            let q = self.binary(Div, n, d);
            let sum = self.binary(Add, r0, q);
            let one = self.int(1, Scalar::U32);
            let r = self.binary(Shr, sum, one);
            let one = self.int(1, wt);
            let r = self.math(MathFn::Max, &[r, one]);
            r0 = self.keep(r, wt);
        }
        let q = self.binary(Div, n, r0);
        let sum = self.binary(Add, r0, q);
        let one = self.int(1, Scalar::U32);
        let r1 = self.binary(Shr, sum, one);
        let r1 = self.keep(r1, wt);
        // Down while r1 * r1 > n, written without overflow as r1 > n / r1.
        let one = self.int(1, wt);
        let d = self.math(MathFn::Max, &[r1, one]);
        let q = self.binary(Div, n, d);
        let over = self.binary(Gt, r1, q);
        let one = self.int(1, wt);
        let less = self.binary(Sub, r1, one);
        let r2 = self.select(over, less, r1);
        let r2 = self.keep(r2, wt);
        // Up while (r2 + 1)^2 <= n.
        let one = self.int(1, wt);
        let next = self.binary(Add, r2, one);
        let next = self.keep(next, wt);
        let q = self.binary(Div, n, next);
        let under = self.binary(Le, next, q);
        let r3 = self.select(under, next, r2);
        let r3 = self.convert(r3, wt, ut);
        self.convert(r3, ut, t)
    }
}
