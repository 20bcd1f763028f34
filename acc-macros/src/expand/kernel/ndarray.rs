//! `ndarray` forms in a kernel (acc's `ndarray` feature): `a[[i, j]]` and `a[(i, j)]`,
//! `a.nrows()`, `a.ncols()`, `a.dim()`, `a.shape()[k]`, `a.len_of(Axis(k))`.
//!
//! The kernel sees an array in standard layout as its elements (`acc_core::data`'s impl for
//! `ArrayBase`), so these forms are rewritten, in the kernel builder's copy of the region only,
//! into what kernels already take: an element's offset `(i * n1 + j) * n2 + k` and the axes'
//! lengths as `usize` scalars `__nd_a_1`, which the launch reads from the array
//! (`acc::__rt::nd::NdShape`) and passes like any captured scalar. The host and multicore
//! devices run the region as written, with ndarray's own indexing.
//!
//! Every index but the first is checked against its axis (`j < n1`): an index past its axis
//! gives `usize::MAX`, which the kernel's bounds check reports, as ndarray's indexing panics on
//! the host; the first is covered by the check of the offset against the elements' length.
//! The bounds prover decides `j < n1` where `j`'s range allows, so a proven launch keeps no
//! test of it.

use std::collections::BTreeMap;

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::visit::Visit;
use syn::visit_mut::VisitMut;
use syn::{Expr, Ident, Lit, Stmt};

use crate::analysis::reduction_update::strip;
use crate::analysis::uses::path_ident;

/// What the region does with one `ndarray` variable.
#[derive(Default)]
struct NdUse {
    /// The number of indices it is indexed with (0: only its lengths are read).
    arity: usize,
    /// The axes whose lengths the rewritten code reads.
    axes: std::collections::BTreeSet<usize>,
}

/// The kernel's statements with the `ndarray` forms rewritten, and the statements (before the
/// launch) that bind the axes' lengths they read. `stmts` unchanged and no prelude when the
/// region has none of these forms.
pub(super) fn lower(stmts: &[Stmt]) -> (Vec<Stmt>, TokenStream) {
    let mut find = Find::default();
    for st in stmts {
        find.visit_stmt(st);
    }
    if find.vars.is_empty() {
        return (stmts.to_vec(), TokenStream::new());
    }
    let mut rw = Rewrite { vars: find.vars };
    let mut out = stmts.to_vec();
    for st in &mut out {
        rw.visit_stmt_mut(st);
    }
    let mut prelude = TokenStream::new();
    for (name, u) in &rw.vars {
        let var = Ident::new(name, Span::call_site());
        let arity = u.arity;
        for &k in &u.axes {
            let len = axis_len(name, k);
            prelude.extend(quote! {
                let #len: usize = ::acc::__rt::nd::NdShape::acc_nd_len(&#var, #k, #arity, #name);
            });
        }
    }
    (out, prelude)
}

fn axis_len(name: &str, k: usize) -> Ident {
    format_ident!("__nd_{}_{}", name, k)
}

/// The indices of `a[[i, j]]` / `a[(i, j)]` (one or more in brackets, two or more in
/// parentheses).
fn nd_indices(index: &Expr) -> Option<Vec<&Expr>> {
    match strip(index) {
        Expr::Array(a) if !a.elems.is_empty() => Some(a.elems.iter().collect()),
        Expr::Tuple(t) if t.elems.len() >= 2 => Some(t.elems.iter().collect()),
        _ => None,
    }
}

/// A literal `usize` axis: `2`, or `Axis(2)` / `ndarray::Axis(2)`.
fn axis_literal(e: &Expr) -> Option<usize> {
    match strip(e) {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => i.base10_parse().ok(),
            _ => None,
        },
        Expr::Call(c)
            if c.args.len() == 1
                && matches!(&*c.func, Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == "Axis")) =>
        {
            axis_literal(&c.args[0])
        }
        _ => None,
    }
}

#[derive(Default)]
struct Find {
    vars: BTreeMap<String, NdUse>,
}

impl<'a> Visit<'a> for Find {
    fn visit_expr(&mut self, e: &'a Expr) {
        match e {
            Expr::Index(ix) => {
                if let (Some(id), Some(idx)) = (path_ident(strip(&ix.expr)), nd_indices(&ix.index))
                {
                    let u = self.vars.entry(id.to_string()).or_default();
                    u.arity = idx.len();
                }
            }
            Expr::MethodCall(m) if m.args.is_empty() => {
                let name = m.method.to_string();
                if matches!(name.as_str(), "nrows" | "ncols") {
                    if let Some(id) = path_ident(strip(&m.receiver)) {
                        let u = self.vars.entry(id.to_string()).or_default();
                        if u.arity == 0 {
                            u.arity = 2;
                        }
                    }
                }
            }
            _ => {}
        }
        syn::visit::visit_expr(self, e);
    }
}

struct Rewrite {
    vars: BTreeMap<String, NdUse>,
}

