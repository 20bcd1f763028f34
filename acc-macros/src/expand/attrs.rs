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
        Meta::NameValue(nv) => Err(syn::Error::new_spanned(nv, "write the directive's clauses in parentheses: `#[acc::name(clause, ..)]`")),
    }
}

fn expr_attrs(e: &Expr) -> &[Attribute] {
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
        _ => &[],
    }
}

fn expr_attrs_mut(e: &mut Expr) -> Option<&mut Vec<Attribute>> {
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

fn stmt_attrs_mut(st: &mut Stmt) -> Option<&mut Vec<Attribute>> {
    match st {
        Stmt::Local(l) => Some(&mut l.attrs),
        Stmt::Expr(e, _) => expr_attrs_mut(e),
        Stmt::Macro(m) => Some(&mut m.attrs),
        Stmt::Item(_) => None,
    }
}

/// Removes every `#[acc::..]` attribute from a statement and returns them in order.
pub fn take_directives(st: &mut Stmt) -> Vec<(DirectiveKind, Attribute)> {
    let Some(attrs) = stmt_attrs_mut(st) else { return Vec::new() };
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
