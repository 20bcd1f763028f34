//! Executable directives as function-like macros (3.3 sections 2.14 and 2.16): `update!`,
//! `enter_data!`, `exit_data!`, `wait!`, `init!`, `shutdown!`, `set!`, and `cache!` (2.10).

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Expr, Ident, Token};

use super::data_construct::{clause_vars, directive_vars};
use super::{if_async_wait, location, opt, Ctx};
use crate::directive::{ClauseArgs, ClauseName as C, DeviceTypeSel, DirectiveKind};

fn device_type_tokens(ctx: &mut Ctx, sel: &DeviceTypeSel) -> Option<TokenStream> {
    match sel {
        DeviceTypeSel::Star(_) => Some(quote!(::acc::DeviceType::Default)),
        DeviceTypeSel::Named(id) => Some(match id.to_string().to_ascii_lowercase().as_str() {
            "host" => quote!(::acc::DeviceType::Host),
            "multicore" => quote!(::acc::DeviceType::Multicore),
            "nvidia" => quote!(::acc::DeviceType::Nvidia),
            "wgpu" => quote!(::acc::DeviceType::Wgpu),
            "default" => quote!(::acc::DeviceType::Default),
            _ => {
                ctx.error(id.span(), format!("unknown device type `{id}`"));
                return None;
            }
        }),
    }
}

