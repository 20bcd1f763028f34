//! The 16-bit floats of the `half` crate (`f16`, `bf16`) in kernels, written once for every
//! backend. Arrays of them are `u16` bits in device memory; a value of one in a kernel is the
//! `f32` it stands for (every such value is exactly representable in `f32`), and the builder
//! keeps its logical type. Loads convert bits to `f32` exactly; each arithmetic operation
//! computes in `f32` and rounds to the 16-bit type (round to nearest, ties to even), as `half`
//! does (`f16 + f16` is `f16::from_f32(a.to_f32() + b.to_f32())`; with 24 bits against 11 or 8
//! the double rounding is exact); stores convert back to bits. The conversions are integer
//! operations on the bits (no `f32` subnormal arithmetic, which GPUs may flush), following
//! `half`'s own (its software fallbacks, which the hardware ones agree with but for NaN
//! payloads). `f16::from_f64` is refused: `half` rounds it differently by CPU (through `f32`
//! where the CPU has F16C, from the high 32 bits of the `f64` elsewhere).

use super::{KernelBuilder, Ty, Value, Var};
use crate::{BinaryOp, Scalar};

impl KernelBuilder {
    /// `v` seen as another type of the same representation (a 16-bit float's value as its
    /// `f32`, or back): the same expression.
    pub(super) fn retype(&mut self, v: Value, ty: Scalar) -> Value {
        Value {
            expr: v.expr,
            ty: self.new_var(Ty::Known(ty)),
            im: None,
        }
    }

    fn u32_lit(&mut self, v: u32) -> Value {
        self.lit_int(v as i128, Some(Scalar::U32))
    }

    fn op_lit(&mut self, op: BinaryOp, a: Value, v: u32) -> Value {
        let b = self.u32_lit(v);
        self.binary(op, a, b)
    }

    /// 1 where round-to-nearest-even of `x` at the bit `half` (the highest bit dropped) goes
    /// up: that bit set and any of `sticky` (the other dropped bits and the lowest kept one)
    /// set too; else 0.
    fn round_up(&mut self, x: Value, half: Value, sticky: Value) -> Value {
        let h = self.binary(BinaryOp::BitAnd, x, half);
        let h = self.nonzero(h);
        let s = self.binary(BinaryOp::BitAnd, x, sticky);
        let s = self.nonzero(s);
        let up = self.binary(BinaryOp::And, h, s);
        let (one, zero) = (self.u32_lit(1), self.u32_lit(0));
        self.select(up, one, zero)
    }

    fn nonzero(&mut self, a: Value) -> Value {
        self.op_lit(BinaryOp::Ne, a, 0)
    }

