//! `collapse(force: n)` (3.3 section 2.9.1): loops collapsed although code stands between them.
//! The code this supports is `let` bindings the inner loops' bounds do not use; they are moved
//! into the innermost loop's body, ahead of it, which gives the same values (each iteration of
//! the collapsed space binds them again) and a tightly nested nest that every device collapses
//! as it does any other. Other intervening code is left in place, where the nest's check reports
//! it.

use syn::visit_mut::{self, VisitMut};
use syn::{Expr, ExprForLoop, Stmt};

use super::compute::RegionBody;
use crate::directive::{ClauseArgs, Directive};

/// The region's body with every `collapse(force: n)` nest tightened (the combined construct's
/// own clause for a loop body).
pub fn tighten(dir: &Directive, body: RegionBody) -> RegionBody {
    match body {
        RegionBody::Loop(mut f) => {
            if let Some(n) = forced(dir) {
                tighten_nest(&mut f, n);
            }
            Tighten.visit_block_mut(&mut f.body);
            RegionBody::Loop(f)
        }
        RegionBody::Block(mut b) => {
            Tighten.visit_block_mut(&mut b);
            RegionBody::Block(b)
        }
    }
}

/// `n` of a `collapse(force: n)` clause.
fn forced(dir: &Directive) -> Option<usize> {
    dir.clauses.iter().find_map(|c| match &c.args {
        ClauseArgs::Collapse { force: true, n, .. } => Some(*n),
        _ => None,
    })
}

struct Tighten;

impl VisitMut for Tighten {
    fn visit_expr_for_loop_mut(&mut self, f: &mut ExprForLoop) {
        let n = f
            .attrs
            .iter()
            .find_map(|a| forced(&*crate::directive::parsed::loop_of(a)?));
        if let Some(n) = n {
            tighten_nest(f, n);
        }
        visit_mut::visit_expr_for_loop_mut(self, f);
    }
}

/// Moves the `let`s between the `n` loops of the nest at `f` into the innermost body, when
/// that is all that stands between them and no inner loop's range uses them.
fn tighten_nest(f: &mut ExprForLoop, n: usize) {
    if !can_tighten(f, n, &mut Vec::new()) {
        return;
    }
    let mut moved = Vec::new();
    let mut cur = f;
    for _ in 1..n {
        let inner = cur.body.stmts.pop();
        moved.append(&mut cur.body.stmts);
        let Some(Stmt::Expr(Expr::ForLoop(inner), semi)) = inner else {
            return;
        };
        cur.body.stmts.push(Stmt::Expr(Expr::ForLoop(inner), semi));
        let Some(Stmt::Expr(Expr::ForLoop(next), _)) = cur.body.stmts.last_mut() else {
            return;
        };
        cur = next;
    }
    moved.append(&mut cur.body.stmts);
    cur.body.stmts = moved;
}

/// Whether every level above the innermost of the nest is `let`s then one `for`, whose range
/// uses none of the names bound so far (`bound`).
fn can_tighten(f: &ExprForLoop, n: usize, bound: &mut Vec<String>) -> bool {
    if n <= 1 {
        return true;
    }
    let Some((Stmt::Expr(Expr::ForLoop(inner), _), pre)) = f.body.stmts.split_last() else {
        return false;
    };
    for st in pre {
        let Stmt::Local(l) = st else { return false };
        if !l.attrs.is_empty() {
            return false;
        }
        bound.extend(
            crate::analysis::bindings::pat_bindings(&l.pat, false)
                .into_iter()
                .map(|(name, _)| name),
        );
    }
    let uses = crate::analysis::uses::scan_expr(&inner.expr, &[]);
    if bound.iter().any(|b| uses.vars.contains_key(b)) {
        return false;
    }
    can_tighten(inner, n - 1, bound)
}
