//! Loop versioning for the multicore twin. Rust checks every index, and a loop whose iterations
//! may each panic cannot be vectorized. For a loop over `i` that counts up by one, an access
//! `v[e]` whose index is `i` plus terms that do not change in the loop (`j * m + i - 1`) is in
//! bounds for the whole loop when it is for the first and the last `i` and increases between
//! them. The loop then runs a copy of its body with those accesses unchecked; otherwise it runs
//! as written, so out-of-range accesses panic exactly where they would have.

use std::collections::{BTreeMap, HashSet};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::visit::Visit;
use syn::visit_mut::{self, VisitMut};
use syn::{BinOp, Expr, Ident, Stmt};

use super::bindings::pat_bindings;
use super::uses::{is_compound, path_ident, scan_expr, scan_stmts, Uses};
use crate::directive::parse::tidy;

/// The accesses of one loop body that versioning makes unchecked.
pub struct Plan {
    /// The loop variable.
    var: Ident,
    /// Per array (name, span): its qualifying index expressions, by text.
    accesses: BTreeMap<String, (Span, BTreeMap<String, Expr>)>,
}

impl Plan {
    /// Plans versioning for `for var in .. { body }`; `None` when nothing qualifies.
    /// `excluded` names variables privatized around the loop (their length is not an issue,
    /// but they are rebound, so they are left alone).
    pub fn new(body: &[Stmt], var: &Ident, excluded: &HashSet<String>) -> Option<Plan> {
        let name = var.to_string();
        if binds(body, &name) {
            return None;
        }
        let uses = scan_stmts(body, std::slice::from_ref(&name));
        let mut accesses = BTreeMap::new();
        for (arr, u) in &uses.vars {
            let fixed =
                !u.assigned && !u.mut_borrowed && !u.maybe_mut && !u.unindexed && !u.atomic_target;
            if !fixed || excluded.contains(arr) || u.indexes.is_empty() {
                continue;
            }
            let mut qualifying = BTreeMap::new();
            for (text, e) in u.indexes.iter().zip(&u.index_exprs) {
                if increasing_in(e, &name, &uses) {
                    qualifying.insert(text.clone(), e.clone());
                }
            }
            if !qualifying.is_empty() {
                accesses.insert(
                    arr.clone(),
                    (u.span.unwrap_or_else(Span::call_site), qualifying),
                );
            }
        }
        (!accesses.is_empty()).then(|| Plan {
            var: var.clone(),
            accesses,
        })
    }

