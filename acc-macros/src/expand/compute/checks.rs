//! The spec's checks of a compute or combined construct against its body: what cannot run on a
//! device, the loop variables and `readonly` data it may not write, the reductions of the loops
//! inside it, and `default(none)`. Each reports its errors at their spans, in the order the
//! construct's expansion runs them.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use syn::{Expr, ExprForLoop, Ident, Stmt};

use super::super::Ctx;
use super::{ctx_enclosing, RegionBody, DATA_CLAUSES};
use crate::analysis::bindings::Env;
use crate::analysis::uses::{scan_stmts, Uses};
use crate::directive::{ClauseArgs, ClauseName as C, Directive, RedOp};

/// A reduction of a loop inside the region: the variable's name, its span, the operator, and
/// whether the loop is a `gang` loop.
pub(super) type LoopReduction = (String, Span, RedOp, bool);

/// What cannot run on a device, and ways out of the region (3.3 section 2.5: a region is
/// entered and left as a whole). Gives the checks that the functions the region calls are
/// routines, and the region's uses of variables, which the later checks read.
pub(super) fn check_body(
    ctx: &mut Ctx,
    dir: &Directive,
    body: &RegionBody,
    stmts: &[Stmt],
) -> (Vec<TokenStream>, Uses) {
    let body_check = crate::check_region::check_body(
        stmts,
        crate::check_region::Body::Region(dir.kind.spelling()),
        matches!(body, RegionBody::Loop(_)),
        &ctx.undeclared_statics,
    );
    for e in body_check.errors {
        ctx.push(e);
    }
    let mut routine_checks = body_check.routine_checks;
    let nesting = match body {
        RegionBody::Block(_) => crate::check_region::check_loop_nesting(stmts, None, None),
        RegionBody::Loop(f) => {
            crate::check_region::check_loop_nesting(&f.body.stmts, None, Some(dir))
        }
    };
    for e in nesting.errors {
        ctx.push(e);
    }
    routine_checks.extend(nesting.routine_checks);
    let uses = scan_stmts(stmts, &[]);
    for (span, what) in uses.returns.iter().chain(&uses.escapes) {
        ctx.error(*span, format!("`{what}` would leave the `{}` region; a compute region must run to its end (3.3 section 2.5)", dir.kind.spelling()));
    }
    (routine_checks, uses)
}

/// The loop variables of a combined construct are predetermined private: no data clause may
/// name them (3.3 section 2.6.1; R26).
pub(super) fn check_loop_vars_unnamed(ctx: &mut Ctx, dir: &Directive, f: &ExprForLoop) {
    let mut loop_vars = Vec::new();
    let mut cur = Some(f);
    while let Some(l) = cur {
        loop_vars.extend(
            crate::analysis::bindings::pat_bindings(&l.pat, false)
                .into_iter()
                .map(|(n, _)| n),
        );
        cur = match l.body.stmts.as_slice() {
            [Stmt::Expr(Expr::ForLoop(inner), _)] => Some(inner),
            _ => None,
        };
    }
    for c in dir.clauses.iter().filter(|c| {
        DATA_CLAUSES.contains(&c.name)
            || matches!(c.name, C::Private | C::Firstprivate | C::Reduction)
    }) {
        for v in c
            .vars()
            .iter()
            .filter(|v| loop_vars.contains(&v.name.to_string()))
        {
            ctx.error(v.span, format!(
                "`{}` is the variable of a loop of this `{}`, which is private to each iteration; it cannot appear in `{}` (3.3 section 2.6.1)",
                v.name, dir.kind.spelling(), c.name.spelling()
            ));
        }
    }
}

