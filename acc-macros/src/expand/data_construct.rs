//! Data constructs and clauses (3.3 sections 2.6 and 2.7): `data`, `declare` on a function,
//! `host_data`, and the data clauses of compute constructs. Each variable becomes a
//! `ClauseVar` (name, source location, host range, checked against the variable's bounds) and
//! the construct a guard over the data environment of the current device.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use super::{if_async_wait, location, opt, Ctx};
use crate::directive::{ClauseName as C, Directive, VarRef};

/// The data-clause kind as `::acc::__rt::DataClause::X`.
fn clause_kind(c: C) -> Option<TokenStream> {
    Some(match c {
        C::Copy => quote!(Copy),
        C::Copyin => quote!(Copyin),
        C::Copyout => quote!(Copyout),
        C::Create => quote!(Create),
        C::NoCreate => quote!(NoCreate),
        C::Present => quote!(Present),
        C::Deviceptr => quote!(Deviceptr),
        C::Attach => quote!(Attach),
        C::Detach => quote!(Detach),
        C::Delete => quote!(Delete),
        C::DeviceResident => quote!(DeviceResident),
        C::Link => quote!(Link),
        C::UseDevice => quote!(UseDevice),
        C::SelfClause | C::Host => quote!(UpdateSelf),
        C::Device => quote!(UpdateDevice),
        _ => return None,
    })
}

