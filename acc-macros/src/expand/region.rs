//! The body of a compute region (or routine), rewritten for one way of running it: `loop`
//! directives, `atomic` statements and, on multicore, the outermost parallel loop of each nest
//! split into chunks across the device's threads (docs/design-notes/ir-and-backends.md).

use std::collections::{HashMap, HashSet};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::visit_mut::{self, VisitMut};
use syn::{Block, Expr, ExprForLoop, Ident, Pat, Stmt};

use super::{atomic, attrs, expr_stmt, reparse_expr, Ctx};
use crate::analysis::bindings::Env;
use crate::analysis::depend::provably_independent;
use crate::analysis::fastpath;
use crate::analysis::subst::substitute;
use crate::analysis::uses::{scan_expr, scan_stmts, Uses};
use crate::directive::{ClauseArgs, ClauseName as C, ComputeKind, Directive, DirectiveKind, RedOp};

/// How the rewritten body will run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Sequentially (host device, `if(false)`, `self`, serial regions, routines).
    Host,
    /// On the multicore device: outermost parallel loops split across `__acc_threads`.
    Multicore,
}

/// Rewrites region bodies for one mode.
pub struct RegionCx<'a> {
    pub ctx: &'a mut Ctx,
    compute: Option<ComputeKind>,
    mode: Mode,
    env: Env,
    region_reductions: Vec<(RedOp, Ident)>,
    region_privates: Vec<Ident>,
}

/// One loop of a nest associated with a loop construct.
struct Level {
    pat: Pat,
    iter: Expr,
    label: Option<syn::Label>,
    span: Span,
}

/// A loop's iterator as a space: a range and the `.rev()` / `.step_by(s)` applied to it.
struct SpaceSpec {
    range: syn::ExprRange,
    ops: Vec<Option<Expr>>, // None: rev(); Some(s): step_by(s)
}

fn parse_space(e: &Expr) -> Option<SpaceSpec> {
    match e {
        Expr::Paren(p) => parse_space(&p.expr),
        Expr::Group(g) => parse_space(&g.expr),
        Expr::Range(r) if r.start.is_some() && r.end.is_some() => Some(SpaceSpec {
            range: r.clone(),
            ops: vec![],
        }),
        Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => {
            let mut s = parse_space(&m.receiver)?;
            s.ops.push(None);
            Some(s)
        }
        Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
            let mut s = parse_space(&m.receiver)?;
            s.ops.push(Some(m.args[0].clone()));
            Some(s)
        }
        _ => None,
    }
}

