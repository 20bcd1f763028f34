//! Queries over a kernel's statements and expressions that passes and backends share.

use std::collections::HashSet;

use super::*;

/// Calls `f` on every statement of `b`, nested ones included.
pub fn for_each_stmt(b: &[Stmt], f: &mut impl FnMut(&Stmt)) {
    for s in b {
        f(s);
        match s {
            Stmt::If { accept, reject, .. } => {
                for_each_stmt(accept, f);
                for_each_stmt(reject, f);
            }
            Stmt::For { body, .. } | Stmt::Loop { body } => for_each_stmt(body, f),
            _ => {}
        }
    }
}

/// Whether `b` assigns (as a whole, an element of it, a loop variable or an atomic capture) a
/// local for which `which` holds.
pub fn assigns(b: &[Stmt], which: &impl Fn(LocalId) -> bool) -> bool {
    let mut found = false;
    for_each_stmt(b, &mut |s| {
        found |= match s {
            Stmt::Assign { local, .. } | Stmt::AssignElem { local, .. } => which(*local),
            Stmt::For { levels, .. } => levels.iter().any(|lv| which(lv.var)),
            Stmt::Atomic { old, new, op, .. } => old
                .iter()
                .chain(new.iter())
                .chain(op.combine_local().iter())
                .any(|l| which(*l)),
            _ => false,
        }
    });
    found
}

/// Adds the locals expression `h` reads to `out`.
pub fn locals_read(f: &Function, h: Handle<Expr>, out: &mut HashSet<LocalId>) {
    match &f.exprs[h] {
        Expr::Local(l) => {
            out.insert(*l);
        }
        Expr::LocalElem { local, index } => {
            out.insert(*local);
            locals_read(f, *index, out);
        }
        Expr::Load { index, .. } => locals_read(f, *index, out),
        Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => locals_read(f, *a, out),
        Expr::Binary(_, a, b) => {
            locals_read(f, *a, out);
            locals_read(f, *b, out);
        }
        Expr::Select {
            cond,
            accept,
            reject,
        } => {
            for x in [cond, accept, reject] {
                locals_read(f, *x, out);
            }
        }
        Expr::Math(_, args) => {
            for a in args {
                locals_read(f, *a, out);
            }
        }
        Expr::Literal(_) | Expr::Param(_) | Expr::Len(_) | Expr::GangIndex => {}
    }
}