/// `copyin(readonly: x)`: the region may not write `x` (R53), whether the construct names it
/// so or an enclosing `data` construct does.
pub(super) fn check_readonly_writes(ctx: &mut Ctx, dir: &Directive, uses: &Uses) {
    for c in dir
        .general(C::Copyin)
        .filter(|c| c.modifier().is_some_and(|m| m == "readonly"))
    {
        for v in c.vars() {
            if uses
                .vars
                .get(&v.name.to_string())
                .is_some_and(|u| u.is_definitely_written())
            {
                ctx.error(v.span, format!(
                    "`{}` is `copyin(readonly: ..)` on this `{}`, but the region writes it; drop `readonly:` or use `copy` (3.3 section 2.7.7)",
                    v.name, dir.kind.spelling()
                ));
            }
        }
    }

    // ... nor one an enclosing `data` construct names so.
    let own: Vec<String> = dir
        .general(C::Copyin)
        .flat_map(|c| c.vars().iter().map(|v| v.name.to_string()))
        .collect();
    let readonly: Vec<String> = ctx.enclosing_readonly.iter().flatten().cloned().collect();
    for name in readonly.iter().filter(|n| !own.contains(n)) {
        if uses
            .vars
            .get(name)
            .is_some_and(|u| u.is_definitely_written())
        {
            ctx.error(dir.span, format!(
                "`{name}` is `copyin(readonly: ..)` on an enclosing `data` construct, but this `{}` writes it; drop `readonly:` there or use `copy` (3.3 section 2.7.7)",
                dir.kind.spelling()
            ));
        }
    }
}

/// A write to what the construct's own `copyin` brings in (and no enclosing data construct
/// holds): on a GPU the device copy takes the write and is freed at the region's end, so
/// the write is lost there and kept on the host and multicore. An error, rather than
/// answers that differ between devices; `copy` keeps the write, and data a program made
/// present itself (`enter_data!`) is named with `present`.
pub(super) fn check_copyin_writes(ctx: &mut Ctx, dir: &Directive, uses: &Uses) {
    let enclosing = ctx_enclosing(ctx);
    for c in dir
        .general(C::Copyin)
        .filter(|c| c.modifier().is_none_or(|m| m != "readonly"))
    {
        for v in c.vars() {
            let name = v.name.to_string();
            if enclosing.contains(&name) {
                continue;
            }
            if uses
                .vars
                .get(&name)
                .is_some_and(|u| u.is_definitely_written())
            {
                ctx.error(v.span, format!(
                    "`{}` is `copyin` on this `{}`, and the region writes it: on a GPU the write would go to the device copy, freed at the region's end, and be lost, while the host and multicore keep it; write `copy({})` to keep it everywhere, or `create`/`present` for data that lives on the device (3.3 section 2.7.7)",
                    v.text, dir.kind.spelling(), v.text
                ));
            }
        }
    }
}

/// A variable reduced by a loop inside `parallel`/`serial` and used outside the region must be
/// named on the construct (3.3 L1314-1320; R28).
pub(super) fn check_loop_reductions_named(
    ctx: &mut Ctx,
    dir: &Directive,
    stmts: &[Stmt],
    uses: &Uses,
    loop_reductions: &[LoopReduction],
) {
    let on_construct: HashSet<String> = dir
        .clauses
        .iter()
        .filter(|c| {
            DATA_CLAUSES.contains(&c.name)
                || matches!(c.name, C::Private | C::Firstprivate | C::Reduction)
        })
        .flat_map(|c| c.vars().iter().map(|v| v.name.to_string()))
        .chain(ctx_enclosing(ctx))
        .collect();
    // A loop's private variable (a gang's own, that its vector loop reduces) says where
    // its value lives; nothing outside the region sees it.
    let mut loop_private = HashSet::new();
    super::super::kernel::collect_loop_privates(stmts, &mut loop_private);
    let mut reported = HashSet::new();
    for (name, span, op, _) in loop_reductions {
        if uses.vars.contains_key(name)
            && !on_construct.contains(name)
            && !loop_private.contains(name)
            && reported.insert(name.clone())
        {
            ctx.error(*span, format!(
                "`{name}` is reduced by a loop inside this `{}` region, so the region must say what happens to it: add `reduction({}: {name})` or `copy({name})` to the `{}` (3.3 section 2.6.2)",
                dir.kind.spelling(), op.spelling(), dir.kind.spelling()
            ));
        }
    }
}