/// Expands an executable directive macro.
pub fn expand(kind: DirectiveKind, input: TokenStream) -> TokenStream {
    let span = Span::call_site();
    let mut ctx = Ctx::new(String::new());
    let loc = location(span);
    let out = match kind {
        DirectiveKind::Cache => expand_cache(&mut ctx, input),
        DirectiveKind::Wait => expand_wait(&mut ctx, input, &loc),
        _ => match ctx.directive(kind, span, input) {
            None => TokenStream::new(),
            Some(dir) => {
                let (if_cond, async_arg, wait) = if_async_wait(&dir);
                // Struct members (`g.a`) outside a construct naming them: their aliases, bound
                // here (a `&mut` where the directive writes the host's copy).
                let members = super::members::of(&dir);
                let lets = members.iter().map(|m| {
                    let written = dir.clauses.iter().any(|c| {
                        matches!(c.name, C::SelfClause | C::Host | C::Copyout)
                            && c.vars().iter().any(|v| v.name == m.alias)
                    });
                    m.alias_let(written)
                });
                let lets: Vec<TokenStream> = lets.collect();
                let body = match kind {
                    DirectiveKind::Update => {
                        let vars = directive_vars(
                            &dir,
                            &[C::SelfClause, C::Host, C::Device],
                            &[C::SelfClause, C::Host],
                            &loc,
                        );
                        let if_present = dir.has(C::IfPresent);
                        quote!({
                            #[allow(unused_imports)]
                            use ::acc::__rt::AccMut as _;
                            ::acc::__rt::update_directive(#loc, #if_cond, #async_arg, #wait, #if_present, &mut [#(#vars),*])
                        })
                    }
                    DirectiveKind::EnterData => {
                        let vars = clause_vars(&dir, &[C::Copyin, C::Create, C::Attach], &loc);
                        quote!(::acc::__rt::enter_data_directive(#loc, #if_cond, #async_arg, #wait, &[#(#vars),*]))
                    }
                    DirectiveKind::ExitData => {
                        let vars = directive_vars(
                            &dir,
                            &[C::Copyout, C::Delete, C::Detach],
                            &[C::Copyout],
                            &loc,
                        );
                        let finalize = dir.has(C::Finalize);
                        quote!({
                            #[allow(unused_imports)]
                            use ::acc::__rt::AccMut as _;
                            ::acc::__rt::exit_data_directive(#loc, #if_cond, #async_arg, #wait, #finalize, &mut [#(#vars),*])
                        })
                    }
                    DirectiveKind::Init | DirectiveKind::Shutdown | DirectiveKind::Set => {
                        let mut types = Vec::new();
                        for c in dir.all(C::DeviceType) {
                            if let ClauseArgs::DeviceTypes(list) = &c.args {
                                types.extend(
                                    list.iter().filter_map(|t| device_type_tokens(&mut ctx, t)),
                                );
                            }
                        }
                        let num = opt(dir
                            .find(C::DeviceNum)
                            .and_then(|c| c.expr())
                            .map(|e| quote!((#e) as usize)));
                        let f = match kind {
                            DirectiveKind::Init => quote!(init_directive),
                            DirectiveKind::Shutdown => quote!(shutdown_directive),
                            _ => quote!(set_directive),
                        };
                        if kind == DirectiveKind::Set {
                            let default_async = opt(dir
                                .find(C::DefaultAsync)
                                .and_then(|c| c.expr())
                                .map(|e| quote!((#e) as i32)));
                            if types.len() > 1 {
                                ctx.error(span, "`set` takes one device type (3.3 section 2.14.3)");
                            }
                            if !dir.has(C::DefaultAsync)
                                && !dir.has(C::DeviceNum)
                                && !dir.has(C::DeviceType)
                            {
                                ctx.error(span, "`set` needs at least one of `default_async`, `device_num`, `device_type` (3.3 section 2.14.3)");
                            }
                            let ty = opt(types.first());
                            quote!(::acc::__rt::#f(#loc, #if_cond, #ty, #num, #default_async))
                        } else {
                            quote!(::acc::__rt::#f(#loc, #if_cond, &[#(#types),*], #num))
                        }
                    }
                    _ => unreachable!("executable directives only"),
                };
                if lets.is_empty() {
                    body
                } else {
                    quote!({ #(#lets)* #body })
                }
            }
        },
    };
    let errors: TokenStream = ctx_errors(ctx);
    if errors.is_empty() {
        out
    } else {
        quote!({ #errors })
    }
}

fn ctx_errors(ctx: Ctx) -> TokenStream {
    ctx.into_compile_errors()
}

/// `wait!()`, `wait!(1, 2)`, `wait!(1, async(3))`, `wait!(if(c))` (3.3 section 2.16.3).
fn expand_wait(ctx: &mut Ctx, input: TokenStream, loc: &TokenStream) -> TokenStream {
    let parser = |input: ParseStream| -> syn::Result<(Option<Expr>, Vec<Expr>, TokenStream)> {
        let mut queues = Vec::new();
        let mut clauses = TokenStream::new();
        // wait-argument: `[devnum: e :] [queues:] list` (3.3 section 2.16.3).
        let mut devnum = None;
        let label = |input: ParseStream, name: &str| {
            let fork = input.fork();
            fork.call(Ident::parse_any).is_ok_and(|i| i == name)
                && fork.peek(Token![:])
                && !fork.peek(Token![::])
        };
        if label(input, "devnum") {
            input.call(Ident::parse_any)?;
            input.parse::<Token![:]>()?;
            devnum = Some(input.parse::<Expr>()?);
            input.parse::<Token![:]>()?;
        }
        if label(input, "queues") {
            input.call(Ident::parse_any)?;
            input.parse::<Token![:]>()?;
        }
        while !input.is_empty() {
            let fork = input.fork();
            let is_clause = fork
                .call(Ident::parse_any)
                .is_ok_and(|i| i == "async" || i == "if");
            if is_clause {
                let rest: TokenStream = input.parse()?;
                clauses = rest;
                break;
            }
            queues.push(input.parse::<Expr>()?);
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok((devnum, queues, clauses))
    };
    let (devnum, queues, clauses) = match parser.parse2(input) {
        Ok(v) => v,
        Err(e) => {
            ctx.push(e);
            return TokenStream::new();
        }
    };
    let Some(dir) = ctx.directive(DirectiveKind::Wait, Span::call_site(), clauses) else {
        return TokenStream::new();
    };
    let (if_cond, async_arg, _) = if_async_wait(&dir);
    if let Some(d) = devnum {
        // The host waits for another device's queues (an `async` queue of this device
        // then comes after them too).
        return quote!({
            if #if_cond != ::core::option::Option::Some(false) {
                ::acc::__rt::wait_on_device((#d) as i64, &[#((#queues) as i64),*]);
            }
        });
    }
    let queues = if queues.is_empty() {
        quote!(::core::option::Option::None)
    } else {
        quote!(::core::option::Option::Some(&[#((#queues) as i64),*]))
    };
    quote!(::acc::__rt::wait_directive(#loc, #if_cond, #queues, #async_arg))
}

/// `cache!(a[lo..hi], ..)` (3.3 section 2.10): a hint about what to keep in the fastest
/// memory for a loop body. It is checked and then has no effect on devices that run the host
/// twin.
fn expand_cache(ctx: &mut Ctx, input: TokenStream) -> TokenStream {
    let input = cache_elements_as_ranges(input);
    match crate::directive::parsed::of_tokens(
        DirectiveKind::Cache,
        Span::call_site(),
        quote!(copyin(#input)),
    ) {
        Ok(dir) => {
            // R84 (2.0 section 2.8): entries are array elements or subarrays of constant length.
            for v in dir.clauses.iter().flat_map(|c| c.vars()) {
                match v.subarray.as_deref() {
                    None => ctx.error(v.span, format!(
                        "`cache!` takes array elements or subarrays (`{n}[i]`, `{n}[i..i + 4]`), not the whole variable `{n}` (OpenACC 2.0 section 2.8)",
                        n = v.name
                    )),
                    Some(syn::Expr::Range(r)) if !constant_length(r) => ctx.error(v.span, format!(
                        "the subarray `{}` in `cache!` must have a constant length (`a[lo..lo + 8]`) (OpenACC 2.0 section 2.8)",
                        v.text
                    )),
                    _ => {}
                }
            }
            quote!({})
        }
        Err(e) => {
            ctx.push(syn::Error::new(
                e.span(),
                format!("`cache!` takes a list of variables or subarrays: {e}"),
            ));
            TokenStream::new()
        }
    }
}

/// `cache!`'s single elements `a[i]` as the one-element subarrays `a[i..i + 1]` (OpenACC 2.0
/// section 2.8 allows both); the list unchanged when it is not a list of expressions.
pub(crate) fn cache_elements_as_ranges(input: TokenStream) -> TokenStream {
    use syn::punctuated::Punctuated;
    let Ok(list) = syn::parse::Parser::parse2(
        Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        input.clone(),
    ) else {
        return input;
    };
    let items = list.into_iter().map(|e| match e {
        syn::Expr::Index(ix) if !matches!(&*ix.index, syn::Expr::Range(_)) => {
            let (a, i) = (&ix.expr, &ix.index);
            quote!(#a[#i..#i + 1])
        }
        other => quote!(#other),
    });
    quote!(#(#items),*)
}

/// Whether `lo..hi` has a length known at compile time (see [`window_length`]).
fn constant_length(r: &syn::ExprRange) -> bool {
    window_length(r).is_some()
}

/// The length of `lo..hi` (`..=` included) when it is known at compile time: both ends written
/// as the same expression plus or minus integer literals (`i - 1..i + 2`, `lo..lo + 8`), both
/// literals, or an empty start and a literal end.
pub(crate) fn window_length(r: &syn::ExprRange) -> Option<u32> {
    use quote::ToTokens;
    /// `e` as (base, offset): `base + c`, `base - c`, `c + base`, a literal `c` (empty base),
    /// or `e` itself with offset 0.
    fn offset(e: &syn::Expr) -> Option<(String, i128)> {
        let int = |e: &syn::Expr| match e {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(l),
                ..
            }) => l.base10_parse::<i128>().ok(),
            _ => None,
        };
        match e {
            syn::Expr::Paren(p) => offset(&p.expr),
            syn::Expr::Lit(_) => int(e).map(|c| (String::new(), c)),
            syn::Expr::Binary(b) if matches!(b.op, syn::BinOp::Add(_)) => {
                match (int(&b.left), int(&b.right)) {
                    (_, Some(c)) => offset(&b.left).map(|(base, o)| (base, o + c)),
                    (Some(c), None) => offset(&b.right).map(|(base, o)| (base, o + c)),
                    _ => Some((e.to_token_stream().to_string(), 0)),
                }
            }
            syn::Expr::Binary(b) if matches!(b.op, syn::BinOp::Sub(_)) => match int(&b.right) {
                Some(c) => offset(&b.left).map(|(base, o)| (base, o - c)),
                None => Some((e.to_token_stream().to_string(), 0)),
            },
            _ => Some((e.to_token_stream().to_string(), 0)),
        }
    }
    let closed = i128::from(matches!(r.limits, syn::RangeLimits::Closed(_)));
    let len = match (r.start.as_deref(), r.end.as_deref()) {
        (None, Some(hi)) => match offset(hi)? {
            (base, o) if base.is_empty() => o,
            _ => return None,
        },
        (Some(lo), Some(hi)) => match (offset(lo)?, offset(hi)?) {
            ((b1, o1), (b2, o2)) if b1 == b2 && o2 >= o1 => o2 - o1,
            _ => return None,
        },
        _ => return None,
    };
    u32::try_from(len + closed).ok()
}
