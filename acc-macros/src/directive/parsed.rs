//! One parse of each directive per macro invocation.
//!
//! A region's nested directives are read by many passes: checking (levels, nesting), the
//! rewrites before expansion (`collapse(force)`, recognized reductions, gang-redundant code),
//! the host and multicore twins and each kernel builder. Every pass asks here instead of
//! parsing the attribute itself, so each attribute is parsed once and every pass sees the same
//! [`Directive`].
//!
//! The table is keyed by the directive's kind and its tokens *with their spans* (their
//! `Debug` form): parsing is a function of exactly that, so an entry is the parse any pass would
//! have made, and two attributes with the same text at different places stay apart (their
//! clause spans, which errors point at, differ). An attribute a pass rewrites (members renamed,
//! a recognized reduction added) has new tokens and gets a parse of its own. The table is
//! emptied when a macro invocation starts ([`reset`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use proc_macro2::{Span, TokenStream};
use syn::Attribute;

use super::parse::parse_directive;
use super::{Directive, DirectiveKind};

/// A directive as parsed, shared by every pass that reads it, or the parse error (reported
/// once, by the pass that checks the directive).
pub type Parsed = syn::Result<Rc<Directive>>;

thread_local! {
    static TABLE: RefCell<Table> = RefCell::new(Table::default());
}

#[derive(Default)]
struct Table {
    parsed: HashMap<String, Parsed>,
    /// How many parses were made (not answered from the table), for tests.
    parses: usize,
}

/// Empties the table: called as each macro invocation starts, so that no parse outlives the
/// tokens it was made from.
pub fn reset() {
    TABLE.with(|t| t.borrow_mut().parsed.clear());
}

/// The directive of an `#[acc::name(..)]` attribute of kind `kind`; its span is that of the
/// attribute's name (`loop` in `#[acc::r#loop(..)]`).
pub fn of_attr(kind: DirectiveKind, attr: &Attribute) -> Parsed {
    let span = attr
        .path()
        .segments
        .last()
        .map_or_else(Span::call_site, |s| s.ident.span());
    match crate::directive::attrs::attr_args(attr) {
        Ok(args) => of_tokens(kind, span, args),
        Err(e) => Err(e),
    }
}

/// The directive of kind `kind` whose clauses are `args`, spanned at `span`.
pub fn of_tokens(kind: DirectiveKind, span: Span, args: TokenStream) -> Parsed {
    let key = format!("{kind:?} {span:?} {args:?}");
    if let Some(p) = TABLE.with(|t| t.borrow().parsed.get(&key).cloned()) {
        return p;
    }
    let p = parse_directive(kind, span, args).map(Rc::new);
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        t.parses += 1;
        t.parsed.insert(key, p.clone());
    });
    p
}

/// The `loop` directive of a statement attribute, when the attribute is one and parses.
/// Passes that only read a loop's clauses use this; the errors of a malformed one are
/// reported where the directive is checked ([`crate::expand::Ctx::directive`]).
pub fn loop_of(attr: &Attribute) -> Option<Rc<Directive>> {
    (crate::directive::attrs::directive_of(attr) == Some(DirectiveKind::Loop))
        .then(|| of_attr(DirectiveKind::Loop, attr).ok())
        .flatten()
}

/// How many parses this thread has made since it started (for tests).
#[cfg(test)]
pub fn parse_count() -> usize {
    TABLE.with(|t| t.borrow().parses)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn an_attribute_is_parsed_once_and_a_rewritten_one_again() {
        let a: Attribute = syn::parse_quote!(#[acc::r#loop(gang, reduction(+: s))]);
        let b: Attribute = syn::parse_quote!(#[acc::r#loop(vector)]);
        let before = parse_count();
        let first = of_attr(DirectiveKind::Loop, &a).unwrap();
        let again = of_attr(DirectiveKind::Loop, &a.clone()).unwrap();
        assert!(Rc::ptr_eq(&first, &again));
        assert_eq!(parse_count(), before + 1);
        let other = of_attr(DirectiveKind::Loop, &b);
        assert_eq!(parse_count(), before + 2);
        assert_eq!(other.unwrap().clauses.len(), 1);
        // The same tokens as another kind are another parse.
        let _ = of_tokens(DirectiveKind::Parallel, Span::call_site(), quote!(gang));
        assert_eq!(parse_count(), before + 3);
    }

    #[test]
    fn a_malformed_attribute_keeps_its_error() {
        let a: Attribute = syn::parse_quote!(#[acc::r#loop(gang, nonsense)]);
        assert!(of_attr(DirectiveKind::Loop, &a).is_err());
        assert!(loop_of(&a).is_none());
        let n: Attribute = syn::parse_quote!(#[acc::r#loop = 3]);
        assert!(of_attr(DirectiveKind::Loop, &n).is_err());
    }

    #[test]
    fn a_region_parses_each_directive_once() {
        // Checking, the rewrites, the host and multicore twins and both kernel arms (the
        // `device_type` sections give nvidia and wgpu kernels of their own) all read the
        // region's three nested directives and its own.
        let item = quote! {
            fn f(a: &mut [f32], b: &[f32], n: usize) {
                let mut s = 0.0f32;
                #[acc::r#loop(gang)]
                for i in 0..n {
                    #[acc::r#loop(reduction(+: s), device_type(nvidia), vector)]
                    for j in 0..n {
                        s += b[i * n + j];
                    }
                    #[acc::r#loop(seq)]
                    for k in 0..4 {
                        a[i] += b[k];
                    }
                }
            }
        };
        reset();
        let before = parse_count();
        let out = crate::expand::expand_fn(DirectiveKind::Parallel, quote!(copy(a)), item);
        assert!(!out.to_string().contains("compile_error"), "{out}");
        assert_eq!(parse_count() - before, 4);
    }
}
