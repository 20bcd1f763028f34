//! Compute constructs (`parallel`, `kernels`, `serial`, 3.3 section 2.5) and the combined
//! constructs (section 2.11): the launch, the data clauses, the privatization and reductions of
//! the construct, and the region's body twice: as the sequential host twin and as the multicore
//! twin.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::{Block, Expr, ExprForLoop, Ident, Stmt};

mod checks;

use super::region::{Mode, RegionCx};
use super::{attrs, data_construct, if_async_wait, location, opt, Ctx};
use crate::analysis::bindings::Env;
use crate::analysis::uses::Uses;
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

/// Expands a compute or combined construct whose reductions are whole variables: the body
/// made ready for every device, the spec's checks against it, the construct's private copies
/// and reductions, then its three versions (the host twin, the multicore twin, the kernel)
/// and the launch that picks one at run time.
fn expand_construct(ctx: &mut Ctx, dir: &Directive, body: RegionBody, env: &Env) -> TokenStream {
    let compute = dir.kind.compute().expect("a compute construct");
    let errors_before = ctx.error_count();
    let (body, stmts) = prepare_body(ctx, dir, compute, body);
    let (routine_checks, uses) = checks::check_body(ctx, dir, &body, &stmts);
    if let RegionBody::Loop(f) = &body {
        checks::check_loop_vars_unnamed(ctx, dir, f);
    }
    let listed = listed_vars(ctx, dir, &stmts);
    checks::check_readonly_writes(ctx, dir, &uses);
    checks::check_copyin_writes(ctx, dir, &uses);
    let (mut privates, reductions) = construct_privates_and_reductions(dir);
    // A variable reduced by a loop inside `parallel`/`serial` and used outside the region must be
    // named on the construct, and nested reductions of one variable use one operator.
    let loop_reductions = nested_loop_reductions(&stmts);
    if !dir.kind.is_combined() && compute != ComputeKind::Kernels {
        checks::check_loop_reductions_named(ctx, dir, &stmts, &uses, &loop_reductions);
    }
    checks::check_one_operator(ctx, dir, &reductions, &loop_reductions);
    checks::check_reductions_mutable(ctx, dir, env, &loop_reductions);
    checks::check_gang_reductions_one_dim(ctx, dir, &loop_reductions);
    // Implicitly firstprivate (3.3 section 2.6.2): in `parallel` and `serial`, a variable the
    // region assigns as a whole and that no clause names gets a private copy.
    if compute != ComputeKind::Kernels {
        add_implicit_firstprivates(&mut privates, &uses, &listed);
    }
    let default = visible_default(ctx, dir);
    checks::check_default_none(ctx, dir, default.as_ref(), &uses, env, &listed);
    let default_present = default.as_ref().is_some_and(|(v, _)| v == "present");

    let construct = Construct {
        dir,
        compute,
        body: &body,
        stmts,
        env,
        privates,
        reductions,
    };
    let host = construct.host_twin(ctx);
    if ctx.error_count() > errors_before {
        // Report the directive's errors alone: the body as written, without its directives.
        return construct.into_written_body();
    }
    let kernel_arm = construct.kernel_arm(ctx.generic_fn);
    let var_notes = data_attributes(
        ctx,
        dir,
        &uses,
        env,
        compute,
        &construct.privates,
        &loop_reductions,
        default_present,
    );
    ctx.loop_notes.clear();
    let threads = construct.multicore_twin(ctx, &host);
    let loop_notes = std::mem::take(&mut ctx.loop_notes);
    let notes = SiteNotes {
        routine_checks,
        var_notes,
        loop_notes,
        autocompare: autocompare_steps(&uses, env, &construct.privates),
    };
    let versions = Versions {
        host,
        threads,
        kernel_arm,
    };
    construct.launch(&ctx.fn_name, default_present, notes, versions)
}