    /// The `f32` that 16-bit float bits `bits` (a `u16` or `u32` value) stand for, exactly.
    pub(super) fn half_to_f32(&mut self, bits: Value, ty: Scalar) -> Value {
        let b = self.cast(bits, Scalar::U32);
        // Read many times below: computed once.
        let b = self.keep(b, Scalar::U32);
        if ty == Scalar::BF16 {
            // The high half of an f32; a NaN gets its quiet bit, as `half` sets it.
            let mag = self.op_lit(BinaryOp::BitAnd, b, 0x7FFF);
            let nan = self.op_lit(BinaryOp::Gt, mag, 0x7F80);
            let quiet = self.op_lit(BinaryOp::BitOr, b, 0x0040);
            let b = self.select(nan, quiet, b);
            let w = self.op_lit(BinaryOp::Shl, b, 16);
            return self.bitcast(w, Scalar::F32);
        }
        let sign16 = self.op_lit(BinaryOp::BitAnd, b, 0x8000);
        let sign = self.op_lit(BinaryOp::Shl, sign16, 16);
        let exp = self.op_lit(BinaryOp::BitAnd, b, 0x7C00);
        let man = self.op_lit(BinaryOp::BitAnd, b, 0x03FF);
        let man13 = self.op_lit(BinaryOp::Shl, man, 13);
        // Normal: the exponent rebiased (15 to 127), the fraction widened.
        let e = self.op_lit(BinaryOp::Shr, exp, 10);
        let e = self.op_lit(BinaryOp::Add, e, 112);
        let e = self.op_lit(BinaryOp::Shl, e, 23);
        let normal = self.binary(BinaryOp::BitOr, e, man13);
        // Infinity or NaN (quiet bit set, payload kept).
        let quiet_bit = self.u32_lit(0x0040_0000);
        let zero = self.u32_lit(0);
        let has_man = self.nonzero(man);
        let q = self.select(has_man, quiet_bit, zero);
        let special = self.op_lit(BinaryOp::BitOr, man13, 0x7F80_0000);
        let special = self.binary(BinaryOp::BitOr, special, q);
        // Zero or subnormal: `man` times 2^-24, exact (a normal f32, or zero).
        let m = self.cast(man, Scalar::F32);
        let scale = self.lit_float(5.960_464_477_539_063e-8, Some(Scalar::F32));
        let sub = self.binary(BinaryOp::Mul, m, scale);
        let sub = self.bitcast(sub, Scalar::U32);
        let is_special = self.op_lit(BinaryOp::Eq, exp, 0x7C00);
        let is_sub = self.op_lit(BinaryOp::Eq, exp, 0);
        let mag = self.select(is_special, special, normal);
        let mag = self.select(is_sub, sub, mag);
        let w = self.binary(BinaryOp::BitOr, mag, sign);
        self.bitcast(w, Scalar::F32)
    }

    /// The 16-bit float bits (a `u32` value below 2^16) nearest `f32` value `v` (ties to even).
    pub(super) fn f32_to_half(&mut self, v: Value, ty: Scalar) -> Value {
        let x = self.bitcast(v, Scalar::U32);
        let x = self.keep(x, Scalar::U32);
        if ty == Scalar::BF16 {
            let mag = self.op_lit(BinaryOp::BitAnd, x, 0x7FFF_FFFF);
            let nan = self.op_lit(BinaryOp::Gt, mag, 0x7F80_0000);
            let high = self.op_lit(BinaryOp::Shr, x, 16);
            let quiet = self.op_lit(BinaryOp::BitOr, high, 0x0040);
            let (half, sticky) = (self.u32_lit(0x8000), self.u32_lit(0x1_7FFF));
            let inc = self.round_up(x, half, sticky);
            let rounded = self.binary(BinaryOp::Add, high, inc);
            let r = self.select(nan, quiet, rounded);
            return self.op_lit(BinaryOp::BitAnd, r, 0xFFFF);
        }
        let sign = self.op_lit(BinaryOp::BitAnd, x, 0x8000_0000);
        let hsign = self.op_lit(BinaryOp::Shr, sign, 16);
        let exp = self.op_lit(BinaryOp::BitAnd, x, 0x7F80_0000);
        let man = self.op_lit(BinaryOp::BitAnd, x, 0x007F_FFFF);
        let eb = self.op_lit(BinaryOp::Shr, exp, 23);
        // Infinity or NaN: a NaN keeps its high fraction bits and gets the quiet bit.
        let has_man = self.nonzero(man);
        let nan_bit = self.u32_lit(0x0200);
        let zero = self.u32_lit(0);
        let nan_bit = self.select(has_man, nan_bit, zero);
        let man_hi = self.op_lit(BinaryOp::Shr, man, 13);
        let special = self.op_lit(BinaryOp::BitOr, hsign, 0x7C00);
        let special = self.binary(BinaryOp::BitOr, special, nan_bit);
        let special = self.binary(BinaryOp::BitOr, special, man_hi);
        // Too large: infinity.
        let inf = self.op_lit(BinaryOp::BitOr, hsign, 0x7C00);
        // Normal (biased exponent 113 to 142): rebias, round on the 13 bits dropped (the
        // carry may reach the exponent, and infinity, as it should).
        let floor = self.u32_lit(112);
        let eb_n = self.method_of(Scalar::U32, "max", &[eb, floor]);
        let he = self.op_lit(BinaryOp::Sub, eb_n, 112);
        let he = self.op_lit(BinaryOp::Shl, he, 10);
        let body = self.binary(BinaryOp::BitOr, hsign, he);
        let body = self.binary(BinaryOp::BitOr, body, man_hi);
        let (half, sticky) = (self.u32_lit(0x1000), self.u32_lit(0x2FFF));
        let inc = self.round_up(man, half, sticky);
        let normal = self.binary(BinaryOp::Add, body, inc);
        // Subnormal or zero (biased exponent up to 112): the fraction with its leading one,
        // shifted right 14 - (eb - 112) places (at most 25, which leaves zero).
        let eb_s = self.method_of(Scalar::U32, "min", &[eb, floor]);
        let s = self.u32_lit(126);
        let s = self.binary(BinaryOp::Sub, s, eb_s);
        let most = self.u32_lit(25);
        let s = self.method_of(Scalar::U32, "min", &[s, most]);
        let m = self.op_lit(BinaryOp::BitOr, man, 0x0080_0000);
        let hm = self.binary(BinaryOp::Shr, m, s);
        let s1 = self.op_lit(BinaryOp::Sub, s, 1);
        let one = self.u32_lit(1);
        let rbit = self.binary(BinaryOp::Shl, one, s1);
        let three = self.u32_lit(3);
        let mask = self.binary(BinaryOp::Mul, rbit, three);
        let mask = self.op_lit(BinaryOp::Sub, mask, 1);
        let inc_s = self.round_up(m, rbit, mask);
        let hm = self.binary(BinaryOp::Add, hm, inc_s);
        let sub = self.binary(BinaryOp::BitOr, hsign, hm);
        // Choose.
        let is_special = self.op_lit(BinaryOp::Eq, eb, 255);
        let is_big = self.op_lit(BinaryOp::Ge, eb, 143);
        let is_sub = self.op_lit(BinaryOp::Le, eb, 112);
        let r = self.select(is_sub, sub, normal);
        let r = self.select(is_big, inf, r);
        self.select(is_special, special, r)
    }

