//! Math functions PTX has no instruction for, written out in PTX (docs/guide/regions.md lists the
//! std methods a region may call). The transcendental ones are the programs of
//! `acc_core::ir::math` (fdlibm's algorithms in `f64`, written once for every GPU backend),
//! emitted inline at the call: an `f32` argument is widened and the result rounded once.

use acc_core::ir::math::{self, Compare, FBinary, FUnary, IBinary, MathOp, MathProgram, MathTy};

use super::*;

impl Writer<'_> {
    /// `p` on the `f64` registers `args`, inline: its result's register.
    fn math_program(&mut self, p: &MathProgram, args: &[String]) -> Result<String> {
        let mut regs: Vec<String> = Vec::with_capacity(p.ops.len());
        for &(op, ty) in &p.ops {
            let r = |v: u32| regs[v as usize].clone();
            let class = match ty {
                MathTy::F64 => "%fd",
                MathTy::I64 => "%rd",
                MathTy::Bool => "%p",
            };
            if let MathOp::Arg(n) = op {
                let a = args.get(n as usize).ok_or_else(|| {
                    unsupported(format!("internal error: math argument {n} missing"))
                })?;
                regs.push(a.clone());
                continue;
            }
            let d = self.reg(class);
            let line = match op {
                MathOp::Arg(_) => unreachable!("handled above"),
                MathOp::F(v) => format!("mov.f64 {d}, 0d{:016X};", v.to_bits()),
                MathOp::I(v) => format!("mov.s64 {d}, {v};"),
                MathOp::FUnary(op, a) => {
                    let name = match op {
                        FUnary::Neg => "neg.f64",
                        FUnary::Abs => "abs.f64",
                        FUnary::Sqrt => "sqrt.rn.f64",
                        FUnary::RoundEven => "cvt.rni.f64.f64",
                        FUnary::Floor => "cvt.rmi.f64.f64",
                        FUnary::Trunc => "cvt.rzi.f64.f64",
                    };
                    format!("{name} {d}, {};", r(a))
                }
                // PTX's copysign takes the sign from its first operand.
                MathOp::FBinary(FBinary::CopySign, mag, sign) => {
                    format!("copysign.f64 {d}, {}, {};", r(sign), r(mag))
                }
                MathOp::FBinary(op, a, b) => {
                    let name = match op {
                        FBinary::Add => "add.f64",
                        FBinary::Sub => "sub.f64",
                        FBinary::Mul => "mul.f64",
                        FBinary::Div => "div.rn.f64",
                        FBinary::Min => "min.f64",
                        FBinary::Max => "max.f64",
                        FBinary::CopySign => unreachable!("handled above"),
                    };
                    format!("{name} {d}, {}, {};", r(a), r(b))
                }
                MathOp::Fma(a, b, c) => format!("fma.rn.f64 {d}, {}, {}, {};", r(a), r(b), r(c)),
                MathOp::Compare(cmp, a, b) => {
                    let int = p.ops[a as usize].1 == MathTy::I64;
                    let name = match cmp {
                        Compare::Eq => "eq",
                        Compare::Ne => "ne",
                        Compare::Lt => "lt",
                        Compare::Le => "le",
                        Compare::Gt => "gt",
                        Compare::Ge => "ge",
                        Compare::LtOrNan if !int => "ltu",
                        Compare::LtOrNan => "lt",
                    };
                    let ty = if int { "s64" } else { "f64" };
                    format!("setp.{name}.{ty} {d}, {}, {};", r(a), r(b))
                }
                MathOp::IsNan(a) => format!("testp.notanumber.f64 {d}, {};", r(a)),
                MathOp::IBinary(op, a, b) => {
                    let name = match op {
                        IBinary::Add => "add.s64",
                        IBinary::And => "and.b64",
                        IBinary::Or => "or.b64",
                    };
                    format!("{name} {d}, {}, {};", r(a), r(b))
                }
                MathOp::Shl(a, n) => format!("shl.b64 {d}, {}, {n};", r(a)),
                MathOp::ShrLogical(a, n) => format!("shr.u64 {d}, {}, {n};", r(a)),
                MathOp::And(a, b) => format!("and.pred {d}, {}, {};", r(a), r(b)),
                MathOp::Or(a, b) => format!("or.pred {d}, {}, {};", r(a), r(b)),
                MathOp::Select(c, a, b) => match ty {
                    MathTy::F64 => format!("selp.f64 {d}, {}, {}, {};", r(a), r(b), r(c)),
                    MathTy::I64 => format!("selp.b64 {d}, {}, {}, {};", r(a), r(b), r(c)),
                    MathTy::Bool => {
                        let (t, f) = (self.reg("%p"), self.reg("%p"));
                        self.emit(format!("and.pred {t}, {}, {};", r(c), r(a)));
                        self.emit(format!("and.pred {f}, !{}, {};", r(c), r(b)));
                        format!("or.pred {d}, {t}, {f};")
                    }
                },
                MathOp::ToBits(a) | MathOp::FromBits(a) => format!("mov.b64 {d}, {};", r(a)),
                MathOp::ToInt(a) => format!("cvt.rzi.s64.f64 {d}, {};", r(a)),
                MathOp::ToFloat(a) => format!("cvt.rn.f64.s64 {d}, {};", r(a)),
            };
            self.emit(line);
            regs.push(d);
        }
        Ok(regs[p.result as usize].clone())
    }

    /// A float function of float arguments computed in f64 ([`acc_core::ir::math`]).
    fn transcendental(&mut self, f: MathFn, t: Scalar, x: &[String]) -> Result<String> {
        let Some(program) = math::program(f, t == Scalar::F32) else {
            return Err(unsupported(format!(
                "internal error: {f:?} is not transcendental"
            )));
        };
        let wide: Vec<String> = x
            .iter()
            .map(|a| {
                if t == Scalar::F32 {
                    let d = self.reg("%fd");
                    self.emit(format!("cvt.f64.f32 {d}, {a};"));
                    d
                } else {
                    a.clone()
                }
            })
            .collect();
        let v = self.math_program(&program, &wide)?;
        if t == Scalar::F32 {
            let d = self.reg("%f");
            self.emit(format!("cvt.rn.f32.f64 {d}, {v};"));
            Ok(d)
        } else {
            Ok(v)
        }
    }

    /// `1.0 / x.sqrt()` in f32 with `ACC_FAST_FLOAT=1`: the GPU's reciprocal square root
    /// (`rsqrt.approx`, as CUDA's `rsqrtf`), where `op` divides literal 1 by a square root.
    pub(super) fn fast_reciprocal_sqrt(
        &mut self,
        op: BinaryOp,
        t: Scalar,
        a: Handle<Expr>,
        b: Handle<Expr>,
    ) -> Result<Option<String>> {
        if !(self.fast_float && op == BinaryOp::Div && t == Scalar::F32) {
            return Ok(None);
        }
        let one =
            matches!(self.k.function.exprs[a], Expr::Literal(Literal::Float(_, v)) if v == 1.0);
        let Expr::Math(MathFn::Sqrt, args) = &self.k.function.exprs[b] else {
            return Ok(None);
        };
        let [x] = args.as_slice() else {
            return Ok(None);
        };
        if !one {
            return Ok(None);
        }
        let x = self.expr(*x)?;
        let d = self.reg("%f");
        self.emit(format!("rsqrt.approx.f32 {d}, {x};"));
        Ok(Some(d))
    }

    /// An f32 function by the GPU's approximate instructions (`ACC_FAST_FLOAT=1`), as CUDA's
    /// fast intrinsics compute it (`__expf`, `__logf`, `__sinf`, ...); `None` for the others.
    fn fast_math(&mut self, f: MathFn, a: &str) -> Option<String> {
        // (log2(e), ln(2) and log10(2) in f32.)
        let (scale_in, op, scale_out) = match f {
            MathFn::Sqrt => (None, "sqrt.approx.f32", None),
            MathFn::Exp => (Some("0f3FB8AA3B"), "ex2.approx.ftz.f32", None),
            MathFn::Exp2 => (None, "ex2.approx.ftz.f32", None),
            MathFn::Ln => (None, "lg2.approx.ftz.f32", Some("0f3F317218")),
            MathFn::Log2 => (None, "lg2.approx.ftz.f32", None),
            MathFn::Log10 => (None, "lg2.approx.ftz.f32", Some("0f3E9A209B")),
            MathFn::Sin => (None, "sin.approx.ftz.f32", None),
            MathFn::Cos => (None, "cos.approx.ftz.f32", None),
            MathFn::Recip => (None, "rcp.approx.ftz.f32", None),
            _ => return None,
        };
        let mut x = a.to_string();
        if let Some(k) = scale_in {
            let m = self.reg("%f");
            self.emit(format!("mul.f32 {m}, {x}, {k};"));
            x = m;
        }
        let d = self.reg("%f");
        self.emit(format!("{op} {d}, {x};"));
        if let Some(k) = scale_out {
            let m = self.reg("%f");
            self.emit(format!("mul.f32 {m}, {d}, {k};"));
            return Some(m);
        }
        Some(d)
    }

    /// Math functions of std (docs/guide/regions.md).
    pub(super) fn math(&mut self, f: MathFn, t: Scalar, x: &[String]) -> Result<String> {
        if self.fast_float && t == Scalar::F32 {
            if let [a] = x {
                if let Some(d) = self.fast_math(f, a) {
                    return Ok(d);
                }
            }
        }
        let r = repr(t);
        let float = t.is_float();
        let d = self.reg(r.class);
        let line = match (f, x) {
            (MathFn::Abs, [a]) if float || t.is_signed() => format!("abs{} {d}, {a};", r.ty),
            (MathFn::Abs, [a]) => format!("mov{} {d}, {a};", r.bits),
            (MathFn::Min, [a, b]) => return self.minmax("min", t, a, b),
            (MathFn::Max, [a, b]) => return self.minmax("max", t, a, b),
            (MathFn::Clamp, [a, lo, hi]) => {
                let m = self.minmax("max", t, a, lo)?;
                return self.minmax("min", t, &m, hi);
            }
            (MathFn::CountOnes32, [a]) => format!("popc.b32 {d}, {a};"),
            (MathFn::LeadingZeros32, [a]) => format!("clz.b32 {d}, {a};"),
            (MathFn::ReverseBits32, [a]) => format!("brev.b32 {d}, {a};"),
            (MathFn::TrailingZeros32, [a]) => {
                let rev = self.reg("%r");
                self.emit(format!("brev.b32 {rev}, {a};"));
                format!("clz.b32 {d}, {rev};")
            }
            (MathFn::Sqrt, [a]) if float => format!("sqrt.rn{} {d}, {a};", r.ty),
            (MathFn::Floor, [a]) if float => format!("cvt.rmi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::Ceil, [a]) if float => format!("cvt.rpi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::Trunc, [a]) if float => format!("cvt.rzi{}{} {d}, {a};", r.ty, r.ty),
            (MathFn::MulAdd, [a, b, c]) if float => format!("fma.rn{} {d}, {a}, {b}, {c};", r.ty),
            (MathFn::Recip, [a]) if float => format!("rcp.rn{} {d}, {a};", r.ty),
            (MathFn::Fract, [a]) if float => {
                let t0 = self.reg(r.class);
                self.emit(format!("cvt.rzi{}{} {t0}, {a};", r.ty, r.ty));
                format!("sub{} {d}, {a}, {t0};", r.ty)
            }
            (MathFn::Round, [a]) if float => {
                // Half away from zero: trunc(x + copysign(0.5 - ulp/2, x)) would misround;
                // instead trunc(x), plus one away from zero when |x - trunc(x)| >= 0.5.
                let (tr, diff, one) = (self.reg(r.class), self.reg(r.class), self.reg(r.class));
                self.emit(format!("cvt.rzi{}{} {tr}, {a};", r.ty, r.ty));
                self.emit(format!("sub{} {diff}, {a}, {tr};", r.ty));
                self.emit(format!("abs{} {diff}, {diff};", r.ty));
                let half = if t == Scalar::F32 {
                    "0f3F000000".to_string()
                } else {
                    "0d3FE0000000000000".to_string()
                };
                let p = self.reg("%p");
                self.emit(format!("setp.ge{} {p}, {diff}, {half};", r.ty));
                let unit = if t == Scalar::F32 {
                    "0f3F800000"
                } else {
                    "0d3FF0000000000000"
                };
                self.emit(format!("copysign{} {one}, {a}, {unit};", r.ty));
                self.emit(format!("add{} {one}, {tr}, {one};", r.ty));
                format!("selp{} {d}, {one}, {tr}, {p};", r.bits)
            }
            (MathFn::Signum, [a]) if float => {
                let (one, nan) = (self.reg(r.class), self.reg("%p"));
                let unit = if t == Scalar::F32 {
                    "0f3F800000"
                } else {
                    "0d3FF0000000000000"
                };
                self.emit(format!("copysign{} {one}, {a}, {unit};", r.ty));
                self.emit(format!("testp.notanumber{} {nan}, {a};", r.ty));
                format!("selp{} {d}, {a}, {one}, {nan};", r.bits)
            }
            (MathFn::Signum, [a]) => {
                let (pos, neg) = (self.reg("%p"), self.reg("%p"));
                self.emit(format!("setp.gt{} {pos}, {a}, 0;", r.ty));
                self.emit(format!("setp.lt{} {neg}, {a}, 0;", r.ty));
                self.emit(format!("selp{} {d}, 1, 0, {pos};", r.ty));
                let m = self.reg(r.class);
                self.emit(format!("selp{} {m}, -1, 0, {neg};", r.ty));
                format!("add{} {d}, {d}, {m};", r.ty)
            }
            (MathFn::Hypot, [a, b]) if float => {
                // max * sqrt(1 + (min/max)^2): no overflow for large arguments.
                let (aa, bb) = (self.reg(r.class), self.reg(r.class));
                self.emit(format!("abs{} {aa}, {a};", r.ty));
                self.emit(format!("abs{} {bb}, {b};", r.ty));
                let (hi, lo) = (self.reg(r.class), self.reg(r.class));
                self.emit(format!("max{} {hi}, {aa}, {bb};", r.ty));
                self.emit(format!("min{} {lo}, {aa}, {bb};", r.ty));
                let q = self.reg(r.class);
                self.emit(format!("div.rn{} {q}, {lo}, {hi};", r.ty));
                let one = if t == Scalar::F32 {
                    "0f3F800000"
                } else {
                    "0d3FF0000000000000"
                };
                self.emit(format!("fma.rn{} {q}, {q}, {q}, {one};", r.ty));
                self.emit(format!("sqrt.rn{} {q}, {q};", r.ty));
                let v = self.reg(r.class);
                self.emit(format!("mul{} {v}, {hi}, {q};", r.ty));
                // hypot(0, 0) = 0; an infinite argument gives inf even with a NaN.
                let (zero, inf) = (self.reg("%p"), self.reg("%p"));
                let z = if t == Scalar::F32 {
                    "0f00000000"
                } else {
                    "0d0000000000000000"
                };
                self.emit(format!("setp.eq{} {zero}, {hi}, {z};", r.ty));
                self.emit(format!("selp{} {v}, {hi}, {v}, {zero};", r.bits));
                self.emit(format!("testp.infinite{} {inf}, {hi};", r.ty));
                format!("selp{} {d}, {hi}, {v}, {inf};", r.bits)
            }
            (MathFn::Powi, [a, n]) if float => return Ok(self.power(t, a, n, true)),
            (MathFn::Pow, [a, n]) if !float => return Ok(self.power(t, a, n, false)),
            (f, args) if float && !matches!(f, MathFn::Pow | MathFn::Powi) => {
                return self.transcendental(f, t, args)
            }
            _ => {
                return Err(unsupported(format!(
                    "the math function {} on {t}",
                    f.name()
                )))
            }
        };
        self.emit(line);
        Ok(d)
    }

    /// `a` to the integer power `n` by squaring: `powi` (float base, `i32` exponent, negative
    /// exponents invert) or `pow` (integer base, `u32` exponent, wrapping).
    fn power(&mut self, t: Scalar, a: &str, n: &str, float: bool) -> String {
        let r = repr(t);
        let (acc, base, e) = (self.reg(r.class), self.reg(r.class), self.reg("%r"));
        let one = if !float {
            "1"
        } else if t == Scalar::F32 {
            "0f3F800000"
        } else {
            "0d3FF0000000000000"
        };
        self.emit(format!("mov{} {acc}, {one};", r.bits));
        self.emit(format!("mov{} {base}, {a};", r.bits));
        if float {
            self.emit(format!("abs.s32 {e}, {n};"));
        } else {
            self.emit(format!("mov.b32 {e}, {n};"));
        }
        let (top, end) = (self.label("pow"), self.label("powend"));
        self.emit(format!("{top}:"));
        let (done, bit) = (self.reg("%p"), self.reg("%p"));
        self.emit(format!("setp.eq.u32 {done}, {e}, 0;"));
        self.emit(format!("@{done} bra {end};"));
        let low = self.reg("%r");
        self.emit(format!("and.b32 {low}, {e}, 1;"));
        self.emit(format!("setp.ne.u32 {bit}, {low}, 0;"));
        let mul = if float {
            format!("mul{}", r.ty)
        } else {
            format!("mul.lo{}", r.ty)
        };
        self.emit(format!("@{bit} {mul} {acc}, {acc}, {base};"));
        self.emit(format!("{mul} {base}, {base}, {base};"));
        self.emit(format!("shr.u32 {e}, {e}, 1;"));
        self.emit(format!("bra {top};"));
        self.emit(format!("{end}:"));
        if float {
            let neg = self.reg("%p");
            self.emit(format!("setp.lt.s32 {neg}, {n}, 0;"));
            let inv = self.reg(r.class);
            self.emit(format!("rcp.rn{} {inv}, {acc};", r.ty));
            let d = self.reg(r.class);
            self.emit(format!("selp{} {d}, {inv}, {acc}, {neg};", r.bits));
            d
        } else {
            self.wrap(t, &acc);
            acc
        }
    }
}
