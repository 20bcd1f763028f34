//! Array elements a sequential loop accumulates into, kept in a local across the loop: in
//! `for j in 0..n { f[i].v += q[j] * e(j) }` (lavaMD's inner loop, a C matrix product's
//! `c[i * n + j] += a[..] * b[..]`), each iteration loads and stores `f[i].v` in device
//! memory, and the next iteration's load waits for the store (a trip to the L2 cache on a GPU).
//! After this pass the element is loaded once before the loop, updated in a local (a register)
//! and stored once after it, as a C compiler does with `restrict` pointers and as CUDA
//! programmers write by hand.
//!
//! The values written are the same, in the same order: each iteration computes from the
//! local what it computed from the element. It applies where that is certain:
//! - the loop is sequential (`schedule: None`), of one level, with no parallel loop inside it
//!   and no `break` or `continue` of its own;
//! - the element's index does not change in the loop (no local it reads is assigned in the
//!   loop, no array it reads is written there);
//! - the loop body stores the element unconditionally, at its top level, so that every
//!   iteration writes it (the store after the loop then writes what the last iteration did);
//! - every other access of that array in the loop has the same index (another index might be
//!   the same element), and none is atomic. Distinct arrays never overlap: a region's arrays
//!   are distinct Rust variables, and `&mut` borrows do not alias.
//!
//! Where the loop runs no iteration, neither the load before it nor the store after it runs
//! (both are under `if trips > 0`), so a bounds error is reported exactly where the loop
//! would have made it. Where the element is stored just before the loop
//! (`c[i] = 0.0; for k in .. { c[i] += .. }`), that value starts the local instead of a load,
//! and the store after the loop is unconditional: the loop is then a sum into a scalar, which
//! the tiles' chunked form takes (`tile::chunks`).

use std::collections::HashSet;

use super::*;

/// An element a sequential loop keeps in a local: `array[index]` (`.field`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Promoted {
    pub array: ParamId,
    pub field: Option<FieldId>,
    /// The index, as the loop's first store of the element writes it.
    pub index: Handle<Expr>,
}

/// The elements the sequential loop over `levels` with body `body` keeps in locals (empty
/// where none qualifies: see the module's rules).
pub fn candidates(k: &Kernel, levels: &[LoopLevel], body: &[Stmt]) -> Vec<Promoted> {
    let f = &k.function;
    let [lv] = levels else {
        return Vec::new();
    };
    if exits(body) || has_parallel_loop(body) {
        return Vec::new();
    }
    let mut assigned = walk::locals_assigned(body);
    assigned.insert(lv.var);
    let mut written = HashSet::new();
    walk::arrays_written(body, &mut written);
    let invariant = |h: Handle<Expr>| -> bool {
        let mut locals = HashSet::new();
        walk::locals_read(f, h, &mut locals);
        let mut arrays = HashSet::new();
        walk::arrays_loaded(f, h, &mut arrays);
        locals.iter().all(|l| !assigned.contains(l))
            && arrays.iter().all(|a| !written.contains(a))
            && !has_nested_index(f, h)
    };
    if !invariant(lv.trips) {
        return Vec::new();
    }
    let mut out: Vec<Promoted> = Vec::new();
    for s in body {
        let Stmt::Store {
            array,
            field,
            index,
            ..
        } = *s
        else {
            continue;
        };
        let simple = k.access(array, field).is_some_and(|a| a.nested.is_none());
        if !simple || !invariant(index) || out.iter().any(|p| p.array == array && p.field == field)
        {
            continue;
        }
        out.push(Promoted {
            array,
            field,
            index,
        });
    }
    // Every access of a promoted array in the loop at the same index, none atomic.
    out.retain(|p| {
        let mut same = true;
        accesses(f, body, p.array, &mut |index, atomic| {
            same &= !atomic && same_value(f, index, p.index);
        });
        same
    });
    out
}

/// Keeps in locals the elements every sequential loop of `k` accumulates into
/// ([`candidates`]); returns how many it kept.
pub fn promote(k: &mut Kernel) -> usize {
    let mut body = std::mem::take(&mut k.function.body);
    let n = block(k, &mut body);
    k.function.body = body;
    n
}