    /// `f32` value `v` rounded to the 16-bit float type `ty`, as its `f32`.
    pub(super) fn round_to_half(&mut self, v: Value, ty: Scalar) -> Value {
        let bits = self.f32_to_half(v, ty);
        let f = self.half_to_f32(bits, ty);
        // Rounded values nest (`a * b + c`): each is held, so expressions stay small.
        self.keep(f, Scalar::F32)
    }

    /// `a op b` on values of 16-bit float type `ty`: in `f32`, rounded to `ty` where `op`
    /// gives a number; a comparison compares the `f32`s.
    pub(super) fn half_binary(&mut self, op: BinaryOp, a: Value, b: Value, ty: Scalar) -> Value {
        let fa = self.retype(a, Scalar::F32);
        let fb = self.retype(b, Scalar::F32);
        let r = self.binary(op, fa, fb);
        if op.is_comparison() {
            return r;
        }
        let rounded = self.round_to_half(r, ty);
        self.retype(rounded, ty)
    }

    /// A method of `f16` or `bf16` (receiver or arguments of type `ty`): the conversions
    /// (`to_f32`, `to_f64`, `from_f32`, `to_bits`), and the methods whose result is one of
    /// the operands or a test (`abs`, `max`, `min`, `is_nan`, ...), computed on the `f32`.
    pub(super) fn half_method(&mut self, ty: Scalar, name: &str, args: &[Value]) -> Value {
        let f32_of = |b: &mut Self, v: Value| b.retype(v, Scalar::F32);
        match (name, args) {
            ("to_f32", [x]) => f32_of(self, *x),
            ("to_f64", [x]) => {
                let f = f32_of(self, *x);
                self.cast(f, Scalar::F64)
            }
            ("from_f32", [x]) => {
                let t = self.new_var(Ty::Known(Scalar::F32));
                self.unify(x.ty, t, "from_f32");
                let r = self.round_to_half(*x, ty);
                self.retype(r, ty)
            }
            ("to_bits", [x]) => {
                let f = f32_of(self, *x);
                let b = self.f32_to_half(f, ty);
                self.cast(b, Scalar::U16)
            }
            (
                "abs" | "is_nan" | "is_finite" | "is_infinite" | "is_sign_positive"
                | "is_sign_negative",
                [x],
            ) => {
                let f = f32_of(self, *x);
                let r = self.method(name, &[f]);
                if name == "abs" {
                    self.retype(r, ty)
                } else {
                    r
                }
            }
            ("max" | "min", [x, y]) => {
                let (f, g) = (f32_of(self, *x), f32_of(self, *y));
                let r = self.method(name, &[f, g]);
                self.retype(r, ty)
            }
            ("from_f64", _) => {
                self.fail(format!("`{ty}::from_f64` in a kernel: the `half` crate rounds it differently on different CPUs (through f32 where the CPU has F16C); write `{ty}::from_f32(x as f32)`"));
                let v = match args.first() {
                    Some(&v) => v,
                    None => self.lit_int(0, None),
                };
                self.retype(v, ty)
            }
            _ => {
                self.fail(format!(
                    "`{ty}::{name}` in a kernel: `{ty}` values have `to_f32`, `to_f64`, `from_f32`, `from_bits`, `to_bits`, `abs`, `max`, `min`, the `is_*` tests, arithmetic and comparisons"
                ));
                let v = match args.first() {
                    Some(&v) => v,
                    None => self.lit_int(0, None),
                };
                self.retype(v, ty)
            }
        }
    }

