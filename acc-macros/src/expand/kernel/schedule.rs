//! Which loops of a region run in parallel on the GPUs, and how: the schedule of a parallel
//! loop (its `gang`/`worker`/`vector` clauses, or the nest mapping nvc's users expect), the inner
//! loops a gang's threads may share, and `kernels`' `auto` rules (3.3 section 2.9.6).

use super::*;

impl Tr {
    /// The schedule of a loop that runs in parallel: its `gang`, `worker` and `vector`
    /// clauses; without any, gang and vector over its iterations, or gang over them and
    /// vector over the inner loops, where they are independent too
    /// ([`Tr::inner_vector_loops`], which it marks as [`Tr::vector_next`]).
    pub(super) fn parallel_schedule(
        &mut self,
        dir: Option<&Directive>,
        levels: &[Level],
        body_stmts: &[Stmt],
    ) -> TokenStream {
        let has = |c| dir.is_some_and(|d| d.general(c).next().is_some());
        let (g, w, v) = (has(C::Gang), has(C::Worker), has(C::Vector));
        let (g, w, v) = if !(g || w || v) {
            // A nest whose inner loop is independent too: gang over the outer, vector over
            // the inner (adjacent threads along the inner loop, which runs along memory in a
            // row-major nest), as nvc maps it.
            match (levels.len(), self.inner_vector_loops(body_stmts)) {
                (1, Some(inner)) => {
                    self.vector_next = inner;
                    (true, false, false)
                }
                _ => (true, false, true),
            }
        } else {
            (g, w, v)
        };
        quote!(::core::option::Option::Some(::acc::__rt::kernel::Schedule { gang: #g, worker: #w, vector: #v }))
    }

    /// The loops in `body` (the body of a parallel loop without `gang`, `worker` or `vector`)
    /// that may be its vector loops, by their addresses in the syntax tree: the loops at the
    /// body's top level, the other statements `let` bindings and assignments of names before
    /// and between them and code without loops after the last (a matrix-vector product's
    /// `y[i] = s`), each loop over a range (not a literal one shorter than a warp) and its
    /// iterations independent:
    /// - in `kernels`, a loop without a directive whose iterations the dependence test
    ///   proves independent;
    /// - in `kernels` or `parallel`, a `loop` directive without `gang`, `worker`, `vector`,
    ///   `seq`, `tile` or `collapse`, that is `independent` (in `parallel`, where a loop is
    ///   independent unless it says `auto`, 3.3 section 2.9.6), or, in `kernels`, proven so.
    ///
    /// (Rodinia's hotspot writes `kernels` with `loop independent` on both loops of its
    /// stencil; with the inner loop left inside each thread it ran 9x slower than CUDA.)
    fn inner_vector_loops(&self, body: &[Stmt]) -> Option<Vec<usize>> {
        if !matches!(self.compute, ComputeKind::Kernels | ComputeKind::Parallel) {
            return None;
        }
        let mut found = Vec::new();
        // Code after the last loop (`y[i] = s`), which the gang's first thread runs.
        let mut after = false;
        for st in body {
            match st {
                // (An initialiser may hold a loop of its own: `let x = if c { for .. } ..`.)
                Stmt::Local(l) if !holds_a_loop(l) => {}
                Stmt::Expr(Expr::ForLoop(f), _) if !after => found.push(self.inner_vector_loop(f)?),
                // Before or between the loops, assignments of scalars every thread may make
                // (`s = 0.0`); after the last, code without loops or jumps out of the
                // iteration.
                Stmt::Expr(e, _) if straight(e) && (assigns_a_name(e) || !found.is_empty()) => {
                    after |= !assigns_a_name(e);
                }
                _ => return None,
            }
        }
        (!found.is_empty()).then_some(found)
    }

    /// `f`'s address where it may be a vector loop of [`Tr::inner_vector_loops`].
    fn inner_vector_loop(&self, f: &syn::ExprForLoop) -> Option<usize> {
        if f.label.is_some() {
            return None;
        }
        let syn::Pat::Ident(p) = &*f.pat else {
            return None;
        };
        let Expr::Range(range) = &*f.expr else {
            return None;
        };
        if short_literal_range(range) {
            return None;
        }
        let proven = || {
            let reds: std::collections::HashSet<String> = self
                .region_reductions
                .iter()
                .map(|(_, v)| v.to_string())
                .collect();
            crate::analysis::depend::provably_independent(
                &p.ident.to_string(),
                &f.body.stmts,
                &reds,
            )
        };
        let independent = match f.attrs.as_slice() {
            [] => self.compute == ComputeKind::Kernels && proven(),
            [a] if attrs::directive_of(a) == Some(DirectiveKind::Loop) => {
                let parsed = crate::directive::parsed::of_attr(DirectiveKind::Loop, a).ok()?;
                let d = self.on_device(&parsed);
                let has = |c| d.general(c).next().is_some();
                let levelled = [C::Gang, C::Worker, C::Vector, C::Seq, C::Tile]
                    .into_iter()
                    .any(has);
                if levelled || collapse_depth(Some(&d)) > 1 {
                    return None;
                }
                has(C::Independent)
                    || (self.compute == ComputeKind::Parallel && !has(C::Auto))
                    || (self.compute == ComputeKind::Kernels && proven())
            }
            _ => false,
        };
        independent.then_some(f as *const syn::ExprForLoop as usize)
    }

    /// Whether an inner `worker` or `vector` loop may share its iterations among a gang's
    /// threads: in `parallel` (and routines), unless it says `auto`; in `kernels` (where a loop without
    /// `independent` or `seq` is `auto`, 3.3 section 2.9.6) or with `auto`, only where it says
    /// `independent` or the dependence test proves its iterations independent, its own
    /// reductions and the region's set apart. (Rodinia's lud writes `loop vector` over a dot
    /// product without a reduction clause in `kernels`: shared, its sum raced.)
    pub(super) fn may_share(
        &self,
        dir: Option<&Directive>,
        levels: &[Level],
        body: &[Stmt],
    ) -> bool {
        let has = |c| dir.is_some_and(|d| d.general(c).next().is_some());
        if has(C::Independent) || (self.compute != ComputeKind::Kernels && !has(C::Auto)) {
            return true;
        }
        let mut reds: std::collections::HashSet<String> = self
            .region_reductions
            .iter()
            .map(|(_, v)| v.to_string())
            .collect();
        for c in dir.into_iter().flat_map(|d| d.general(C::Reduction)) {
            reds.extend(c.vars().iter().map(|v| v.name.to_string()));
        }
        levels.len() == 1
            && crate::analysis::depend::provably_independent(&levels[0].0.to_string(), body, &reds)
    }

    pub(super) fn parallel(
        &self,
        dir: Option<&Directive>,
        levels: &[Level],
        body: &[Stmt],
    ) -> bool {
        if self.compute == ComputeKind::Serial
            || dir.is_some_and(|d| d.general(C::Seq).next().is_some())
        {
            return false;
        }
        let independent = dir.is_some_and(|d| d.general(C::Independent).next().is_some());
        match (self.compute, dir) {
            (_, _) if independent => true,
            (ComputeKind::Parallel, Some(d)) if d.general(C::Auto).next().is_none() => true,
            (ComputeKind::Parallel, None) => false,
            // `kernels` loops, and `auto` loops in `parallel`: parallel where the dependence
            // test proves it, the loop's own reductions and the region's set apart (as the
            // multicore rewrite decides, `RegionCx::parallelizable`).
            _ => {
                let mut reds: std::collections::HashSet<String> = self
                    .region_reductions
                    .iter()
                    .map(|(_, v)| v.to_string())
                    .collect();
                for c in dir.into_iter().flat_map(|d| d.general(C::Reduction)) {
                    reds.extend(c.vars().iter().map(|v| v.name.to_string()));
                }
                levels.len() == 1
                    && crate::analysis::depend::provably_independent(
                        &levels[0].0.to_string(),
                        body,
                        &reds,
                    )
            }
        }
    }
}

/// Whether `e` assigns a plain name (`s = 0.0`, `s += 1.0`).
fn assigns_a_name(e: &Expr) -> bool {
    let target = match e {
        Expr::Assign(a) => &*a.left,
        Expr::Binary(b)
            if matches!(
                b.op,
                syn::BinOp::AddAssign(_)
                    | syn::BinOp::SubAssign(_)
                    | syn::BinOp::MulAssign(_)
                    | syn::BinOp::DivAssign(_)
            ) =>
        {
            &*b.left
        }
        _ => return false,
    };
    matches!(target, Expr::Path(p) if p.path.get_ident().is_some())
}

/// Whether `e` holds no loop, no jump (`break`, `continue`, `return`, `?`) and no macro call.
fn straight(e: &Expr) -> bool {
    struct Find(bool);
    impl<'a> syn::visit::Visit<'a> for Find {
        fn visit_expr(&mut self, e: &'a Expr) {
            match e {
                Expr::ForLoop(_)
                | Expr::While(_)
                | Expr::Loop(_)
                | Expr::Break(_)
                | Expr::Continue(_)
                | Expr::Return(_)
                | Expr::Try(_)
                | Expr::Macro(_)
                | Expr::Closure(_) => self.0 = true,
                _ => syn::visit::visit_expr(self, e),
            }
        }
    }
    let mut f = Find(false);
    syn::visit::Visit::visit_expr(&mut f, e);
    !f.0
}

/// Whether `range` has literal bounds less than a warp (32) apart: too short a loop to give
/// threads of a block.
fn short_literal_range(range: &syn::ExprRange) -> bool {
    let lit = |e: &Option<Box<Expr>>| -> Option<i128> {
        match e.as_deref() {
            Some(Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(i),
                ..
            })) => i.base10_parse().ok(),
            _ => None,
        }
    };
    match (lit(&range.start), lit(&range.end)) {
        (Some(a), Some(b)) => b - a < 32,
        _ => false,
    }
}

/// The schedule of a loop that does not run in parallel itself: the vector loop a `kernels`
/// gang loop left to it, an explicit worker or vector loop inside the parallel loop, or none.
pub(super) fn inner_schedule(
    dir: Option<&Directive>,
    in_parallel: bool,
    vector_here: bool,
) -> TokenStream {
    if vector_here {
        quote!(::core::option::Option::Some(
            ::acc::__rt::kernel::Schedule {
                gang: false,
                worker: false,
                vector: true
            }
        ))
    } else if in_parallel
        && dir.is_some_and(|d| {
            d.general(C::Vector).next().is_some() || d.general(C::Worker).next().is_some()
        })
    {
        // An explicit worker or vector loop inside the parallel loop: a GPU backend may
        // share its iterations among the threads of the gang running the enclosing
        // iteration (3.3 sections 2.9.3, 2.9.4); elsewhere it runs in order.
        let has = |c| dir.is_some_and(|d| d.general(c).next().is_some());
        let (w, v) = (has(C::Worker), has(C::Vector));
        quote!(::core::option::Option::Some(
            ::acc::__rt::kernel::Schedule {
                gang: false,
                worker: #w,
                vector: #v
            }
        ))
    } else {
        quote!(::core::option::Option::None)
    }
}
