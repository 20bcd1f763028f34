//! Loop versioning: a strided loop whose body indexes arrays with its own variable runs a fast
//! version without those accesses' bounds checks when the variable's first and last values
//! are in bounds for every such array (checked once, before the loop), and the checked
//! version otherwise. Which arrays a loop's fast version covers is decided here, once, for
//! every backend.

use std::collections::BTreeSet;

use crate::walk;
use crate::{Expr, Kernel, LoopLevel, ParamId, Scalar, Stmt};

use super::Caps;

/// The arrays whose accesses the fast version of the strided loop over `levels` with this
/// `body` runs unchecked (empty: no versions). Only a loop of one level over a `usize`
/// variable the body never assigns, in a kernel that checks its accesses at all; arrays the
/// kernel updates atomically only where the target's atomics read the fast version
/// ([`Caps::versions_atomic_arrays`]).
pub fn versioned_arrays(
    k: &Kernel,
    levels: &[LoopLevel],
    body: &[Stmt],
    caps: &Caps,
) -> Vec<ParamId> {
    let [lv] = levels else {
        return Vec::new();
    };
    let var = lv.var;
    let is_usize = k
        .function
        .locals
        .get(var as usize)
        .is_some_and(|l| l.ty == Scalar::USize);
    if k.unchecked || !is_usize || walk::assigns(body, &|l| l == var) {
        return Vec::new();
    }
    let mut arrays = indexed_by(k, body, var);
    if !caps.versions_atomic_arrays {
        walk::for_each_stmt(&k.function.body, &mut |s| {
            if let Stmt::Atomic { array, .. } = s {
                arrays.remove(array);
            }
        });
    }
    arrays.into_iter().collect()
}

/// The arrays `body` loads, stores or updates at exactly the index `var`.
fn indexed_by(k: &Kernel, body: &[Stmt], var: crate::LocalId) -> BTreeSet<ParamId> {
    let f = &k.function;
    let is_var = |h| f.exprs[h] == Expr::Local(var);
    let mut out = BTreeSet::new();
    let mut exprs = Vec::new();
    walk::for_each_stmt(body, &mut |s| {
        if let Stmt::Store { array, index, .. } | Stmt::Atomic { array, index, .. } = s {
            if is_var(*index) {
                out.insert(*array);
            }
        }
        exprs.extend(walk::stmt_exprs(s));
    });
    while let Some(h) = exprs.pop() {
        let e = &f.exprs[h];
        if let Expr::Load { array, index, .. } = e {
            if is_var(*index) {
                out.insert(*array);
            }
        }
        exprs.extend(walk::operands(e));
    }
    out
}
