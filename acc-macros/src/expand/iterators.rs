//! `for` loops over slice iterators inside compute regions, lowered to the index loops OpenACC
//! loops are (3.3 section 2.9: a loop construct's trip count is known before it starts):
//!
//! - `for y in y.iter_mut()`, `for x in x.iter()`, `for x in &x`, `for y in &mut y`;
//! - `.enumerate()` of any of these, `(i, y)` then binding the index;
//! - `.zip(..)` of two or more (`((y, x), z)`), the trip count the shortest length;
//! - rows: `a.chunks_exact(n)`, `a.chunks_exact_mut(n)`, `a.chunks(n)`, `a.chunks_mut(n)`.
//!
//! `for PAT in CHAIN { body }` becomes `for __acc_k in 0..TRIPS { let ..; body }` where each
//! element is bound as Rust binds it: `let y = &mut y[__acc_k];` (a reference to the element),
//! `let row = &mut a[__acc_k * n..(__acc_k + 1) * n];` (a subslice), `let i = __acc_k;`. The
//! host twin, the multicore twin and the kernel builder all see the index loop, so the loop's
//! directive applies to it and every device runs it the same way. Other iterators are left as
//! written, for the loop checks to report.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{Expr, ExprForLoop, Ident, Pat, Stmt};

use crate::analysis::bindings::pat_bindings;
use crate::analysis::reduction_update::strip;

/// Rewrites every `for` loop over a supported iterator chain in `stmts`.
pub fn lower_in_stmts(stmts: &mut [Stmt]) {
    let mut v = Lower;
    for st in stmts {
        v.visit_stmt_mut(st);
    }
}

/// Rewrites the loop of a combined construct and the loops inside it.
pub fn lower_loop(f: &mut ExprForLoop) {
    Lower.visit_expr_for_loop_mut(f);
}

struct Lower;

