//! Which strided loops run unrolled: a rule of the plan ([`crate::plan`]) that the gang
//! phases' shared loops read too.

use crate::{LoopLevel, Stmt};

/// Whether a strided loop (the grid loop, a vector loop a block shares) over one level with
/// this body runs four iterations per trip while four remain, in the same order per thread:
/// short straight-line code (assignments and stores, no control flow or atomics) becomes one
/// stretch whose loads are in flight together. GPU compilers do not unroll loops of unknown
/// trip count themselves; every GPU backend unrolls where this says.
pub fn unrolls_strided(levels: &[LoopLevel], body: &[Stmt]) -> bool {
    levels.len() == 1
        && body.len() <= 16
        && body.iter().all(|s| {
            matches!(
                s,
                Stmt::Assign { .. } | Stmt::AssignElem { .. } | Stmt::Store { .. }
            )
        })
}