    /// After a loop's reduction into `v`: where `v` is a 16-bit float (or an array of them)
    /// local to the kernel, its value rounded to that type. The loop's partial results combine in `f32` (exact for
    /// `max` and `min`, at least as accurate as `half`'s own operations for `+` and `*`), and
    /// every value of a 16-bit float in a kernel must be one of the type's values.
    pub(super) fn round_half_reduction(&mut self, v: Var) {
        let Ty::Known(ty) = self.ty(v.ty) else {
            return;
        };
        // The construct's own reductions combine on the host, which rounds their result.
        let construct_level =
            self.reductions.iter().any(|r| r.0.id == v.id) || self.reduction_arrays.contains(&v.id);
        if !ty.is_half() || construct_level {
            return;
        }
        let round = |b: &mut Self, x: Value| {
            let f = b.retype(x, Scalar::F32);
            let r = b.round_to_half(f, ty);
            b.retype(r, ty)
        };
        match self.function.locals[v.id as usize].len {
            None => {
                let x = self.get(v);
                let r = round(self, x);
                self.set(v, r);
            }
            Some(len) => self.for_each_element("k", len, |b, k| {
                let i = b.get(k);
                let x = b.get_elem(v, i);
                let r = round(b, x);
                let i = b.get(k);
                b.set_elem(v, i, r);
            }),
        }
    }
}

/// The `f32` that `f16` bits stand for, on the host (what kernels compute; the launch of a
/// captured `f16` scalar passes this).
pub fn f16_bits_to_f32(i: u16) -> f32 {
    let (sign, exp, man) = (
        ((i & 0x8000) as u32) << 16,
        (i & 0x7C00) as u32,
        (i & 0x03FF) as u32,
    );
    let mag = if exp == 0x7C00 {
        0x7F80_0000 | (man << 13) | if man != 0 { 0x0040_0000 } else { 0 }
    } else if exp == 0 {
        (man as f32 * 5.960_464_477_539_063e-8).to_bits()
    } else {
        (((exp >> 10) + 112) << 23) | (man << 13)
    };
    f32::from_bits(mag | sign)
}

