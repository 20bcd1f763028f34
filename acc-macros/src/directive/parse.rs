//! Parsing attribute arguments into a [`Directive`]. Both clause forms are accepted:
//! `name(args)` and `name = expr`; clauses are separated by commas or whitespace.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{token, Expr, Ident, LitStr, Token};

use super::allowed;
use super::clause::*;
use super::{Directive, DirectiveKind};

/// Parses the arguments of directive `kind` (the tokens inside `#[acc::kind(..)]`).
pub fn parse_directive(kind: DirectiveKind, span: Span, args: TokenStream) -> syn::Result<Directive> {
    let parser = |input: ParseStream| parse_clauses(kind, input);
    let clauses = parser.parse2(args)?;
    Ok(Directive { kind, span, clauses })
}

fn parse_clauses(kind: DirectiveKind, input: ParseStream) -> syn::Result<Vec<Clause>> {
    let mut clauses = Vec::new();
    let mut section: Option<Vec<DeviceTypeSel>> = None;
    while !input.is_empty() {
        let clause = parse_clause(kind, input, section.clone())?;
        if clause.name == ClauseName::DeviceType && allowed::device_type_opens_section(kind) {
            if let ClauseArgs::DeviceTypes(t) = &clause.args {
                section = Some(t.clone());
            }
        }
        clauses.push(clause);
        if input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(clauses)
}

fn unknown_clause(kind: DirectiveKind, name: &Ident) -> syn::Error {
    let n = name.unraw().to_string();
    let best = ClauseName::ALL.iter().map(|c| edit_distance(c, &n)).min().unwrap_or(usize::MAX);
    let close: Vec<String> = ClauseName::ALL
        .iter()
        .filter(|c| best <= 2 && edit_distance(c, &n) == best && super::allowed::allows(kind, ClauseName::from_spelling(c).expect("a clause name")))
        .map(|c| format!("`{c}`"))
        .collect();
    let suggestion = if close.is_empty() { String::new() } else { format!("; did you mean {}?", close.join(" or ")) };
    syn::Error::new(
        name.span(),
        format!("unknown clause `{n}` on `{}`{suggestion}", kind.spelling()),
    )
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn parse_clause(kind: DirectiveKind, input: ParseStream, section: Option<Vec<DeviceTypeSel>>) -> syn::Result<Clause> {
    let ident = Ident::parse_any(input)?;
    let spelled = ident.unraw().to_string();
    let name = ClauseName::from_spelling(&spelled).ok_or_else(|| unknown_clause(kind, &ident))?;
    let span = ident.span();
    let args = if input.peek(token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let args = parse_args(kind, name, span, &content)?;
        if !content.is_empty() {
            return Err(content.error(format!("unexpected tokens in `{spelled}(..)`")));
        }
        args
    } else if input.peek(Token![=]) && !input.peek(Token![==]) {
        input.parse::<Token![=]>()?;
        parse_eq_arg(name, span, input)?
    } else {
        match shape(kind, name) {
            Shape::Flag | Shape::OptExpr | Shape::OptExprs | Shape::Gang | Shape::Level => ClauseArgs::None,
            _ => {
                return Err(syn::Error::new(
                    span,
                    format!("clause `{spelled}` needs an argument: `{spelled}(..)`"),
                ))
            }
        }
    };
    Ok(Clause { name, span, args, device_types: section })
}

/// What a clause's arguments look like.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Flag,
    Expr,
    OptExpr,
    Exprs,
    OptExprs,
    Vars,
    Reduction,
    Default,
    DeviceTypes,
    Gang,
    Level,
    Collapse,
    Tile,
    Bind,
}

fn shape(kind: DirectiveKind, name: ClauseName) -> Shape {
    use ClauseName as C;
    match name {
        C::Async => Shape::OptExpr,
        C::Wait => Shape::OptExprs,
        C::NumGangs => Shape::Exprs,
        C::NumWorkers | C::VectorLength | C::If | C::DeviceNum | C::DefaultAsync => Shape::Expr,
        C::SelfClause if kind == DirectiveKind::Update => Shape::Vars,
        C::SelfClause => Shape::OptExpr,
        C::DeviceType => Shape::DeviceTypes,
        C::Reduction => Shape::Reduction,
        C::Copy
        | C::Copyin
        | C::Copyout
        | C::Create
        | C::NoCreate
        | C::Present
        | C::Deviceptr
        | C::Attach
        | C::Detach
        | C::Delete
        | C::Private
        | C::Firstprivate
        | C::UseDevice
        | C::DeviceResident
        | C::Link
        | C::Host
        | C::Device => Shape::Vars,
        C::Default => Shape::Default,
        C::Collapse => Shape::Collapse,
        C::Gang => Shape::Gang,
        C::Worker | C::Vector => Shape::Level,
        C::Tile => Shape::Tile,
        C::Bind => Shape::Bind,
        C::Seq
        | C::Independent
        | C::Auto
        | C::Finalize
        | C::IfPresent
        | C::Nohost
        | C::Read
        | C::Write
        | C::Update
        | C::Capture
        | C::Unchecked => Shape::Flag,
    }
}

fn parse_eq_arg(name: ClauseName, span: Span, input: ParseStream) -> syn::Result<ClauseArgs> {
    // `name = expr` is the single-argument form; it ends at the next comma.
    let e: Expr = input.parse()?;
    match name {
        ClauseName::NumGangs | ClauseName::Wait => Ok(ClauseArgs::Exprs(vec![e])),
        ClauseName::Collapse => collapse_count(false, &e),
        ClauseName::Default => match e {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                Ok(ClauseArgs::Default(p.path.get_ident().cloned().expect("checked")))
            }
            other => Err(syn::Error::new_spanned(other, "expected `none` or `present`")),
        },
        ClauseName::Gang => Ok(ClauseArgs::Gang { num: Some(Box::new(e)), dim: None, static_: None }),
        ClauseName::Worker | ClauseName::Vector => Ok(ClauseArgs::Level { arg: Some(Box::new(e)) }),
        ClauseName::Async
        | ClauseName::NumWorkers
        | ClauseName::VectorLength
        | ClauseName::If
        | ClauseName::SelfClause
        | ClauseName::DeviceNum
        | ClauseName::DefaultAsync => Ok(ClauseArgs::Expr(Box::new(e))),
        other => Err(syn::Error::new(
            span,
            format!("clause `{}` has no `= value` form; write `{}(..)`", other.spelling(), other.spelling()),
        )),
    }
}

