//! Expressions in WGSL: operators, conversions, element loads, and the std math methods a region
//! may call (docs/guide/regions.md), with helpers for those WGSL lacks.

use super::*;

impl Writer<'_> {
    pub(super) fn expr(&mut self, h: Handle<Expr>) -> Result<String> {
        let f = &self.k.function;
        let ty = self.types[h.index()];
        Ok(match &f.exprs[h] {
            Expr::Literal(l) => literal(*l, self.target)?,
            Expr::Param(p) => {
                if ty == Scalar::Bool {
                    format!("(params.p{p} != 0u)")
                } else {
                    format!("params.p{p}")
                }
            }
            Expr::Local(l) => format!("l{l}"),
            Expr::LocalElem { local, index } => {
                let i = self.local_index(*index)?;
                let e = self.private_element(*local, &i);
                if self.shared_bool(*local) {
                    format!("({e} != 0u)")
                } else {
                    e
                }
            }
            Expr::Load {
                array,
                field,
                index,
            } => self.load(*array, *field, *index, ty)?,
            Expr::Len(a) => self.len_of(*a),
            Expr::GangIndex => format!("{}(acc_wg.x)", self.uty()),
            // The element's index; `member_at` indexes the nested array.
            Expr::NestedIndex { element, .. } => self.expr(*element)?,
            Expr::Unary(UnaryOp::Neg, a) => {
                let x = format!("(-{})", self.expr(*a)?);
                wrap(ty, &x).unwrap_or(x)
            }
            Expr::Unary(UnaryOp::Not, a) => {
                let inner = self.expr(*a)?;
                if ty == Scalar::Bool {
                    format!("(!{inner})")
                } else {
                    format!("(~{inner})")
                }
            }
            Expr::Binary(op, a, b) => self.binary(*op, (*a, *b), ty)?,
            Expr::Select {
                cond,
                accept,
                reject,
            } => {
                format!(
                    "select({}, {}, {})",
                    self.expr(*reject)?,
                    self.expr(*accept)?,
                    self.expr(*cond)?
                )
            }
            Expr::Cast(a, t) => self.cast(*a, *t)?,
            Expr::Bitcast(a, t) => {
                let inner = self.expr(*a)?;
                format!("bitcast<{}>({inner})", self.ty(*t)?)
            }
            Expr::Math(m, args) => self.math_call(*m, args, ty)?,
        })
    }

    /// A load of element `index` (and `field`) of parameter array `array`, of type `ty`:
    /// checked unless proven or in a fast version, atomic where the array is.
    fn load(
        &mut self,
        array: ParamId,
        field: Option<FieldId>,
        index: Handle<Expr>,
        ty: Scalar,
    ) -> Result<String> {
        let member = self.member_at(array, field, index)?;
        let i = self.expr(index)?;
        let i32 = self.index32(&i, self.is_constant(index));
        let place = if self.k.unchecked || self.fast_index(array, index) {
            format!("p{array}[params.b{array} + {i32}]{member}")
        } else {
            self.bounds_helper();
            // Out of range: the access is recorded and reads element 0 (or zero).
            format!("p{array}[params.b{array} + select(0u, {i32}, acc_in_bounds({array}u, {i}, params.n{array}))]{member}")
        };
        Ok(if let Some(p) = self.packed(array, field) {
            p.extract(&if p.atomic {
                format!("atomicLoad(&{place})")
            } else {
                place
            })
        } else if self.atomic.contains(&(array, field)) {
            decode(ty, &format!("atomicLoad(&{place})"))
        } else if ty == Scalar::Bool {
            format!("({place} != 0u)")
        } else {
            place
        })
    }

    /// `a op b`, of type `ty`, as Rust computes it (wrapped to narrow types, f32 division
    /// correctly rounded, 64-bit comparisons by halves where the adapter needs them).
    fn binary(
        &mut self,
        op: BinaryOp,
        (a, b): (Handle<Expr>, Handle<Expr>),
        ty: Scalar,
    ) -> Result<String> {
        let (x, y) = (self.expr(a)?, self.expr(b)?);
        let operand = self.types[a.index()];
        let r = match op {
            BinaryOp::And => format!("({x} && {y})"),
            BinaryOp::Or => format!("({x} || {y})"),
            // A literal count is written as a `u32` literal: naga does not convert
            // 64-bit constants.
            BinaryOp::Shl | BinaryOp::Shr => match &self.k.function.exprs[b] {
                Expr::Literal(Literal::Int(_, n)) => {
                    format!("({x} {} {}u)", op.symbol(), *n as u32)
                }
                _ => format!("({x} {} u32({y}))", op.symbol()),
            },
            // WGSL allows f32 division 2.5 ULP (NVIDIA's Vulkan driver takes it): in
            // f64 and rounded once it is correctly rounded (53 >= 2 * 24 + 2 bits), as
            // Rust and PTX's `div.rn` divide.
            BinaryOp::Div
                if operand == Scalar::F32 && self.target.f64 && !self.target.fast_float =>
            {
                format!("f32(f64({x}) / f64({y}))")
            }
            BinaryOp::Rem if operand.is_float() => {
                format!("({x} - trunc({x} / {y}) * {y})")
            }
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
                if self.by_halves(operand) =>
            {
                match op {
                    BinaryOp::Lt => self.less(operand, &x, &y),
                    BinaryOp::Gt => self.less(operand, &y, &x),
                    BinaryOp::Le => format!("(!{})", self.less(operand, &y, &x)),
                    _ => format!("(!{})", self.less(operand, &x, &y)),
                }
            }
            // WGSL has no `^` on bool.
            BinaryOp::BitXor if operand == Scalar::Bool => format!("({x} != {y})"),
            _ => format!("({x} {} {y})", op.symbol()),
        };
        Ok(match op {
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Shl | BinaryOp::Div => {
                wrap(ty, &r).unwrap_or(r)
            }
            _ => r,
        })
    }

    /// `a as t`, as Rust's `as` converts.
    fn cast(&mut self, a: Handle<Expr>, t: Scalar) -> Result<String> {
        // A float literal cast to a float type is that type's literal (naga's constant
        // evaluation does not convert an f64 constant to f32).
        if let (Expr::Literal(Literal::Float(_, v)), true) =
            (&self.k.function.exprs[a], t.is_float())
        {
            let v = if t == Scalar::F32 {
                *v as f32 as f64
            } else {
                *v
            };
            return literal(Literal::Float(t, v), self.target);
        }
        let from = self.types[a.index()];
        let inner = self.expr(a)?;
        let to = self.ty(t)?;
        let (lo, hi) = match t {
            Scalar::I8 => (-128.0, 127.0),
            Scalar::I16 => (-32768.0, 32767.0),
            Scalar::U8 => (0.0, 255.0),
            Scalar::U16 => (0.0, 65535.0),
            _ => (0.0, 0.0),
        };
        let (wide_from, wide_to) = (self.param_size(from) == 8, self.param_size(t) == 8);
        let same = from != Scalar::Bool && self.ty(from)? == to && wrap(t, "x").is_none();
        let converted = if same {
            // A cast between types the device holds alike (`usize` and `u64`) is no
            // conversion at all (NVIDIA's Vulkan driver misread a u64 converted to u64).
            inner
        } else if from.is_int()
            && t.is_int()
            && !wide_from
            && wide_to
            && from.is_signed() != t.is_signed()
        {
            // Widening extends by the source's signedness (Rust's `as`); naga's
            // conversion would extend by the target's.
            let mid = if from.is_signed() { "i64" } else { "u64" };
            format!("{to}({mid}({inner}))")
        } else if from == Scalar::Bool && t != Scalar::Bool {
            format!("select({to}(0), {to}(1), {inner})")
        } else if from.is_float() && hi > 0.0 {
            // Rust's float-to-int `as` saturates at the type's bounds.
            let fty = self.ty(from)?;
            format!("{to}(clamp({inner}, {fty}({lo:.1}), {fty}({hi:.1})))")
        } else {
            format!("{to}({inner})")
        };
        Ok(wrap(t, &converted).unwrap_or(converted))
    }

    /// A call of math function `m` on `args`, of type `ty`.
    fn math_call(&mut self, m: MathFn, args: &[Handle<Expr>], ty: Scalar) -> Result<String> {
        let a: Vec<String> = args.iter().map(|x| self.expr(*x)).collect::<Result<_>>()?;
        // The transcendental functions are acc_core's programs (`math64`): for f64
        // always (WGSL has them for f32 only), for f32 where the adapter has f64 and
        // 64-bit integers, widened and rounded once, as nvidia computes them.
        let exact = self.target.f64 && self.target.int64;
        let for_f32 = ty == Scalar::F32;
        if ty == Scalar::F64 || (for_f32 && exact) {
            if let Some(name) = math64::function(m, for_f32) {
                if !self.helpers.contains(&format!("fn {name}(")) {
                    if let Some(h) = math64::helper(m, for_f32) {
                        self.helpers.push_str(&h);
                    }
                }
                if for_f32 {
                    let wide: Vec<String> = a.iter().map(|x| format!("f64({x})")).collect();
                    return Ok(format!("f32({name}({}))", wide.join(", ")));
                }
                return Ok(format!("{name}({})", a.join(", ")));
            }
        }
        Ok(self.math(m, ty, &a))
    }

    pub(super) fn math(&mut self, m: MathFn, ty: Scalar, a: &[String]) -> String {
        let x = &a[0];
        let wty = wgsl_type(ty, self.target).unwrap_or("f32");
        match m {
            MathFn::Abs => format!("abs({x})"),
            MathFn::Min | MathFn::Max | MathFn::Clamp if self.by_halves(ty) => {
                let s = int64_name(device_scalar(ty, self.target));
                match m {
                    MathFn::Min => format!("acc_min_{s}({x}, {})", a[1]),
                    MathFn::Max => format!("acc_max_{s}({x}, {})", a[1]),
                    _ => format!("acc_min_{s}(acc_max_{s}({x}, {}), {})", a[1], a[2]),
                }
            }
            MathFn::Min => format!("min({x}, {})", a[1]),
            MathFn::Max => format!("max({x}, {})", a[1]),
            MathFn::Clamp => format!("clamp({x}, {}, {})", a[1], a[2]),
            // Vulkan does not ask f32 `sqrt` to be correctly rounded, and NVIDIA's driver is a
            // unit off for about one argument in six: the driver's result, then corrected to
            // the nearest by squaring the midpoints to its neighbours in f64 (exact: 25-bit
            // midpoints, 50-bit squares), twice. (An f64 `sqrt` rounded once would be exact
            // too, but NVIDIA's Vulkan compiler failed on a kernel with it.)
            MathFn::Sqrt if ty == Scalar::F32 && self.target.f64 && !self.target.fast_float => {
                if !self.helpers.contains("fn acc_sqrt_f32") {
                    self.helpers.push_str(SQRT_F32);
                }
                format!("acc_sqrt_f32({x})")
            }
            MathFn::Sqrt => format!("sqrt({x})"),
            MathFn::Cbrt => format!("(sign({x}) * pow(abs({x}), {wty}(1.0) / {wty}(3.0)))"),
            MathFn::Exp => format!("exp({x})"),
            MathFn::Exp2 => format!("exp2({x})"),
            MathFn::Ln => format!("log({x})"),
            MathFn::Log2 => format!("log2({x})"),
            MathFn::Log10 => format!("(log({x}) / log({wty}(10.0)))"),
            MathFn::Sin => format!("sin({x})"),
            MathFn::Cos => format!("cos({x})"),
            MathFn::Tan => format!("tan({x})"),
            MathFn::Asin => format!("asin({x})"),
            MathFn::Acos => format!("acos({x})"),
            MathFn::Atan => format!("atan({x})"),
            MathFn::Atan2 => format!("atan2({x}, {})", a[1]),
            MathFn::Sinh => format!("sinh({x})"),
            MathFn::Cosh => format!("cosh({x})"),
            MathFn::Tanh => format!("tanh({x})"),
            MathFn::Floor => format!("floor({x})"),
            MathFn::Ceil => format!("ceil({x})"),
            // Rust rounds half away from zero; WGSL's round() rounds half to even.
            MathFn::Round => format!("select(ceil({x} - {wty}(0.5)), floor({x} + {wty}(0.5)), {x} >= {wty}(0.0))"),
            MathFn::Trunc => format!("trunc({x})"),
            MathFn::Fract => format!("({x} - trunc({x}))"),
            MathFn::Powf => format!("pow({x}, {})", a[1]),
            MathFn::Powi => {
                self.powi_helper(wty);
                format!("acc_powi_{wty}({x}, {})", a[1])
            }
            MathFn::Pow => {
                self.powi_helper(wty);
                format!("acc_powi_{wty}({x}, i32({}))", a[1])
            }
            MathFn::MulAdd => format!("fma({x}, {}, {})", a[1], a[2]),
            MathFn::Hypot => format!("sqrt({x} * {x} + {} * {})", a[1], a[1]),
            // -0.0 has the sign of its reciprocal; NaN stays NaN (as std).
            MathFn::Signum if ty.is_float() => format!(
                "select(select({wty}(1.0), {wty}(-1.0), {x} < {wty}(0.0) || ({x} == {wty}(0.0) && {wty}(1.0) / {x} < {wty}(0.0))), {x}, {x} != {x})"
            ),
            MathFn::Signum => format!("sign({x})"),
            MathFn::Recip => format!("({wty}(1.0) / {x})"),
            MathFn::CountOnes32 => format!("countOneBits({x})"),
            MathFn::LeadingZeros32 => format!("countLeadingZeros({x})"),
            MathFn::TrailingZeros32 => format!("countTrailingZeros({x})"),
            MathFn::ReverseBits32 => format!("reverseBits({x})"),
        }
    }

    pub(super) fn powi_helper(&mut self, wty: &str) {
        let name = format!("fn acc_powi_{wty}(");
        if self.helpers.contains(&name) {
            return;
        }
        // Exponentiation by squaring: exact for integers (wrapping), and defined for negative
        // float bases, unlike pow(); a negative exponent (floats only) takes the reciprocal.
        let negative = if wty.starts_with('f') {
            format!("    if (e < 0) {{ return {wty}(1) / r; }}\n")
        } else {
            String::new()
        };
        let _ = writeln!(
            self.helpers,
            "fn acc_powi_{wty}(base: {wty}, e: i32) -> {wty} {{\n    var r: {wty} = {wty}(1);\n    var b: {wty} = base;\n    var n: u32 = u32(abs(e));\n    loop {{\n        if (n == 0u) {{ break; }}\n        if ((n & 1u) == 1u) {{ r = r * b; }}\n        b = b * b;\n        n = n >> 1u;\n    }}\n{negative}    return r;\n}}"
        );
    }
}