/// `::acc::__rt::clause_var(..)` for one variable of a clause.
pub fn var_tokens(kind: &TokenStream, v: &VarRef, loc: &TokenStream) -> TokenStream {
    let (name, text) = (&v.name, &v.text);
    // Spanned at the variable, so a type that is not device data is reported there.
    match &v.subarray {
        None => {
            quote_spanned!(v.span=> ::acc::__rt::clause_var(::acc::__rt::DataClause::#kind, &#name, #text, #loc))
        }
        Some(range) => {
            quote_spanned!(v.span=> ::acc::__rt::clause_subarray(::acc::__rt::DataClause::#kind, &#name, #range, #text, #loc))
        }
    }
}

/// The variables of `dir`'s clauses among `names`, as `ClauseVar` expressions.
pub fn clause_vars(dir: &Directive, names: &[C], loc: &TokenStream) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for c in dir
        .clauses
        .iter()
        .filter(|c| names.contains(&c.name) && c.device_types.is_none())
    {
        let Some(kind) = clause_kind(c.name) else {
            continue;
        };
        for v in c.vars() {
            out.push(var_tokens(&kind, v, loc));
        }
    }
    out
}

/// The variables of `dir`'s clauses among `names` as `DirectiveVar`s of `update!`/`exit_data!`:
/// those of `written` clauses borrowed mutably (the directive writes the host's copy).
pub fn directive_vars(
    dir: &Directive,
    names: &[C],
    written: &[C],
    loc: &TokenStream,
) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for c in dir
        .clauses
        .iter()
        .filter(|c| names.contains(&c.name) && c.device_types.is_none())
    {
        let Some(kind) = clause_kind(c.name) else {
            continue;
        };
        for v in c.vars() {
            if written.contains(&c.name) {
                let (name, text) = (&v.name, &v.text);
                out.push(match &v.subarray {
                    None => quote_spanned!(v.span=> ::acc::__rt::clause_var_mut(::acc::__rt::DataClause::#kind, (#name).acc_mut(), #text, #loc)),
                    Some(range) => quote_spanned!(v.span=> ::acc::__rt::clause_subarray_mut(::acc::__rt::DataClause::#kind, (#name).acc_mut(), #range, #text, #loc)),
                });
            } else {
                let e = var_tokens(&kind, v, loc);
                out.push(quote!(::acc::__rt::directive_var(#e)));
            }
        }
    }
    out
}

/// The host data the `copy`/`copyout` variables of `dir` are copied out into when its data
/// region ends, in clause order (as `DataGuard::exit` takes them): each variable borrowed
/// mutably there, so one that was moved meanwhile is a borrow error at its clause.
pub fn exit_hosts(dir: &Directive, names: &[C]) -> Vec<TokenStream> {
    let mut out = Vec::new();
    for c in dir
        .clauses
        .iter()
        .filter(|c| names.contains(&c.name) && c.device_types.is_none())
    {
        if !matches!(c.name, C::Copy | C::Copyout) {
            continue;
        }
        for v in c.vars() {
            let name = &v.name;
            out.push(quote_spanned!(v.span=> ::acc::__rt::host_mut((#name).acc_mut())));
        }
    }
    out
}

/// A shared borrow, where the data region ends, of each variable of `dir`'s other data
/// clauses (`copyin`, `create`, `present`, `deviceptr`, ..): the region holds their data on
/// the device until then, so moving one into the body (and dropping it there, which would
/// leave its device copy for data allocated at the same address) is a borrow error at its
/// clause, as it is for `copy` and `copyout` through [`exit_hosts`].
pub fn exit_borrows(dir: &Directive, names: &[C]) -> Vec<TokenStream> {
    dir.clauses
        .iter()
        .filter(|c| names.contains(&c.name) && !matches!(c.name, C::Copy | C::Copyout))
        .flat_map(|c| c.vars())
        .map(|v| {
            let name = &v.name;
            quote_spanned!(v.span=> let _ = &(#name);)
        })
        .collect()
}

/// The value of `dir`'s `default` clause (`none` or `present`), with its span.
pub fn default_clause(dir: &Directive) -> Option<(String, proc_macro2::Span)> {
    dir.general(C::Default).next().and_then(|c| match &c.args {
        crate::directive::ClauseArgs::Default(v) => Some((v.to_string(), c.span)),
        _ => None,
    })
}

/// Names of the variables in `dir`'s clauses.
pub fn named_vars(dir: &Directive) -> Vec<String> {
    dir.clauses
        .iter()
        .flat_map(|c| c.vars().iter().map(|v| v.name.to_string()))
        .collect()
}

/// The variables `dir` names in `copyin(readonly: ..)`.
pub fn readonly_vars(dir: &Directive) -> Vec<String> {
    dir.general(C::Copyin)
        .filter(|c| c.modifier().is_some_and(|m| m == "readonly"))
        .flat_map(|c| c.vars().iter().map(|v| v.name.to_string()))
        .collect()
}

const DATA_CLAUSES: &[C] = &[
    C::Copy,
    C::Copyin,
    C::Copyout,
    C::Create,
    C::NoCreate,
    C::Present,
    C::Deviceptr,
    C::Attach,
    C::DeviceResident,
    C::Link,
];

/// `#[acc::data(..)] { body }`, or `#[acc::data]` / `#[acc::declare]` on a function: a
/// structured data region, left on every path out of `body` (the guard's `Drop`).
pub fn expand_data_region(ctx: &mut Ctx, dir: &Directive, body: TokenStream) -> TokenStream {
    data_scope(
        ctx,
        dir,
        |exit| quote!({ let __acc_value = #body; #exit __acc_value }),
    )
}

/// `declare` on a `let` (3.3 section 2.13): a data region over `stmts`, the rest of the
/// enclosing block, left on every way out of it; it ends before the block's value (its last
/// statement without a `;`) is evaluated, so that a variable it copies out may be that value.
/// Locals of `stmts` stay in scope for the value: the expansion is one block that ends with it.
pub fn expand_declare_scope(
    ctx: &mut Ctx,
    dir: &Directive,
    mut stmts: Vec<syn::Stmt>,
    tail: Option<syn::Stmt>,
) -> TokenStream {
    data_scope(ctx, dir, |exit| match (&tail, stmts.last()) {
        // The value of a region further in (a later `declare` in the block).
        (None, Some(syn::Stmt::Expr(_, None))) => {
            let last = stmts.pop();
            quote!({ #(#stmts)* let __acc_value = #last; #exit __acc_value })
        }
        _ => quote!({ #(#stmts)* #exit #tail }),
    })
}

/// A data region of `dir`'s clauses around the block `body(exit)` builds, which runs `exit`
/// at its end; `exit` also runs before every other way out of it.
fn data_scope(
    ctx: &mut Ctx,
    dir: &Directive,
    body: impl FnOnce(&TokenStream) -> TokenStream,
) -> TokenStream {
    let loc = location(dir.span);
    let vars = clause_vars(dir, DATA_CLAUSES, &loc);
    let hosts = exit_hosts(dir, DATA_CLAUSES);
    let borrows = exit_borrows(dir, DATA_CLAUSES);
    let (if_cond, async_arg, wait) = if_async_wait(dir);
    let guard = quote::format_ident!("__acc_data_{}", ctx.next_id());
    let fn_name = ctx.fn_name.clone();
    let exit = quote! {{
        #[allow(unused_imports)]
        use ::acc::__rt::AccMut as _;
        #(#borrows)*
        #guard.exit(#loc, &mut [#(#hosts),*]);
    }};
    let body = super::leave::leave_first(body(&exit), &exit);
    quote! {
        {
            let #guard = ::acc::__rt::data_region(#loc, #fn_name, #if_cond, #async_arg, #wait, &[#(#vars),*]);
            #body
        }
    }
}

/// `#[acc::host_data(use_device(..))] { body }` (3.3 section 2.8). Each listed variable is
/// rebound, for the body, to an `acc::DeviceSlice` of its data on the device (the host's data
/// on devices that share host memory, and where `if_present` or `if(false)` leave it there);
/// the construct's guard orders the device's work around the body.
pub fn expand_host_data(_ctx: &mut Ctx, dir: &Directive, body: TokenStream) -> TokenStream {
    let loc = location(dir.span);
    let vars = clause_vars(dir, &[C::UseDevice], &loc);
    let if_cond = opt(dir
        .general(C::If)
        .next()
        .and_then(|c| c.expr())
        .map(|e| quote!(#e)));
    let if_present = dir.has(C::IfPresent);
    let rebind = dir
        .clauses
        .iter()
        .filter(|c| c.name == C::UseDevice && c.device_types.is_none())
        .flat_map(|c| c.vars())
        .enumerate()
        .map(|(i, v)| {
            let name = &v.name;
            quote_spanned!(v.span=> let #name = ::acc::__rt::use_device(&#name, &__acc_use_device[#i], &__acc_host_data);)
        });
    quote! {
        {
            let __acc_use_device = [#(#vars),*];
            let __acc_host_data = ::acc::__rt::host_data(#loc, #if_cond, #if_present, &__acc_use_device);
            #(#rebind)*
            #body
        }
    }
}
