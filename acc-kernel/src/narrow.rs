//! 32-bit index arithmetic. A kernel's `usize` values (indices, loop variables, trip counts,
//! lengths) are 64-bit, and on a GPU 64-bit integer arithmetic costs two to four instructions
//! and twice the registers of 32-bit arithmetic: the index code of a structured kernel (a
//! tile's element, a row's offset) then dominates it. Where a launch's arguments bound every
//! such value within 32 bits ([`bounds::prove`]),
//! [`to_32`] gives the same kernel computing them in `u32` (`isize` in `i32`), which a backend
//! lowers instead; addresses still widen to 64 bits.
//!
//! [`narrowable`] says which kernels may be: those whose `usize` values never leave the
//! kernel's own arithmetic (no array of `usize` elements, no `usize` reduction or result, no
//! bit casts of them).

use super::*;

/// The bounds proof of a launch of `k` with `args` ([`Prepared::prove`](super::bounds::Prepared::prove)
/// with `prepared`, made of `k` once), its `fits_32` asked and kept only where the launch may run
/// narrowed: narrowing is `allowed` (the runtime's setting, `ACC_NARROW`), the kernel
/// [`narrowable`] (`narrowable`, also made once), and the backend holds `usize` wider than 32
/// bits (`wide`). Every GPU backend chooses its variant from it.
pub fn prove_prepared(
    k: &Kernel,
    prepared: &super::bounds::Prepared,
    (narrowable, allowed): (bool, bool),
    args: &[super::args::KernelArg<'_>],
    wide: bool,
) -> super::bounds::Proof {
    let may = wide && allowed && narrowable;
    let p = prepared.prove(k, args, may);
    super::bounds::Proof {
        in_bounds: p.in_bounds,
        fits_32: may && p.fits_32,
    }
}

/// The 32-bit type standing for `t` in a narrowed kernel.
fn narrow(t: Scalar) -> Scalar {
    match t {
        Scalar::USize => Scalar::U32,
        Scalar::ISize => Scalar::I32,
        other => other,
    }
}

fn pointer_sized(t: Scalar) -> bool {
    matches!(t, Scalar::USize | Scalar::ISize)
}

/// Whether [`to_32`] may narrow `k`: its `usize`/`isize` values stay inside the kernel (no
/// array of them, no reduction, result or bit cast of them), so that only their arithmetic
/// changes width.
pub fn narrowable(k: &Kernel) -> bool {
    let elem_sized = |e: &Elem| match e {
        Elem::Scalar(s) => pointer_sized(*s),
        Elem::Struct(l) => l.fields.iter().any(|f| f.ty.is_some_and(pointer_sized)),
    };
    if k.params
        .iter()
        .any(|p| matches!(&p.kind, ParamKind::Array { elem, .. } if elem_sized(elem)))
    {
        return false;
    }
    let local_sized = |l: LocalId| pointer_sized(k.function.locals[l as usize].ty);
    if k.result.is_some_and(local_sized) || k.reductions.iter().any(|(r, _)| local_sized(r.local)) {
        return false;
    }
    let mut ok = true;
    walk::for_each_stmt(&k.function.body, &mut |s| {
        if let Stmt::For { reductions, .. } = s {
            ok &= !reductions.iter().any(|r| local_sized(r.local));
        }
    });
    ok && k
        .function
        .exprs
        .iter()
        .all(|(_, e)| !matches!(e, Expr::Bitcast(..)))
}

/// `k` with its `usize` values computed in `u32` and its `isize` values in `i32`: locals,
/// literals and casts take the narrow type; parameters, lengths and the gang index are cast
/// to it where read. Only for a [`narrowable`] kernel whose values fit (the launch's proof).
pub fn to_32(k: &Kernel) -> Kernel {
    let mut out = k.clone();
    for l in &mut out.function.locals {
        l.ty = narrow(l.ty);
    }
    let param_type = |p: ParamId| match k.params.get(p as usize).map(|p| &p.kind) {
        Some(ParamKind::Scalar(t)) => Some(*t),
        _ => None,
    };
    let mut exprs = Arena::default();
    let mut map: Vec<Handle<Expr>> = Vec::with_capacity(k.function.exprs.len());
    for (_, e) in k.function.exprs.iter() {
        let m = |h: &Handle<Expr>| map[h.index()];
        let new = match e {
            Expr::Literal(Literal::Int(t, v)) => Expr::Literal(Literal::Int(narrow(*t), *v)),
            Expr::Literal(l) => Expr::Literal(*l),
            Expr::Param(p) => match param_type(*p) {
                Some(t) if pointer_sized(t) => {
                    let read = exprs.append(Expr::Param(*p));
                    Expr::Cast(read, narrow(t))
                }
                _ => Expr::Param(*p),
            },
            Expr::Len(a) => {
                let read = exprs.append(Expr::Len(*a));
                Expr::Cast(read, Scalar::U32)
            }
            Expr::GangIndex => {
                let read = exprs.append(Expr::GangIndex);
                Expr::Cast(read, Scalar::U32)
            }
            Expr::Local(l) => Expr::Local(*l),
            Expr::LocalElem { local, index } => Expr::LocalElem {
                local: *local,
                index: m(index),
            },
            Expr::Load {
                array,
                field,
                index,
            } => Expr::Load {
                array: *array,
                field: *field,
                index: m(index),
            },
            Expr::NestedIndex { element, sub } => Expr::NestedIndex {
                element: m(element),
                sub: m(sub),
            },
            Expr::Unary(op, a) => Expr::Unary(*op, m(a)),
            Expr::Binary(op, a, b) => Expr::Binary(*op, m(a), m(b)),
            Expr::Select {
                cond,
                accept,
                reject,
            } => Expr::Select {
                cond: m(cond),
                accept: m(accept),
                reject: m(reject),
            },
            Expr::Cast(a, t) => Expr::Cast(m(a), narrow(*t)),
            Expr::Bitcast(a, t) => Expr::Bitcast(m(a), *t),
            Expr::Math(f, args) => Expr::Math(*f, args.iter().map(m).collect()),
        };
        map.push(exprs.append(new));
    }
    out.function.exprs = exprs;
    walk::map_exprs(&mut out.function.body, &|h| map[h.index()]);
    out
}
