//! Integer expressions of a kernel evaluated on the host before and during a launch: how many
//! iterations a parallel loop has, so that a backend sizes its grid to the loop rather than
//! guessing from the arrays (a hint: every grid is strided, so a launch is correct whatever size
//! it has), and the ranges and conditions of the loops and `if`s the host drives
//! ([`super::segments::Program`]), which must be exact: values wrap to their types as on the
//! device. What cannot be known on the host (a value computed on the device, a float) is
//! `None`.

use super::args::{KernelArg, ScalarValue};
use super::{BinaryOp, Expr, Handle, Kernel, Literal, LocalId, MathFn, ParamKind, Scalar, UnaryOp};

/// The host's view of a kernel's integer values: the arguments, and the locals whose values it
/// knows ([`super::segments::Program`] keeps them as the launches go).
pub(super) struct Eval<'a, 'k> {
    pub(super) k: &'k Kernel,
    pub(super) args: &'a [KernelArg<'a>],
    pub(super) types: &'k [Scalar],
    pub(super) locals: Locals,
}

/// The values of the locals the host knows, by local.
#[derive(Default)]
pub(super) struct Locals(Vec<Option<i128>>);

impl Locals {
    /// Room for a kernel's `n` locals, none known.
    pub(super) fn new(n: usize) -> Locals {
        Locals(vec![None; n])
    }
    fn get(&self, l: &LocalId) -> Option<&i128> {
        self.0.get(*l as usize)?.as_ref()
    }
    pub(super) fn insert(&mut self, l: LocalId, v: i128) {
        if let Some(slot) = self.0.get_mut(l as usize) {
            *slot = Some(v);
        }
    }
    pub(super) fn remove(&mut self, l: &LocalId) {
        if let Some(slot) = self.0.get_mut(*l as usize) {
            *slot = None;
        }
    }
}

/// `v` wrapped to the width of integer type `t` (booleans as 0/1).
pub(super) fn wrap(t: Scalar, v: i128) -> i128 {
    let bits = t.size() * 8;
    if t == Scalar::Bool {
        return (v != 0) as i128;
    }
    let m = v & ((1i128 << bits) - 1);
    if t.is_signed() && m >> (bits - 1) != 0 {
        m - (1i128 << bits)
    } else {
        m
    }
}

impl Eval<'_, '_> {
    fn ty(&self, h: Handle<Expr>) -> Option<Scalar> {
        self.types.get(h.index()).copied()
    }

    pub(super) fn expr(&self, h: Handle<Expr>) -> Option<i128> {
        let ty = self.ty(h)?;
        if ty.is_float() {
            return None;
        }
        let v = match &self.k.function.exprs[h] {
            Expr::Literal(Literal::Int(_, v)) => *v,
            Expr::Literal(Literal::Bool(b)) => *b as i128,
            Expr::Literal(Literal::Float(..)) => return None,
            Expr::Param(p) => match self.args.get(*p as usize)? {
                KernelArg::Scalar(v) => match *v {
                    ScalarValue::Bool(b) => b as i128,
                    ScalarValue::I32(x) => x as i128,
                    ScalarValue::U32(x) => x as i128,
                    ScalarValue::I64(x) | ScalarValue::ISize(x) => x as i128,
                    ScalarValue::U64(x) | ScalarValue::USize(x) => x as i128,
                    ScalarValue::F32(_) | ScalarValue::F64(_) => return None,
                },
                _ => return None,
            },
            Expr::Len(a) => {
                let elem = match self.k.params.get(*a as usize)?.kind {
                    ParamKind::Array { elem, .. } => elem,
                    ParamKind::Scalar(_) => return None,
                };
                let bytes = match self.args.get(*a as usize)? {
                    KernelArg::Read(d) => d.len(),
                    KernelArg::Write(d) => d.len(),
                    KernelArg::Scalar(_) => return None,
                };
                (bytes / elem.size() as usize) as i128
            }
            Expr::Local(l) => *self.locals.get(l)?,
            Expr::Unary(op, a) => {
                let x = self.expr(*a)?;
                match op {
                    UnaryOp::Neg => -x,
                    UnaryOp::Not if ty == Scalar::Bool => (x == 0) as i128,
                    UnaryOp::Not => !x,
                }
            }
            Expr::Binary(op, a, b) => {
                let operand = self.ty(*a)?;
                let (x, y) = (self.expr(*a)?, self.expr(*b)?);
                match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    // (Wrapped to the type below: exact for every type of up to 64 bits.)
                    BinaryOp::Mul => x.wrapping_mul(y),
                    BinaryOp::Div if y != 0 => x / y,
                    BinaryOp::Rem if y != 0 => x % y,
                    BinaryOp::BitAnd | BinaryOp::And => x & y,
                    BinaryOp::BitOr | BinaryOp::Or => x | y,
                    BinaryOp::BitXor => x ^ y,
                    BinaryOp::Shl if (0..128).contains(&y) => wrap(operand, x << y),
                    BinaryOp::Shr if (0..128).contains(&y) => x >> y,
                    BinaryOp::Eq => (x == y) as i128,
                    BinaryOp::Ne => (x != y) as i128,
                    BinaryOp::Lt => (x < y) as i128,
                    BinaryOp::Le => (x <= y) as i128,
                    BinaryOp::Gt => (x > y) as i128,
                    BinaryOp::Ge => (x >= y) as i128,
                    _ => return None,
                }
            }
            Expr::Select {
                cond,
                accept,
                reject,
            } => {
                if self.expr(*cond)? != 0 {
                    self.expr(*accept)?
                } else {
                    self.expr(*reject)?
                }
            }
            Expr::Cast(a, _) => self.expr(*a)?,
            Expr::Math(MathFn::Min, args) => self.expr(args[0])?.min(self.expr(args[1])?),
            Expr::Math(MathFn::Max, args) => self.expr(args[0])?.max(self.expr(args[1])?),
            _ => return None,
        };
        Some(wrap(ty, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::KernelBuilder;

    #[test]
    fn a_loop_over_a_scalar_bound_and_an_array_length() {
        let mut b = KernelBuilder::new("trips");
        let x = b.param_array("x", Scalar::F64, true);
        let n = b.param_scalar("n", Scalar::USize);
        let start = b.lit_int(0, Some(Scalar::USize));
        let len = b.len(x);
        let end = b.math(MathFn::Min, &[n, len]);
        b.for_range(
            "i",
            Some(Scalar::USize),
            start,
            end,
            false,
            Some(crate::Schedule {
                gang: true,
                worker: false,
                vector: true,
            }),
            &[],
            &[],
            |b, v| {
                let i = b.get(v[0]);
                let one = b.lit_float(1.0, None);
                b.store(x, i, one);
            },
        );
        let k = b.finish().expect("valid");
        let mut data = vec![0u8; 8 * 100];
        let args = [
            KernelArg::Write(&mut data),
            KernelArg::Scalar(ScalarValue::USize(37)),
        ];
        // One grid launch, of 37 iterations (`min(n, x.len())`).
        let mut counts = Vec::new();
        crate::segments::Segments::new(&k)
            .expect("splits")
            .program
            .run::<crate::segments::HostValueError>(&args, &mut |_, n, _| {
                counts.push(n);
                Ok(())
            })
            .expect("runs");
        assert_eq!(counts, [Some(37)]);
    }
}