/// [`promote`] in `b`, inner loops first.
fn block(k: &mut Kernel, b: &mut Block) -> usize {
    let mut n = 0;
    let mut at = 0;
    while at < b.len() {
        match &mut b[at] {
            Stmt::If { accept, reject, .. } => {
                n += block(k, accept);
                n += block(k, reject);
            }
            Stmt::Loop { body } => n += block(k, body),
            Stmt::For { body, .. } => n += block(k, body),
            _ => {}
        }
        let Stmt::For {
            schedule: None,
            levels,
            body,
            ..
        } = &b[at]
        else {
            at += 1;
            continue;
        };
        let found = candidates(k, levels, body);
        if found.is_empty() {
            at += 1;
            continue;
        }
        let (trips, var) = (levels[0].trips, levels[0].var);
        // A store of the element just before the loop (`c[i] = 0.0; for k { c[i] += .. }`)
        // becomes the local's first value, and the store after the loop is then unguarded:
        // with no iteration it writes that value, as the store before did.
        // (Not where the loop's range reads the array: it is computed after the store,
        // which then no longer reaches memory.)
        let range = [levels[0].start, levels[0].step, levels[0].trips];
        let store_before = found
            .first()
            .filter(|p| {
                found.len() == 1 && !range.iter().any(|&h| reads_array(&k.function, h, p.array))
            })
            .and_then(|p| store_before(&k.function, &b[..at], p));
        let forwarded = store_before.map(|(_, value)| value);
        k.kept_in_registers
            .extend(found.iter().map(|p| (var, p.array, p.field)));
        let Stmt::For { body, .. } = &mut b[at] else {
            unreachable!("matched above")
        };
        let (before, after) = rewrite(k, body, trips, &found);
        n += found.len();
        match (forwarded, before, after) {
            (
                Some(value),
                Stmt::If { accept: loads, .. },
                Stmt::If {
                    accept: mut stores, ..
                },
            ) => {
                let Some(Stmt::Assign { local, .. }) = loads.first() else {
                    unreachable!("one load per element")
                };
                let (p, _) = store_before.expect("found with the value");
                b[p] = Stmt::Assign {
                    local: *local,
                    value,
                };
                let store = stores.pop().expect("one store per element");
                b.insert(at + 1, store);
                at += 2;
            }
            (_, before, after) => {
                b.insert(at, before);
                b.insert(at + 2, after);
                at += 3;
            }
        }
    }
    n
}

/// Replaces the loads and stores of `found` in `body` by locals; returns the guarded loads
/// to put before the loop and the guarded stores to put after it.
fn rewrite(
    k: &mut Kernel,
    body: &mut Block,
    trips: Handle<Expr>,
    found: &[Promoted],
) -> (Stmt, Stmt) {
    let (mut loads, mut stores) = (Vec::new(), Vec::new());
    for p in found {
        let ty = k
            .access(p.array, p.field)
            .expect("checked in candidates")
            .ty;
        let name = format!("{} (kept in a register)", k.params[p.array as usize].name);
        let f = &mut k.function;
        f.locals.push(Local {
            name,
            ty,
            len: None,
        });
        let t = (f.locals.len() - 1) as LocalId;
        replace_accesses(f, body, p, t);
        let index = walk::copy_expr(f, p.index);
        let value = f.exprs.append(Expr::Load {
            array: p.array,
            field: p.field,
            index,
        });
        loads.push(Stmt::Assign { local: t, value });
        let index = walk::copy_expr(f, p.index);
        let value = f.exprs.append(Expr::Local(t));
        stores.push(Stmt::Store {
            array: p.array,
            field: p.field,
            index,
            value,
        });
    }
    let f = &mut k.function;
    let guard = |f: &mut Function| {
        let n = walk::copy_expr(f, trips);
        let zero = f
            .exprs
            .append(Expr::Literal(Literal::Int(Scalar::USize, 0)));
        f.exprs.append(Expr::Binary(BinaryOp::Gt, n, zero))
    };
    let before = Stmt::If {
        cond: guard(f),
        accept: loads,
        reject: Vec::new(),
    };
    let after = Stmt::If {
        cond: guard(f),
        accept: stores,
        reject: Vec::new(),
    };
    (before, after)
}

/// Rewrites `b`: loads of `p`'s element read local `t`, stores of it assign `t`.
fn replace_accesses(f: &mut Function, b: &mut Block, p: &Promoted, t: LocalId) {
    // The loads, found in every expression the statements hold.
    let mut with = std::collections::HashMap::new();
    let mut loads = Vec::new();
    walk::for_each_stmt(b, &mut |s| {
        for h in walk::stmt_exprs(s) {
            loads_of(f, h, p, &mut loads);
        }
    });
    for h in loads {
        if let std::collections::hash_map::Entry::Vacant(e) = with.entry(h) {
            e.insert(f.exprs.append(Expr::Local(t)));
        }
    }
    walk::substitute(f, b, &with);
    // Then the stores (their values already read `t`).
    stores_to_assigns(b, p, t);
}