pub(super) fn literal(l: Literal, target: Target) -> Result<String> {
    Ok(match l {
        Literal::Bool(b) => b.to_string(),
        Literal::Int(t, v) => match t {
            Scalar::ISize | Scalar::USize if target.wide_usize() => {
                literal(Literal::Int(device_scalar(t, target), v), target)?
            }
            // usize/isize are 32-bit here: their 64-bit limits (reduction identities) become
            // the 32-bit limits; other values must fit.
            Scalar::ISize | Scalar::USize => {
                let v = match v {
                    v if v == i64::MIN as i128 => i32::MIN as i128,
                    v if v == i64::MAX as i128 && t == Scalar::ISize => i32::MAX as i128,
                    v if v == u64::MAX as i128 || (v == -1 && t == Scalar::USize) => {
                        u32::MAX as i128
                    }
                    v => v,
                };
                let fits = if t == Scalar::ISize {
                    (i32::MIN as i128..=i32::MAX as i128).contains(&v)
                } else {
                    (0..=u32::MAX as i128).contains(&v)
                };
                if !fits {
                    return Err(unsupported(format!("the {t} literal {v} (32-bit there)")));
                }
                if t == Scalar::ISize {
                    format!("i32({v})")
                } else {
                    format!("{v}u")
                }
            }
            Scalar::I32 | Scalar::I8 | Scalar::I16 => format!("i32({v})"),
            Scalar::U32 | Scalar::U8 | Scalar::U16 => format!("{}u", v as u32),
            Scalar::I64 => {
                wgsl_type(t, target)?;
                if v == i64::MIN as i128 {
                    String::from("(-9223372036854775807li - 1li)")
                } else {
                    format!("{}li", v as i64)
                }
            }
            Scalar::U64 => {
                wgsl_type(t, target)?;
                format!("{}lu", v as u64)
            }
            Scalar::F32 | Scalar::F64 => literal(Literal::Float(t, v as f64), target)?,
            other => return Err(unsupported(format!("an integer literal of type {other}"))),
        },
        Literal::Float(t, v) => {
            let ty = wgsl_type(t, target)?;
            if v.is_finite() {
                let text = if v == v.trunc() && v.abs() < 1e15 {
                    format!("{v:.1}")
                } else {
                    format!("{v:e}")
                };
                format!("{ty}({text})")
            } else if t == Scalar::F32 {
                let bits = (v as f32).to_bits();
                format!("bitcast<f32>({bits}u)")
            } else {
                let bits = v.to_bits();
                format!("bitcast<f64>({bits}lu)")
            }
        }
    })
}

