//! Rust forms the kernel builder takes as simpler ones, rewritten in the kernel's copy of a
//! region or routine only (the host twin runs them as written):
//!
//! - `match` on integers, `bool`s and constants: an `if` chain over the scrutinee, held in a
//!   local first when it is not a plain variable. Arms with literals, `|`, ranges (`1..=5`,
//!   `..10`), constants, `_`, a binding (`n => ..`) and guards (`n if n > 3 => ..`); the last
//!   arm is the `else` (rustc has checked that the arms cover every value). A tuple of such
//!   values (`match (i == 0, j == 0) { (true, _) => .., (_, true) => .., _ => .. }`) is matched
//!   element by element, each element held apart, with `..` in its patterns.
//! - Assignment to a tuple of places, `(a, b) = (b, a)` or `(x, y) = f(t)`: every value is
//!   computed before any place is written, as in Rust.
//!
//! Other forms are left as written, for the translation to refuse with their name.

use proc_macro2::Span;
use quote::quote;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Ident, Pat, Stmt};

use crate::analysis::reduction_update::strip;
use crate::analysis::uses::path_ident;

/// `stmts` with the forms above rewritten, in nested blocks too.
pub(super) fn lower(stmts: &[Stmt]) -> Vec<Stmt> {
    let mut block = Block {
        brace_token: Default::default(),
        stmts: stmts.to_vec(),
    };
    Lower { counter: 0 }.visit_block_mut(&mut block);
    block.stmts
}

struct Lower {
    counter: usize,
}

impl Lower {
    fn fresh(&mut self, what: &str) -> Ident {
        self.counter += 1;
        Ident::new(&format!("__acc_{what}{}", self.counter), Span::call_site())
    }

