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

/// Adds the array parameters the statements of `b` (nested ones included) load elements of to
/// `out`.
pub fn arrays_read(f: &Function, b: &[Stmt], out: &mut HashSet<ParamId>) {
    for_each_stmt(b, &mut |s| {
        for h in stmt_exprs(s) {
            arrays_loaded(f, h, out);
        }
    });
}

/// Adds the array parameters the statements of `b` (nested ones included) store to or update
/// atomically to `out`.
pub fn arrays_written(b: &[Stmt], out: &mut HashSet<ParamId>) {
    for_each_stmt(b, &mut |s| {
        if let Stmt::Store { array, .. } | Stmt::Atomic { array, .. } = s {
            out.insert(*array);
        }
    });
}

/// Adds the array parameters expression `h` loads elements of to `out`.
pub fn arrays_loaded(f: &Function, h: Handle<Expr>, out: &mut HashSet<ParamId>) {
    match &f.exprs[h] {
        Expr::Load { array, index, .. } => {
            out.insert(*array);
            arrays_loaded(f, *index, out);
        }
        Expr::LocalElem { index: a, .. }
        | Expr::Unary(_, a)
        | Expr::Cast(a, _)
        | Expr::Bitcast(a, _) => arrays_loaded(f, *a, out),
        Expr::Binary(_, a, b) => {
            arrays_loaded(f, *a, out);
            arrays_loaded(f, *b, out);
        }
        Expr::Select {
            cond,
            accept,
            reject,
        } => {
            for h in [cond, accept, reject] {
                arrays_loaded(f, *h, out);
            }
        }
        Expr::Math(_, args) => {
            for h in args {
                arrays_loaded(f, *h, out);
            }
        }
        _ => {}
    }
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
        Expr::Binary(_, a, b) | Expr::NestedIndex { element: a, sub: b } => {
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

/// The expressions statement `s` evaluates itself (not those of the statements inside it):
/// values, indices, conditions and loop bounds.
pub fn stmt_exprs(s: &Stmt) -> Vec<Handle<Expr>> {
    match s {
        Stmt::Assign { value, .. } => vec![*value],
        Stmt::AssignElem { index, value, .. }
        | Stmt::Store { index, value, .. }
        | Stmt::Atomic { index, value, .. } => vec![*index, *value],
        Stmt::If { cond, .. } => vec![*cond],
        Stmt::For { levels, .. } => levels
            .iter()
            .flat_map(|lv| [lv.start, lv.step, lv.trips])
            .collect(),
        Stmt::Loop { .. } | Stmt::Break | Stmt::Continue => Vec::new(),
    }
}

/// The private arrays `b` reads or writes an element of, nested statements included.
pub fn arrays_used(f: &Function, b: &[Stmt]) -> HashSet<LocalId> {
    let mut read = HashSet::new();
    for_each_stmt(b, &mut |s| {
        if let Stmt::AssignElem { local, .. } = s {
            read.insert(*local);
        }
        for h in stmt_exprs(s) {
            locals_read(f, h, &mut read);
        }
    });
    read.retain(|l| f.locals[*l as usize].len.is_some());
    read
}

/// The expression handles statement `s` holds itself, to rewrite them.
fn stmt_exprs_mut(s: &mut Stmt) -> Vec<&mut Handle<Expr>> {
    match s {
        Stmt::Assign { value, .. } => vec![value],
        Stmt::AssignElem { index, value, .. }
        | Stmt::Store { index, value, .. }
        | Stmt::Atomic { index, value, .. } => vec![index, value],
        Stmt::If { cond, .. } => vec![cond],
        Stmt::For { levels, .. } => levels
            .iter_mut()
            .flat_map(|lv| [&mut lv.start, &mut lv.step, &mut lv.trips])
            .collect(),
        Stmt::Loop { .. } | Stmt::Break | Stmt::Continue => Vec::new(),
    }
}

/// Rewrites `b` so that it uses `with[h]` wherever it used expression `h`: each expression
/// holding a replaced one is appended anew (handles only refer to earlier expressions).
pub fn substitute(
    f: &mut Function,
    b: &mut [Stmt],
    with: &std::collections::HashMap<Handle<Expr>, Handle<Expr>>,
) {
    let mut memo = with.clone();
    fn expr(
        f: &mut Function,
        h: Handle<Expr>,
        memo: &mut std::collections::HashMap<Handle<Expr>, Handle<Expr>>,
    ) -> Handle<Expr> {
        if let Some(&n) = memo.get(&h) {
            return n;
        }
        let mut e = f.exprs[h].clone();
        let mut changed = false;
        for x in operands_mut(&mut e) {
            let n = expr(f, *x, memo);
            changed |= n != *x;
            *x = n;
        }
        let n = if changed { f.exprs.append(e) } else { h };
        memo.insert(h, n);
        n
    }
    fn block(
        f: &mut Function,
        b: &mut [Stmt],
        memo: &mut std::collections::HashMap<Handle<Expr>, Handle<Expr>>,
    ) {
        for s in b {
            for h in stmt_exprs_mut(s) {
                *h = expr(f, *h, memo);
            }
            match s {
                Stmt::If { accept, reject, .. } => {
                    block(f, accept, memo);
                    block(f, reject, memo);
                }
                Stmt::For { body, .. } | Stmt::Loop { body } => block(f, body, memo),
                _ => {}
            }
        }
    }
    block(f, b, &mut memo);
}

/// Replaces every expression handle `b` holds (nested statements included) by `to(handle)`.
pub fn map_exprs(b: &mut [Stmt], to: &dyn Fn(Handle<Expr>) -> Handle<Expr>) {
    for s in b {
        for h in stmt_exprs_mut(s) {
            *h = to(*h);
        }
        match s {
            Stmt::If { accept, reject, .. } => {
                map_exprs(accept, to);
                map_exprs(reject, to);
            }
            Stmt::For { body, .. } | Stmt::Loop { body } => map_exprs(body, to),
            _ => {}
        }
    }
}

/// The operands of expression `e`, in order.
pub fn operands(e: &Expr) -> Vec<Handle<Expr>> {
    match e {
        Expr::LocalElem { index, .. } | Expr::Load { index, .. } => vec![*index],
        Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => vec![*a],
        Expr::Binary(_, a, b) | Expr::NestedIndex { element: a, sub: b } => vec![*a, *b],
        Expr::Select {
            cond,
            accept,
            reject,
        } => vec![*cond, *accept, *reject],
        Expr::Math(_, args) => args.clone(),
        Expr::Literal(_) | Expr::Param(_) | Expr::Len(_) | Expr::Local(_) | Expr::GangIndex => {
            Vec::new()
        }
    }
}

/// The operands of expression `e`, to rewrite them.
pub fn operands_mut(e: &mut Expr) -> Vec<&mut Handle<Expr>> {
    match e {
        Expr::LocalElem { index, .. } | Expr::Load { index, .. } => vec![index],
        Expr::Unary(_, a) | Expr::Cast(a, _) | Expr::Bitcast(a, _) => vec![a],
        Expr::Binary(_, a, b) | Expr::NestedIndex { element: a, sub: b } => vec![a, b],
        Expr::Select {
            cond,
            accept,
            reject,
        } => vec![cond, accept, reject],
        Expr::Math(_, args) => args.iter_mut().collect(),
        Expr::Literal(_) | Expr::Param(_) | Expr::Len(_) | Expr::Local(_) | Expr::GangIndex => {
            Vec::new()
        }
    }
}

/// A copy of expression `h` with every node appended anew, for a second use: a kernel's
/// expressions each appear once (the bounds proof keeps one range per expression, computed
/// where it is used).
pub fn copy_expr(f: &mut Function, h: Handle<Expr>) -> Handle<Expr> {
    let mut e = f.exprs[h].clone();
    for x in operands_mut(&mut e) {
        *x = copy_expr(f, *x);
    }
    f.exprs.append(e)
}

/// Rewrites `b` so that no expression node appears twice in it, nor in `seen` (the nodes
/// already in use elsewhere): a node met again is replaced by a copy ([`copy_expr`]), as a
/// pass that reuses handles while rewriting must leave the kernel.
pub fn unshare(f: &mut Function, b: &mut [Stmt], seen: &mut HashSet<Handle<Expr>>) {
    fn own(f: &mut Function, h: Handle<Expr>, seen: &mut HashSet<Handle<Expr>>) -> Handle<Expr> {
        if seen.contains(&h) {
            let c = copy_expr(f, h);
            mark(f, c, seen);
            return c;
        }
        seen.insert(h);
        let mut e = f.exprs[h].clone();
        let mut changed = false;
        for x in operands_mut(&mut e) {
            let n = own(f, *x, seen);
            changed |= n != *x;
            *x = n;
        }
        if changed {
            let n = f.exprs.append(e);
            seen.insert(n);
            n
        } else {
            h
        }
    }
    fn mark(f: &Function, h: Handle<Expr>, seen: &mut HashSet<Handle<Expr>>) {
        seen.insert(h);
        for c in operands(&f.exprs[h]) {
            mark(f, c, seen);
        }
    }
    for s in b {
        for h in stmt_exprs_mut(s) {
            *h = own(f, *h, seen);
        }
        match s {
            Stmt::If { accept, reject, .. } => {
                unshare(f, accept, seen);
                unshare(f, reject, seen);
            }
            Stmt::For { body, .. } | Stmt::Loop { body } => unshare(f, body, seen),
            _ => {}
        }
    }
}

/// The locals `b` assigns or declares: targets of assignments (private arrays' elements
/// included), variables, reductions and private locals of its loops, atomic captures.
pub fn locals_assigned(b: &[Stmt]) -> std::collections::BTreeSet<LocalId> {
    let mut out = std::collections::BTreeSet::new();
    for_each_stmt(b, &mut |s| match s {
        Stmt::Assign { local, .. } | Stmt::AssignElem { local, .. } => {
            out.insert(*local);
        }
        Stmt::For {
            levels,
            reductions,
            private,
            ..
        } => {
            out.extend(levels.iter().map(|l| l.var));
            out.extend(reductions.iter().map(|r| r.local));
            out.extend(private.iter().copied());
        }
        Stmt::Atomic { op, old, new, .. } => {
            out.extend(old.iter().chain(new.iter()).copied());
            out.extend(op.combine_local());
        }
        _ => {}
    });
    out
}

/// A copy of `b` (its expressions appended anew) in which each local of `map` is its image:
/// a second copy of code whose locals must stay apart from the first's (the bounds proof
/// follows only locals assigned once).
pub fn renamed(
    f: &mut Function,
    b: &[Stmt],
    map: &std::collections::HashMap<LocalId, LocalId>,
) -> Block {
    fn expr(
        f: &mut Function,
        h: Handle<Expr>,
        map: &std::collections::HashMap<LocalId, LocalId>,
    ) -> Handle<Expr> {
        let to = |l: &mut LocalId| {
            if let Some(n) = map.get(l) {
                *l = *n;
            }
        };
        let mut e = f.exprs[h].clone();
        if let Expr::Local(l) | Expr::LocalElem { local: l, .. } = &mut e {
            to(l);
        }
        for x in operands_mut(&mut e) {
            *x = expr(f, *x, map);
        }
        f.exprs.append(e)
    }
    let to = |l: LocalId| map.get(&l).copied().unwrap_or(l);
    let mut out = b.to_vec();
    for s in &mut out {
        for h in stmt_exprs_mut(s) {
            *h = expr(f, *h, map);
        }
        match s {
            Stmt::Assign { local, .. } | Stmt::AssignElem { local, .. } => *local = to(*local),
            Stmt::If { accept, reject, .. } => {
                *accept = renamed(f, accept, map);
                *reject = renamed(f, reject, map);
            }
            Stmt::For {
                levels,
                reductions,
                private,
                body,
                ..
            } => {
                for lv in levels.iter_mut() {
                    lv.var = to(lv.var);
                }
                for r in reductions.iter_mut() {
                    r.local = to(r.local);
                }
                for p in private.iter_mut() {
                    *p = to(*p);
                }
                *body = renamed(f, body, map);
            }
            Stmt::Loop { body } => *body = renamed(f, body, map),
            Stmt::Atomic { op, old, new, .. } => {
                *old = old.map(to);
                *new = new.map(to);
                if let AtomicOp::Combine(l) = op {
                    *l = to(*l);
                }
            }
            Stmt::Store { .. } | Stmt::Break | Stmt::Continue => {}
        }
    }
    out
}