impl VisitMut for Lower {
    fn visit_expr_for_loop_mut(&mut self, f: &mut ExprForLoop) {
        syn::visit_mut::visit_expr_for_loop_mut(self, f);
        let Some(chain) = chain(&f.expr) else {
            return;
        };
        let k = Ident::new("__acc_k", Span::call_site());
        let Some(binds) = bind(&chain, &f.pat, &quote!(#k)) else {
            return;
        };
        let trips = trips(&chain);
        let Ok(expr) = syn::parse2::<Expr>(quote!(0..#trips)) else {
            return;
        };
        let Ok(pat) = syn::parse2::<TokenStream>(quote!(#k))
            .and_then(|t| syn::parse::Parser::parse2(Pat::parse_single, t))
        else {
            return;
        };
        let mut stmts = Vec::new();
        for b in binds {
            match syn::parse2::<Stmt>(b) {
                Ok(s) => stmts.push(s),
                Err(_) => return,
            }
        }
        // Each binding's array must not be a name an earlier one bound (`(x, y) in
        // y.iter_mut().zip(x.iter())` would read the element `x`): such loops stay as written.
        let mut bound: HashSet<String> = HashSet::new();
        for st in &stmts {
            let Stmt::Local(l) = st else { return };
            if l.init.as_ref().is_some_and(|i| reads_any(&i.expr, &bound)) {
                return;
            }
            bound.extend(
                pat_bindings(&l.pat, false)
                    .into_iter()
                    .map(|(n, _)| n)
                    .filter(|n| !n.starts_with("__acc")),
            );
        }
        *f.pat = pat;
        *f.expr = expr;
        stmts.append(&mut f.body.stmts);
        f.body.stmts = stmts;
    }
}

/// Where the items of an iterator chain come from.
enum Chain {
    /// The elements of an array, by reference (`iter`, `&a`) or mutable reference
    /// (`iter_mut`, `&mut a`).
    Elems {
        array: Expr,
        mutable: bool,
    },
    /// Subslices of `len` elements (`chunks*`), the last one shorter unless `exact`.
    Chunks {
        array: Expr,
        len: Expr,
        mutable: bool,
        exact: bool,
    },
    Zip(Box<Chain>, Box<Chain>),
    Enumerate(Box<Chain>),
}

/// An array expression a chain may start from: a variable or a field (`self.a`, `g.b`).
fn array_like(e: &Expr) -> bool {
    match strip(e) {
        Expr::Path(p) => p.path.get_ident().is_some(),
        Expr::Field(f) => array_like(&f.base),
        _ => false,
    }
}

fn chain(e: &Expr) -> Option<Chain> {
    match strip(e) {
        Expr::Reference(r) if array_like(&r.expr) => Some(Chain::Elems {
            array: (*r.expr).clone(),
            mutable: r.mutability.is_some(),
        }),
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            match (name.as_str(), m.args.len()) {
                ("iter" | "iter_mut", 0) if array_like(&m.receiver) => Some(Chain::Elems {
                    array: (*m.receiver).clone(),
                    mutable: name == "iter_mut",
                }),
                ("chunks" | "chunks_mut" | "chunks_exact" | "chunks_exact_mut", 1)
                    if array_like(&m.receiver) =>
                {
                    Some(Chain::Chunks {
                        array: (*m.receiver).clone(),
                        len: m.args[0].clone(),
                        mutable: name.ends_with("_mut"),
                        exact: name.starts_with("chunks_exact"),
                    })
                }
                ("enumerate", 0) => Some(Chain::Enumerate(Box::new(chain(&m.receiver)?))),
                ("zip", 1) => Some(Chain::Zip(
                    Box::new(chain(&m.receiver)?),
                    Box::new(chain(&m.args[0])?),
                )),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The chain's item count.
fn trips(c: &Chain) -> TokenStream {
    match c {
        Chain::Elems { array, .. } => quote!(#array.len()),
        Chain::Chunks {
            array, len, exact, ..
        } => {
            if *exact {
                quote!((#array.len() / (#len)))
            } else {
                quote!(((#array.len() + (#len) - 1) / (#len)))
            }
        }
        Chain::Zip(a, b) => {
            let (a, b) = (trips(a), trips(b));
            quote!((#a).min(#b))
        }
        Chain::Enumerate(inner) => trips(inner),
    }
}

/// The `let`s binding `pat` to item `k` of the chain, or `None` for a pattern whose shape does
/// not match the chain's items.
fn bind(c: &Chain, pat: &Pat, k: &TokenStream) -> Option<Vec<TokenStream>> {
    let pat = match pat {
        Pat::Paren(p) => &*p.pat,
        other => other,
    };
    if matches!(pat, Pat::Wild(_)) {
        return Some(Vec::new());
    }
    match c {
        Chain::Elems { array, mutable } => Some(vec![match (pat, mutable) {
            // `for &x in a.iter()`: the element's value.
            (Pat::Reference(r), false) => {
                let inner = &r.pat;
                quote!(let #inner = #array[#k];)
            }
            (Pat::Ident(_), true) => quote!(let #pat = &mut #array[#k];),
            (Pat::Ident(_), false) => quote!(let #pat = &#array[#k];),
            _ => return None,
        }]),
        Chain::Chunks {
            array,
            len,
            mutable,
            exact,
        } => {
            let Pat::Ident(pi) = pat else { return None };
            // The bounds first: `&mut a[..a.len()]` would borrow `a` twice.
            let (lo, hi) = (
                quote::format_ident!("__acc_lo_{}", pi.ident),
                quote::format_ident!("__acc_hi_{}", pi.ident),
            );
            let end = if *exact {
                quote!((#k + 1) * (#len))
            } else {
                quote!(((#k + 1) * (#len)).min(#array.len()))
            };
            Some(vec![
                quote!(let #lo: usize = #k * (#len);),
                quote!(let #hi: usize = #end;),
                if *mutable {
                    quote!(let #pat = &mut #array[#lo..#hi];)
                } else {
                    quote!(let #pat = &#array[#lo..#hi];)
                },
            ])
        }
        Chain::Zip(a, b) => {
            let Pat::Tuple(t) = pat else { return None };
            if t.elems.len() != 2 {
                return None;
            }
            let mut out = bind(a, &t.elems[0], k)?;
            out.extend(bind(b, &t.elems[1], k)?);
            Some(out)
        }
        Chain::Enumerate(inner) => {
            let Pat::Tuple(t) = pat else { return None };
            if t.elems.len() != 2 {
                return None;
            }
            let i = &t.elems[0];
            let mut out = Vec::new();
            if !matches!(i, Pat::Wild(_)) {
                out.push(quote!(let #i: usize = #k;));
            }
            out.extend(bind(inner, &t.elems[1], k)?);
            Some(out)
        }
    }
}

/// Whether `e` reads one of `names`.
fn reads_any(e: &Expr, names: &HashSet<String>) -> bool {
    struct Find<'a>(&'a HashSet<String>, bool);
    impl<'ast> syn::visit::Visit<'ast> for Find<'_> {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if p.path
                .get_ident()
                .is_some_and(|i| self.0.contains(&i.to_string()))
            {
                self.1 = true;
            }
        }
    }
    let mut f = Find(names, false);
    syn::visit::Visit::visit_expr(&mut f, e);
    f.1
}
