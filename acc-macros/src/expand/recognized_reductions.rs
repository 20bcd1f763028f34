//! Reductions a `kernels` region's loops compute without saying so (3.3 section 2.5.3: in
//! `kernels` the compiler finds the parallelism). A top-level loop of the region whose body
//! only ever updates an outside scalar `s` with one reduction operator (`s += e`,
//! `s = s * e`, `s = s.max(e)`, `s |= e`, ..., with `e` free of `s`) and never reads it
//! otherwise gets `reduction(op: s)` on its loop directive, as if the user had written it.
//! The rewrite is of the source, before anything is made from it, so the host twin, the
//! multicore split and the kernel builder share the decision; the dependence test then sets
//! `s` apart and the loop runs in parallel where its arrays allow.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::visit::Visit;
use syn::{Expr, Stmt};

use super::attrs;
use crate::analysis::bindings::pat_bindings;
use crate::analysis::reduction_update::{assignment, strip};
use crate::directive::{ClauseName as C, DirectiveKind, RedOp};

/// Adds the recognized reductions to the region's top-level loops; returns their names.
pub fn recognize(stmts: &mut [Stmt]) -> Vec<String> {
    let mut names = Vec::new();
    for st in stmts {
        let Stmt::Expr(Expr::ForLoop(f), _) = st else {
            continue;
        };
        // The loop's directive, if any: `seq` loops stay sequential; reductions it names
        // already are not added again.
        let dir_at = f
            .attrs
            .iter()
            .position(|a| attrs::directive_of(a) == Some(DirectiveKind::Loop));
        if f.attrs
            .iter()
            .any(|a| attrs::directive_of(a).is_some_and(|k| k != DirectiveKind::Loop))
        {
            continue;
        }
        let mut named = HashSet::new();
        if let Some(at) = dir_at {
            let Ok(d) = crate::directive::parsed::of_attr(DirectiveKind::Loop, &f.attrs[at]) else {
                continue;
            };
            if d.has(C::Seq) {
                continue;
            }
            for c in d
                .clauses
                .iter()
                .filter(|c| matches!(c.name, C::Reduction | C::Private))
            {
                named.extend(c.vars().iter().map(|v| v.name.to_string()));
            }
        }
        let found = found_in(f, &named);
        if found.is_empty() {
            continue;
        }
        names.extend(found.iter().map(|(n, _)| n.clone()));
        add_reductions(f, dir_at, &found);
    }
    names
}

/// Adds the recognized reductions to the `worker` and `vector` loops nested in `stmts` (not
/// `seq` ones): in `kernels`, such a loop without `independent` is `auto` (3.3 section 2.9.6),
/// and a sum it computes into a scalar of the enclosing iteration is the reduction nvc finds
/// there (Rodinia's lud writes `loop vector` over a dot product without a reduction clause).
/// `stmts` are a region's (whose top-level loops are [`recognize`]'s) or, `in_loop`, a loop's
/// body. Returns the names.
pub fn recognize_nested(stmts: &mut [Stmt], in_loop: bool) -> Vec<String> {
    struct Nested {
        names: Vec<String>,
    }
    impl syn::visit_mut::VisitMut for Nested {
        fn visit_expr_for_loop_mut(&mut self, f: &mut syn::ExprForLoop) {
            syn::visit_mut::visit_expr_for_loop_mut(self, f);
            let Some(at) = f
                .attrs
                .iter()
                .position(|a| attrs::directive_of(a) == Some(DirectiveKind::Loop))
            else {
                return;
            };
            let Ok(d) = crate::directive::parsed::of_attr(DirectiveKind::Loop, &f.attrs[at]) else {
                return;
            };
            if d.has(C::Seq) || !(d.has(C::Vector) || d.has(C::Worker)) {
                return;
            }
            let named: HashSet<String> = d
                .clauses
                .iter()
                .filter(|c| matches!(c.name, C::Reduction | C::Private))
                .flat_map(|c| c.vars().iter().map(|v| v.name.to_string()))
                .collect();
            let found = found_in(f, &named);
            if found.is_empty() {
                return;
            }
            self.names.extend(found.iter().map(|(n, _)| n.clone()));
            add_reductions(f, Some(at), &found);
        }
    }
    let mut v = Nested { names: Vec::new() };
    for st in stmts {
        // Only loops inside the region's own loops: its top-level ones are [`recognize`]'s.
        if let (false, Stmt::Expr(Expr::ForLoop(f), _)) = (in_loop, &mut *st) {
            for s in &mut f.body.stmts {
                syn::visit_mut::VisitMut::visit_stmt_mut(&mut v, s);
            }
        } else {
            syn::visit_mut::VisitMut::visit_stmt_mut(&mut v, st);
        }
    }
    v.names
}

