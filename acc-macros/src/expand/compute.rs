//! Compute constructs (`parallel`, `kernels`, `serial`, 3.3 section 2.5) and the combined
//! constructs (section 2.11): the launch, the data clauses, the privatization and reductions of
//! the construct, and the region's body twice: as the sequential host twin and as the multicore
//! twin.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Block, Expr, ExprForLoop, Ident, Stmt};

use super::region::{Mode, RegionCx};
use super::{attrs, data, if_async_wait, location, opt, Ctx};
use crate::analysis::bindings::Env;
use crate::analysis::uses::scan_stmts;
use crate::directive::{ClauseArgs, ClauseName as C, ComputeKind, Directive, DirectiveKind, RedOp};

/// What a compute construct applies to.
pub enum RegionBody {
    /// `#[acc::parallel] { .. }` or a function body.
    Block(Block),
    /// The `for` loop of a combined construct.
    Loop(ExprForLoop),
}

/// Clauses of the construct that give data attributes to variables.
const DATA_CLAUSES: &[C] = &[
    C::Copy,
    C::Copyin,
    C::Copyout,
    C::Create,
    C::NoCreate,
    C::Present,
    C::Deviceptr,
    C::Attach,
];

/// The launch clauses as `::acc::__rt::LaunchClauses`.
fn launch_clauses(dir: &Directive, default_present: bool) -> TokenStream {
    let (if_cond, async_arg, wait) = if_async_wait(dir);
    let self_cond = self_condition(dir);
    quote!(::acc::__rt::LaunchClauses { if_cond: #if_cond, self_cond: #self_cond, async_arg: #async_arg, wait: #wait, default_present: #default_present })
}

/// The construct's `self` condition (3.3 section 2.5.7) as an `Option<bool>`: `None` without
/// the clause, `Some(true)` for a bare `self`.
pub(super) fn self_condition(dir: &Directive) -> TokenStream {
    opt(dir.general(C::SelfClause).next().map(|c| match c.expr() {
        Some(e) => quote!(#e),
        None => quote!(true),
    }))
}

/// Expands a compute or combined construct.
pub fn expand_compute(ctx: &mut Ctx, dir: &Directive, body: RegionBody, env: &Env) -> TokenStream {
    let errors_before = ctx.error_count();
    // A `kernels loop` gets the reductions `kernels { loop }` would find in its loop.
    ctx.recognized.clear();
    let recognized = match &body {
        RegionBody::Loop(f) if dir.kind.compute() == Some(ComputeKind::Kernels) => {
            with_recognized_reductions(ctx, dir, f)
        }
        _ => None,
    };
    let dir = recognized.as_ref().unwrap_or(dir);
    match super::subarray_reductions::lower(ctx, dir, &body, env) {
        Some(l) => {
            let (before, after) = (l.before, l.after);
            let inner = expand_construct(ctx, &l.dir, l.body, &l.env);
            quote!({ #before { #inner } #after })
        }
        None if ctx.error_count() > errors_before => {
            // A refused subarray reduction: its error alone, the body as written.
            let mut block = match body {
                RegionBody::Block(b) => b,
                RegionBody::Loop(f) => Block {
                    brace_token: Default::default(),
                    stmts: vec![Stmt::Expr(Expr::ForLoop(f), None)],
                },
            };
            super::strip_all(&mut block);
            quote!(#block)
        }
        None => expand_construct(ctx, dir, body, env),
    }
}

/// `dir`, a `kernels loop` construct on `f`, with the reductions its loop computes without
/// naming them added (`expand::recognized_reductions`), or `None` where it has none.
fn with_recognized_reductions(
    ctx: &mut Ctx,
    dir: &Directive,
    f: &ExprForLoop,
) -> Option<Directive> {
    let (names, clauses): (Vec<String>, Vec<TokenStream>) =
        super::recognized_reductions::for_combined(dir, f)
            .into_iter()
            .unzip();
    if clauses.is_empty() {
        return None;
    }
    ctx.recognized.extend(names);
    let added =
        crate::directive::parsed::of_tokens(dir.kind, dir.span, quote!(#(#clauses),*)).ok()?;
    let mut with = dir.clone();
    with.clauses.extend(added.clauses.iter().cloned());
    Some(with)
}

/// Expands a compute or combined construct whose reductions are whole variables.
fn expand_construct(ctx: &mut Ctx, dir: &Directive, body: RegionBody, env: &Env) -> TokenStream {
    let compute = dir.kind.compute().expect("a compute construct");
    let errors_before = ctx.error_count();
    let mut body = super::collapse_force::tighten(dir, body);
    // Loops over slice iterators become index loops, for every device alike.
    match &mut body {
        RegionBody::Block(b) => super::iterators::lower_in_stmts(&mut b.stmts),
        RegionBody::Loop(f) => super::iterators::lower_loop(f),
    }
    let mut stmts: Vec<Stmt> = match &body {
        RegionBody::Block(b) => b.stmts.clone(),
        RegionBody::Loop(f) => vec![Stmt::Expr(Expr::ForLoop(f.clone()), None)],
    };
    if compute == ComputeKind::Parallel && !dir.kind.is_combined() {
        super::gang_redundant::repeat_updates(ctx, dir, &mut stmts);
    }
    if compute == ComputeKind::Kernels && !dir.kind.is_combined() {
        let found = super::recognized_reductions::recognize(&mut stmts);
        ctx.recognized.extend(found);
    }

    // What cannot run on a device, and ways out of the region (3.3 section 2.5: a region is
    // entered and left as a whole).
    let body_check = crate::check_region::check_body(
        &stmts,
        crate::check_region::Body::Region(dir.kind.spelling()),
        matches!(body, RegionBody::Loop(_)),
        &ctx.undeclared_statics,
    );
    for e in body_check.errors {
        ctx.push(e);
    }
    let mut routine_checks = body_check.routine_checks;
    let nesting = match &body {
        RegionBody::Block(_) => crate::check_region::check_loop_nesting(&stmts, None, None),
        RegionBody::Loop(f) => {
            crate::check_region::check_loop_nesting(&f.body.stmts, None, Some(dir))
        }
    };
    for e in nesting.errors {
        ctx.push(e);
    }
    routine_checks.extend(nesting.routine_checks);
    let uses = scan_stmts(&stmts, &[]);
    for (span, what) in uses.returns.iter().chain(&uses.escapes) {
        ctx.error(*span, format!("`{what}` would leave the `{}` region; a compute region must run to its end (3.3 section 2.5)", dir.kind.spelling()));
    }

    // The loop variables of a combined construct are predetermined private: no data clause may
    // name them (3.3 section 2.6.1; R26).
    if let RegionBody::Loop(f) = &body {
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

    // Variables named by the construct's clauses.
    let mut listed: HashSet<String> = HashSet::new();
    for c in &dir.clauses {
        listed.extend(c.vars().iter().map(|v| v.name.to_string()));
    }
    let loop_reductions = nested_loop_vars(&stmts);
    listed.extend(loop_reductions.iter().cloned());
    listed.extend(ctx_enclosing(ctx));

    // `copyin(readonly: x)`: the region may not write `x` (R53).
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

    // A write to what the construct's own `copyin` brings in (and no enclosing data construct
    // holds): on a GPU the device copy takes the write and is freed at the region's end, so
    // the write is lost there and kept on the host and multicore. An error, rather than
    // answers that differ between devices; `copy` keeps the write, and data a program made
    // present itself (`enter_data!`) is named with `present`.
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

    // Compute-level private, firstprivate and reduction; on combined constructs `private` and
    // `reduction` belong to the loop (3.3 section 2.11).
    let combined = dir.kind.is_combined();
    let mut privates: Vec<Ident> = Vec::new();
    let mut reductions: Vec<(RedOp, Ident)> = Vec::new();
    for c in dir.clauses.iter().filter(|c| c.device_types.is_none()) {
        match (c.name, &c.args) {
            (C::Firstprivate, _) => privates.extend(c.vars().iter().map(|v| v.name.clone())),
            (C::Private, _) if !combined => {
                privates.extend(c.vars().iter().map(|v| v.name.clone()))
            }
            (C::Reduction, ClauseArgs::Reduction { op, vars, .. }) if !combined => {
                reductions.extend(vars.iter().map(|v| (*op, v.name.clone())))
            }
            _ => {}
        }
    }
    // A variable reduced by a loop inside `parallel`/`serial` and used outside the region must be
    // named on the construct (3.3 L1314-1320; R28), and nested reductions of one variable use
    // one operator (R79).
    let loop_reductions = nested_loop_reductions(&stmts);
    if !combined && compute != ComputeKind::Kernels {
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
        super::kernel::collect_loop_privates(&stmts, &mut loop_private);
        let mut reported = HashSet::new();
        for (name, span, op, _) in &loop_reductions {
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
    for (op, v) in &reductions {
        for (name, span, inner, _) in &loop_reductions {
            if v == name && op != inner {
                ctx.error(*span, format!(
                    "`{name}` is reduced with `{}` here but with `{}` on the enclosing `{}`; nested reductions of one variable use one operator (3.3 section 2.9.11)",
                    inner.spelling(), op.spelling(), dir.kind.spelling()
                ));
            }
        }
    }

    // A reduction writes its variable: one the function binds without `mut` is an error here,
    // at the clause, rather than rustc's about the expansion.
    {
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
            if env.get(&name).is_some_and(|b| !b.mutable && !b.ref_mut) && seen.insert(name.clone())
            {
                ctx.error(span, format!(
                    "`{name}` is a reduction variable, which the region writes, but it is not mutable: declare it `let mut {name}` (3.3 section 2.5.15)"
                ));
            }
        }
    }

    // R78: no reduction on a gang loop when the gang grid has several dimensions (3.3 section
    // 2.9.11: "reduction on a gang loop is not allowed when num_gangs has more than one value").
    if let Some(ng) = dir.general(C::NumGangs).next() {
        if matches!(&ng.args, ClauseArgs::Exprs(v) if v.len() > 1) {
            for (name, span, _, gang) in &loop_reductions {
                if *gang {
                    ctx.error(*span, format!(
                        "`{name}` is reduced on a `gang` loop, but the enclosing `{}` has `num_gangs` with more than one value; a gang reduction needs a one-dimensional gang grid (3.3 section 2.9.11)",
                        dir.kind.spelling()
                    ));
                }
            }
        }
    }

    // Implicitly firstprivate (3.3 section 2.6.2): in `parallel` and `serial`, a variable the
    // region assigns as a whole and that no clause names gets a private copy.
    if compute != ComputeKind::Kernels {
        for (name, u) in &uses.vars {
            if u.assigned && !listed.contains(name) && !privates.iter().any(|p| p == name) {
                privates.push(Ident::new(name, u.span.unwrap_or_else(Span::call_site)));
            }
        }
    }

    // The `default` clause visible here: the construct's own, else the innermost enclosing data
    // construct's (3.3 section 2.6.2).
    let default = super::data::default_clause(dir)
        .or_else(|| ctx.enclosing_default.iter().rev().flatten().next().cloned());
    // default(none): every variable the region uses needs a clause (3.3 section 2.6.2; R27).
    // Names bound in neither the function nor the region are items (constants).
    if let Some((_, span)) = default.as_ref().filter(|(v, _)| v == "none") {
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
    let default_present = default.as_ref().is_some_and(|(v, _)| v == "present");

    let region_stmts = |ctx: &mut Ctx, mode: Mode| -> Vec<Stmt> {
        let mut cx = RegionCx::new(
            ctx,
            compute,
            mode,
            env.clone(),
            reductions.clone(),
            privates.clone(),
        );
        let mut out = match &body {
            RegionBody::Block(_) => cx.transform_stmts(stmts.clone(), false),
            RegionBody::Loop(f) => {
                let loop_dir = loop_part(dir);
                vec![cx.expand_loop(Some(loop_dir), f.clone(), false)]
            }
        };
        // The construct's own size clauses, which the CPU devices do not use: evaluated, so
        // that the names they use are used.
        let sizes: Vec<Expr> = super::region::size_exprs(&compute_part(dir));
        if !sizes.is_empty() {
            out.insert(0, syn::parse_quote!(let _ = (#(&(#sizes),)*);));
        }
        out
    };
    let host = wrap(&region_stmts(ctx, Mode::Host), &privates, &reductions);
    if ctx.error_count() > errors_before {
        // Report the directive's errors alone: the body as written, without its directives.
        let mut block = Block {
            brace_token: Default::default(),
            stmts,
        };
        super::strip_all(&mut block);
        return quote!(#block);
    }
    let site_kind = match compute {
        ComputeKind::Parallel => quote!(Parallel),
        ComputeKind::Kernels => quote!(Kernels),
        ComputeKind::Serial => quote!(Serial),
    };
    let fn_name = ctx.fn_name.clone();
    let loc = location(dir.span);
    let clauses = launch_clauses(dir, default_present);
    let data_vars = data::clause_vars(dir, DATA_CLAUSES, &loc);
    let data_hosts = data::exit_hosts(dir, DATA_CLAUSES);
    let combined_loop = if combined { Some(loop_part(dir)) } else { None };
    let sections = dir.clauses.iter().any(|c| c.device_types.is_some())
        || super::kernel::has_device_type_sections(&stmts);
    let kernel_arm = super::kernel::kernel_arm(
        compute,
        &stmts,
        combined_loop.as_ref(),
        env,
        &reductions,
        &privates,
        ctx.generic_fn,
        sections,
        |device| super::kernel::KernelOptions {
            uninitialized: uninitialized_privates(dir, combined),
            unchecked: dir.has(C::Unchecked),
            // `vector_length` as it applies on the device type (3.3 section 2.4).
            vector_length: device
                .map_or_else(|| dir.clone(), |d| dir.for_device(d))
                .general(C::VectorLength)
                .next()
                .and_then(|c| c.expr())
                .and_then(constant_u32),
            parts: dir
                .clauses
                .iter()
                .filter(|c| DATA_CLAUSES.contains(&c.name) && c.device_types.is_none())
                .flat_map(|c| c.vars().iter())
                .filter_map(|v| Some((v.name.to_string(), (**v.subarray.as_ref()?).clone())))
                .collect(),
        },
    );
    let var_notes = data_attributes(
        ctx,
        dir,
        &uses,
        env,
        compute,
        &privates,
        &loop_reductions,
        default_present,
    );
    ctx.loop_notes.clear();
    let threads = if compute == ComputeKind::Serial {
        // A serial region runs on one thread even on multicore (`Launch::exec` never gives
        // threads for it).
        quote!(__acc_launch.run_sequential(|| #host))
    } else {
        let threads = wrap(&region_stmts(ctx, Mode::Multicore), &privates, &reductions);
        quote!(__acc_inh.run(|| #threads))
    };
    let loop_notes = std::mem::take(&mut ctx.loop_notes);
    let (ac_before, ac_device, ac_host) = autocompare_steps(&uses, env, &privates);
    let var_notes = var_notes.iter().map(|(n, a)| quote!((#n, #a)));
    let run = quote! {
        match __acc_launch.exec() {
            ::acc::__rt::Exec::Sequential => __acc_launch.run_sequential(|| #host),
            ::acc::__rt::Exec::Threads(__acc_threads, __acc_inh) => #threads,
            ::acc::__rt::Exec::Kernel(__acc_dev) => #kernel_arm,
        }
    };
    quote! {
        {
            // Functions called in the region must be `#[acc::routine]`s (3.3 section 2.15).
            #(#routine_checks)*
            static __ACC_SITE: ::acc::__rt::RegionSite = ::acc::__rt::RegionSite {
                kind: ::acc::__rt::ComputeKind::#site_kind,
                function: #fn_name,
                location: #loc,
                vars: &[#(#var_notes),*],
                loops: &[#(#loop_notes),*],
            };
            let __acc_launch = ::acc::__rt::launch(&__ACC_SITE, #clauses);
            // ACC_AUTOCOMPARE: the inputs as the device sees them.
            #[allow(unused_imports)]
            use ::acc::__rt::kernel::{KindData as _, KindRefuse as _, KindScalar as _};
            let mut __acc_ac = ::acc::__rt::autocompare::begin(&__acc_launch, &__ACC_SITE);
            if let ::core::option::Option::Some(__ac) = &mut __acc_ac {
                #(#ac_before)*
            }
            let __acc_data = ::acc::__rt::region_data(&__acc_launch, #loc, &[#(#data_vars),*]);
            let __acc_value = #run;
            {
                #[allow(unused_imports)]
                use ::acc::__rt::AccMut as _;
                __acc_data.exit(#loc, &mut [#(#data_hosts),*]);
            }
            // ACC_AUTOCOMPARE: the host twin on the device's inputs, its results compared with
            // the device's, the host copies put back as the region left them.
            if let ::core::option::Option::Some(mut __acc_s) = __acc_ac {
                {
                    let __ac = &mut __acc_s;
                    #(#ac_device)*
                    if __ac.ready() {
                        let _ = #host;
                        #(#ac_host)*
                    }
                }
                __acc_s.finish();
            }
            __acc_value
        }
    }
}

/// `n` of `vector_length(n)` as the kernel builder takes it, where it is a constant: a literal,
/// or an expression of `const` items, whose value rustc gives.
fn constant_u32(e: &Expr) -> Option<TokenStream> {
    if let Some(n) = crate::check::int_literal(e).and_then(|n| u32::try_from(n).ok()) {
        return Some(quote!(#n));
    }
    crate::check::constant_expr(e).then(|| quote!(u32::try_from(#e).unwrap_or(u32::MAX)))
}

/// A combined construct's clauses that are not its loop's (or all of a compute construct's).
fn compute_part(dir: &Directive) -> Directive {
    Directive {
        kind: dir.kind,
        span: dir.span,
        clauses: dir
            .clauses
            .iter()
            .filter(|c| {
                !dir.kind.is_combined()
                    || !crate::directive::allowed::allows(DirectiveKind::Loop, c.name)
            })
            .cloned()
            .collect(),
    }
}

/// The loop part of a combined directive, as a `loop` directive.
fn loop_part(dir: &Directive) -> Directive {
    let clauses = dir
        .clauses
        .iter()
        .filter(|c| crate::directive::allowed::allows(DirectiveKind::Loop, c.name))
        .cloned()
        .collect();
    Directive {
        kind: DirectiveKind::Loop,
        span: dir.span,
        clauses,
    }
}

/// Privatization and reductions of the construct around a rewritten body.
/// The construct's own `private` variables that no `firstprivate` clause names: their copies
/// start undefined (3.3 section 2.5.13).
fn uninitialized_privates(dir: &Directive, combined: bool) -> Vec<String> {
    let named = |k| -> Vec<String> {
        dir.clauses
            .iter()
            .filter(|c| c.device_types.is_none() && c.name == k)
            .flat_map(|c| {
                c.vars()
                    .iter()
                    .map(|v| v.name.to_string())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    if combined {
        return Vec::new();
    }
    let first = named(C::Firstprivate);
    named(C::Private)
        .into_iter()
        .filter(|n| !first.contains(n))
        .collect()
}

fn wrap(stmts: &[Stmt], privates: &[Ident], reductions: &[(RedOp, Ident)]) -> TokenStream {
    let privs = quote!(#(#[allow(unused_mut)] let mut #privates = { use ::acc::__rt::{PrivateClone as _, PrivateOwned as _}; (&::acc::__rt::Private(&#privates)).private_copy() };)*);
    if reductions.is_empty() {
        return quote!({ #privs #(#stmts)* });
    }
    let vars: Vec<&Ident> = reductions.iter().map(|(_, v)| v).collect();
    let inits = reduction_inits(reductions);
    let combines = reduction_combines(reductions, &quote!(__acc_red));
    quote!({
        #privs
        let (__acc_value, __acc_red) = {
            #(#inits)*
            let __acc_value = { #(#stmts)* };
            (__acc_value, (#(#vars,)*))
        };
        #(#combines)*
        __acc_value
    })
}

/// `let mut v = <initial value of op>;` for each reduction variable, spanned at the variable
/// so that an operator that does not fit its type is reported there.
pub fn reduction_inits(reductions: &[(RedOp, Ident)]) -> Vec<TokenStream> {
    reductions
        .iter()
        .map(|(op, v)| {
            let op = Ident::new(op.marker(), v.span());
            quote::quote_spanned!(v.span()=>
                #[allow(unused_mut)]
                let mut #v = ::acc::__rt::reduce::identity_like::<::acc::__rt::reduce::#op, _>(&#v);
            )
        })
        .collect()
}

/// `v = combine(v, partials.k);` for each reduction variable `v` (the `k`-th), spanned at the
/// variable like [`reduction_inits`].
pub fn reduction_combines(
    reductions: &[(RedOp, Ident)],
    partials: &TokenStream,
) -> Vec<TokenStream> {
    reductions
        .iter()
        .enumerate()
        .map(|(k, (op, v))| {
            let op = Ident::new(op.marker(), v.span());
            let k = syn::Index::from(k);
            quote::quote_spanned!(v.span()=>
                #v = ::acc::__rt::reduce::combine::<::acc::__rt::reduce::#op, _>(#v, #partials.#k);
            )
        })
        .collect()
}

/// The variables of `reduction` clauses on loop directives inside a region: name, span, op.
fn nested_loop_reductions(stmts: &[Stmt]) -> Vec<(String, Span, RedOp, bool)> {
    struct Collect(Vec<(String, Span, RedOp, bool)>);
    impl<'a> syn::visit::Visit<'a> for Collect {
        fn visit_stmt(&mut self, st: &'a Stmt) {
            for a in attrs::stmt_attrs(st) {
                {
                    if let Some(d) = crate::directive::parsed::loop_of(a) {
                        let gang = d.has(C::Gang);
                        for c in d.general(C::Reduction) {
                            if let ClauseArgs::Reduction { op, vars, .. } = &c.args {
                                self.0.extend(
                                    vars.iter().map(|v| (v.name.to_string(), v.span, *op, gang)),
                                );
                            }
                        }
                    }
                }
            }
            syn::visit::visit_stmt(self, st);
        }
    }
    let mut c = Collect(Vec::new());
    for st in stmts {
        syn::visit::Visit::visit_stmt(&mut c, st);
    }
    c.0
}

/// Names in `reduction` and `private` clauses of loop directives inside a region.
fn nested_loop_vars(stmts: &[Stmt]) -> HashSet<String> {
    struct Collect(HashSet<String>);
    impl<'a> syn::visit::Visit<'a> for Collect {
        fn visit_stmt(&mut self, st: &'a Stmt) {
            for a in attrs::stmt_attrs(st) {
                if let Some(d) = crate::directive::parsed::loop_of(a) {
                    for c in d
                        .clauses
                        .iter()
                        .filter(|c| matches!(c.name, C::Reduction | C::Private))
                    {
                        self.0.extend(c.vars().iter().map(|v| v.name.to_string()));
                    }
                }
            }
            syn::visit::visit_stmt(self, st);
        }
    }
    let mut c = Collect(HashSet::new());
    for st in stmts {
        syn::visit::Visit::visit_stmt(&mut c, st);
    }
    c.0
}

/// Names given data clauses by lexically enclosing `data` constructs.
/// Each variable the region uses with its data attribute, as `ACC_INFO` reports it: the
/// construct's clause, an enclosing data construct, or the implicit attribute of 3.3 section
/// 2.6.2 and why. Arrays are what the region indexes (or takes the length of).
#[allow(clippy::too_many_arguments)]
fn data_attributes(
    ctx: &Ctx,
    dir: &Directive,
    uses: &crate::analysis::uses::Uses,
    env: &Env,
    compute: ComputeKind,
    privates: &[Ident],
    loop_reductions: &[(String, Span, RedOp, bool)],
    default_present: bool,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, u) in &uses.vars {
        if name.starts_with("__acc") || name == "self" || env.get(name).is_none() {
            continue;
        }
        let clause = dir
            .clauses
            .iter()
            .find(|c| c.vars().iter().any(|v| v.name == name.as_str()));
        let array = !u.indexes.is_empty() || !u.unindexed;
        let found = if ctx.recognized.contains(name) {
            " (recognized: the loop only updates it with this operator)"
        } else {
            ""
        };
        let attr = if let Some(c) = clause {
            match (&c.args, c.modifier()) {
                (ClauseArgs::Reduction { op, .. }, _) => {
                    format!("reduction({}){found}", op.spelling())
                }
                (_, Some(m)) => format!("{}({m}:)", c.name.spelling()),
                _ => c.name.spelling().to_string(),
            }
        } else if let Some((_, _, op, _)) = loop_reductions.iter().find(|(n, ..)| n == name) {
            format!("reduction({}) on a loop{found}", op.spelling())
        } else if ctx.enclosing_data.iter().flatten().any(|n| n == name) {
            "present (named by an enclosing data construct)".into()
        } else if array && default_present {
            "present (implicit: default(present))".into()
        } else if array && u.is_definitely_written() {
            "copy (implicit: an array the region writes)".into()
        } else if array {
            "copyin (implicit: an array the region only reads)".into()
        } else if u.atomic_target {
            "copy (implicit: the target of an atomic)".into()
        } else if privates.iter().any(|p| p == name.as_str()) {
            "firstprivate (implicit: a scalar the region assigns)".into()
        } else if compute == ComputeKind::Kernels {
            "copy (implicit: a scalar in kernels)".into()
        } else {
            "firstprivate (implicit: a scalar)".into()
        };
        out.push((name.clone(), attr));
    }
    out.sort();
    out
}

/// The `ACC_AUTOCOMPARE` steps for each variable the region uses: saving its input before the
/// region, saving the device's result and setting the input again after it, and comparing the
/// host twin's result and putting the host copy back. Variables the function holds read-only
/// only have their input checked.
fn autocompare_steps(
    uses: &crate::analysis::uses::Uses,
    env: &Env,
    privates: &[Ident],
) -> (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>) {
    let (mut before, mut device, mut host) = (Vec::new(), Vec::new(), Vec::new());
    if uses.vars.contains_key("self") {
        before.push(quote!(__ac.not_compared("the region uses `self`, whose fields are not saved for the host twin yet");));
        return (before, device, host);
    }
    for (name, u) in &uses.vars {
        if name.starts_with("__acc") {
            continue;
        }
        let Some(binding) = env.get(name) else {
            continue;
        };
        let var = Ident::new(name, u.span.unwrap_or_else(Span::call_site));
        let written = u.is_definitely_written() && !privates.iter().any(|p| p == name.as_str());
        let probe = quote!((&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind());
        if binding.mutable || binding.ref_mut {
            let target = if binding.mutable {
                quote!(&mut #var)
            } else {
                quote!(&mut *#var)
            };
            before.push(quote!(#probe.ac_before_mut(__ac, #name, &#var, #written);));
            device.push(quote!(#probe.ac_device(__ac, #name, #target);));
            host.push(quote!(#probe.ac_host(__ac, #name, #target);));
        } else if written {
            let why = format!("`{name}` is written, but its binding is neither `mut` nor a `&mut` reference the macro can see");
            before.push(quote!(__ac.not_compared(#why);));
        } else {
            before.push(quote!(#probe.ac_before(__ac, #name, &#var, #written);));
        }
    }
    (before, device, host)
}

fn ctx_enclosing(ctx: &Ctx) -> Vec<String> {
    ctx.enclosing_data.iter().flatten().cloned().collect()
}