impl Rewrite {
    /// The length of axis `k` of `name`, recorded for the prelude.
    fn len(&mut self, name: &str, k: usize) -> Expr {
        let id = axis_len(name, k);
        if let Some(u) = self.vars.get_mut(name) {
            u.axes.insert(k);
        }
        syn::parse_quote!(#id)
    }

    /// The element offset of `name[[e0, e1, ..]]`, `usize::MAX` when an index past the
    /// first is outside its axis.
    fn offset(&mut self, name: &str, idx: &[&Expr]) -> Expr {
        let first = idx[0];
        if idx.len() == 1 {
            return syn::parse_quote!(#first);
        }
        let mut flat: Expr = syn::parse_quote!(#first);
        let mut checks: Vec<Expr> = Vec::new();
        for (k, e) in idx.iter().enumerate().skip(1) {
            let n = self.len(name, k);
            flat = syn::parse_quote!((#flat) * #n + (#e));
            checks.push(syn::parse_quote!((#e) < #n));
        }
        syn::parse_quote!(if #(#checks)&&* { #flat } else { usize::MAX })
    }
}

impl VisitMut for Rewrite {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        syn::visit_mut::visit_expr_mut(self, e);
        let replacement: Option<Expr> = match &*e {
            Expr::Index(ix) => {
                let base = strip(&ix.expr);
                if let (Some(id), Some(idx)) = (path_ident(base), nd_indices(&ix.index)) {
                    let name = id.to_string();
                    if self.vars.contains_key(&name) {
                        let idx: Vec<Expr> = idx.into_iter().cloned().collect();
                        let refs: Vec<&Expr> = idx.iter().collect();
                        let off = self.offset(&name, &refs);
                        let arr = &ix.expr;
                        Some(syn::parse_quote!(#arr[#off]))
                    } else {
                        None
                    }
                } else if let (Expr::MethodCall(m), Some(k)) = (base, axis_literal(&ix.index)) {
                    // `a.shape()[k]`.
                    match path_ident(strip(&m.receiver)) {
                        Some(id)
                            if m.method == "shape"
                                && m.args.is_empty()
                                && self.vars.contains_key(&id.to_string()) =>
                        {
                            Some(self.len(&id.to_string(), k))
                        }
                        _ => None,
                    }
                } else {
                    None
                }
            }
            Expr::MethodCall(m) => match path_ident(strip(&m.receiver)) {
                Some(id) if self.vars.contains_key(&id.to_string()) => {
                    let name = id.to_string();
                    let arity = self.vars[&name].arity;
                    match (m.method.to_string().as_str(), m.args.len()) {
                        ("nrows", 0) => Some(self.len(&name, 0)),
                        ("ncols", 0) => Some(self.len(&name, 1)),
                        ("dim", 0) if arity == 1 => Some(self.len(&name, 0)),
                        ("dim", 0) if arity > 1 => {
                            let lens: Vec<Expr> = (0..arity).map(|k| self.len(&name, k)).collect();
                            Some(syn::parse_quote!((#(#lens),*)))
                        }
                        ("len_of", 1) => axis_literal(&m.args[0]).map(|k| self.len(&name, k)),
                        _ => None,
                    }
                }
                _ => None,
            },
            _ => None,
        };
        if let Some(r) = replacement {
            *e = r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(src: &str) -> (String, String) {
        let block: syn::Block = syn::parse_str(src).unwrap();
        let (stmts, prelude) = lower(&block.stmts);
        let body = quote!(#(#stmts)*).to_string();
        (body, prelude.to_string())
    }

    #[test]
    fn indices_become_offsets_checked_per_axis() {
        let (body, prelude) = lowered("{ c[[i, j]] = a[(i, j)] + b[[i, j, k]] * v[[i]]; }");
        assert!(
            body.contains("c [if (j) < __nd_c_1 { (i) * __nd_c_1 + (j) } else { usize :: MAX }]"),
            "{body}"
        );
        assert!(
            body.contains("((i) * __nd_b_1 + (j)) * __nd_b_2 + (k)"),
            "{body}"
        );
        assert!(body.contains("v [i]"), "{body}");
        assert!(
            prelude.contains("acc_nd_len (& b , 2usize , 3usize , \"b\")"),
            "{prelude}"
        );
        assert!(!prelude.contains("__nd_v"), "{prelude}");
    }

    #[test]
    fn lengths_become_scalars() {
        let (body, prelude) = lowered(
            "{ let (n, m) = a.dim(); let r = a.nrows() + a.ncols() + a.shape()[1] + a.len_of(Axis(0)); x[[0, 0]] = a[[r, n]]; }",
        );
        assert!(
            body.contains("let (n , m) = (__nd_a_0 , __nd_a_1)"),
            "{body}"
        );
        assert!(
            body.contains("__nd_a_0 + __nd_a_1 + __nd_a_1 + __nd_a_0"),
            "{body}"
        );
        assert!(
            prelude.contains("__nd_a_0") && prelude.contains("__nd_x_1"),
            "{prelude}"
        );
    }

    #[test]
    fn regions_without_ndarray_forms_are_unchanged() {
        let (body, prelude) = lowered("{ y[i] = x[i] + t.0; let p = (1, 2); }");
        assert!(prelude.is_empty());
        assert!(body.contains("y [i] = x [i] + t . 0"), "{body}");
    }
}