/// The `f32` that `bf16` bits stand for, on the host.
pub fn bf16_bits_to_f32(i: u16) -> f32 {
    let i = if i & 0x7FFF > 0x7F80 { i | 0x0040 } else { i };
    f32::from_bits((i as u32) << 16)
}

/// `f16` bits nearest `f32` value `v` (ties to even), on the host: as kernels compute it
/// (a value a kernel wrote back to a captured `f16`).
pub fn f32_to_f16_bits(v: f32) -> u16 {
    let x = v.to_bits();
    let (sign, exp, man) = (x & 0x8000_0000, x & 0x7F80_0000, x & 0x007F_FFFF);
    let hsign = sign >> 16;
    let eb = exp >> 23;
    let r = if eb == 255 {
        hsign | 0x7C00 | if man != 0 { 0x0200 } else { 0 } | (man >> 13)
    } else if eb >= 143 {
        hsign | 0x7C00
    } else if eb <= 112 {
        let s = (126 - eb).min(25);
        let m = man | 0x0080_0000;
        let rb = 1u32 << (s - 1);
        let up = m & rb != 0 && m & (3 * rb - 1) != 0;
        hsign | ((m >> s) + u32::from(up))
    } else {
        let up = man & 0x1000 != 0 && man & 0x2FFF != 0;
        (hsign | ((eb - 112) << 10) | (man >> 13)) + u32::from(up)
    };
    r as u16
}

/// `bf16` bits nearest `f32` value `v` (ties to even), on the host.
pub fn f32_to_bf16_bits(v: f32) -> u16 {
    let x = v.to_bits();
    if x & 0x7FFF_FFFF > 0x7F80_0000 {
        return ((x >> 16) | 0x0040) as u16;
    }
    let up = x & 0x8000 != 0 && x & 0x1_7FFF != 0;
    ((x >> 16) + u32::from(up)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The host conversions are `half`'s software ones (NaN payloads included).
    #[test]
    fn host_conversions_are_halfs() {
        for i in 0..=u16::MAX {
            let (a, b) = (half::f16::from_bits(i).to_f32(), f16_bits_to_f32(i));
            assert_eq!(a.to_bits(), b.to_bits(), "f16 {i:#06x}");
            let (a, b) = (half::bf16::from_bits(i).to_f32(), bf16_bits_to_f32(i));
            assert_eq!(a.to_bits(), b.to_bits(), "bf16 {i:#06x}");
        }
        let mut x = 0x1234_5678u32;
        let check = |bits: u32| {
            let v = f32::from_bits(bits);
            if !v.is_nan() {
                assert_eq!(
                    half::f16::from_f32(v).to_bits(),
                    f32_to_f16_bits(v),
                    "f16 of {v:e} ({bits:#x})"
                );
                assert_eq!(
                    half::bf16::from_f32(v).to_bits(),
                    f32_to_bf16_bits(v),
                    "bf16 of {v:e} ({bits:#x})"
                );
            }
        };
        for _ in 0..2_000_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            check(x);
        }
        // Every f16 value, its neighbours in f32 and the midpoints between f16 values (ties).
        for i in 0..=u16::MAX {
            let f = f16_bits_to_f32(i);
            if f.is_finite() {
                for d in [-1i32, 0, 1] {
                    check(f.to_bits().wrapping_add_signed(d));
                }
                let next = f16_bits_to_f32(i.wrapping_add(1));
                if next.is_finite() {
                    let mid = (f as f64 + next as f64) / 2.0;
                    check((mid as f32).to_bits());
                }
            }
        }
        for bits in [
            0u32,
            0x8000_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x7F7F_FFFF,
            0x3880_0000,
            0x3380_0000,
            0x3300_0001,
            0x3300_0000,
            0x0000_0001,
        ] {
            check(bits);
        }
    }
}
