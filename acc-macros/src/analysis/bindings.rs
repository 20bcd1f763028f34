//! Bindings in scope where a directive is written: whether each was declared `mut` and whether
//! it is known to hold a `&mut` reference. The expansion needs this to share a variable that a
//! parallel loop writes (through `&mut v` for a `mut` binding, through `&mut *v` for a `&mut`
//! reference held in an immutable binding).

use std::collections::HashMap;

use syn::{Expr, FnArg, Pat, Type};

/// What is known about one binding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Binding {
    /// Declared `mut`.
    pub mutable: bool,
    /// Known to hold a `&mut` reference (its type or initializer says so).
    pub ref_mut: bool,
}

/// A stack of scopes of bindings.
#[derive(Clone, Default)]
pub struct Env {
    scopes: Vec<HashMap<String, Binding>>,
}

impl Env {
    pub fn new() -> Env {
        Env {
            scopes: vec![HashMap::new()],
        }
    }
    pub fn push(&mut self) {
        self.scopes.push(HashMap::new());
    }
    pub fn pop(&mut self) {
        self.scopes.pop();
    }
    pub fn insert(&mut self, name: String, b: Binding) {
        if self.scopes.is_empty() {
            self.scopes.push(HashMap::new());
        }
        self.scopes.last_mut().expect("a scope").insert(name, b);
    }
    pub fn get(&self, name: &str) -> Option<Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// Adds the bindings of a function's parameters.
    pub fn add_fn_inputs<'a>(&mut self, inputs: impl IntoIterator<Item = &'a FnArg>) {
        for arg in inputs {
            match arg {
                FnArg::Typed(pt) => {
                    let ref_mut = is_ref_mut_type(&pt.ty);
                    self.add_pat(&pt.pat, ref_mut);
                }
                // `&mut self` (or `self: &mut Self`) holds a `&mut` reference; `mut self` is a
                // mutable binding.
                FnArg::Receiver(r) => {
                    let ref_mut = (r.reference.is_some() && r.mutability.is_some())
                        || (r.colon_token.is_some() && is_ref_mut_type(&r.ty));
                    let mutable = r.reference.is_none() && r.mutability.is_some();
                    self.insert(String::from("self"), Binding { mutable, ref_mut });
                }
            }
        }
    }

    /// Adds the bindings a pattern introduces; `ref_mut` when the matched value is known to be
    /// a `&mut` reference.
    pub fn add_pat(&mut self, pat: &Pat, ref_mut: bool) {
        for (name, b) in pat_bindings(pat, ref_mut) {
            self.insert(name, b);
        }
    }

    /// Adds the bindings of `let pat [: ty] = init`.
    pub fn add_local(&mut self, local: &syn::Local) {
        let ref_mut = match &local.pat {
            Pat::Type(pt) => is_ref_mut_type(&pt.ty),
            _ => false,
        } || local
            .init
            .as_ref()
            .is_some_and(|i| is_ref_mut_expr(&i.expr));
        self.add_pat(&local.pat, ref_mut);
    }
}

fn is_ref_mut_type(ty: &Type) -> bool {
    matches!(ty, Type::Reference(r) if r.mutability.is_some())
}

fn is_ref_mut_expr(e: &Expr) -> bool {
    matches!(e, Expr::Reference(r) if r.mutability.is_some())
}

/// The names a pattern binds.
pub fn pat_bindings(pat: &Pat, ref_mut: bool) -> Vec<(String, Binding)> {
    let mut out = Vec::new();
    collect(pat, ref_mut, &mut out);
    out
}

fn collect(pat: &Pat, ref_mut: bool, out: &mut Vec<(String, Binding)>) {
    match pat {
        Pat::Ident(pi) => {
            out.push((
                pi.ident.to_string(),
                Binding {
                    mutable: pi.mutability.is_some(),
                    ref_mut: ref_mut || pi.by_ref.is_some() && pi.mutability.is_some(),
                },
            ));
            if let Some((_, sub)) = &pi.subpat {
                collect(sub, false, out);
            }
        }
        Pat::Type(pt) => collect(&pt.pat, ref_mut || is_ref_mut_type(&pt.ty), out),
        Pat::Reference(r) => collect(&r.pat, false, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|p| collect(p, false, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|p| collect(p, false, out)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| collect(&f.pat, false, out)),
        Pat::Slice(s) => s.elems.iter().for_each(|p| collect(p, false, out)),
        Pat::Or(o) => {
            if let Some(first) = o.cases.first() {
                collect(first, ref_mut, out)
            }
        }
        Pat::Paren(p) => collect(&p.pat, ref_mut, out),
        _ => {}
    }
}
