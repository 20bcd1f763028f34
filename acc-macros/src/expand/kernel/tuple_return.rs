//! Routines returning tuples (`fn bounce(..) -> (f32, f32)`, destructured by `let (x, v) =
//! bounce(..)` in a region). The IR has values, not tuples: the body is rewritten so that each
//! tuple it returns (its tail, an `if`/`else` of tuples, or `return (a, b)`) assigns one local
//! per element (`__acc_ret_<i>`); the routine's builder then hands those locals' values to the
//! `let` that destructures the call ([`KernelBuilder::set_tuple_result`]).

use super::*;

/// The number of elements of a routine's tuple return type, if it has one.
pub(super) fn tuple_arity(f: &syn::ItemFn) -> Option<usize> {
    fn peel(t: &syn::Type) -> &syn::Type {
        match t {
            syn::Type::Group(g) => peel(&g.elem),
            syn::Type::Paren(p) => peel(&p.elem),
            t => t,
        }
    }
    match &f.sig.output {
        syn::ReturnType::Type(_, t) => match peel(t) {
            syn::Type::Tuple(tt) if !tt.elems.is_empty() => Some(tt.elems.len()),
            _ => None,
        },
        syn::ReturnType::Default => None,
    }
}

/// The local holding element `i` of the result.
pub(super) fn ret_name(i: usize) -> String {
    format!("__acc_ret_{i}")
}

/// `e`, a tuple-valued expression, as statements assigning its elements to the result locals.
fn assign(e: &Expr, n: usize) -> R<Expr> {
    match e {
        Expr::Paren(p) => assign(&p.expr, n),
        Expr::Group(g) => assign(&g.expr, n),
        Expr::Tuple(t) if t.elems.len() == n => {
            let sets = t.elems.iter().enumerate().map(|(i, v)| {
                let id = Ident::new(&ret_name(i), Span::call_site());
                quote!(#id = #v;)
            });
            Ok(syn::parse_quote!({ #(#sets)* }))
        }
        Expr::If(i) => {
            let mut i = i.clone();
            i.then_branch = assign_block(&i.then_branch, n)?;
            match &mut i.else_branch {
                Some((_, else_e)) => **else_e = assign(else_e, n)?,
                None => return no("a routine returning a tuple with an `if` without `else` as its value"),
            }
            Ok(Expr::If(i))
        }
        Expr::Block(b) if b.label.is_none() => {
            let mut b = b.clone();
            b.block = assign_block(&b.block, n)?;
            Ok(Expr::Block(b))
        }
        other => no(format!(
            "a routine returning a tuple whose value is `{}` (write a tuple expression, or an `if`/`else` of them)",
            short(other)
        )),
    }
}

fn assign_block(b: &syn::Block, n: usize) -> R<syn::Block> {
    let mut b = b.clone();
    match b.stmts.pop() {
        Some(Stmt::Expr(e, None)) => {
            let a = assign(&e, n)?;
            b.stmts.push(Stmt::Expr(a, Some(Default::default())));
        }
        // Ends in `return (..);` (rewritten below) or diverges.
        Some(s) => b.stmts.push(s),
        None => return no("a routine returning a tuple with an empty block as its value"),
    }
    Ok(b)
}

/// The body of a routine returning an `n`-tuple, rewritten to assign the result locals
/// (declared by the caller) and return nothing.
pub(super) fn rewrite_body(stmts: &[Stmt], n: usize) -> R<Vec<Stmt>> {
    struct Returns {
        n: usize,
        err: Option<String>,
    }
    impl syn::visit_mut::VisitMut for Returns {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Expr::Return(r) = e {
                if let Some(v) = r.expr.as_deref() {
                    match assign(v, self.n) {
                        Ok(a) => *e = syn::parse_quote!({ #a; return; }),
                        Err(m) => self.err = Some(m),
                    }
                    return;
                }
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut out = stmts.to_vec();
    match out.pop() {
        Some(Stmt::Expr(e, None)) => {
            let a = assign(&e, n)?;
            out.push(Stmt::Expr(a, Some(Default::default())));
        }
        Some(s) => out.push(s),
        None => return no("a routine returning a tuple with an empty body"),
    }
    let mut v = Returns { n, err: None };
    for st in &mut out {
        syn::visit_mut::VisitMut::visit_stmt_mut(&mut v, st);
    }
    match v.err {
        Some(m) => Err(m),
        None => Ok(out),
    }
}
