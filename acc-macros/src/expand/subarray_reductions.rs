//! Reductions over subarrays (3.3 section 2.5.15: "a var in a reduction clause must be a
//! scalar variable name, an aggregate variable name, an array element, or a subarray"):
//! `reduction(+: s[lo..lo + 4])` of a `Vec`, slice or array, on the construct or on a loop
//! inside it.
//!
//! Each device already reduces fixed-size arrays element-wise (`reduction(+: hist)` of a
//! `[u32; 4]`), so the subarray becomes one: before the construct, its elements are copied into
//! a private array of the subarray's length (`acc_part_s`, refreshed from the device first
//! when `s` is present there and the construct runs on the device); the construct and its loops reduce into that array, the body's
//! `s[e]` reading and writing `acc_part_s[e - lo]`; after it, the array's elements go back
//! to `s[lo..]` (and to the device's copy of `s`, when present). Indexing `s` outside the
//! subarray is unspecified by the spec; here it indexes outside the private array, which is an
//! error on every device. The length must be known when compiling (`s[0..4]`, `s[i..i + 4]`),
//! as an array type needs it.

use std::collections::HashMap;

use proc_macro2::{Group, Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote_spanned};
use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Stmt};

use super::compute::RegionBody;
use super::{attrs, Ctx};
use crate::analysis::bindings::{Binding, Env};
use crate::directive::{ClauseArgs, ClauseName as C, Directive, DirectiveKind};

/// A construct whose subarray reductions were rewritten, with the code around it.
pub(super) struct Lowered {
    pub dir: Directive,
    pub body: RegionBody,
    pub env: Env,
    /// Statements before the construct: the private arrays, filled.
    pub before: TokenStream,
    /// Statements after it: the results stored back.
    pub after: TokenStream,
}

/// One array reduced over a subarray.
struct Part {
    /// The array, as the user names it.
    arr: Ident,
    /// The private array.
    tmp: Ident,
    /// The subarray's first index, evaluated once before the construct.
    lo: Ident,
    lo_expr: Expr,
    /// The length: a literal, or an expression of `const` items (`NC * NF`), in braces where
    /// an array type needs it.
    len: TokenStream,
    /// The subarray as written (`s[0..4]`), for messages.
    text: String,
    span: Span,
}

/// Rewrites the subarray reductions of a construct (its own and its loops'); `None` when it
/// has none, or when one is refused (the error recorded).
pub(super) fn lower(
    ctx: &mut Ctx,
    dir: &Directive,
    body: &RegionBody,
    env: &Env,
) -> Option<Lowered> {
    let (vars, own) = reduced_vars(dir, body);
    if vars.is_empty() {
        return None;
    }
    let parts = parts_of(ctx, &vars, body)?;

    // The directives name the private arrays.
    let mut dir = dir.clone();
    rename_in_directive(&mut dir, &parts);
    let mut names: Vec<&String> = parts.keys().collect();
    names.sort();
    for name in names.iter().filter(|n| !own.contains(n)) {
        let p = &parts[*name];
        dir.clauses.push(crate::directive::Clause {
            name: C::Copy,
            span: p.span,
            args: ClauseArgs::Vars {
                modifier: None,
                vars: vec![crate::directive::VarRef {
                    name: p.tmp.clone(),
                    member: None,
                    subarray: None,
                    text: p.text.clone(),
                    span: p.span,
                }],
            },
            device_types: None,
            devnum: None,
        });
    }
    let body = rewritten_body(ctx, body, &parts)?;
    let mut env = env.clone();
    let (before, after) = copies_around(&dir, &parts, &names, &mut env);
    Some(Lowered {
        dir,
        body,
        env,
        before,
        after,
    })
}