fn stores_to_assigns(b: &mut Block, p: &Promoted, t: LocalId) {
    for s in b.iter_mut() {
        match s {
            Stmt::Store {
                array,
                field,
                value,
                ..
            } if *array == p.array && *field == p.field => {
                *s = Stmt::Assign {
                    local: t,
                    value: *value,
                };
            }
            Stmt::If { accept, reject, .. } => {
                stores_to_assigns(accept, p, t);
                stores_to_assigns(reject, p, t);
            }
            Stmt::For { body, .. } | Stmt::Loop { body } => stores_to_assigns(body, p, t),
            _ => {}
        }
    }
}

/// The loads of `p`'s element in expression `h` (an index holding one included).
fn loads_of(f: &Function, h: Handle<Expr>, p: &Promoted, out: &mut Vec<Handle<Expr>>) {
    if let Expr::Load { array, field, .. } = f.exprs[h] {
        if array == p.array && field == p.field {
            out.push(h);
            return;
        }
    }
    for c in walk::operands(&f.exprs[h]) {
        loads_of(f, c, p, out);
    }
}

/// Calls `visit(index, atomic)` for every access of `array` in `b`: loads (in any expression),
/// stores and atomic updates.
fn accesses(f: &Function, b: &[Stmt], array: ParamId, visit: &mut dyn FnMut(Handle<Expr>, bool)) {
    fn in_expr(
        f: &Function,
        h: Handle<Expr>,
        array: ParamId,
        visit: &mut dyn FnMut(Handle<Expr>, bool),
    ) {
        if let Expr::Load {
            array: a, index, ..
        } = f.exprs[h]
        {
            if a == array {
                visit(index, false);
            }
        }
        for c in walk::operands(&f.exprs[h]) {
            in_expr(f, c, array, visit);
        }
    }
    walk::for_each_stmt(b, &mut |s| {
        match s {
            Stmt::Store {
                array: a, index, ..
            } if *a == array => visit(*index, false),
            Stmt::Atomic {
                array: a, index, ..
            } if *a == array => visit(*index, true),
            _ => {}
        }
        for h in walk::stmt_exprs(s) {
            in_expr(f, h, array, visit);
        }
    });
}

/// Whether `a` and `b` compute the same value: the same expression tree (loads included: an
/// index is compared only where the arrays it reads are not written in the loop).
pub fn same_value(f: &Function, a: Handle<Expr>, b: Handle<Expr>) -> bool {
    if a == b {
        return true;
    }
    let (mut x, mut y) = (f.exprs[a].clone(), f.exprs[b].clone());
    let (xs, ys) = (walk::operands(&x), walk::operands(&y));
    if xs.len() != ys.len() {
        return false;
    }
    // The nodes without their operands, then the operands.
    for h in walk::operands_mut(&mut x) {
        *h = a;
    }
    for h in walk::operands_mut(&mut y) {
        *h = a;
    }
    x == y && xs.iter().zip(&ys).all(|(&p, &q)| same_value(f, p, q))
}

/// Whether `b` has a `break` or `continue` of the loop it is the body of (not of a loop
/// inside it).
fn exits(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::Break | Stmt::Continue => true,
        Stmt::If { accept, reject, .. } => exits(accept) || exits(reject),
        _ => false,
    })
}

fn has_parallel_loop(b: &[Stmt]) -> bool {
    let mut found = false;
    walk::for_each_stmt(b, &mut |s| {
        found |= matches!(
            s,
            Stmt::For {
                schedule: Some(_),
                ..
            }
        );
    });
    found
}

/// The store of `p`'s element in `before` (the statements before the loop) that the loop's
/// first iteration would read, and the value it stores: the last statement of `before` but
/// assignments of locals that neither read the array nor change the element's index (a
/// range's bounds, `__start` and `__end`). `None` where there is no such store.
fn store_before(f: &Function, before: &[Stmt], p: &Promoted) -> Option<(usize, Handle<Expr>)> {
    let mut index_reads = HashSet::new();
    walk::locals_read(f, p.index, &mut index_reads);
    for (at, s) in before.iter().enumerate().rev() {
        match *s {
            Stmt::Assign { local, value }
                if !reads_array(f, value, p.array) && !index_reads.contains(&local) => {}
            Stmt::Store {
                array,
                field,
                index,
                value,
            } if array == p.array
                && field == p.field
                && same_value(f, index, p.index)
                && !reads_array(f, value, array) =>
            {
                return Some((at, value));
            }
            _ => return None,
        }
    }
    None
}

fn reads_array(f: &Function, h: Handle<Expr>, array: ParamId) -> bool {
    let mut arrays = HashSet::new();
    walk::arrays_loaded(f, h, &mut arrays);
    arrays.contains(&array)
}

fn has_nested_index(f: &Function, h: Handle<Expr>) -> bool {
    matches!(f.exprs[h], Expr::NestedIndex { .. })
        || walk::operands(&f.exprs[h])
            .into_iter()
            .any(|c| has_nested_index(f, c))
}

#[cfg(test)]
mod tests;