/// Nested reductions of one variable use one operator (R79).
pub(super) fn check_one_operator(
    ctx: &mut Ctx,
    dir: &Directive,
    reductions: &[(RedOp, Ident)],
    loop_reductions: &[LoopReduction],
) {
    for (op, v) in reductions {
        for (name, span, inner, _) in loop_reductions {
            if v == name && op != inner {
                ctx.error(*span, format!(
                    "`{name}` is reduced with `{}` here but with `{}` on the enclosing `{}`; nested reductions of one variable use one operator (3.3 section 2.9.11)",
                    inner.spelling(), op.spelling(), dir.kind.spelling()
                ));
            }
        }
    }
}

/// A reduction writes its variable: one the function binds without `mut` is an error here,
/// at the clause, rather than rustc's about the expansion.
pub(super) fn check_reductions_mutable(
    ctx: &mut Ctx,
    dir: &Directive,
    env: &Env,
    loop_reductions: &[LoopReduction],
) {
    let mut seen = HashSet::new();
    let on_dir = dir
        .clauses
        .iter()
        .filter(|c| c.name == C::Reduction)
        .flat_map(|c| {
            c.vars()
                .iter()
                .map(|v| (v.name.to_string(), v.span))
                .collect::<Vec<_>>()
        });
    let nested = loop_reductions.iter().map(|(n, sp, ..)| (n.clone(), *sp));
    for (name, span) in on_dir.chain(nested) {
        if env.get(&name).is_some_and(|b| !b.mutable && !b.ref_mut) && seen.insert(name.clone()) {
            ctx.error(span, format!(
                "`{name}` is a reduction variable, which the region writes, but it is not mutable: declare it `let mut {name}` (3.3 section 2.5.15)"
            ));
        }
    }
}

/// R78: no reduction on a gang loop when the gang grid has several dimensions (3.3 section
/// 2.9.11: "reduction on a gang loop is not allowed when num_gangs has more than one value").
pub(super) fn check_gang_reductions_one_dim(
    ctx: &mut Ctx,
    dir: &Directive,
    loop_reductions: &[LoopReduction],
) {
    if let Some(ng) = dir.general(C::NumGangs).next() {
        if matches!(&ng.args, ClauseArgs::Exprs(v) if v.len() > 1) {
            for (name, span, _, gang) in loop_reductions {
                if *gang {
                    ctx.error(*span, format!(
                        "`{name}` is reduced on a `gang` loop, but the enclosing `{}` has `num_gangs` with more than one value; a gang reduction needs a one-dimensional gang grid (3.3 section 2.9.11)",
                        dir.kind.spelling()
                    ));
                }
            }
        }
    }
}

/// default(none): every variable the region uses needs a clause (3.3 section 2.6.2; R27).
/// Names bound in neither the function nor the region are items (constants). `default` is
/// the one visible at the construct.
pub(super) fn check_default_none(
    ctx: &mut Ctx,
    dir: &Directive,
    default: Option<&(String, Span)>,
    uses: &Uses,
    env: &Env,
    listed: &HashSet<String>,
) {
    let Some((_, span)) = default.filter(|(v, _)| v == "none") else {
        return;
    };
    let where_ = if dir.general(C::Default).next().is_some() {
        String::new()
    } else {
        " (from the enclosing `data` construct)".to_string()
    };
    for (name, u) in &uses.vars {
        let item = env.get(name).is_none();
        if listed.contains(name) || item {
            continue;
        }
        let suggestion = if u.is_written() {
            format!("copy({name})")
        } else {
            format!("copyin({name})` or `firstprivate({name})")
        };
        ctx.error(
            u.span.unwrap_or(*span),
            format!(
                "`{name}` is used in this `{}` region, which has `default(none)`{where_}, but no clause names it; add `{suggestion}` (3.3 section 2.6.2)",
                dir.kind.spelling()
            ),
        );
    }
}