fn parse_args(kind: DirectiveKind, name: ClauseName, span: Span, input: ParseStream) -> syn::Result<ClauseArgs> {
    let spelled = name.spelling();
    Ok(match shape(kind, name) {
        Shape::Flag => {
            return Err(syn::Error::new(span, format!("clause `{spelled}` takes no arguments")));
        }
        Shape::Expr | Shape::OptExpr => ClauseArgs::Expr(Box::new(input.parse()?)),
        Shape::Exprs | Shape::OptExprs => {
            // wait-argument: `[devnum: e :] [queues:] list` (3.3 section 2.16.3).
            if name == ClauseName::Wait && input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
                let label: Ident = input.parse()?;
                if label == "devnum" {
                    input.parse::<Token![:]>()?;
                    let _devnum: Expr = input.parse()?;
                    input.parse::<Token![:]>()?;
                    if input.peek(Ident) && input.peek2(Token![:]) {
                        let q: Ident = input.parse()?;
                        if q != "queues" {
                            return Err(syn::Error::new(q.span(), "expected `queues:`"));
                        }
                        input.parse::<Token![:]>()?;
                    }
                } else if label == "queues" {
                    input.parse::<Token![:]>()?;
                } else {
                    return Err(syn::Error::new(label.span(), "expected `devnum:` or `queues:`"));
                }
            }
            let list = input.parse_terminated(<Expr as syn::parse::Parse>::parse, Token![,])?;
            if list.is_empty() && shape(kind, name) == Shape::Exprs {
                return Err(syn::Error::new(span, format!("`{spelled}(..)` needs at least one value")));
            }
            ClauseArgs::Exprs(list.into_iter().collect())
        }
        Shape::Vars => {
            let modifier = if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
                let m: Ident = input.parse()?;
                input.parse::<Token![:]>()?;
                Some(m)
            } else {
                None
            };
            let vars = parse_vars(input)?;
            if vars.is_empty() {
                return Err(syn::Error::new(span, format!("`{spelled}(..)` needs at least one variable")));
            }
            ClauseArgs::Vars { modifier, vars }
        }
        Shape::Reduction => {
            let (op, op_span) = parse_red_op(input)?;
            input.parse::<Token![:]>().map_err(|e| {
                syn::Error::new(e.span(), "expected `:` after the reduction operator, as in `reduction(+: sum)`")
            })?;
            let vars = parse_vars(input)?;
            if vars.is_empty() {
                return Err(syn::Error::new(span, "`reduction(op: ..)` needs at least one variable"));
            }
            ClauseArgs::Reduction { op, op_span, vars }
        }
        Shape::Default => {
            let v = Ident::parse_any(input)?;
            if v != "none" && v != "present" {
                return Err(syn::Error::new(v.span(), "`default` takes `none` or `present`"));
            }
            ClauseArgs::Default(v)
        }
        Shape::DeviceTypes => {
            let mut list = Vec::new();
            while !input.is_empty() {
                if input.peek(Token![*]) {
                    let s: Token![*] = input.parse()?;
                    list.push(DeviceTypeSel::Star(s.span));
                } else {
                    list.push(DeviceTypeSel::Named(Ident::parse_any(input)?));
                }
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
            }
            if list.is_empty() {
                return Err(syn::Error::new(span, "`device_type(..)` needs a device type or `*`"));
            }
            ClauseArgs::DeviceTypes(list)
        }
        Shape::Gang => {
            let (mut num, mut dim, mut static_) = (None, None, None);
            while !input.is_empty() {
                if input.peek(Ident::peek_any) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
                    let label = Ident::parse_any(input)?;
                    input.parse::<Token![:]>()?;
                    match label.unraw().to_string().as_str() {
                        "num" => num = Some(Box::new(input.parse()?)),
                        "dim" => dim = Some(Box::new(input.parse()?)),
                        "static" => static_ = Some(parse_size(input)?),
                        other => {
                            return Err(syn::Error::new(
                                label.span(),
                                format!("unknown gang argument `{other}:`; expected `num:`, `dim:` or `static:`"),
                            ))
                        }
                    }
                } else {
                    num = Some(Box::new(input.parse()?));
                }
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
            }
            ClauseArgs::Gang { num, dim, static_ }
        }
        Shape::Level => {
            let label = if name == ClauseName::Worker { "num" } else { "length" };
            if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
                let l: Ident = input.parse()?;
                if l != label {
                    return Err(syn::Error::new(l.span(), format!("expected `{label}:`")));
                }
                input.parse::<Token![:]>()?;
            }
            ClauseArgs::Level { arg: Some(Box::new(input.parse()?)) }
        }
        Shape::Collapse => {
            let force = if input.peek(Ident) && input.peek2(Token![:]) {
                let f: Ident = input.parse()?;
                if f != "force" {
                    return Err(syn::Error::new(f.span(), "expected `force:` or a loop count"));
                }
                input.parse::<Token![:]>()?;
                true
            } else {
                false
            };
            let e: Expr = input.parse()?;
            collapse_count(force, &e)?
        }
        Shape::Tile => {
            let mut sizes = Vec::new();
            while !input.is_empty() {
                sizes.push(parse_size(input)?);
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
            }
            if sizes.is_empty() {
                return Err(syn::Error::new(span, "`tile(..)` needs at least one size"));
            }
            ClauseArgs::Tile(sizes)
        }
        Shape::Bind => {
            if input.peek(LitStr) {
                ClauseArgs::Bind(input.parse::<LitStr>()?.value())
            } else {
                ClauseArgs::Bind(Ident::parse_any(input)?.to_string())
            }
        }
    })
}