/// The variables of the `reduction` clauses of the construct and of the loops inside it, and
/// the names of those the construct itself reduces. Those only its loops reduce are copied in
/// and out of it (the rule that the construct says what happens to such a variable, 3.3
/// section 2.6.2, is the user's for `s`, not for acc's private array).
fn reduced_vars(
    dir: &Directive,
    body: &RegionBody,
) -> (Vec<crate::directive::VarRef>, Vec<String>) {
    let mut vars = Vec::new();
    collect(dir, &mut vars);
    let own: Vec<String> = vars.iter().map(|v| v.name.to_string()).collect();
    let stmts: Vec<&Stmt> = match body {
        RegionBody::Block(b) => b.stmts.iter().collect(),
        RegionBody::Loop(f) => f.body.stmts.iter().collect(),
    };
    if let RegionBody::Loop(f) = body {
        for a in &f.attrs {
            if let Some(d) = crate::directive::parsed::loop_of(a) {
                collect(&d, &mut vars);
            }
        }
    }
    struct Nested<'a>(&'a mut Vec<crate::directive::VarRef>);
    impl<'ast> syn::visit::Visit<'ast> for Nested<'_> {
        fn visit_stmt(&mut self, st: &'ast Stmt) {
            for a in attrs::stmt_attrs(st) {
                if let Some(d) = crate::directive::parsed::loop_of(a) {
                    collect(&d, self.0);
                }
            }
            syn::visit::visit_stmt(self, st);
        }
    }
    for st in stmts {
        syn::visit::Visit::visit_stmt(&mut Nested(&mut vars), st);
    }
    (vars, own)
}

/// The arrays reduced over subarrays, by name, each with its private array; `None` when there
/// are none or one is refused (each refusal's error recorded).
fn parts_of(
    ctx: &mut Ctx,
    vars: &[crate::directive::VarRef],
    body: &RegionBody,
) -> Option<HashMap<String, Part>> {
    let bound = bound_in(body);
    let mut parts: HashMap<String, Part> = HashMap::new();
    let mut refused = false;
    for v in vars {
        let Some(Expr::Range(r)) = v.subarray.as_deref() else {
            continue;
        };
        let Some(len) = subarray_length(ctx, v, r) else {
            refused = true;
            continue;
        };
        // The subarray is read and written around the construct, so it is named by variables
        // of the code around it, not by ones the construct binds (a loop's variable, a `let`
        // of the body), nor may the body rebind the array's name.
        let mut named = vec![v.name.to_string()];
        named.extend(idents_of(&Expr::Range(r.clone())));
        if let Some(inner) = named.iter().find(|n| bound.contains(*n)) {
            ctx.error(v.span, format!(
                "`{}`: `{inner}` is bound inside the construct; a reduction's subarray is named by variables of the code around the construct (3.3 section 2.5.15)",
                v.text
            ));
            refused = true;
            continue;
        }
        let lo_expr: Expr = match r.start.as_deref() {
            Some(e) => e.clone(),
            None => syn::parse_quote!(0),
        };
        let name = v.name.to_string();
        match parts.get(&name) {
            Some(p) if p.len.to_string() != len.to_string() || !same(&p.lo_expr, &lo_expr) => {
                ctx.error(v.span, format!(
                    "`{}`: `{name}` is reduced over another subarray in this construct already; one construct reduces one subarray of an array",
                    v.text
                ));
                refused = true;
            }
            Some(_) => {}
            None => {
                let tmp = format_ident!("acc_part_{}", v.name, span = v.span);
                let lo = format_ident!("acc_lo_{}", v.name, span = v.span);
                parts.insert(
                    name,
                    Part {
                        arr: v.name.clone(),
                        tmp,
                        lo,
                        lo_expr,
                        len,
                        text: v.text.clone(),
                        span: v.span,
                    },
                );
            }
        }
    }
    if refused || parts.is_empty() {
        return None;
    }
    Some(parts)
}