/// The construct's body made ready for every device, and its statements: `collapse(force)`
/// loops tightened, loops over slice iterators made index loops, a `parallel`'s updates of
/// gang-redundant code repeated, and the reductions a `kernels` region computes without naming
/// them recognized.
fn prepare_body(
    ctx: &mut Ctx,
    dir: &Directive,
    compute: ComputeKind,
    body: RegionBody,
) -> (RegionBody, Vec<Stmt>) {
    let mut body = super::collapse_force::tighten(dir, body);
    // Loops over slice iterators become index loops, for every device alike.
    match &mut body {
        RegionBody::Block(b) => super::iterators::lower_in_stmts(&mut b.stmts),
        RegionBody::Loop(f) => super::iterators::lower_loop(f),
    }
    // Reductions of the `worker` and `vector` loops inside a `kernels` region's loops.
    if compute == ComputeKind::Kernels {
        let found = match &mut body {
            RegionBody::Block(b) => {
                super::recognized_reductions::recognize_nested(&mut b.stmts, false)
            }
            RegionBody::Loop(f) => {
                super::recognized_reductions::recognize_nested(&mut f.body.stmts, true)
            }
        };
        ctx.recognized.extend(found);
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
    (body, stmts)
}

/// Variables named by the construct's clauses, by the `reduction` and `private` clauses of the
/// loops inside it, and by enclosing data constructs: those with a data attribute of their own.
fn listed_vars(ctx: &Ctx, dir: &Directive, stmts: &[Stmt]) -> HashSet<String> {
    let mut listed: HashSet<String> = HashSet::new();
    for c in &dir.clauses {
        listed.extend(c.vars().iter().map(|v| v.name.to_string()));
    }
    let loop_reductions = nested_loop_vars(stmts);
    listed.extend(loop_reductions.iter().cloned());
    listed.extend(ctx_enclosing(ctx));
    listed
}

/// Compute-level private, firstprivate and reduction; on combined constructs `private` and
/// `reduction` belong to the loop (3.3 section 2.11).
fn construct_privates_and_reductions(dir: &Directive) -> (Vec<Ident>, Vec<(RedOp, Ident)>) {
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
    (privates, reductions)
}

/// Adds to `privates` each variable the region assigns as a whole and no clause names (`listed`
/// holds those named).
fn add_implicit_firstprivates(privates: &mut Vec<Ident>, uses: &Uses, listed: &HashSet<String>) {
    for (name, u) in &uses.vars {
        if u.assigned && !listed.contains(name) && !privates.iter().any(|p| p == name) {
            privates.push(Ident::new(name, u.span.unwrap_or_else(Span::call_site)));
        }
    }
}

/// The `default` clause visible here: the construct's own, else the innermost enclosing data
/// construct's (3.3 section 2.6.2).
fn visible_default(ctx: &Ctx, dir: &Directive) -> Option<(String, Span)> {
    super::data_construct::default_clause(dir)
        .or_else(|| ctx.enclosing_default.iter().rev().flatten().next().cloned())
}

/// A checked construct and what its versions are made from: the body as prepared, its
/// statements, the bindings around it, and its private copies and reductions.
struct Construct<'a> {
    dir: &'a Directive,
    compute: ComputeKind,
    body: &'a RegionBody,
    stmts: Vec<Stmt>,
    env: &'a Env,
    privates: Vec<Ident>,
    reductions: Vec<(RedOp, Ident)>,
}

/// The three versions of a region's body, of which the launch runs one.
struct Versions {
    /// The sequential host twin.
    host: TokenStream,
    /// The multicore twin (the host twin run on one thread for `serial`).
    threads: TokenStream,
    /// The kernel for a device.
    kernel_arm: TokenStream,
}

/// What the expansion records about the region besides its versions.
struct SiteNotes {
    /// Checks that the functions the region calls are `#[acc::routine]`s.
    routine_checks: Vec<TokenStream>,
    /// Each variable's data attribute, for `ACC_INFO`.
    var_notes: Vec<(String, String)>,
    /// The loop constructs' sites, for `ACC_INFO`.
    loop_notes: Vec<TokenStream>,
    /// The `ACC_AUTOCOMPARE` steps ([`autocompare_steps`]).
    autocompare: (Vec<TokenStream>, Vec<TokenStream>, Vec<TokenStream>),
}