fn collapse_count(force: bool, e: &Expr) -> syn::Result<ClauseArgs> {
    let lit = match e {
        Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(l), .. }) => l.clone(),
        other => {
            return Err(syn::Error::new_spanned(
                other,
                "`collapse` takes a positive integer literal (3.3 section 2.9.1: a constant positive integer expression)",
            ))
        }
    };
    let n: usize = lit.base10_parse()?;
    if n == 0 {
        return Err(syn::Error::new(lit.span(), "`collapse(0)`: the count must be positive (3.3 section 2.9.1)"));
    }
    Ok(ClauseArgs::Collapse { force, n, n_span: lit.span() })
}

fn parse_size(input: ParseStream) -> syn::Result<SizeExpr> {
    if input.peek(Token![*]) {
        let s: Token![*] = input.parse()?;
        Ok(SizeExpr::Star(s.span))
    } else {
        Ok(SizeExpr::Expr(Box::new(input.parse()?)))
    }
}

fn parse_red_op(input: ParseStream) -> syn::Result<(RedOp, Span)> {
    let la = input.lookahead1();
    if la.peek(Token![&&]) {
        let t: Token![&&] = input.parse()?;
        return Ok((RedOp::And, t.spans[0]));
    }
    if la.peek(Token![||]) {
        let t: Token![||] = input.parse()?;
        return Ok((RedOp::Or, t.spans[0]));
    }
    if la.peek(Token![+]) {
        return Ok((RedOp::Add, input.parse::<Token![+]>()?.span));
    }
    if la.peek(Token![*]) {
        return Ok((RedOp::Mul, input.parse::<Token![*]>()?.span));
    }
    if la.peek(Token![&]) {
        return Ok((RedOp::BitAnd, input.parse::<Token![&]>()?.span));
    }
    if la.peek(Token![|]) {
        return Ok((RedOp::BitOr, input.parse::<Token![|]>()?.span));
    }
    if la.peek(Token![^]) {
        return Ok((RedOp::BitXor, input.parse::<Token![^]>()?.span));
    }
    if la.peek(Ident) {
        let id: Ident = input.parse()?;
        return match id.to_string().as_str() {
            "max" => Ok((RedOp::Max, id.span())),
            "min" => Ok((RedOp::Min, id.span())),
            other => Err(syn::Error::new(
                id.span(),
                format!("unknown reduction operator `{other}`; the operators are + * max min & | ^ && ||"),
            )),
        };
    }
    Err(syn::Error::new(
        input.span(),
        "expected a reduction operator: + * max min & | ^ && || (3.3 section 2.5.15)",
    ))
}