/// The reductions `kernels` recognizes in loop `f` (see the module docs), but for the names in
/// `named` (those the loop's clauses already give a data attribute).
fn found_in(f: &syn::ExprForLoop, named: &HashSet<String>) -> Vec<(String, RedOp)> {
    let mut local: HashSet<String> = pat_bindings(&f.pat, false)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mut find = Updates::default();
    for s in &f.body.stmts {
        find.visit_stmt(s);
    }
    local.extend(find.declared.iter().cloned());
    let mut found: Vec<(String, RedOp)> = Vec::new();
    for (name, op) in &find.updates {
        if local.contains(name) || named.contains(name) || find.other.contains(name) {
            continue;
        }
        let Some(op) = *op else { continue };
        if find
            .updates
            .iter()
            .any(|(n, o)| n == name && *o != Some(op))
        {
            continue;
        }
        if !found.iter().any(|(n, _)| n == name) {
            found.push((name.clone(), op));
        }
    }
    found
}

/// Adds `reduction` clauses for `found` to loop `f`'s `loop` directive (attribute `at`), or a
/// directive of them where it has none.
fn add_reductions(f: &mut syn::ExprForLoop, at: Option<usize>, found: &[(String, RedOp)]) {
    let clauses = clauses(found);
    match at {
        Some(at) => {
            let args = attrs::attr_args(&f.attrs[at]).unwrap_or_default();
            let path = f.attrs[at].path().clone();
            let sep = if args.is_empty() { quote!() } else { quote!(,) };
            f.attrs[at] = syn::parse_quote!(#[#path(#args #sep #(#clauses),*)]);
        }
        None => f
            .attrs
            .push(syn::parse_quote!(#[acc::r#loop(#(#clauses),*)])),
    }
}

/// `reduction(op: name)` clauses for what [`found_in`] found.
fn clauses(found: &[(String, RedOp)]) -> Vec<TokenStream> {
    found
        .iter()
        .map(|(n, op)| {
            let id = syn::Ident::new(n, Span::call_site());
            let op: TokenStream = op.spelling().parse().unwrap_or_default();
            quote!(reduction(#op: #id))
        })
        .collect()
}

/// The clauses a combined `kernels loop` construct gets for the reductions its loop computes
/// without naming them, as `kernels { loop }` does ([`recognize`]): none for a `seq` loop, nor
/// for names its `reduction`, `private` or `firstprivate` clauses name.
pub fn for_combined(
    dir: &crate::directive::Directive,
    f: &syn::ExprForLoop,
) -> Vec<(String, TokenStream)> {
    if dir.has(C::Seq) {
        return Vec::new();
    }
    let named: HashSet<String> = dir
        .clauses
        .iter()
        .filter(|c| matches!(c.name, C::Reduction | C::Private | C::Firstprivate))
        .flat_map(|c| c.vars().iter().map(|v| v.name.to_string()))
        .collect();
    let found = found_in(f, &named);
    found
        .iter()
        .map(|(n, _)| n.clone())
        .zip(clauses(&found))
        .collect()
}

/// Whether `stmts` mention `name` outside the loops whose `loop` directive reduces it (their
/// ranges count as outside).
pub fn used_outside_reducing_loops(stmts: &[Stmt], name: &str) -> bool {
    struct V<'a> {
        name: &'a str,
        found: bool,
    }
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_stmt(&mut self, st: &'ast Stmt) {
            let reduces = attrs::stmt_attrs(st).iter().any(|a| {
                crate::directive::parsed::loop_of(a).is_some_and(|d| {
                    d.general(C::Reduction)
                        .any(|c| c.vars().iter().any(|v| v.name == self.name))
                })
            });
            match st {
                Stmt::Expr(Expr::ForLoop(f), _) if reduces => self.visit_expr(&f.expr),
                _ => syn::visit::visit_stmt(self, st),
            }
        }
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if p.path.get_ident().is_some_and(|i| i == self.name) {
                self.found = true;
            }
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            // A macro's tokens (`println!`, a user's): a mention of the name there counts.
            if m.tokens
                .clone()
                .into_iter()
                .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == self.name))
            {
                self.found = true;
            }
        }
    }
    let mut v = V { name, found: false };
    for st in stmts {
        syn::visit::Visit::visit_stmt(&mut v, st);
    }
    v.found
}

/// What a loop body does with outside names: the updates of a name with a reduction
/// operator (`None` for an assignment that is not one), the names used any other way, and
/// the names it declares.
#[derive(Default)]
struct Updates {
    updates: Vec<(String, Option<RedOp>)>,
    other: HashSet<String>,
    declared: HashSet<String>,
}

fn name_of(e: &Expr) -> Option<String> {
    match strip(e) {
        Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    }
}

