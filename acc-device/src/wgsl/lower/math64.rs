//! The transcendental functions, as WGSL helper functions written from the programs of
//! `acc_core::ir::math` (fdlibm's algorithms in `f64`, written once for every GPU backend),
//! so that both GPU backends agree with std to within a few units in the last place. WGSL has
//! these functions for `f32` only, and its `f32` builtins are allowed large errors (drivers
//! differ); where the adapter has `f64` and 64-bit integers, `f32` calls go through the same
//! programs (widened, rounded once), as on nvidia, so every device gives the same `f32` results.

use std::fmt::Write;

use acc_core::ir::math::{self, Compare, FBinary, FUnary, IBinary, MathOp, MathProgram, MathTy};
use acc_core::ir::MathFn;

/// An f64 constant as WGSL, exactly (Rust prints the shortest text that reads back as the
/// same double; infinities and NaN by their bits).
fn k(v: f64) -> String {
    if v.is_finite() {
        format!("f64({v:e})")
    } else {
        format!("bitcast<f64>({}lu)", v.to_bits())
    }
}

/// The helper's name for `f` (`for_f32`: the variant whose result is rounded to `f32`), if
/// `f` is a transcendental function.
pub(super) fn function(f: MathFn, for_f32: bool) -> Option<String> {
    math::program(f, for_f32)?;
    Some(format!(
        "acc_{}_{}",
        f.name(),
        if for_f32 { "f32" } else { "f64" }
    ))
}

/// The WGSL function computing `f` on `f64` arguments, named as [`function`] names it.
pub(super) fn helper(f: MathFn, for_f32: bool) -> Option<String> {
    let name = function(f, for_f32)?;
    let p = math::program(f, for_f32)?;
    let params: Vec<String> = (0..p.args).map(|n| format!("a{n}: f64")).collect();
    let mut out = format!("fn {name}({}) -> f64 {{\n", params.join(", "));
    let body = body(&p);
    out.push_str(&body);
    out.push_str("}\n");
    Some(out)
}

/// The statements of a helper computing `p`: a `let` per operation (constants and arguments
/// are written where they are used), then the `return`.
fn body(p: &MathProgram) -> String {
    let mut names: Vec<String> = Vec::with_capacity(p.ops.len());
    let mut out = String::new();
    for (n, &(op, ty)) in p.ops.iter().enumerate() {
        let v = |x: u32| names[x as usize].clone();
        let int = |x: u32| p.ops[x as usize].1 == MathTy::I64;
        let e = match op {
            MathOp::Arg(a) => {
                names.push(format!("a{a}"));
                continue;
            }
            MathOp::F(c) => {
                names.push(k(c));
                continue;
            }
            MathOp::I(c) => {
                names.push(format!("{c}li"));
                continue;
            }
            MathOp::FUnary(op, a) => match op {
                FUnary::Neg => format!("-{}", v(a)),
                FUnary::Abs => format!("abs({})", v(a)),
                FUnary::Sqrt => format!("sqrt({})", v(a)),
                // WGSL's round() rounds half to even.
                FUnary::RoundEven => format!("round({})", v(a)),
                FUnary::Floor => format!("floor({})", v(a)),
                FUnary::Trunc => format!("trunc({})", v(a)),
            },
            MathOp::FBinary(op, a, b) => match op {
                FBinary::Add => format!("{} + {}", v(a), v(b)),
                FBinary::Sub => format!("{} - {}", v(a), v(b)),
                FBinary::Mul => format!("{} * {}", v(a), v(b)),
                FBinary::Div => format!("{} / {}", v(a), v(b)),
                FBinary::Min => format!("min({}, {})", v(a), v(b)),
                FBinary::Max => format!("max({}, {})", v(a), v(b)),
                FBinary::CopySign => format!(
                    "bitcast<f64>((bitcast<u64>({}) & 9223372036854775807lu) | (bitcast<u64>({}) & 9223372036854775808lu))",
                    v(a),
                    v(b)
                ),
            },
            MathOp::Fma(a, b, c) => format!("fma({}, {}, {})", v(a), v(b), v(c)),
            // Ordered comparisons on floats: `!=` would be true for a NaN.
            MathOp::Compare(Compare::Ne, a, b) if !int(a) => {
                format!("({0} < {1} || {0} > {1})", v(a), v(b))
            }
            // NaN by the bits, not `!(a >= b)`: NVIDIA's Vulkan compiler turned that into
            // `a < b` for an `f32` NaN widened to `f64` (`ln(NaN)` came out a number).
            MathOp::Compare(Compare::LtOrNan, a, b) if !int(a) => {
                format!("({0} < {1} || {2} || {3})", v(a), v(b), is_nan(&v(a)), is_nan(&v(b)))
            }
            MathOp::Compare(cmp, a, b) => {
                let op = match cmp {
                    Compare::Eq => "==",
                    Compare::Ne => "!=",
                    Compare::Lt | Compare::LtOrNan => "<",
                    Compare::Le => "<=",
                    Compare::Gt => ">",
                    Compare::Ge => ">=",
                };
                format!("{} {op} {}", v(a), v(b))
            }
            // By the bits: a driver may assume `x != x` is false.
            MathOp::IsNan(a) => is_nan(&v(a)),
            MathOp::IBinary(op, a, b) => {
                let op = match op {
                    IBinary::Add => "+",
                    IBinary::And => "&",
                    IBinary::Or => "|",
                };
                format!("{} {op} {}", v(a), v(b))
            }
            MathOp::Shl(a, s) => format!("{} << {s}u", v(a)),
            MathOp::ShrLogical(a, s) => format!("bitcast<i64>(bitcast<u64>({}) >> {s}u)", v(a)),
            MathOp::And(a, b) => format!("{} && {}", v(a), v(b)),
            MathOp::Or(a, b) => format!("{} || {}", v(a), v(b)),
            MathOp::Select(c, a, b) => format!("select({}, {}, {})", v(b), v(a), v(c)),
            MathOp::ToBits(a) => format!("bitcast<i64>({})", v(a)),
            MathOp::FromBits(a) => format!("bitcast<f64>({})", v(a)),
            MathOp::ToInt(a) => format!("i64({})", v(a)),
            MathOp::ToFloat(a) => format!("f64({})", v(a)),
        };
        let name = format!("v{n}");
        let ty = match ty {
            MathTy::F64 => "f64",
            MathTy::I64 => "i64",
            MathTy::Bool => "bool",
        };
        let _ = writeln!(out, "    let {name}: {ty} = {e};");
        names.push(name);
    }
    let _ = writeln!(out, "    return {};", names[p.result as usize]);
    out
}

/// Whether `f64` value `x` is NaN, by its bits (a driver may assume `x != x` is false).
fn is_nan(x: &str) -> String {
    format!("((bitcast<u64>({x}) & 9223372036854775807lu) > 9218868437227405312lu)")
}