/// The length of the subarray `r` of reduction variable `v`, known when compiling and not
/// zero; else the error, recorded.
fn subarray_length(
    ctx: &mut Ctx,
    v: &crate::directive::VarRef,
    r: &syn::ExprRange,
) -> Option<TokenStream> {
    let literal = super::executable::window_length(r);
    let Some(len) = literal
        .map(|n| {
            let n = n as usize;
            quote::quote!(#n)
        })
        .or_else(|| const_length(r))
    else {
        ctx.error(v.span, format!(
            "`{}`: a subarray in `reduction` needs a length known when compiling (`{name}[lo..lo + 4]`, `{name}[0..4]`): acc reduces it as an array of that length on every device (3.3 section 2.5.15)",
            v.text, name = v.name
        ));
        return None;
    };
    if literal == Some(0) {
        ctx.error(
            v.span,
            format!("`{}`: an empty subarray has nothing to reduce", v.text),
        );
        return None;
    }
    Some(len)
}

/// The construct's body with each reduced array's uses (and its loops' directives) naming its
/// private array; `None` where a use cannot be rewritten (the errors recorded).
fn rewritten_body(
    ctx: &mut Ctx,
    body: &RegionBody,
    parts: &HashMap<String, Part>,
) -> Option<RegionBody> {
    let mut body = match body {
        RegionBody::Block(b) => RegionBody::Block(b.clone()),
        RegionBody::Loop(f) => RegionBody::Loop(f.clone()),
    };
    let mut rw = Rewrite {
        parts,
        errors: Vec::new(),
    };
    match &mut body {
        RegionBody::Block(b) => rw.visit_block_mut(b),
        RegionBody::Loop(f) => {
            for a in &mut f.attrs {
                rename_in_attr(a, parts);
            }
            rw.visit_block_mut(&mut f.body);
        }
    }

    if !rw.errors.is_empty() {
        for e in rw.errors {
            ctx.push(e);
        }
        return None;
    }
    Some(body)
}

/// The statements before the construct `dir` (the private arrays, filled from the subarrays)
/// and after it (the results stored back), for the arrays `names` of `parts`; the private
/// arrays are added to `env` as mutable bindings.
fn copies_around(
    dir: &Directive,
    parts: &HashMap<String, Part>,
    names: &[&String],
    env: &mut Env,
) -> (TokenStream, TokenStream) {
    let (mut before, mut after) = (TokenStream::new(), TokenStream::new());
    // The device's copy is read and written only where the construct runs on the device: its
    // `if` holds and its `self` does not (3.3 sections 2.5.6, 2.5.7).
    let (if_cond, _, _) = super::if_async_wait(dir);
    let self_cond = super::compute::self_condition(dir);
    let on_device = format_ident!("acc_part_on_device");
    before.extend(
        quote_spanned!(Span::call_site()=> let #on_device: bool = #if_cond.unwrap_or(true) && !#self_cond.unwrap_or(false);),
    );
    for name in names {
        let p = &parts[*name];
        let (tmp, lo, lo_expr, len) = (&p.tmp, &p.lo, &p.lo_expr, &p.len);
        let arr = &p.arr;
        env.insert(
            tmp.to_string(),
            Binding {
                mutable: true,
                ref_mut: false,
            },
        );
        before.extend(quote_spanned! {p.span=>
            let #lo: usize = #lo_expr;
            ::acc::update!(self(#arr[#lo..#lo + #len]), if_present, if(#on_device));
            let mut #tmp = ::core::array::from_fn::<_, { #len }, _>(|__acc_k| #arr[#lo + __acc_k]);
        });
        after.extend(quote_spanned! {p.span=>
            for __acc_k in 0..#len {
                #arr[#lo + __acc_k] = #tmp[__acc_k];
            }
            ::acc::update!(device(#arr[#lo..#lo + #len]), if_present, if(#on_device));
        });
    }
    (before, after)
}

/// The length of `lo..lo + K` or `..K` (or `0..K`) where `K` is an expression of `const` items
/// and literals (`NC * NF`, `config::BINS`): rustc computes it; as `(K)`.
fn const_length(r: &syn::ExprRange) -> Option<TokenStream> {
    if !matches!(r.limits, syn::RangeLimits::HalfOpen(_)) {
        return None;
    }
    let hi = r.end.as_deref()?;
    let zero = |e: &Expr| matches!(e, Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(l), .. }) if l.base10_digits() == "0");
    let k = match r.start.as_deref() {
        None => hi,
        Some(lo) if zero(lo) => hi,
        Some(lo) => match hi {
            Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_)) && same(&b.left, lo) => &b.right,
            _ => return None,
        },
    };
    crate::check::constant_expr(k).then(|| quote::quote!((#k) as usize))
}

/// The subarray reduction variables of a directive.
fn collect(d: &Directive, out: &mut Vec<crate::directive::VarRef>) {
    for c in d.all(C::Reduction) {
        if let ClauseArgs::Reduction { vars, .. } = &c.args {
            out.extend(
                vars.iter()
                    .filter(|v| v.subarray.is_some() && v.member.is_none())
                    .cloned(),
            );
        }
    }
}

fn same(a: &Expr, b: &Expr) -> bool {
    use quote::ToTokens;
    a.to_token_stream().to_string() == b.to_token_stream().to_string()
}

fn rename_in_directive(d: &mut Directive, parts: &HashMap<String, Part>) {
    for c in &mut d.clauses {
        if let ClauseArgs::Reduction { vars, .. } = &mut c.args {
            for v in vars.iter_mut() {
                if let Some(p) = parts.get(&v.name.to_string()) {
                    if v.subarray.is_some() {
                        v.name = Ident::new(&p.tmp.to_string(), v.span);
                        v.subarray = None;
                    }
                }
            }
        }
    }
}

/// In a `loop` attribute, `name[range]` inside `reduction(..)` becomes the private array's
/// name (the tokens are rewritten: the attribute is parsed again, once, by whoever reads it).
fn rename_in_attr(a: &mut syn::Attribute, parts: &HashMap<String, Part>) {
    if attrs::directive_of(a) != Some(DirectiveKind::Loop) {
        return;
    }
    let syn::Meta::List(list) = &mut a.meta else {
        return;
    };
    let mut out = Vec::new();
    let mut it = list.tokens.clone().into_iter().peekable();
    while let Some(t) = it.next() {
        match &t {
            TokenTree::Ident(id) if id == "reduction" => {
                out.push(t.clone());
                if let Some(TokenTree::Group(g)) = it.peek() {
                    let g = g.clone();
                    it.next();
                    let mut inner = Vec::new();
                    let mut gi = g.stream().into_iter().peekable();
                    while let Some(t) = gi.next() {
                        match (&t, gi.peek()) {
                            (TokenTree::Ident(id), Some(TokenTree::Group(b)))
                                if b.delimiter() == proc_macro2::Delimiter::Bracket
                                    && parts.contains_key(&id.to_string()) =>
                            {
                                inner.push(TokenTree::Ident(Ident::new(
                                    &parts[&id.to_string()].tmp.to_string(),
                                    id.span(),
                                )));
                                gi.next();
                            }
                            _ => inner.push(t),
                        }
                    }
                    let mut ng = Group::new(g.delimiter(), inner.into_iter().collect());
                    ng.set_span(g.span());
                    out.push(TokenTree::Group(ng));
                }
            }
            _ => out.push(t),
        }
    }
    list.tokens = out.into_iter().collect();
}

/// `s[e]` becomes `acc_part_s[(e) - acc_part_s_lo]`; loop attributes name the private
/// arrays.
struct Rewrite<'a> {
    parts: &'a HashMap<String, Part>,
    errors: Vec<syn::Error>,
}

/// The names a construct's body binds: `let`s, loop variables, patterns of `match` arms,
/// closures' parameters (and the loop of a combined construct).
fn bound_in(body: &RegionBody) -> std::collections::HashSet<String> {
    use crate::analysis::bindings::pat_bindings;
    struct V(std::collections::HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for V {
        fn visit_pat(&mut self, p: &'ast syn::Pat) {
            self.0
                .extend(pat_bindings(p, false).into_iter().map(|(n, _)| n));
            syn::visit::visit_pat(self, p);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = V(Default::default());
    match body {
        RegionBody::Block(b) => syn::visit::Visit::visit_block(&mut v, b),
        RegionBody::Loop(f) => syn::visit::Visit::visit_expr_for_loop(&mut v, f),
    }
    v.0
}

/// The identifiers an expression names.
fn idents_of(e: &Expr) -> Vec<String> {
    struct V(Vec<String>);
    impl<'ast> syn::visit::Visit<'ast> for V {
        fn visit_ident(&mut self, i: &'ast Ident) {
            self.0.push(i.to_string());
        }
    }
    let mut v = V(Vec::new());
    syn::visit::Visit::visit_expr(&mut v, e);
    v.0
}

impl VisitMut for Rewrite<'_> {
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    fn visit_stmt_mut(&mut self, st: &mut Stmt) {
        for a in attrs::stmt_attrs_mut(st).into_iter().flatten() {
            rename_in_attr(a, self.parts);
        }
        visit_mut::visit_stmt_mut(self, st);
    }
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        visit_mut::visit_expr_mut(self, e);
        if let Expr::Index(ix) = e {
            if let Some(p) = crate::analysis::uses::path_ident(&ix.expr)
                .and_then(|n| self.parts.get(&n.to_string()))
            {
                if matches!(
                    crate::analysis::reduction_update::strip(&ix.index),
                    Expr::Range(_)
                ) {
                    self.errors.push(syn::Error::new_spanned(
                        &*ix.index,
                        format!("`{}` is reduced here: the construct indexes its elements one at a time, not as a subslice", p.text),
                    ));
                    return;
                }
                let (tmp, lo, index) = (&p.tmp, &p.lo, &ix.index);
                *e = syn::parse_quote_spanned!(ix.bracket_token.span.join()=> #tmp[(#index) - #lo]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::directive::parsed;
    use quote::{quote, ToTokens};

    type ClauseNameText = &'static str;

    fn construct(dir: TokenStream, body: TokenStream) -> (Directive, RegionBody) {
        let d = parsed::of_tokens(DirectiveKind::ParallelLoop, Span::call_site(), dir).unwrap();
        let f: syn::ExprForLoop = syn::parse2(body).unwrap();
        ((*d).clone(), RegionBody::Loop(f))
    }

    fn text(ts: impl ToTokens) -> String {
        ts.to_token_stream().to_string().replace(' ', "")
    }

    #[test]
    fn a_construct_and_a_loop_reduce_private_arrays() {
        let (dir, body) = construct(
            quote!(reduction(+: s[2..6])),
            quote!(for i in 0..n {
                s[2 + i % 4] += 1;
                #[acc::r#loop(reduction(max: t[o..o + 3]))]
                for j in 0..3 {
                    t[o + j] = t[o + j].max(x[i]);
                }
            }),
        );
        let mut ctx = Ctx::new("f".into());
        let l = lower(&mut ctx, &dir, &body, &Env::new()).expect("lowered");
        assert_eq!(ctx.error_count(), 0);
        let RegionBody::Loop(f) = &l.body else {
            panic!("a loop")
        };
        let body = text(&f.body);
        assert!(body.contains("acc_part_s[(2+i%4)-acc_lo_s]+=1"), "{body}");
        assert!(body.contains("reduction(max:acc_part_t)"), "{body}");
        assert!(body.contains("acc_part_t[(o+j)-acc_lo_t]"), "{body}");
        // The construct reduces its own array and copies the loop's.
        let vars: Vec<(ClauseNameText, String)> = l
            .dir
            .clauses
            .iter()
            .flat_map(|c| {
                c.vars()
                    .iter()
                    .map(move |v| (c.name.spelling(), v.name.to_string()))
            })
            .collect();
        assert!(
            vars.contains(&("reduction", "acc_part_s".into())),
            "{vars:?}"
        );
        assert!(vars.contains(&("copy", "acc_part_t".into())), "{vars:?}");
        let (before, after) = (text(&l.before), text(&l.after));
        assert!(before.contains("letacc_lo_s:usize=2;"), "{before}");
        assert!(
            before.contains("update!(self(s[acc_lo_s..acc_lo_s+4usize])"),
            "{before}"
        );
        assert!(
            after.contains("s[acc_lo_s+__acc_k]=acc_part_s[__acc_k];"),
            "{after}"
        );
    }

    #[test]
    fn refusals_name_the_subarray() {
        for (dir, why) in [
            (
                quote!(reduction(+: s[0..k])),
                "a length known when compiling",
            ),
            (quote!(reduction(+: s[3..3])), "empty subarray"),
            (
                quote!(reduction(+: s[i..i + 2])),
                "`i` is bound inside the construct",
            ),
        ] {
            let (dir, body) = construct(
                dir,
                quote!(for i in 0..n {
                    s[i % 2] += 1;
                }),
            );
            let mut ctx = Ctx::new("f".into());
            assert!(lower(&mut ctx, &dir, &body, &Env::new()).is_none());
            let errors = ctx.into_compile_errors().to_string();
            assert!(errors.contains(why), "{errors}");
        }
    }
}
