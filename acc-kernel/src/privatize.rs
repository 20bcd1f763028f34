//! Which arrays a parallel loop updates only through atomics that a GPU block may combine in
//! its own shared memory first (docs/design-notes/execution-model.md: "atomics to a small target from a gang
//! loop may be privatized per block"), the histogram's shape. The backends decide the size
//! limit and merge each block's copy into the array with one atomic per element it changed.

use super::*;

/// An array a loop may privatize, and the operator of its updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Privatized {
    pub array: ParamId,
    pub op: BinaryOp,
}

/// The arrays that the loop `s` updates only by `atomic update`s of one operator whose
/// identity is zero (`+`, `|`, `^`), with no captured value, on whole elements, and that the
/// kernel never reads or writes otherwise: a block's updates can then be combined in its own
/// copy and merged at the end with the same result (the operators commute and associate; a
/// float sum's order changes, as atomic float sums' order does anyway).
pub fn atomic_targets(k: &Kernel, s: &Stmt) -> Vec<Privatized> {
    let Stmt::For { body, .. } = s else {
        return Vec::new();
    };
    let mut found: Vec<Privatized> = Vec::new();
    let mut refused: Vec<ParamId> = Vec::new();
    walk::for_each_stmt(body, &mut |st| {
        if let Stmt::Atomic {
            array,
            field,
            op,
            old,
            new,
            ..
        } = st
        {
            let fits = field.is_none()
                && old.is_none()
                && new.is_none()
                && matches!(
                    op,
                    AtomicOp::Update(BinaryOp::Add | BinaryOp::BitOr | BinaryOp::BitXor)
                );
            match (fits, op, found.iter().find(|p| p.array == *array)) {
                (true, AtomicOp::Update(o), None) => found.push(Privatized {
                    array: *array,
                    op: *o,
                }),
                (true, AtomicOp::Update(o), Some(p)) if p.op == *o => {}
                _ => refused.push(*array),
            }
        }
    });
    // Any other access of the array, anywhere in the kernel, keeps it in memory.
    walk::for_each_stmt(&k.function.body, &mut |st| match st {
        Stmt::Store { array, .. } => refused.push(*array),
        Stmt::Atomic { array, op, .. } if !matches!(op, AtomicOp::Update(_)) => {
            refused.push(*array)
        }
        _ => {}
    });
    for (_, e) in k.function.exprs.iter() {
        if let Expr::Load { array, .. } = e {
            refused.push(*array);
        }
    }
    found.retain(|p| !refused.contains(&p.array));
    found
}

/// Whether loop `s` updates an array of [`atomic_targets`] that a target does not privatize
/// with compare-exchange loops (`by_cas` says which operator and type are): its threads then
/// contend on the elements, and a grid of more blocks than the device holds at once only adds
/// retries (an `f64` histogram on wgpu ran 18-24% slower on 4224 workgroups than on 1056).
pub fn contended_by_cas(
    k: &Kernel,
    s: &Stmt,
    elements: &[Scalar],
    by_cas: &dyn Fn(BinaryOp, Scalar) -> bool,
) -> bool {
    privatized(k, s, elements).is_none()
        && atomic_targets(k, s)
            .iter()
            .any(|p| k.access(p.array, None).is_some_and(|a| by_cas(p.op, a.ty)))
}

/// The array loop `s` privatizes on a target whose blocks combine elements of the types
/// `elements` in their own memory (scalar arrays of those, element after element): the first
/// of [`atomic_targets`] it can hold. The one decision the emitters, the launch layout and
/// `ACC_INFO` read, so that what `ACC_INFO` says is what the kernel does (an `f64` histogram
/// is not privatized where the target combines 4-byte words only).
pub fn privatized(k: &Kernel, s: &Stmt, elements: &[Scalar]) -> Option<Privatized> {
    atomic_targets(k, s).into_iter().find(|p| {
        k.access(p.array, None)
            .is_some_and(|a| elements.contains(&a.ty) && a.stride == a.ty.size())
    })
}
