//! Assignments read as reduction updates: `t op= e`, `t = t op e`, `t = e op t`,
//! `t = t.max(e)` / `e.max(t)` (`min` alike), the forms a reduction's statements take (3.3
//! section 2.5.15). Gang-redundant updates (`expand::gang_redundant`) and the reductions
//! `kernels` finds (`expand::recognized_reductions`) both read statements through this.

use quote::ToTokens;
use syn::{BinOp, Expr};

use crate::directive::RedOp;

/// An expression without the parentheses (and invisible groups) around it.
pub fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        other => other,
    }
}

/// An assignment, as a reduction would write it or not.
pub struct Assignment<'e> {
    /// The place assigned (`s`, `h[k]`).
    pub target: &'e Expr,
    /// The reduction operator, when the assignment is an update of `target` with one: the
    /// target then appears once on the right, as an operand of that operator.
    pub op: Option<RedOp>,
    /// What else the right side reads: the other operand of the update, or the whole right
    /// side of any other assignment.
    pub operand: &'e Expr,
}

/// `e` read as an assignment; `None` when it is not one.
pub fn assignment(e: &Expr) -> Option<Assignment<'_>> {
    match strip(e) {
        Expr::Binary(b) => {
            let op = match b.op {
                BinOp::AddAssign(_) => Some(RedOp::Add),
                BinOp::MulAssign(_) => Some(RedOp::Mul),
                BinOp::BitAndAssign(_) => Some(RedOp::BitAnd),
                BinOp::BitOrAssign(_) => Some(RedOp::BitOr),
                BinOp::BitXorAssign(_) => Some(RedOp::BitXor),
                BinOp::SubAssign(_)
                | BinOp::DivAssign(_)
                | BinOp::RemAssign(_)
                | BinOp::ShlAssign(_)
                | BinOp::ShrAssign(_) => None,
                _ => return None,
            };
            Some(Assignment {
                target: &b.left,
                op,
                operand: &b.right,
            })
        }
        Expr::Assign(a) => {
            let same = |x: &Expr| {
                strip(x).to_token_stream().to_string()
                    == strip(&a.left).to_token_stream().to_string()
            };
            // The operand beside the target, when the right side is `target op operand` or
            // `operand op target` (max, min: a method call either way round).
            let (op, operand) = match strip(&a.right) {
                Expr::Binary(b) => {
                    let op = match b.op {
                        BinOp::Add(_) => Some(RedOp::Add),
                        BinOp::Mul(_) => Some(RedOp::Mul),
                        BinOp::BitAnd(_) => Some(RedOp::BitAnd),
                        BinOp::BitOr(_) => Some(RedOp::BitOr),
                        BinOp::BitXor(_) => Some(RedOp::BitXor),
                        BinOp::And(_) => Some(RedOp::And),
                        BinOp::Or(_) => Some(RedOp::Or),
                        _ => None,
                    };
                    match op {
                        Some(op) if same(&b.left) => (Some(op), &*b.right),
                        Some(op) if same(&b.right) => (Some(op), &*b.left),
                        _ => (None, &*a.right),
                    }
                }
                Expr::MethodCall(m) if m.args.len() == 1 => {
                    let op = match m.method.to_string().as_str() {
                        "max" => Some(RedOp::Max),
                        "min" => Some(RedOp::Min),
                        _ => None,
                    };
                    match op {
                        Some(op) if same(&m.receiver) => (Some(op), &m.args[0]),
                        Some(op) if same(&m.args[0]) => (Some(op), &*m.receiver),
                        _ => (None, &*a.right),
                    }
                }
                _ => (None, &*a.right),
            };
            Some(Assignment {
                target: &a.left,
                op,
                operand,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(src: &str) -> (String, Option<RedOp>, String) {
        let e: Expr = syn::parse_str(src).unwrap();
        let a = assignment(&e).expect("an assignment");
        let t = |x: &Expr| x.to_token_stream().to_string();
        (t(a.target), a.op, t(a.operand))
    }

    #[test]
    fn updates_and_other_assignments() {
        assert_eq!(
            read("s += x[i]"),
            ("s".into(), Some(RedOp::Add), "x [i]".into())
        );
        assert_eq!(
            read("s = 2.0 * s"),
            ("s".into(), Some(RedOp::Mul), "2.0".into())
        );
        assert_eq!(
            read("m = m.max(v)"),
            ("m".into(), Some(RedOp::Max), "v".into())
        );
        assert_eq!(
            read("m = v.min(m)"),
            ("m".into(), Some(RedOp::Min), "v".into())
        );
        assert_eq!(
            read("h[k] |= b"),
            ("h [k]".into(), Some(RedOp::BitOr), "b".into())
        );
        assert_eq!(read("s -= 1"), ("s".into(), None, "1".into()));
        assert_eq!(read("s = t + 1"), ("s".into(), None, "t + 1".into()));
        assert!(assignment(&syn::parse_str::<Expr>("s == 1").unwrap()).is_none());
    }
}
