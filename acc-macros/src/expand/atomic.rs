//! The `atomic` construct (3.3 section 2.12) in the host twin: the statement's form (parsed and
//! checked by `analysis::atomic`) rewritten into calls of `::acc::__rt::atomic`, which are atomic
//! across the threads running the region. The address of `x` is taken with `&raw` outside any
//! `unsafe` block, so the user's expressions stay in safe code. User expressions are bound to
//! `let`s without their outer parentheses, so no lint fires at parentheses the user needed
//! where they wrote them (a `cargo fix` of one would change the user's code).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Stmt;

use super::{expr_stmt, Ctx};
use crate::analysis::atomic::{self, Form, ReadInto, Update};
use crate::directive::Directive;

fn update_call(u: &Update, span: Span) -> TokenStream {
    let (x, value, new) = (&u.x, &u.value, u.new_value());
    quote_spanned! {span=>
        {
            let __acc_v = #value;
            let __acc_p = &raw mut #x;
            unsafe { ::acc::__rt::atomic::update(__acc_p, |__acc_old| #new) }
        }
    }
}

fn load(x: &syn::Expr, span: Span) -> TokenStream {
    quote_spanned!(span=> { let __acc_p = &raw const #x; unsafe { ::acc::__rt::atomic::load(__acc_p) } })
}

/// Expands `#[acc::atomic(..)]` on `st`.
pub fn expand_atomic(ctx: &mut Ctx, dir: &Directive, st: Stmt) -> Stmt {
    let span = st.span();
    let form = match atomic::parse(dir, &st) {
        Ok(f) => f,
        Err(e) => {
            ctx.push(e);
            return st;
        }
    };
    let ts = match form {
        Form::Read {
            v: ReadInto::Let(l),
            x,
        } => {
            let (pat, read) = (&l.pat, load(&x, span));
            // The binding must outlive the generated block: a `let` of the read value.
            let local = quote_spanned!(span=> let #pat = #read;);
            return syn::parse2(local.clone()).unwrap_or_else(|_| expr_stmt(local));
        }
        Form::Read {
            v: ReadInto::Place(v),
            x,
        } => {
            let read = load(&x, span);
            quote_spanned!(span=> #v = #read;)
        }
        Form::Write { x, value } => quote_spanned! {span=>
            { let __acc_v = #value; let __acc_p = &raw mut #x; unsafe { ::acc::__rt::atomic::store(__acc_p, __acc_v) } };
        },
        Form::Update(u) => {
            let call = update_call(&u, span);
            quote!(#call;)
        }
        Form::Capture { v, update, new } => {
            let call = update_call(&update, span);
            let pick = if new { quote!(1) } else { quote!(0) };
            quote_spanned!(span=> #v = #call.#pick;)
        }
        Form::Swap { v, x, value } => quote_spanned! {span=>
            #v = {
                let __acc_v = #value;
                let __acc_p = &raw mut #x;
                unsafe { ::acc::__rt::atomic::update(__acc_p, |_| __acc_v) }.0
            };
        },
    };
    expr_stmt(ts)
}