    /// A boolean expression: every planned access is in bounds for `var` in `first..=last`.
    pub fn checks(&self, first: &TokenStream, last: &TokenStream) -> TokenStream {
        let var = &self.var;
        let mut checks = Vec::new();
        for (k, (arr, (span, idx))) in self.accesses.iter().enumerate() {
            let arr = Ident::new(arr, *span);
            for (n, e) in idx.values().enumerate() {
                let (lo, hi) = (
                    format_ident!("__acc_lo_{}_{}", k, n),
                    format_ident!("__acc_hi_{}_{}", k, n),
                );
                // The index at the first and last iteration, in checked arithmetic: an access
                // the body guards (`if i > 0 { a[i - 1] }`) may have no index there, which
                // only means the loop runs as written.
                let ce = checked(e);
                checks.push(quote! {{
                    let #lo: ::core::option::Option<usize> = { let #var = #first; #ce };
                    let #hi: ::core::option::Option<usize> = { let #var = #last; #ce };
                    match (#lo, #hi) {
                        (::core::option::Option::Some(#lo), ::core::option::Option::Some(#hi)) => {
                            #lo <= #hi && #hi < ::acc::__rt::UncheckedIndex::length(&#arr)
                        }
                        _ => false,
                    }
                }});
            }
        }
        quote!(true #(&& #checks)*)
    }

    /// `body` with the planned accesses unchecked.
    pub fn fast_body(&self, body: &[Stmt]) -> Vec<Stmt> {
        let mut out = body.to_vec();
        let mut r = Rewrite {
            plan: self,
            write: false,
        };
        for st in &mut out {
            r.visit_stmt_mut(st);
        }
        out
    }
}

/// `e` (a `usize` index) as an `Option<usize>` that is `None` where `+`, `-` or `*` would
/// overflow.
fn checked(e: &Expr) -> TokenStream {
    match strip(e) {
        Expr::Binary(b) if matches!(b.op, BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_)) => {
            let op = match b.op {
                BinOp::Add(_) => quote!(checked_add),
                BinOp::Sub(_) => quote!(checked_sub),
                _ => quote!(checked_mul),
            };
            let (l, r) = (checked(&b.left), checked(&b.right));
            quote!(match (#l, #r) {
                (::core::option::Option::Some(__l), ::core::option::Option::Some(__r)) => __l.#op(__r),
                _ => ::core::option::Option::None,
            })
        }
        other => quote!(::core::option::Option::<usize>::Some(#other)),
    }
}

/// Whether `e` is `var` plus terms the loop does not change: `var`, `e + var`, `var - c`, ...
fn increasing_in(e: &Expr, var: &str, uses: &Uses) -> bool {
    let mut terms = Vec::new();
    flatten(e, true, &mut terms);
    let with_var: Vec<_> = terms.iter().filter(|(t, _)| mentions(t, var)).collect();
    with_var.len() == 1
        && with_var[0].1
        && path_ident(strip(with_var[0].0)).is_some_and(|id| id == var)
        && terms
            .iter()
            .filter(|(t, _)| !mentions(t, var))
            .all(|(t, _)| invariant(t, uses))
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        other => other,
    }
}

/// The terms of a sum, each with its sign (`true` for +).
fn flatten<'e>(e: &'e Expr, plus: bool, out: &mut Vec<(&'e Expr, bool)>) {
    match strip(e) {
        Expr::Binary(b) if matches!(b.op, BinOp::Add(_)) => {
            flatten(&b.left, plus, out);
            flatten(&b.right, plus, out);
        }
        Expr::Binary(b) if matches!(b.op, BinOp::Sub(_)) => {
            flatten(&b.left, plus, out);
            flatten(&b.right, !plus, out);
        }
        other => out.push((other, plus)),
    }
}

fn mentions(e: &Expr, var: &str) -> bool {
    scan_expr(e, &[]).vars.contains_key(var)
}

/// Whether `e` has one value for the whole loop: it reads only variables from outside the loop
/// body that the body does not write, and calls nothing.
fn invariant(e: &Expr, uses: &Uses) -> bool {
    let inner = scan_expr(e, &[]);
    if !inner
        .vars
        .keys()
        .all(|n| uses.vars.get(n).is_some_and(|u| !u.is_written()))
    {
        return false;
    }
    struct Simple(bool);
    impl<'a> Visit<'a> for Simple {
        fn visit_expr(&mut self, e: &'a Expr) {
            match e {
                Expr::Call(_)
                | Expr::Macro(_)
                | Expr::Block(_)
                | Expr::Assign(_)
                | Expr::Index(_) => self.0 = false,
                Expr::MethodCall(m) if m.method != "len" => self.0 = false,
                other => syn::visit::visit_expr(self, other),
            }
        }
    }
    let mut s = Simple(true);
    s.visit_expr(e);
    s.0
}

/// Whether `body` binds `name` anywhere (then `name` may not mean the loop variable).
fn binds(body: &[Stmt], name: &str) -> bool {
    struct Finder<'a>(&'a str, bool);
    impl<'ast> Visit<'ast> for Finder<'_> {
        fn visit_pat(&mut self, p: &'ast syn::Pat) {
            if pat_bindings(p, false).iter().any(|(n, _)| n == self.0) {
                self.1 = true;
            }
            syn::visit::visit_pat(self, p);
        }
    }
    let mut f = Finder(name, false);
    for st in body {
        f.visit_stmt(st);
    }
    f.1
}

struct Rewrite<'a> {
    plan: &'a Plan,
    write: bool,
}