/// The correctly rounded f32 square root (see [`Writer::math`]): positive normal arguments
/// corrected; subnormal ones (which a driver may flush to zero) taken from their bits, scaled
/// by 2^64 into normal range, rooted and scaled back by 2^-32 (exact: powers of two), then
/// corrected as normal ones; zero, negative, infinite and NaN ones as the driver gives them.
const SQRT_F32: &str = "fn acc_sqrt_f32(x: f32) -> f32 {
    var s = sqrt(x);
    var xd = f64(x);
    let b = bitcast<u32>(x);
    if (b != 0u && b < 0x00800000u) {
        let m = f64(b);
        s = sqrt(f32(m * 2.5849394142282115e-26lf)) * 2.3283064365386963e-10;
        xd = m * 1.401298464324817e-45lf;
    } else if (!(x >= 1.17549435e-38) || x > 3.40282347e38) {
        return s;
    }
    for (var k = 0; k < 2; k = k + 1) {
        let d = f64(s);
        let up = bitcast<f32>(bitcast<u32>(s) + 1u);
        let dn = bitcast<f32>(bitcast<u32>(s) - 1u);
        let hi = (d + f64(up)) * 0.5lf;
        let lo = (d + f64(dn)) * 0.5lf;
        if (hi * hi <= xd) { s = up; } else if (lo * lo > xd) { s = dn; }
    }
    return s;
}
";