impl Construct<'_> {
    /// The region's statements as `mode` runs them, the construct's size clauses evaluated.
    fn region_stmts(&self, ctx: &mut Ctx, mode: Mode) -> Vec<Stmt> {
        let mut cx = RegionCx::new(
            ctx,
            self.compute,
            mode,
            self.env.clone(),
            self.reductions.clone(),
            self.privates.clone(),
        );
        let mut out = match self.body {
            RegionBody::Block(_) => cx.transform_stmts(self.stmts.clone(), false),
            RegionBody::Loop(f) => {
                let loop_dir = loop_part(self.dir);
                vec![cx.expand_loop(Some(loop_dir), f.clone(), false)]
            }
        };
        // The construct's own size clauses, which the CPU devices do not use: evaluated, so
        // that the names they use are used.
        let sizes: Vec<Expr> = super::region::size_exprs(&compute_part(self.dir));
        if !sizes.is_empty() {
            out.insert(0, syn::parse_quote!(let _ = (#(&(#sizes),)*);));
        }
        out
    }

    /// The sequential host twin, with the construct's private copies and reductions.
    fn host_twin(&self, ctx: &mut Ctx) -> TokenStream {
        wrap(
            &self.region_stmts(ctx, Mode::Host),
            &self.privates,
            &self.reductions,
        )
    }

    /// The multicore version: the region across threads, or, for `serial`, the host twin.
    fn multicore_twin(&self, ctx: &mut Ctx, host: &TokenStream) -> TokenStream {
        if self.compute == ComputeKind::Serial {
            // A serial region runs on one thread even on multicore (`Launch::exec` never gives
            // threads for it).
            quote!(__acc_launch.run_sequential(|| #host))
        } else {
            let threads = wrap(
                &self.region_stmts(ctx, Mode::Multicore),
                &self.privates,
                &self.reductions,
            );
            quote!(__acc_inh.run(|| #threads))
        }
    }

    /// The body as written, without its directives: what a construct with errors expands to,
    /// so that its errors are reported alone.
    fn into_written_body(self) -> TokenStream {
        let mut block = Block {
            brace_token: Default::default(),
            stmts: self.stmts,
        };
        super::strip_all(&mut block);
        quote!(#block)
    }

    /// The kernel version: the region built as a kernel for the device, with the options each
    /// device type's clauses give.
    fn kernel_arm(&self, generic_fn: bool) -> TokenStream {
        let dir = self.dir;
        let combined = dir.kind.is_combined();
        let combined_loop = if combined { Some(loop_part(dir)) } else { None };
        let sections = dir.clauses.iter().any(|c| c.device_types.is_some())
            || super::kernel::has_device_type_sections(&self.stmts);
        super::kernel::kernel_arm(
            self.compute,
            &self.stmts,
            combined_loop.as_ref(),
            self.env,
            &self.reductions,
            &self.privates,
            generic_fn,
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
        )
    }

    /// The construct's expansion: the region's site, the launch, its data moved in and out
    /// around the version the launch picks, and the `ACC_AUTOCOMPARE` run of the host twin.
    fn launch(
        &self,
        fn_name: &str,
        default_present: bool,
        notes: SiteNotes,
        versions: Versions,
    ) -> TokenStream {
        let dir = self.dir;
        let site_kind = match self.compute {
            ComputeKind::Parallel => quote!(Parallel),
            ComputeKind::Kernels => quote!(Kernels),
            ComputeKind::Serial => quote!(Serial),
        };
        let loc = location(dir.span);
        let clauses = launch_clauses(dir, default_present);
        let data_vars = data_construct::clause_vars(dir, DATA_CLAUSES, &loc);
        let data_hosts = data_construct::exit_hosts(dir, DATA_CLAUSES);
        let SiteNotes {
            routine_checks,
            var_notes,
            loop_notes,
            autocompare: (ac_before, ac_device, ac_host),
        } = notes;
        let Versions {
            host,
            threads,
            kernel_arm,
        } = versions;
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