impl Updates {
    /// An assignment of a plain name: the name and the reduction operator its update uses
    /// (`None` when it is not an update, or its operand reads the name too), with the operand
    /// recorded as other uses; `None` when `e` is not such an assignment.
    fn update(&mut self, e: &Expr) -> Option<(String, Option<RedOp>)> {
        // `s -= e` and `s = s - e` subtract from a sum: a `+` reduction (the private copy
        // starts at 0 and the partials are added), as C compilers read it.
        if let Some((name, operand)) = subtraction(e) {
            self.visit_expr(operand);
            let op = (!mentions(operand, &name)).then_some(RedOp::Add);
            return Some((name, op));
        }
        let a = assignment(e)?;
        let name = name_of(a.target)?;
        self.visit_expr(a.operand);
        let op = a.op.filter(|_| !mentions(a.operand, &name));
        Some((name, op))
    }
}

/// `s -= e` or `s = s - e` of a plain name `s`: the name and `e`.
fn subtraction(e: &Expr) -> Option<(String, &Expr)> {
    match strip(e) {
        Expr::Binary(b) if matches!(b.op, syn::BinOp::SubAssign(_)) => {
            Some((name_of(&b.left)?, &*b.right))
        }
        Expr::Assign(a) => {
            let name = name_of(&a.left)?;
            match strip(&a.right) {
                Expr::Binary(b)
                    if matches!(b.op, syn::BinOp::Sub(_))
                        && name_of(&b.left).as_deref() == Some(name.as_str()) =>
                {
                    Some((name, &*b.right))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn mentions(e: &Expr, name: &str) -> bool {
    struct M<'a>(&'a str, bool);
    impl<'ast> Visit<'ast> for M<'_> {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if p.path.get_ident().is_some_and(|i| i == self.0) {
                self.1 = true;
            }
        }
    }
    let mut m = M(name, false);
    m.visit_expr(e);
    m.1
}

impl<'ast> Visit<'ast> for Updates {
    fn visit_local(&mut self, l: &'ast syn::Local) {
        self.declared
            .extend(pat_bindings(&l.pat, false).into_iter().map(|(n, _)| n));
        syn::visit::visit_local(self, l);
    }

    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.declared
            .extend(pat_bindings(&f.pat, false).into_iter().map(|(n, _)| n));
        syn::visit::visit_expr_for_loop(self, f);
    }

    fn visit_stmt(&mut self, s: &'ast Stmt) {
        // Statements under a directive (an atomic, a nested loop's clauses) keep their own
        // rules: their names count as other uses.
        if let Stmt::Expr(e, _) = s {
            if attrs::stmt_attrs(s)
                .iter()
                .all(|a| attrs::directive_of(a).is_none())
            {
                if let Some(u) = self.update(e) {
                    self.updates.push(u);
                    return;
                }
            }
        }
        syn::visit::visit_stmt(self, s);
    }

    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if let Some(i) = p.path.get_ident() {
            self.other.insert(i.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    fn block(src: &str) -> Vec<Stmt> {
        syn::parse_str::<syn::Block>(src).expect("a block").stmts
    }

    fn text(stmts: &[Stmt]) -> String {
        stmts
            .iter()
            .map(|s| s.to_token_stream().to_string())
            .collect()
    }

    #[test]
    fn a_sum_the_loop_only_adds_to_or_subtracts_from_is_a_sum() {
        let mut s = block("{ for i in 0..n { t -= x[i]; } for i in 0..n { u = u - x[i]; } }");
        assert_eq!(recognize(&mut s), ["t", "u"]);
        let out = text(&s);
        assert!(out.contains("reduction (+ : t)"), "{out}");
        assert!(out.contains("reduction (+ : u)"), "{out}");
        // `u = x[i] - u` is no reduction.
        let mut s = block("{ for i in 0..n { u = x[i] - u; } }");
        assert!(recognize(&mut s).is_empty());
    }

    #[test]
    fn vector_loops_inside_a_regions_loops_get_their_sums() {
        let src = "{ for j in 0..n { let mut sum = a[j]; \
                   #[acc::r#loop(vector(length: 32))] for k in 0..j { sum -= a[k] * b[k]; } \
                   #[acc::r#loop(seq)] for k in 0..j { sum += a[k]; } \
                   a[j] = sum; } }";
        let mut s = block(src);
        assert_eq!(recognize_nested(&mut s, false), ["sum"]);
        let out = text(&s);
        assert!(
            out.contains("vector (length : 32) , reduction (+ : sum)"),
            "{out}"
        );
        // The `seq` loop keeps its clauses.
        assert!(out.contains("r#loop (seq)"), "{out}");
        // A loop without `vector` or `worker` is not shared: left as it is.
        let mut s = block("{ for j in 0..n { let mut s = 0.0; #[acc::r#loop] for k in 0..n { s += a[k]; } a[j] = s; } }");
        assert!(recognize_nested(&mut s, false).is_empty());
    }
}