    /// The statements replacing `st` (`None`: keep it).
    fn stmt(&mut self, st: &Stmt) -> Option<Vec<Stmt>> {
        match st {
            // `let x = match s { .. };`
            Stmt::Local(l) => {
                let init = l.init.as_ref().filter(|i| i.diverge.is_none())?;
                let Expr::Match(m) = strip(&init.expr) else {
                    return None;
                };
                let (mut out, chain) = self.match_chain(m)?;
                let mut l = l.clone();
                if let Some(i) = l.init.as_mut() {
                    i.expr = Box::new(chain);
                }
                out.push(Stmt::Local(l));
                Some(out)
            }
            Stmt::Expr(e, semi) => match strip(e) {
                Expr::Match(m) => {
                    let (mut out, chain) = self.match_chain(m)?;
                    out.push(Stmt::Expr(chain, *semi));
                    Some(out)
                }
                Expr::Assign(a) => match strip(&a.right) {
                    // `x = match s { .. };`
                    Expr::Match(m) => {
                        let (mut out, chain) = self.match_chain(m)?;
                        let left = &a.left;
                        out.push(syn::parse_quote!(#left = #chain;));
                        Some(out)
                    }
                    _ if matches!(strip(&a.left), Expr::Tuple(_)) => self.tuple_assign(a),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }

    /// `(p, q) = value;`: each element computed into a temporary, then each place assigned.
    fn tuple_assign(&mut self, a: &syn::ExprAssign) -> Option<Vec<Stmt>> {
        let Expr::Tuple(places) = strip(&a.left) else {
            return None;
        };
        let temps: Vec<Ident> = (0..places.elems.len()).map(|_| self.fresh("t")).collect();
        let mut out: Vec<Stmt> = Vec::new();
        match strip(&a.right) {
            Expr::Tuple(values) if values.elems.len() == places.elems.len() => {
                for (t, v) in temps.iter().zip(&values.elems) {
                    out.push(syn::parse_quote!(let #t = #v;));
                }
            }
            value => out.push(syn::parse_quote!(let (#(#temps),*) = #value;)),
        }
        for (t, p) in temps.iter().zip(&places.elems) {
            if !matches!(p, Expr::Infer(_)) {
                out.push(syn::parse_quote!(#p = #t;));
            }
        }
        Some(out)
    }

    /// A `match` as statements holding its scrutinee (none when it is a variable; each
    /// element of a tuple scrutinee apart) and the `if` chain of its arms; `None` when an arm's
    /// pattern is not one of the forms above.
    fn match_chain(&mut self, m: &syn::ExprMatch) -> Option<(Vec<Stmt>, Expr)> {
        let mut pre = Vec::new();
        let mut held = |e: &Expr, this: &mut Self| -> Expr {
            match strip(e) {
                e @ Expr::Path(_) if path_ident(e).is_some() => e.clone(),
                e => {
                    let v = this.fresh("m");
                    pre.push(syn::parse_quote!(let #v = #e;));
                    syn::parse_quote!(#v)
                }
            }
        };
        let scrutinee = match strip(&m.expr) {
            // `match (a, b) { (0, _) => .., .. }`: each element held, patterns element-wise.
            Expr::Tuple(t) if !t.elems.is_empty() => {
                Scrutinee::Tuple(t.elems.iter().map(|e| held(e, self)).collect())
            }
            e => Scrutinee::One(held(e, self)),
        };
        let (last, rest) = m.arms.split_last()?;
        let mut chain = arm_body(last, &scrutinee)?;
        for arm in rest.iter().rev() {
            let mut cond = scrutinee.test(&arm.pat)?;
            if let Some((_, guard)) = &arm.guard {
                let mut guard = (**guard).clone();
                for (name, by) in scrutinee.bindings(&arm.pat)? {
                    guard = substitute(&guard, &name, &by);
                }
                cond = syn::parse_quote!((#cond) && (#guard));
            }
            let body = arm_body(arm, &scrutinee)?;
            // `else if`, so that the translation sees one chain (arms with statements are
            // allowed where the whole chain is a `let`'s or an assignment's value).
            chain = syn::parse_quote!(if #cond #body else #chain);
        }
        Some((pre, chain))
    }
}

/// What a `match` tests: one value, or the elements of a tuple.
enum Scrutinee {
    One(Expr),
    Tuple(Vec<Expr>),
}

impl Scrutinee {
    /// The condition under which `p` matches.
    fn test(&self, p: &Pat) -> Option<Expr> {
        match (self, p) {
            (Scrutinee::One(s), p) => pattern_test(p, s),
            (Scrutinee::Tuple(_), Pat::Wild(_)) => Some(syn::parse_quote!(true)),
            (Scrutinee::Tuple(_), Pat::Paren(q)) => self.test(&q.pat),
            (Scrutinee::Tuple(_), Pat::Or(o)) => {
                let tests: Vec<Expr> = o
                    .cases
                    .iter()
                    .map(|c| self.test(c))
                    .collect::<Option<_>>()?;
                Some(syn::parse_quote!(#((#tests))||*))
            }
            (Scrutinee::Tuple(elems), Pat::Tuple(t)) => {
                let tests: Vec<Expr> = self
                    .pairs(elems, t)?
                    .into_iter()
                    .map(|(p, s)| pattern_test(p, s))
                    .collect::<Option<_>>()?;
                Some(syn::parse_quote!(true #(&& (#tests))*))
            }
            _ => None,
        }
    }

    /// The names `p` binds, each with the value it binds (`None`: a binding of the whole
    /// tuple, or one under `|`, which the rewrite does not take).
    fn bindings(&self, p: &Pat) -> Option<Vec<(Ident, Expr)>> {
        match (self, p) {
            (Scrutinee::One(s), p) => {
                Some(binding(p).map(|n| (n, s.clone())).into_iter().collect())
            }
            (Scrutinee::Tuple(_), Pat::Wild(_)) => Some(Vec::new()),
            (Scrutinee::Tuple(_), Pat::Paren(q)) => self.bindings(&q.pat),
            (Scrutinee::Tuple(_), Pat::Or(o)) => {
                // Alternatives bind nothing here (`(0, _) | (_, 0)`).
                o.cases
                    .iter()
                    .all(|c| self.bindings(c).is_some_and(|b| b.is_empty()))
                    .then(Vec::new)
            }
            (Scrutinee::Tuple(elems), Pat::Tuple(t)) => Some(
                self.pairs(elems, t)?
                    .into_iter()
                    .filter_map(|(p, s)| binding(p).map(|n| (n, s.clone())))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Each element pattern of `t` with the element it matches (a `..` standing for those
    /// between); `None` when the counts do not fit.
    fn pairs<'a>(
        &self,
        elems: &'a [Expr],
        t: &'a syn::PatTuple,
    ) -> Option<Vec<(&'a Pat, &'a Expr)>> {
        let pats: Vec<&Pat> = t.elems.iter().collect();
        match pats.iter().position(|p| matches!(p, Pat::Rest(_))) {
            None if pats.len() == elems.len() => Some(pats.into_iter().zip(elems).collect()),
            None => None,
            Some(r) => {
                let (before, after) = (&pats[..r], &pats[r + 1..]);
                if before.len() + after.len() > elems.len() {
                    return None;
                }
                let tail = &elems[elems.len() - after.len()..];
                Some(
                    before
                        .iter()
                        .copied()
                        .zip(elems)
                        .chain(after.iter().copied().zip(tail))
                        .collect(),
                )
            }
        }
    }
}

impl VisitMut for Lower {
    fn visit_block_mut(&mut self, b: &mut Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for st in std::mem::take(&mut b.stmts) {
            match self.stmt(&st) {
                Some(new) => out.extend(new),
                None => out.push(st),
            }
        }
        b.stmts = out;
        syn::visit_mut::visit_block_mut(self, b);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        // A `match` in an expression (an argument, an operand) over a variable: the chain in
        // place. (Closures are not kernel code.)
        if let Expr::Closure(_) = e {
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
        if let Expr::Match(m) = e {
            if let Some((pre, chain)) = self.match_chain(m) {
                if pre.is_empty() {
                    *e = chain;
                }
            }
        }
    }
}

/// The binding of an arm `name => ..` / `name @ ..`, if it has one.
fn binding(p: &Pat) -> Option<Ident> {
    match p {
        Pat::Ident(pi) if pi.by_ref.is_none() && !is_constant(&pi.ident) => Some(pi.ident.clone()),
        _ => None,
    }
}

/// A name that is a constant, not a binding (`MAX`, `LIMIT`).
fn is_constant(id: &Ident) -> bool {
    id.to_string()
        .chars()
        .next()
        .is_some_and(char::is_uppercase)
}

/// The arm's body, with its bindings (if any) bound to what they match.
fn arm_body(arm: &syn::Arm, scrutinee: &Scrutinee) -> Option<Expr> {
    let body = &arm.body;
    let (names, values): (Vec<Ident>, Vec<Expr>) =
        scrutinee.bindings(&arm.pat)?.into_iter().unzip();
    Some(syn::parse_quote!({ #(let #names = #values;)* #body }))
}

/// The condition under which `p` matches `s`.
fn pattern_test(p: &Pat, s: &Expr) -> Option<Expr> {
    Some(match p {
        Pat::Wild(_) => syn::parse_quote!(true),
        Pat::Ident(pi) if pi.subpat.is_none() && is_constant(&pi.ident) => {
            let c = &pi.ident;
            syn::parse_quote!(#s == #c)
        }
        Pat::Ident(pi) => match &pi.subpat {
            None => syn::parse_quote!(true),
            Some((_, sub)) => pattern_test(sub, s)?,
        },
        Pat::Lit(l) => syn::parse_quote!(#s == #l),
        Pat::Path(p) => syn::parse_quote!(#s == #p),
        Pat::Paren(p) => pattern_test(&p.pat, s)?,
        Pat::Or(o) => {
            let tests: Vec<Expr> = o
                .cases
                .iter()
                .map(|c| pattern_test(c, s))
                .collect::<Option<_>>()?;
            syn::parse_quote!(#((#tests))||*)
        }
        Pat::Range(r) => {
            let lo = r.start.as_ref().map(|a| quote!(#s >= #a));
            let hi = r.end.as_ref().map(|b| match r.limits {
                syn::RangeLimits::Closed(_) => quote!(#s <= #b),
                syn::RangeLimits::HalfOpen(_) => quote!(#s < #b),
            });
            match (lo, hi) {
                (Some(lo), Some(hi)) => syn::parse_quote!(#lo && #hi),
                (Some(t), None) | (None, Some(t)) => syn::parse_quote!(#t),
                (None, None) => syn::parse_quote!(true),
            }
        }
        _ => return None,
    })
}

/// `e` with the variable `name` replaced by `by` (a guard reading the arm's binding).
fn substitute(e: &Expr, name: &Ident, by: &Expr) -> Expr {
    struct Sub<'a>(&'a Ident, &'a Expr);
    impl VisitMut for Sub<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if path_ident(e).is_some_and(|id| id == self.0) {
                *e = self.1.clone();
                return;
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
    }
    let mut e = e.clone();
    Sub(name, by).visit_expr_mut(&mut e);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(src: &str) -> String {
        let block: syn::Block = syn::parse_str(src).unwrap();
        let stmts = lower(&block.stmts);
        quote!(#(#stmts)*).to_string()
    }

    #[test]
    fn a_match_on_integers_is_an_if_chain() {
        let out = lowered("{ let y = match k { 0 => 1.0, 1 | 2 => 2.0, 3..=5 => 3.0, n if n > 9 => n as f64, _ => 0.0 }; }");
        assert!(out.contains("if k == 0"), "{out}");
        assert!(out.contains("(k == 1) || (k == 2)"), "{out}");
        assert!(out.contains("k >= 3 && k <= 5"), "{out}");
        assert!(out.contains("(true) && (k > 9)"), "{out}");
        assert!(out.contains("let n = k ; n as f64"), "{out}");
        assert!(!out.contains("match"), "{out}");
    }

    #[test]
    fn a_computed_scrutinee_is_held_once() {
        let out = lowered("{ match a[i] % 3 { 0 => { x[i] = 1; } _ => { x[i] = 2; } } }");
        assert!(out.starts_with("let __acc_m1 = a [i] % 3 ;"), "{out}");
        assert!(out.contains("if __acc_m1 == 0"), "{out}");
    }

    #[test]
    fn tuple_assignments_compute_every_value_first() {
        let out = lowered("{ (a, b) = (b, a + b); (x[i], _, y) = f(t); }");
        assert!(
            out.contains("let __acc_t1 = b ; let __acc_t2 = a + b ; a = __acc_t1 ; b = __acc_t2 ;"),
            "{out}"
        );
        assert!(
            out.contains(
                "let (__acc_t3 , __acc_t4 , __acc_t5) = f (t) ; x [i] = __acc_t3 ; y = __acc_t5 ;"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_match_on_a_tuple_tests_its_elements() {
        let out = lowered("{ let y = match (i == 0, k % 3, j) { (true, _, _) => 1, (_, 0 | 1, n) if n > 2 => n, (false, .., 7) => 2, (..) | _ => 0 }; }");
        assert!(
            out.starts_with("let __acc_m1 = i == 0 ; let __acc_m2 = k % 3 ;"),
            "{out}"
        );
        assert!(
            out.contains("if true && (__acc_m1 == true) && (true) && (true)"),
            "{out}"
        );
        assert!(out.contains("(__acc_m2 == 0) || (__acc_m2 == 1)"), "{out}");
        assert!(out.contains("&& (j > 2)"), "{out}");
        assert!(out.contains("let n = j ; n"), "{out}");
        assert!(out.contains("(__acc_m1 == false) && (j == 7)"), "{out}");
        assert!(!out.contains("match"), "{out}");
    }

    #[test]
    fn other_patterns_are_left_for_the_translation_to_refuse() {
        let out = lowered("{ let v = match p { Some(x) => x, None => 0 }; }");
        assert!(out.contains("match p"), "{out}");
    }
}