impl SpaceSpec {
    fn tokens(&self) -> TokenStream {
        let r = &self.range;
        let inclusive = matches!(r.limits, syn::RangeLimits::Closed(_));
        let ctor = if inclusive {
            quote!(inclusive)
        } else {
            quote!(new)
        };
        if self.ops.is_empty() {
            return quote!(::acc::__rt::space::UnitSpace::#ctor(#r));
        }
        let ops = self.ops.iter().map(|o| match o {
            None => quote!(.rev()),
            Some(s) => quote!(.step_by(#s)),
        });
        quote!(::acc::__rt::space::StridedSpace::#ctor(#r) #(#ops)*)
    }
}

const RANGE_MSG: &str = "a loop associated with a loop construct iterates over a range: `a..b` or `a..=b`, \
     optionally with `.rev()` and `.step_by(s)`, so its trip count is known before it starts (3.3 section 2.9); \
     or over a slice iterator acc turns into one: `a.iter()`, `a.iter_mut()`, `&a`, `a.chunks(n)`, \
     `a.chunks_exact(n)` (`_mut` too), with `.enumerate()` and `.zip(..)` of them";

impl<'a> RegionCx<'a> {
    /// A rewriter for the body of a compute region.
    pub fn new(
        ctx: &'a mut Ctx,
        compute: ComputeKind,
        mode: Mode,
        env: Env,
        region_reductions: Vec<(RedOp, Ident)>,
        region_privates: Vec<Ident>,
    ) -> Self {
        RegionCx {
            ctx,
            compute: Some(compute),
            mode,
            env,
            region_reductions,
            region_privates,
        }
    }

    /// A rewriter for the body of an `#[acc::routine]`: loops run sequentially.
    pub fn for_routine(ctx: &'a mut Ctx, env: Env) -> Self {
        RegionCx {
            ctx,
            compute: None,
            mode: Mode::Host,
            env,
            region_reductions: vec![],
            region_privates: vec![],
        }
    }

    pub fn transform_block(&mut self, b: &mut Block, in_parallel: bool) {
        let stmts = std::mem::take(&mut b.stmts);
        self.env.push();
        b.stmts = self.transform_stmts(stmts, in_parallel);
        self.env.pop();
    }

    /// Rewrites statements; `in_parallel` when they already run inside a split loop.
    pub fn transform_stmts(&mut self, stmts: Vec<Stmt>, in_parallel: bool) -> Vec<Stmt> {
        let mut out = Vec::with_capacity(stmts.len());
        for mut st in stmts {
            let dirs = attrs::take_directives(&mut st);
            if let Some((kind, attr)) = dirs.first() {
                out.push(self.directive_stmt(*kind, attr, st, in_parallel));
                continue;
            }
            let auto_loop = self.compute == Some(ComputeKind::Kernels)
                && self.mode == Mode::Multicore
                && !in_parallel;
            match st {
                Stmt::Expr(Expr::ForLoop(f), _) if auto_loop => {
                    out.push(self.expand_loop(None, f, in_parallel))
                }
                mut other => {
                    Nested {
                        cx: self,
                        in_parallel,
                    }
                    .visit_stmt_mut(&mut other);
                    if let Stmt::Local(l) = &other {
                        self.env.add_local(l);
                    }
                    out.push(other);
                }
            }
        }
        out
    }

    fn directive_stmt(
        &mut self,
        kind: DirectiveKind,
        attr: &syn::Attribute,
        st: Stmt,
        in_parallel: bool,
    ) -> Stmt {
        let Some((dir, span)) = self.ctx.stmt_directive(kind, attr) else {
            return st;
        };
        match kind {
            DirectiveKind::Loop => match st {
                Stmt::Expr(Expr::ForLoop(f), _) => self.expand_loop(Some(dir), f, in_parallel),
                other => {
                    self.ctx.error(
                        span,
                        "`loop` goes on a `for` loop over a range (3.3 section 2.9)",
                    );
                    other
                }
            },
            DirectiveKind::Atomic => atomic::expand_atomic(self.ctx, &dir, st),
            k if k.compute().is_some() => {
                self.ctx.error(span, format!("`{}` cannot be nested inside a compute region or routine (3.3 section 2.5: compute constructs do not nest)", k.spelling()));
                st
            }
            DirectiveKind::Data | DirectiveKind::HostData => {
                self.ctx.error(
                    span,
                    format!(
                        "`{}` is not allowed inside a compute region or routine (3.3 section {})",
                        kind.spelling(),
                        if kind == DirectiveKind::Data {
                            "2.6.5"
                        } else {
                            "2.8"
                        }
                    ),
                );
                st
            }
            other => {
                self.ctx.error(
                    span,
                    format!(
                        "`{}` goes on a function, not on a statement",
                        other.spelling()
                    ),
                );
                st
            }
        }
    }

    /// A loop construct (or, in `kernels` on multicore, a bare `for`, treated as `auto`). The
    /// expressions of its size clauses (`gang(num: ..)`, `worker(num: ..)`, `vector(length:
    /// ..)`), which the CPU devices do not use, are evaluated before it, so that the names
    /// they use are used.
    pub fn expand_loop(
        &mut self,
        dir: Option<Directive>,
        f: ExprForLoop,
        in_parallel: bool,
    ) -> Stmt {
        let sizes = dir.as_ref().map(size_exprs).unwrap_or_default();
        let st = self.expand_loop_nest(dir, f, in_parallel);
        if sizes.is_empty() {
            return st;
        }
        syn::parse_quote!({ let _ = (#(&(#sizes),)*); #st })
    }

    fn expand_loop_nest(
        &mut self,
        dir: Option<Directive>,
        f: ExprForLoop,
        in_parallel: bool,
    ) -> Stmt {
        // The clauses that apply on the device this rewrite runs on (3.3 section 2.4).
        let device = if self.mode == Mode::Multicore {
            "multicore"
        } else {
            "host"
        };
        let dir = dir.map(|d| d.for_device(device));
        let depth = nest_depth(dir.as_ref());
        let (levels, cur) = match self.nest_levels(dir.as_ref(), depth, f) {
            Ok(nest) => nest,
            Err(as_written) => return *as_written,
        };
        let body_stmts = cur.body.stmts.clone();
        let names: Vec<String> = levels
            .iter()
            .flat_map(|l| crate::analysis::bindings::pat_bindings(&l.pat, false))
            .map(|(n, _)| n)
            .collect();

        // Checks that hold for every loop construct.
        let spaces = if let Some(d) = &dir {
            self.check_loop_construct(d, &levels, &names, &body_stmts, depth)
        } else {
            levels.iter().filter_map(|l| parse_space(&l.iter)).collect()
        };

        let reductions: Vec<(RedOp, Ident)> = dir
            .iter()
            .flat_map(|d| d.general(C::Reduction))
            .flat_map(|c| match &c.args {
                ClauseArgs::Reduction { op, vars, .. } => vars
                    .iter()
                    .map(|v| (*op, v.name.clone()))
                    .collect::<Vec<_>>(),
                _ => vec![],
            })
            .collect();
        let privates: Vec<Ident> = dir
            .iter()
            .flat_map(|d| d.general(C::Private))
            .flat_map(|c| c.vars().iter().map(|v| v.name.clone()))
            .collect();

        // A loop the multicore device splits. On the host it runs as that device's one chunk
        // of all its iterations (`threaded`), in order: the same code, so the same speed
        // (`Vec`s as slices, accesses proven in bounds once).
        let splittable = !in_parallel
            && spaces.len() == levels.len()
            && levels
                .iter()
                .all(|l| matches!(&l.pat, Pat::Ident(_) | Pat::Wild(_)))
            && self.parallelizable(dir.as_ref(), &names, &body_stmts, &reductions);
        let parallel = self.mode == Mode::Multicore && splittable;
        let one_chunk = self.mode == Mode::Host && splittable && self.compute.is_some();

        if self.mode == Mode::Multicore {
            self.note_loop(dir.as_ref(), &levels, &names, parallel, in_parallel);
        }
        // Rewrite the body with the loop variables in scope.
        self.env.push();
        for l in &levels {
            self.env.add_pat(&l.pat, false);
        }
        let body = self.transform_stmts(body_stmts, in_parallel || parallel || one_chunk);
        self.env.pop();

        let ts = if parallel || one_chunk {
            self.threaded(
                &levels,
                &spaces,
                body,
                &names,
                &reductions,
                &privates,
                one_chunk,
            )
        } else {
            local_reductions(sequential(&levels, body, &privates), &reductions)
        };
        expr_stmt(ts)
    }

    /// The nest: `depth` tightly nested loops, from `f`, and the innermost of them, whose body
    /// is the nest's. Where the loops are not nested tightly enough, the error is reported and
    /// the loop where the nest breaks off is given back as written.
    fn nest_levels(
        &mut self,
        dir: Option<&Directive>,
        depth: usize,
        f: ExprForLoop,
    ) -> Result<(Vec<Level>, ExprForLoop), Box<Stmt>> {
        let mut levels = Vec::new();
        let mut cur = f;
        loop {
            levels.push(Level {
                pat: (*cur.pat).clone(),
                iter: (*cur.expr).clone(),
                label: cur.label.clone(),
                span: cur.for_token.span,
            });
            if levels.len() == depth {
                break;
            }
            match cur.body.stmts.as_slice() {
                [Stmt::Expr(Expr::ForLoop(inner), _)]
                    if attrs::stmt_attrs(&cur.body.stmts[0]).is_empty() =>
                {
                    cur = inner.clone()
                }
                _ => {
                    let force = dir
                        .iter()
                        .flat_map(|d| &d.clauses)
                        .any(|c| matches!(c.args, ClauseArgs::Collapse { force: true, .. }));
                    let msg = if force {
                        format!("`collapse(force: {depth})` supports `let` bindings between the collapsed loops (moved into the innermost loop) when no inner loop's range uses them; other code between them is not supported yet: move it into the innermost loop (3.3 section 2.9.1)")
                    } else {
                        format!("`collapse`/`tile` over {depth} loops needs {depth} tightly nested `for` loops with nothing between them (3.3 section 2.9.1)")
                    };
                    self.ctx.error(cur.for_token.span, msg);
                    return Err(Box::new(Stmt::Expr(Expr::ForLoop(cur), None)));
                }
            }
        }
        Ok((levels, cur))
    }

    /// The checks that hold for every loop construct `d`: each level iterates over a range
    /// (its iteration spaces, returned) bound to a plain name, collapsed loops are
    /// rectangular, and no `break` (nor, when collapsed, `continue`) leaves the nest.
    fn check_loop_construct(
        &mut self,
        d: &Directive,
        levels: &[Level],
        names: &[String],
        body_stmts: &[Stmt],
        depth: usize,
    ) -> Vec<SpaceSpec> {
        let mut spaces = Vec::new();
        for (i, l) in levels.iter().enumerate() {
            match parse_space(&l.iter) {
                Some(s) => spaces.push(s),
                None => self.ctx.error_spanned(&l.iter, RANGE_MSG),
            }
            if !matches!(&l.pat, Pat::Ident(_) | Pat::Wild(_)) {
                self.ctx.error(
                    l.pat.span(),
                    "the variable of a loop associated with a loop construct is a plain name",
                );
            }
            if i > 0 {
                let inner = scan_expr(&l.iter, &[]);
                for outer in &names[..i] {
                    if inner.vars.contains_key(outer) {
                        self.ctx.error_spanned(&l.iter, format!(
                            "the trip count of a collapsed loop may not depend on `{outer}`: collapsed loops must be rectangular (3.3 section 2.9.1)"
                        ));
                    }
                }
            }
        }
        let uses = scan_stmts(body_stmts, names);
        for (span, what) in &uses.escapes {
            if *what == "break" || depth > 1 {
                self.ctx.error(*span, format!("`{what}` leaves a loop associated with `{}`; every iteration must run (3.3 section 2.9)", d.kind.spelling()));
            }
        }
        spaces
    }

    /// Records how the multicore device runs a loop construct (`ACC_INFO`).
    fn note_loop(
        &mut self,
        dir: Option<&Directive>,
        levels: &[Level],
        names: &[String],
        split: bool,
        in_parallel: bool,
    ) {
        let span = levels
            .first()
            .map_or_else(proc_macro2::Span::call_site, |l| l.span);
        let line = quote::quote_spanned!(span=> ::core::line!());
        let vars = names.join(", ");
        let directive = dir.map_or_else(String::new, |d| {
            d.clauses
                .iter()
                .map(|c| c.name.spelling())
                .collect::<Vec<_>>()
                .join(" ")
        });
        let seq = dir.is_some_and(|d| d.general(C::Seq).next().is_some())
            || self.compute == Some(ComputeKind::Serial);
        let how = match (split, in_parallel, seq) {
            (true, ..) => quote!(Split),
            (false, true, _) => quote!(InsideSplit),
            (false, false, true) => quote!(Seq),
            _ => quote!(NotParallel),
        };
        self.ctx.loop_notes.push(quote! {
            ::acc::__rt::LoopSite { line: #line, vars: #vars, directive: #directive, on_threads: ::acc::__rt::LoopOnThreads::#how }
        });
    }

    fn parallelizable(
        &self,
        dir: Option<&Directive>,
        names: &[String],
        body: &[Stmt],
        reductions: &[(RedOp, Ident)],
    ) -> bool {
        let Some(compute) = self.compute else {
            return false;
        };
        if compute == ComputeKind::Serial || dir.is_some_and(|d| d.general(C::Seq).next().is_some())
        {
            return false;
        }
        let independent = dir.is_some_and(|d| d.general(C::Independent).next().is_some());
        let auto = dir.is_none_or(|d| d.general(C::Auto).next().is_some())
            || compute == ComputeKind::Kernels;
        if independent || !auto {
            return true;
        }
        // An `auto` loop: parallel only where the dependence test proves it.
        let mut reds: HashSet<String> = reductions.iter().map(|(_, v)| v.to_string()).collect();
        reds.extend(self.region_reductions.iter().map(|(_, v)| v.to_string()));
        names.len() == 1 && provably_independent(&names[0], body, &reds)
    }

    /// The nest split into chunks run by `__acc_threads`; with `one_chunk` (the host device),
    /// run as one chunk of all its iterations on the calling thread, its reduction variables
    /// updated in place, in order, as the loop is written.
    #[allow(clippy::too_many_arguments)]
    fn threaded(
        &mut self,
        levels: &[Level],
        spaces: &[SpaceSpec],
        body: Vec<Stmt>,
        names: &[String],
        loop_reductions: &[(RedOp, Ident)],
        loop_privates: &[Ident],
        one_chunk: bool,
    ) -> TokenStream {
        let uses = scan_stmts(&body, names);
        let reductions = self.chunk_reductions(&uses, loop_reductions);
        let privates = self.chunk_privates(&uses, loop_privates, one_chunk);
        let excluded: HashSet<String> = reductions
            .iter()
            .map(|(_, v)| v.to_string())
            .chain(privates.iter().map(|p| p.to_string()))
            .collect();
        let mut chunk_params = self.chunk_params(&uses, &excluded);
        chunk_params.fit_call_arity();
        let ChunkParams {
            shares,
            map,
            params,
            args,
        } = chunk_params;
        let space_vars: Vec<Ident> = (0..levels.len())
            .map(|i| format_ident!("__acc_s{}", i))
            .collect();
        let space_inits = space_vars.iter().zip(spaces).map(|(v, s)| {
            let t = s.tokens();
            quote!(let #v = #t;)
        });
        let trips = if levels.len() == 1 {
            quote!(__acc_s0.trips())
        } else {
            quote!(::acc::__rt::space::collapsed_trips(&[#(#space_vars.trips()),*]))
        };
        let iterate = chunk_iterations(levels, spaces, body, &excluded, &space_vars);
        // Route the chunk's uses of shared variables through their views.
        let mut chunk: Vec<Stmt> = match syn::parse2::<Block>(quote!({ #iterate })) {
            Ok(b) => b.stmts,
            Err(e) => {
                self.ctx.push(e);
                Vec::new()
            }
        };
        substitute(&mut chunk, &map);
        let call = format_ident!("call_{}", params.len());
        // Each chunk's reduction variables: from the operator's identity, combined after; on
        // the host's one chunk, from their current values, written back (the loop as written).
        let red_inits = if one_chunk {
            red_vars_inits(&reductions)
        } else {
            super::compute::reduction_inits(&reductions)
        };
        let red_combines = super::compute::reduction_combines(&reductions, &quote!(__acc_part));
        let red_vars: Vec<&Ident> = reductions.iter().map(|(_, v)| v).collect();
        let partials = if reductions.is_empty() {
            quote!()
        } else {
            quote!((#(#red_vars,)*))
        };
        // The chunk: the body on its parameters, with its private copies.
        let chunk_fn = quote! {
            ::acc::__rt::#call(#(#args,)* |#(#params),*| {
                #(#red_inits)*
                #(#[allow(unused_mut)] let mut #privates = { use ::acc::__rt::{PrivateClone as _, PrivateOwned as _}; (&::acc::__rt::Private(&#privates)).private_copy() };)*
                #(#chunk)*
                #partials
            })
        };
        if one_chunk {
            let write_back = if reductions.is_empty() {
                quote!()
            } else {
                quote!((#(#red_vars,)*) = __acc_part;)
            };
            return quote! {
                #(#space_inits)*
                #(#shares)*
                // The host twin itself: the user's lints are reported here (only acc's own
                // constructs are allowed).
                #[allow(unused_unsafe, unused_parens)]
                let __acc_part = {
                    let (__acc_k0, __acc_k1): (u64, u64) = (0, #trips);
                    #chunk_fn
                };
                #write_back
            };
        }
        quote! {
            #(#space_inits)*
            #(#shares)*
            // A second copy of the user's code: its lints are reported once, on the host twin.
            #[allow(unused_unsafe, unused_mut, unused_variables, clippy::all)]
            let __acc_parts = ::acc::__rt::parallel_chunks(__acc_threads, &__acc_inh, #trips, |__acc_k0: u64, __acc_k1: u64| {
                #chunk_fn
            });
            #[allow(unused_variables)]
            for __acc_part in __acc_parts {
                #(#red_combines)*
            }
        }
    }

    /// Reductions: the loop's own, and the region's that the loop updates.
    fn chunk_reductions(
        &self,
        uses: &Uses,
        loop_reductions: &[(RedOp, Ident)],
    ) -> Vec<(RedOp, Ident)> {
        let mut reductions: Vec<(RedOp, Ident)> = loop_reductions.to_vec();
        for (op, v) in &self.region_reductions {
            if uses.vars.contains_key(&v.to_string()) && !reductions.iter().any(|(_, r)| r == v) {
                reductions.push((*op, v.clone()));
            }
        }
        reductions
    }

    /// Private per chunk: the loop's private variables and region-private ones it writes.
    /// The host's one chunk is its one gang, which writes the region's own copies.
    fn chunk_privates(&self, uses: &Uses, loop_privates: &[Ident], one_chunk: bool) -> Vec<Ident> {
        let mut privates: Vec<Ident> = loop_privates.to_vec();
        for p in self.region_privates.iter().filter(|_| !one_chunk) {
            let written = uses
                .vars
                .get(&p.to_string())
                .is_some_and(|u| u.is_definitely_written());
            if written && !privates.contains(p) {
                privates.push(p.clone());
            }
        }
        privates
    }

    /// Variables the chunks write are shared through raw views (the loop is independent, so
    /// no two iterations touch the same element: 3.3 section 2.9.6). The chunk body takes
    /// them, and the variables it only reads, as parameters: `&mut T` and `&T`, which the
    /// compiler knows do not alias. Uses become `(*param)`, a place of the original type.
    /// `excluded` are the chunk's reduction variables and private copies, its own.
    fn chunk_params(&self, uses: &Uses, excluded: &HashSet<String>) -> ChunkParams {
        let mut shares = Vec::new();
        let mut map = HashMap::new();
        let mut params = Vec::new();
        let mut args = Vec::new();
        for (name, u) in &uses.vars {
            if excluded.contains(name) || name.starts_with("__acc") {
                continue;
            }
            let span = u.span.unwrap_or_else(Span::call_site);
            let var = Ident::new(name, span);
            let binding = self.env.get(name);
            let may_write = binding.is_none_or(|b| b.mutable || b.ref_mut);
            let writes =
                u.is_definitely_written() || (u.maybe_mut && may_write && binding.is_some());
            if writes {
                let view = format_ident!("__acc_sw_{}", name);
                let param = format_ident!("__acc_w_{}", name);
                let through_ref = binding.is_some_and(|b| !b.mutable);
                // A `Vec` goes to the chunks as its slice (`ChunkArg`).
                let chunk = |place: TokenStream| {
                    quote!({
                        #[allow(unused_imports)]
                        use ::acc::__rt::{ChunkSame as _, ChunkVec as _};
                        (&::acc::__rt::ChunkArg::of(#place)).chunk()
                    })
                };
                if through_ref {
                    let p = chunk(quote!(&mut *#var));
                    shares.push(quote!(let #view = ::acc::__rt::SharedMut::from_raw(#p);));
                    map.insert(name.clone(), reparse_expr(quote!((&mut *#param))));
                } else {
                    let p = chunk(quote!(&mut #var));
                    shares.push(quote!(let #view = ::acc::__rt::SharedMut::from_raw(#p);));
                    map.insert(name.clone(), reparse_expr(quote!((*#param))));
                }
                params.push(param);
                args.push(quote!(unsafe { #view.get() }));
            } else if name
                .chars()
                .next()
                .is_some_and(|c| c.is_lowercase() || c == '_')
            {
                // Capitalized names are constants, statics and unit variants: left as they are.
                let param = format_ident!("__acc_r_{}", name);
                map.insert(name.clone(), reparse_expr(quote!((*#param))));
                params.push(param);
                args.push(quote!({
                    #[allow(unused_imports)]
                    use ::acc::__rt::{ChunkRefSame as _, ChunkRefVec as _};
                    (&::acc::__rt::ChunkRef::of(&#var)).chunk()
                }));
            }
        }
        ChunkParams {
            shares,
            map,
            params,
            args,
        }
    }
}

/// How many loops of the nest the directive's `collapse` or `tile` takes (1 without either).
fn nest_depth(dir: Option<&Directive>) -> usize {
    dir.map_or(1, |d| {
        d.clauses
            .iter()
            .find_map(|c| match &c.args {
                ClauseArgs::Collapse { n, .. } if c.device_types.is_none() => Some(*n),
                ClauseArgs::Tile(sizes) if c.device_types.is_none() => Some(sizes.len()),
                _ => None,
            })
            .unwrap_or(1)
    })
}

/// How a chunk takes the variables its body uses ([`RegionCx::chunk_params`]).
struct ChunkParams {
    /// The views of the variables the chunks write, made before they run.
    shares: Vec<TokenStream>,
    /// Each variable the chunk takes, by name: its uses in the chunk, through its parameter.
    map: HashMap<String, Expr>,
    /// The chunk's parameters, and the arguments the call passes them.
    params: Vec<Ident>,
    args: Vec<TokenStream>,
}

impl ChunkParams {
    /// `::acc::__rt` has `call_0` to `call_12`. Past that: the body reads its variables where
    /// they are, and only the written ones are parameters.
    fn fit_call_arity(&mut self) {
        if self.params.len() > 12 {
            let reads: Vec<String> = self
                .map
                .iter()
                .filter(|(_, e)| quote!(#e).to_string().contains("__acc_r_"))
                .map(|(n, _)| n.clone())
                .collect();
            for n in reads {
                self.map.remove(&n);
            }
            let keep: Vec<usize> = (0..self.params.len())
                .filter(|&i| !self.params[i].to_string().starts_with("__acc_r_"))
                .collect();
            self.params = keep.iter().map(|&i| self.params[i].clone()).collect();
            self.args = keep.iter().map(|&i| self.args[i].clone()).collect();
        }
    }
}

/// A chunk's iterations of the nest, from `__acc_k0` to `__acc_k1` of its collapsed space
/// (`space_vars` hold each level's space), the innermost loop versioned where the plan of
/// `fastpath` proves its accesses in bounds. `excluded` are the chunk's own variables.
fn chunk_iterations(
    levels: &[Level],
    spaces: &[SpaceSpec],
    body: Vec<Stmt>,
    excluded: &HashSet<String>,
    space_vars: &[Ident],
) -> TokenStream {
    let inner_label = &levels[levels.len() - 1].label;
    let inner_pat = &levels[levels.len() - 1].pat;
    let inner_space = &space_vars[levels.len() - 1];
    // Loop versioning (see `fastpath`): inner sequential loops, then the chunk's own loop.
    let mut body = body;
    fastpath::version_inner_loops(&mut body);
    let (k0, k1) = if levels.len() == 1 {
        (quote!(__acc_k0), quote!(__acc_k1))
    } else {
        (quote!(__acc_lo), quote!(__acc_hi))
    };
    let plan = match (inner_pat, spaces[levels.len() - 1].ops.is_empty()) {
        (Pat::Ident(pi), true) if pi.by_ref.is_none() && pi.subpat.is_none() => {
            fastpath::Plan::new(&body, &pi.ident, excluded)
        }
        _ => None,
    };
    let run = match plan {
        None => {
            quote!(#inner_label for #inner_pat in #inner_space.chunk(#k0, #k1) { #(#body)* })
        }
        Some(plan) => {
            let checks = plan.checks(
                &quote!(#inner_space.value(#k0)),
                &quote!(#inner_space.value(#k1 - 1)),
            );
            let fast = plan.fast_body(&body);
            quote! {
                if #k0 < #k1 && #checks {
                    #inner_label for #inner_pat in #inner_space.chunk(#k0, #k1) { #(#fast)* }
                } else {
                    #inner_label for #inner_pat in #inner_space.chunk(#k0, #k1) { #(#body)* }
                }
            }
        }
    };
    if levels.len() == 1 {
        run
    } else {
        let outer = levels[..levels.len() - 1].iter().enumerate().map(|(i, l)| {
            let (pat, sv) = (&l.pat, &space_vars[i]);
            quote!(let #pat = #sv.value(__acc_o[#i]);)
        });
        quote! {
            for (__acc_o, __acc_lo, __acc_hi) in ::acc::__rt::space::CollapsedRuns::new([#(#space_vars.trips()),*], __acc_k0, __acc_k1) {
                #(#outer)*
                #run
            }
        }
    }
}

/// `let mut v = v;` for each reduction variable: a chunk's copy starting from the variable's
/// current value.
fn red_vars_inits(reductions: &[(RedOp, Ident)]) -> Vec<TokenStream> {
    reductions
        .iter()
        .map(|(_, v)| quote!(#[allow(unused_mut)] let mut #v = #v;))
        .collect()
}

/// `ts` (a loop run in order) working on copies of its reduction variables, written back
/// after it: `(s,) = { let mut s = s; <loop>; (s,) };`. The result is the loop's, and the copies
/// are locals of the function the loop runs in, which the optimizer keeps in registers; the
/// variables themselves are captured by reference into the closure a region runs in, and a
/// dot product updating one through that reference ran at 0.38x of the plain loop.
fn local_reductions(ts: TokenStream, reductions: &[(RedOp, Ident)]) -> TokenStream {
    if reductions.is_empty() {
        return ts;
    }
    let vars: Vec<&Ident> = reductions.iter().map(|(_, v)| v).collect();
    quote! {
        #[allow(unused_parens)]
        {
            (#(#vars,)*) = {
                #(#[allow(unused_mut)] let mut #vars = #vars;)*
                #ts;
                (#(#vars,)*)
            };
        }
    }
}

/// The nest as written, with its private variables copied first.
fn sequential(levels: &[Level], body: Vec<Stmt>, privates: &[Ident]) -> TokenStream {
    let mut ts = quote!(#(#body)*);
    for l in levels.iter().rev() {
        let (label, pat, iter) = (&l.label, &l.pat, &l.iter);
        ts = quote!(#label for #pat in #iter { #ts });
    }
    quote! {
        #(#[allow(unused_mut)] let mut #privates = { use ::acc::__rt::{PrivateClone as _, PrivateOwned as _}; (&::acc::__rt::Private(&#privates)).private_copy() };)*
        #ts
    }
}

/// Finds statement directives inside the blocks nested in a statement (`if`, `while`, bare
/// `for` bodies, blocks).
struct Nested<'c, 'a> {
    cx: &'c mut RegionCx<'a>,
    in_parallel: bool,
}

impl VisitMut for Nested<'_, '_> {
    fn visit_block_mut(&mut self, b: &mut Block) {
        self.cx.transform_block(b, self.in_parallel);
    }
    fn visit_expr_for_loop_mut(&mut self, f: &mut ExprForLoop) {
        self.visit_expr_mut(&mut f.expr);
        self.cx.env.push();
        self.cx.env.add_pat(&f.pat, false);
        self.visit_block_mut(&mut f.body);
        self.cx.env.pop();
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Closure(_) = e {
            return;
        }
        visit_mut::visit_expr_mut(self, e);
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// The expressions of a directive's launch-size clauses, in every `device_type` section:
/// `num_gangs`, `num_workers`, `vector_length`, `gang(num: .., dim: ..)`, `worker(num: ..)` and
/// `vector(length: ..)`. The CPU devices do not use them; the code they expand to evaluates
/// them, so that a name only they use is not reported unused.
pub(super) fn size_exprs(d: &Directive) -> Vec<syn::Expr> {
    let mut out = Vec::new();
    for c in &d.clauses {
        match (&c.name, &c.args) {
            (C::NumGangs | C::NumWorkers | C::VectorLength, ClauseArgs::Expr(e)) => {
                out.push((**e).clone())
            }
            (C::NumGangs | C::NumWorkers | C::VectorLength, ClauseArgs::Exprs(v)) => {
                out.extend(v.iter().cloned())
            }
            (_, ClauseArgs::Gang { num, dim, .. }) => {
                out.extend(num.iter().chain(dim.iter()).map(|e| (**e).clone()))
            }
            (_, ClauseArgs::Level { arg: Some(e) }) => out.push((**e).clone()),
            _ => {}
        }
    }
    out
}