fn parse_vars(input: ParseStream) -> syn::Result<Vec<VarRef>> {
    let mut vars = Vec::new();
    while !input.is_empty() {
        let name: Ident = input.parse().map_err(|e| {
            syn::Error::new(e.span(), "expected a variable name (optionally with a subarray, `a[lo..hi]`)")
        })?;
        let mut span = name.span();
        let subarray = if input.peek(token::Bracket) {
            let content;
            let br = syn::bracketed!(content in input);
            span = span.join(br.span.join()).unwrap_or(span);
            let e: Expr = content.parse()?;
            if !matches!(e, Expr::Range(_)) {
                return Err(syn::Error::new_spanned(
                    &e,
                    "a subarray is a range of elements: `a[lo..hi]`, `a[..n]`, `a[lo..]` or `a[lo..=hi]`",
                ));
            }
            Some(Box::new(e))
        } else {
            None
        };
        let text = match &subarray {
            Some(r) => format!("{}[{}]", name, tidy(r.to_token_stream())),
            None => name.to_string(),
        };
        vars.push(VarRef { name, subarray, text, span });
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(vars)
}

/// Token text without the spaces `to_string` puts between every token.
pub fn tidy(ts: TokenStream) -> String {
    let s = ts.to_string();
    s.replace(" . ", ".").replace(" .. ", "..").replace(" ..", "..").replace(".. ", "..").replace(" ..= ", "..=")
}

