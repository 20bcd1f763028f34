//! The dependence test for `auto` loops (loops in `kernels` without `independent`, 3.3 section
//! 2.9.7): a loop may run its iterations in parallel only when this test proves, from the syntax
//! alone, that no iteration reads or writes what another writes. It is deliberately
//! conservative: a loop it cannot prove independent runs sequentially, which is always correct.

use std::collections::HashSet;

use syn::{BinOp, Expr, Stmt};

use super::uses::{path_ident, scan_stmts, Uses};

/// Whether iterations of `for var in .. { body }` are provably independent, with `reductions`
/// combined separately.
///
/// Proved when the body writes no outside scalar (other than reductions), and every outside
/// array it writes is only ever accessed as `a[e]` with one and the same index `e`, which is
/// `var`, `var + c`, `c + var` or `var - c` for a `c` the loop does not change.
pub fn provably_independent(var: &str, body: &[Stmt], reductions: &HashSet<String>) -> bool {
    let uses = scan_stmts(body, &[var.to_string()]);
    if !uses.escapes.is_empty() || !uses.returns.is_empty() {
        return false;
    }
    for (name, u) in &uses.vars {
        if reductions.contains(name) || !u.is_written() {
            continue;
        }
        if u.assigned || u.mut_borrowed || u.maybe_mut || u.unindexed {
            return false;
        }
        let Some(first) = u.indexes.first() else {
            return false;
        };
        if u.indexes.iter().any(|i| i != first) {
            return false;
        }
        let Ok(e) = syn::parse_str::<Expr>(first) else {
            return false;
        };
        if !injective(&e, var, &uses) {
            return false;
        }
    }
    true
}

fn injective(e: &Expr, var: &str, uses: &Uses) -> bool {
    match e {
        Expr::Paren(p) => injective(&p.expr, var, uses),
        Expr::Cast(c) => injective(&c.expr, var, uses),
        Expr::Binary(b) => match b.op {
            BinOp::Add(_) => {
                (injective(&b.left, var, uses) && invariant(&b.right, var, uses))
                    || (invariant(&b.left, var, uses) && injective(&b.right, var, uses))
            }
            BinOp::Sub(_) => injective(&b.left, var, uses) && invariant(&b.right, var, uses),
            _ => false,
        },
        _ => path_ident(e).is_some_and(|id| id == var),
    }
}

/// Whether `e` has the same value in every iteration: it names only outside variables the loop
/// does not write.
fn invariant(e: &Expr, var: &str, uses: &Uses) -> bool {
    let inner = super::uses::scan_expr(e, &[]);
    if !inner
        .vars
        .keys()
        .all(|n| n != var && uses.vars.get(n).is_some_and(|u| !u.is_written()))
    {
        return false;
    }
    // Anything else (calls, method calls on locals) is not provably invariant.
    struct Simple(bool);
    impl<'a> syn::visit::Visit<'a> for Simple {
        fn visit_expr(&mut self, e: &'a Expr) {
            match e {
                Expr::Call(_) | Expr::Macro(_) | Expr::Block(_) | Expr::Assign(_) => self.0 = false,
                Expr::MethodCall(m) if m.method != "len" => self.0 = false,
                other => syn::visit::visit_expr(self, other),
            }
        }
    }
    let mut s = Simple(true);
    syn::visit::Visit::visit_expr(&mut s, e);
    s.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(src: &str) -> Vec<Stmt> {
        syn::parse_str::<syn::Block>(src).unwrap().stmts
    }

    #[test]
    fn proves_simple_maps() {
        let none = HashSet::new();
        assert!(provably_independent(
            "i",
            &body("{ y[i] = a * x[i] + y[i]; }"),
            &none
        ));
        assert!(provably_independent(
            "i",
            &body("{ b[j * m + i] = 2.0 * a[j * m + i]; }"),
            &none
        ));
        assert!(provably_independent(
            "i",
            &body("{ let t = x[i]; for k in 0..4 { y[i] += t * w[k]; } }"),
            &none
        ));
    }

    #[test]
    fn refuses_what_it_cannot_prove() {
        let none = HashSet::new();
        assert!(!provably_independent(
            "i",
            &body("{ y[i + 1] = y[i]; }"),
            &none
        ));
        assert!(!provably_independent(
            "i",
            &body("{ y[i / 2] = x[i]; }"),
            &none
        ));
        assert!(!provably_independent("i", &body("{ s += x[i]; }"), &none));
        assert!(!provably_independent(
            "i",
            &body("{ for k in 0..4 { y[i + k] = 0.0; } }"),
            &none
        ));
        assert!(!provably_independent(
            "i",
            &body("{ if x[i] < 0.0 { break; } y[i] = 1.0; }"),
            &none
        ));
        let mut s = HashSet::new();
        s.insert("s".to_string());
        assert!(provably_independent("i", &body("{ s += x[i]; }"), &s));
    }
}