impl Rewrite<'_> {
    fn target(&self, e: &Expr) -> Option<Ident> {
        let Expr::Index(ix) = e else { return None };
        let v = path_ident(&ix.expr)?;
        let (_, idx) = self.plan.accesses.get(&v.to_string())?;
        idx.contains_key(&tidy(ix.index.to_token_stream()))
            .then(|| v.clone())
    }

    fn place(&mut self, e: &mut Expr, write: bool) {
        let saved = self.write;
        self.write = write;
        self.visit_expr_mut(e);
        self.write = saved;
    }
}

impl VisitMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Some(v) = self.target(e) {
            let Expr::Index(ix) = e else { return };
            let index = &ix.index;
            let new = if self.write {
                // A method call, so that a `&mut` binding (`let row = &mut a[..]`) is
                // reborrowed rather than borrowed mutably itself.
                quote!((*unsafe {
                    #[allow(unused_imports)]
                    use ::acc::__rt::UncheckedIndexMut as _;
                    #v.at_mut(#index)
                }))
            } else {
                quote!((*unsafe { ::acc::__rt::UncheckedIndex::at(&#v, #index) }))
            };
            if let Ok(n) = syn::parse2(new) {
                *e = n;
            }
            return;
        }
        match e {
            Expr::Assign(a) => {
                self.place(&mut a.left, true);
                self.place(&mut a.right, false);
            }
            Expr::Binary(b) if is_compound(&b.op) => {
                self.place(&mut b.left, true);
                self.place(&mut b.right, false);
            }
            Expr::Reference(r) if r.mutability.is_some() => self.place(&mut r.expr, true),
            Expr::RawAddr(r) if matches!(r.mutability, syn::PointerMutability::Mut(_)) => {
                self.place(&mut r.expr, true)
            }
            Expr::Index(ix) => {
                self.visit_expr_mut(&mut ix.expr);
                self.place(&mut ix.index, false);
            }
            Expr::Field(f) => self.visit_expr_mut(&mut f.base),
            Expr::Paren(p) => self.visit_expr_mut(&mut p.expr),
            // `(a[i], b) = ..`: each element is a place as the tuple is.
            Expr::Tuple(t) => {
                for el in t.elems.iter_mut() {
                    self.visit_expr_mut(el);
                }
            }
            other => {
                let saved = self.write;
                self.write = false;
                visit_mut::visit_expr_mut(self, other);
                self.write = saved;
            }
        }
    }
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

/// Versions every sequential `for i in a..b` / `a..=b` loop inside `stmts` (innermost first).
pub fn version_inner_loops(stmts: &mut [Stmt]) {
    struct Inner;
    impl VisitMut for Inner {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            visit_mut::visit_expr_mut(self, e);
            let Expr::ForLoop(f) = e else { return };
            let syn::Pat::Ident(pi) = &*f.pat else { return };
            if pi.by_ref.is_some() || pi.subpat.is_some() {
                return;
            }
            let Expr::Range(r) = strip(&f.expr) else {
                return;
            };
            if r.start.is_none() || r.end.is_none() {
                return;
            }
            let Some(plan) = Plan::new(&f.body.stmts, &pi.ident, &HashSet::new()) else {
                return;
            };
            let checks = plan.checks(&quote!(__acc_first), &quote!(__acc_last));
            let fast = plan.fast_body(&f.body.stmts);
            let (label, pat, range, body) = (&f.label, &f.pat, &f.expr, &f.body.stmts);
            let versioned = quote! {{
                let __acc_range = #range;
                match ::acc::__rt::range_bounds(&__acc_range) {
                    ::core::option::Option::Some((__acc_first, __acc_last)) if #checks => {
                        #label for #pat in __acc_range { #(#fast)* }
                    }
                    _ => { #label for #pat in __acc_range { #(#body)* } }
                }
            }};
            if let Ok(v) = syn::parse2(versioned) {
                *e = v;
            }
        }
        fn visit_expr_closure_mut(&mut self, _: &mut syn::ExprClosure) {}
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    for st in stmts {
        Inner.visit_stmt_mut(st);
    }
}
