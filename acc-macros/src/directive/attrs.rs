//! Finding and removing `#[acc::..]` attributes on statements.

use proc_macro2::TokenStream;
use syn::{Attribute, Expr, Meta, Stmt};

use crate::directive::DirectiveKind;

/// The directive an attribute names, if its path is `acc::name` or `::acc::name`.
pub fn directive_of(attr: &Attribute) -> Option<DirectiveKind> {
    let path = attr.path();
    let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    if segs.len() == 2 && segs[0] == "acc" {
        DirectiveKind::from_attr_name(&segs[1])
    } else {
        None
    }
}

/// The tokens inside `#[acc::name(..)]` (empty for `#[acc::name]`).
pub fn attr_args(attr: &Attribute) -> syn::Result<TokenStream> {
    match &attr.meta {
        Meta::Path(_) => Ok(TokenStream::new()),
        Meta::List(l) => Ok(l.tokens.clone()),
        Meta::NameValue(nv) => Err(syn::Error::new_spanned(
            nv,
            "write the directive's clauses in parentheses: `#[acc::name(clause, ..)]`",
        )),
    }
}

/// The expression along whose left spine outer attributes of a statement end up: syn, like
/// rustc, attaches `#[a] x += 1` to `x`, the leftmost operand.
fn left_child(e: &Expr) -> Option<&Expr> {
    match e {
        Expr::Binary(b) => Some(&b.left),
        Expr::Assign(a) => Some(&a.left),
        Expr::Index(i) => Some(&i.expr),
        Expr::Field(f) => Some(&f.base),
        Expr::MethodCall(m) => Some(&m.receiver),
        Expr::Cast(c) => Some(&c.expr),
        Expr::Range(r) => r.start.as_deref(),
        Expr::Try(t) => Some(&t.expr),
        _ => None,
    }
}

fn left_child_mut(e: &mut Expr) -> Option<&mut Expr> {
    match e {
        Expr::Binary(b) => Some(&mut b.left),
        Expr::Assign(a) => Some(&mut a.left),
        Expr::Index(i) => Some(&mut i.expr),
        Expr::Field(f) => Some(&mut f.base),
        Expr::MethodCall(m) => Some(&mut m.receiver),
        Expr::Cast(c) => Some(&mut c.expr),
        Expr::Range(r) => r.start.as_deref_mut(),
        Expr::Try(t) => Some(&mut t.expr),
        _ => None,
    }
}

fn expr_attrs(e: &Expr) -> &[Attribute] {
    let own = own_attrs(e);
    if !own.is_empty() {
        return own;
    }
    left_child(e).map_or(&[], expr_attrs)
}

fn expr_attrs_mut(e: &mut Expr) -> Option<&mut Vec<Attribute>> {
    let has_own = !own_attrs(e).is_empty();
    if !has_own && left_child(e).is_some_and(|l| !expr_attrs(l).is_empty()) {
        return left_child_mut(e).and_then(expr_attrs_mut);
    }
    own_attrs_mut(e)
}

fn own_attrs(e: &Expr) -> &[Attribute] {
    match e {
        Expr::ForLoop(x) => &x.attrs,
        Expr::Block(x) => &x.attrs,
        Expr::Assign(x) => &x.attrs,
        Expr::Binary(x) => &x.attrs,
        Expr::While(x) => &x.attrs,
        Expr::Loop(x) => &x.attrs,
        Expr::If(x) => &x.attrs,
        Expr::Unsafe(x) => &x.attrs,
        Expr::Macro(x) => &x.attrs,
        Expr::Call(x) => &x.attrs,
        Expr::MethodCall(x) => &x.attrs,
        Expr::Paren(x) => &x.attrs,
        Expr::Path(x) => &x.attrs,
        Expr::Index(x) => &x.attrs,
        Expr::Field(x) => &x.attrs,
        Expr::Unary(x) => &x.attrs,
        Expr::Lit(x) => &x.attrs,
        _ => &[],
    }
}

fn own_attrs_mut(e: &mut Expr) -> Option<&mut Vec<Attribute>> {
    Some(match e {
        Expr::ForLoop(x) => &mut x.attrs,
        Expr::Block(x) => &mut x.attrs,
        Expr::Assign(x) => &mut x.attrs,
        Expr::Binary(x) => &mut x.attrs,
        Expr::While(x) => &mut x.attrs,
        Expr::Loop(x) => &mut x.attrs,
        Expr::If(x) => &mut x.attrs,
        Expr::Unsafe(x) => &mut x.attrs,
        Expr::Macro(x) => &mut x.attrs,
        Expr::Call(x) => &mut x.attrs,
        Expr::MethodCall(x) => &mut x.attrs,
        Expr::Paren(x) => &mut x.attrs,
        Expr::Path(x) => &mut x.attrs,
        Expr::Index(x) => &mut x.attrs,
        Expr::Field(x) => &mut x.attrs,
        Expr::Unary(x) => &mut x.attrs,
        Expr::Lit(x) => &mut x.attrs,
        _ => return None,
    })
}

/// The attributes on a statement.
pub fn stmt_attrs(st: &Stmt) -> &[Attribute] {
    match st {
        Stmt::Local(l) => &l.attrs,
        Stmt::Expr(e, _) => expr_attrs(e),
        Stmt::Macro(m) => &m.attrs,
        Stmt::Item(_) => &[],
    }
}

/// The attributes on a statement, to change.
pub fn stmt_attrs_mut(st: &mut Stmt) -> Option<&mut Vec<Attribute>> {
    match st {
        Stmt::Local(l) => Some(&mut l.attrs),
        Stmt::Expr(e, _) => expr_attrs_mut(e),
        Stmt::Macro(m) => Some(&mut m.attrs),
        Stmt::Item(_) => None,
    }
}

/// Removes every `#[acc::..]` attribute from a statement and returns them in order.
pub fn take_directives(st: &mut Stmt) -> Vec<(DirectiveKind, Attribute)> {
    let Some(attrs) = stmt_attrs_mut(st) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    attrs.retain(|a| match directive_of(a) {
        Some(k) => {
            out.push((k, a.clone()));
            false
        }
        None => true,
    });
    out
}
