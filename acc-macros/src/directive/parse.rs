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

/// Parses the arguments of directive `kind` (the tokens inside `#[acc::kind(..)]`). Passes
/// ask [`super::parsed`], which parses each directive once per macro invocation.
pub(super) fn parse_directive(
    kind: DirectiveKind,
    span: Span,
    args: TokenStream,
) -> syn::Result<Directive> {
    let parser = |input: ParseStream| parse_clauses(kind, input);
    let clauses = parser.parse2(args)?;
    Ok(Directive {
        kind,
        span,
        clauses,
    })
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
    let best = ClauseName::ALL
        .iter()
        .map(|c| edit_distance(c, &n))
        .min()
        .unwrap_or(usize::MAX);
    let close: Vec<String> = ClauseName::ALL
        .iter()
        .filter(|c| {
            best <= 2
                && edit_distance(c, &n) == best
                && super::allowed::allows(
                    kind,
                    ClauseName::from_spelling(c).expect("a clause name"),
                )
        })
        .map(|c| format!("`{c}`"))
        .collect();
    let suggestion = if close.is_empty() {
        String::new()
    } else {
        format!("; did you mean {}?", close.join(" or "))
    };
    syn::Error::new(
        name.span(),
        format!(
            "unknown clause `{n}` on `{}`{suggestion} ({})",
            kind.spelling(),
            kind.cite()
        ),
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

fn parse_clause(
    kind: DirectiveKind,
    input: ParseStream,
    section: Option<Vec<DeviceTypeSel>>,
) -> syn::Result<Clause> {
    let ident = Ident::parse_any(input)?;
    let spelled = ident.unraw().to_string();
    let name = ClauseName::from_spelling(&spelled).ok_or_else(|| unknown_clause(kind, &ident))?;
    let span = ident.span();
    let mut devnum = None;
    let args = if input.peek(token::Paren) {
        let content;
        syn::parenthesized!(content in input);
        let args = parse_args(kind, name, span, &content, &mut devnum)?;
        if !content.is_empty() {
            return Err(content.error(format!("unexpected tokens in `{spelled}(..)`")));
        }
        args
    } else if input.peek(Token![=]) && !input.peek(Token![==]) {
        input.parse::<Token![=]>()?;
        parse_eq_arg(name, span, input)?
    } else {
        match shape(kind, name) {
            Shape::Flag | Shape::OptExpr | Shape::OptExprs | Shape::Gang | Shape::Level => {
                ClauseArgs::None
            }
            _ => {
                return Err(syn::Error::new(
                    span,
                    format!("clause `{spelled}` needs an argument: `{spelled}(..)`"),
                ))
            }
        }
    };
    Ok(Clause {
        name,
        span,
        args,
        device_types: section,
        devnum: devnum.map(Box::new),
    })
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
            Expr::Path(p) if p.path.get_ident().is_some() => Ok(ClauseArgs::Default(
                p.path.get_ident().cloned().expect("checked"),
            )),
            other => Err(syn::Error::new_spanned(
                other,
                "`default` takes `none` or `present` (3.3 section 2.5.16)",
            )),
        },
        ClauseName::Gang => Ok(ClauseArgs::Gang {
            num: Some(Box::new(e)),
            dim: None,
            static_: None,
        }),
        ClauseName::Worker | ClauseName::Vector => Ok(ClauseArgs::Level {
            arg: Some(Box::new(e)),
        }),
        ClauseName::Async
        | ClauseName::NumWorkers
        | ClauseName::VectorLength
        | ClauseName::If
        | ClauseName::SelfClause
        | ClauseName::DeviceNum
        | ClauseName::DefaultAsync => Ok(ClauseArgs::Expr(Box::new(e))),
        other => Err(syn::Error::new(
            span,
            format!(
                "clause `{}` has no `= value` form; write `{}(..)`",
                other.spelling(),
                other.spelling()
            ),
        )),
    }
}

/// The arguments of clause `name` on a `kind` directive, as the clause's shape reads them (a
/// `wait`'s `devnum:` into `devnum`).
fn parse_args(
    kind: DirectiveKind,
    name: ClauseName,
    span: Span,
    input: ParseStream,
    devnum: &mut Option<Expr>,
) -> syn::Result<ClauseArgs> {
    let spelled = name.spelling();
    Ok(match shape(kind, name) {
        Shape::Flag => {
            return Err(syn::Error::new(
                span,
                format!("clause `{spelled}` takes no arguments"),
            ));
        }
        Shape::Expr | Shape::OptExpr => ClauseArgs::Expr(Box::new(input.parse()?)),
        Shape::Exprs | Shape::OptExprs => parse_exprs(kind, name, span, input, devnum)?,
        Shape::Vars => parse_var_list(name, span, input)?,
        Shape::Reduction => parse_reduction(span, input)?,
        Shape::Default => parse_default(input)?,
        Shape::DeviceTypes => parse_device_types(span, input)?,
        Shape::Gang => parse_gang(input)?,
        Shape::Level => parse_level(name, input)?,
        Shape::Collapse => parse_collapse(input)?,
        Shape::Tile => parse_tile(span, input)?,
        Shape::Bind => {
            if input.peek(LitStr) {
                ClauseArgs::Bind(input.parse::<LitStr>()?.value())
            } else {
                ClauseArgs::Bind(Ident::parse_any(input)?.to_string())
            }
        }
    })
}

/// `e, ..` of a clause taking a list of expressions; for `wait`, after its optional
/// `devnum: e:` (into `devnum`) and `queues:` (3.3 section 2.16.3).
fn parse_exprs(
    kind: DirectiveKind,
    name: ClauseName,
    span: Span,
    input: ParseStream,
    devnum: &mut Option<Expr>,
) -> syn::Result<ClauseArgs> {
    let spelled = name.spelling();
    // wait-argument: `[devnum: e :] [queues:] list` (3.3 section 2.16.3).
    if name == ClauseName::Wait
        && input.peek(Ident)
        && input.peek2(Token![:])
        && !input.peek2(Token![::])
    {
        let label: Ident = input.parse()?;
        if label == "devnum" {
            input.parse::<Token![:]>()?;
            *devnum = Some(input.parse()?);
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
            return Err(syn::Error::new(
                label.span(),
                "expected `devnum:` or `queues:`",
            ));
        }
    }
    let list = input.parse_terminated(<Expr as syn::parse::Parse>::parse, Token![,])?;
    if list.is_empty() && shape(kind, name) == Shape::Exprs {
        return Err(syn::Error::new(
            span,
            format!("`{spelled}(..)` needs at least one value"),
        ));
    }
    Ok(ClauseArgs::Exprs(list.into_iter().collect()))
}

/// `[modifier:] var, ..` of a data clause.
fn parse_var_list(name: ClauseName, span: Span, input: ParseStream) -> syn::Result<ClauseArgs> {
    let spelled = name.spelling();
    let modifier = if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
        let m: Ident = input.parse()?;
        input.parse::<Token![:]>()?;
        Some(m)
    } else {
        None
    };
    let vars = parse_vars(input)?;
    if vars.is_empty() {
        return Err(syn::Error::new(
            span,
            format!("`{spelled}(..)` needs at least one variable"),
        ));
    }
    Ok(ClauseArgs::Vars { modifier, vars })
}

/// `op: var, ..` of `reduction`.
fn parse_reduction(span: Span, input: ParseStream) -> syn::Result<ClauseArgs> {
    let (op, op_span) = parse_red_op(input)?;
    input.parse::<Token![:]>().map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected `:` after the reduction operator, as in `reduction(+: sum)`",
        )
    })?;
    if input.peek(Ident) && input.peek2(Token![.]) && !input.peek2(Token![..]) {
        let v: Ident = input.fork().parse()?;
        return Err(syn::Error::new(
            v.span(),
            format!("a reduction variable is a whole variable or array, not a member of one (`{v}.field`) (3.3 section 2.5.15)"),
        ));
    }
    let vars = parse_vars(input)?;
    if vars.is_empty() {
        return Err(syn::Error::new(
            span,
            "`reduction(op: ..)` needs at least one variable",
        ));
    }
    Ok(ClauseArgs::Reduction { op, op_span, vars })
}

/// `none` or `present` of `default`.
fn parse_default(input: ParseStream) -> syn::Result<ClauseArgs> {
    let v = Ident::parse_any(input)?;
    if v != "none" && v != "present" {
        return Err(syn::Error::new(
            v.span(),
            "`default` takes `none` or `present` (3.3 section 2.5.16)",
        ));
    }
    Ok(ClauseArgs::Default(v))
}

/// `name, ..` or `*` of `device_type`.
fn parse_device_types(span: Span, input: ParseStream) -> syn::Result<ClauseArgs> {
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
        return Err(syn::Error::new(
            span,
            "`device_type(..)` needs a device type or `*` (3.3 section 2.4)",
        ));
    }
    Ok(ClauseArgs::DeviceTypes(list))
}

/// `[num:] e, dim: e, static: size` of `gang`, each at most once.
fn parse_gang(input: ParseStream) -> syn::Result<ClauseArgs> {
    let (mut num, mut dim, mut static_) = (None, None, None);
    while !input.is_empty() {
        if input.peek(Ident::peek_any) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
            let label = Ident::parse_any(input)?;
            input.parse::<Token![:]>()?;
            let once = |present: bool| {
                if present {
                    Err(syn::Error::new(
                        label.span(),
                        format!(
                            "`gang` takes at most one `{}:` (3.3 section 2.9.2)",
                            label.unraw()
                        ),
                    ))
                } else {
                    Ok(())
                }
            };
            match label.unraw().to_string().as_str() {
                "num" => {
                    once(num.is_some())?;
                    num = Some(Box::new(input.parse()?))
                }
                "dim" => {
                    once(dim.is_some())?;
                    dim = Some(Box::new(input.parse()?))
                }
                "static" => {
                    once(static_.is_some())?;
                    static_ = Some(parse_size(input)?)
                }
                other => {
                    return Err(syn::Error::new(
                        label.span(),
                        format!(
                        "unknown gang argument `{other}:`; expected `num:`, `dim:` or `static:`"
                    ),
                    ))
                }
            }
        } else {
            if num.is_some() {
                return Err(input.error("`gang` takes at most one `num:` (3.3 section 2.9.2)"));
            }
            num = Some(Box::new(input.parse()?));
        }
        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(ClauseArgs::Gang { num, dim, static_ })
}

/// `[num:] e` of `worker`, `[length:] e` of `vector`.
fn parse_level(name: ClauseName, input: ParseStream) -> syn::Result<ClauseArgs> {
    let label = if name == ClauseName::Worker {
        "num"
    } else {
        "length"
    };
    if input.peek(Ident) && input.peek2(Token![:]) && !input.peek2(Token![::]) {
        let l: Ident = input.parse()?;
        if l != label {
            return Err(syn::Error::new(l.span(), format!("expected `{label}:`")));
        }
        input.parse::<Token![:]>()?;
    }
    Ok(ClauseArgs::Level {
        arg: Some(Box::new(input.parse()?)),
    })
}

/// `[force:] n` of `collapse`.
fn parse_collapse(input: ParseStream) -> syn::Result<ClauseArgs> {
    let force = if input.peek(Ident) && input.peek2(Token![:]) {
        let f: Ident = input.parse()?;
        if f != "force" {
            return Err(syn::Error::new(
                f.span(),
                "expected `force:` or a loop count",
            ));
        }
        input.parse::<Token![:]>()?;
        true
    } else {
        false
    };
    let e: Expr = input.parse()?;
    collapse_count(force, &e)
}

/// `size, ..` of `tile`.
fn parse_tile(span: Span, input: ParseStream) -> syn::Result<ClauseArgs> {
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
    Ok(ClauseArgs::Tile(sizes))
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
        return Err(syn::Error::new(
            lit.span(),
            "`collapse(0)`: the count must be positive (3.3 section 2.9.1)",
        ));
    }
    Ok(ClauseArgs::Collapse {
        force,
        n,
        n_span: lit.span(),
    })
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
                format!("unknown reduction operator `{other}`; the operators are + * max min & | ^ && || (3.3 section 2.5.15)"),
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
        let name: Ident = Ident::parse_any(input).map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a variable name (optionally with a subarray, `a[lo..hi]`)",
            )
        })?;
        let mut span = name.span();
        // A member, `g.a` or `self.h.b` (OpenACC 2.6+): named by an alias of its path.
        let mut fields = Vec::new();
        while input.peek(Token![.]) && !input.peek(Token![..]) {
            input.parse::<Token![.]>()?;
            let f: Ident = Ident::parse_any(input)
                .map_err(|e| syn::Error::new(e.span(), "expected a field name after `.`"))?;
            span = span.join(f.span()).unwrap_or(span);
            fields.push(f);
        }
        let (name, member) = if fields.is_empty() {
            (name, None)
        } else {
            let path: Vec<String> = std::iter::once(name.to_string())
                .chain(fields.iter().map(|f| f.to_string()))
                .collect();
            let alias = Ident::new(&member_alias(&path), name.span());
            (alias, Some((name, fields)))
        };
        let subarray = if input.peek(token::Bracket) {
            let content;
            let br = syn::bracketed!(content in input);
            span = span.join(br.span.join()).unwrap_or(span);
            let e: Expr = content.parse()?;
            if input.peek(token::Bracket) {
                return Err(input.error("a subarray has one range (`a[lo..hi]`): arrays in data clauses are one-dimensional (3.3 section 2.7.1)"));
            }
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
        let written = match &member {
            Some((base, fields)) => std::iter::once(base.to_string())
                .chain(fields.iter().map(|f| f.to_string()))
                .collect::<Vec<_>>()
                .join("."),
            None => name.to_string(),
        };
        let text = match &subarray {
            Some(r) => format!("{}[{}]", written, tidy(r.to_token_stream())),
            None => written,
        };
        vars.push(VarRef {
            name,
            member,
            subarray,
            text,
            span,
        });
        if input.peek(token::Paren) {
            return Err(input.error(
                "a clause lists variables, not calls: name the variable that holds the value (3.3 section 2.7: a clause names variables, arrays and subarrays)",
            ));
        }
        if !input.is_empty() {
            input.parse::<Token![,]>().map_err(|e| {
                syn::Error::new(e.span(), "expected `,` between the variables of a clause")
            })?;
        }
    }
    Ok(vars)
}

/// Token text without the spaces `to_string` puts between every token.
pub fn tidy(ts: TokenStream) -> String {
    let s = ts.to_string();
    s.replace(" . ", ".")
        .replace(" .. ", "..")
        .replace(" ..", "..")
        .replace(".. ", "..")
        .replace(" ..= ", "..=")
        .replace(" [", "[")
        .replace("[ ", "[")
        .replace(" ]", "]")
}

/// The name a construct binds a member's path (`g.a` → `acc_member_g_a`) to.
pub fn member_alias(path: &[String]) -> String {
    format!("acc_member_{}", path.join("_"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::check_directive;

    fn parse(kind: DirectiveKind, src: &str) -> syn::Result<Directive> {
        parse_directive(kind, Span::call_site(), src.parse().expect("tokens"))
    }

    /// Parses and checks without error.
    fn ok(kind: DirectiveKind, src: &str) -> Directive {
        let d = parse(kind, src).unwrap_or_else(|e| panic!("{src}: {e}"));
        let errs = check_directive(&d);
        assert!(
            errs.is_empty(),
            "{src}: {}",
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; ")
        );
        d
    }

    fn err(kind: DirectiveKind, src: &str) -> String {
        match parse(kind, src) {
            Err(e) => e.to_string(),
            Ok(d) => check_directive(&d)
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        }
    }

    #[test]
    fn every_directive_with_its_clauses() {
        use DirectiveKind as D;
        let d = ok(D::Parallel, "async(1), wait(1, 2), num_gangs(4), num_workers = 4, vector_length(128), \
            if(n > 10), self(on_host), reduction(+: a, b), copy(c), copyin(readonly: d), copyout(zero: e), \
            create(zero: f), no_create(g), present(h), deviceptr(k), private(m), firstprivate(o), \
            default(present), device_type(nvidia) num_gangs(80) vector_length(256), device_type(*) async");
        let specific = d
            .clauses
            .iter()
            .filter(|c| c.device_types.is_some() && c.name != ClauseName::DeviceType);
        assert_eq!(
            specific.count(),
            3,
            "num_gangs, vector_length (nvidia) and async (*)"
        );
        ok(D::Serial, "async, wait, if(true), self, reduction(max: m), copy(a[0..n]), private(t), firstprivate(u), default(none)");
        ok(D::Kernels, "num_gangs(1), num_workers(2), vector_length(32), copy(a), pcopyin(b), present_or_copyout(c), pcreate(d), default(none)");
        ok(D::ParallelLoop, "collapse(force: 2), gang(dim: 1, static: *), worker, vector(length: 64), \
            independent, reduction(&&: all), reduction(||: any), reduction(^: x), reduction(&: y), \
            reduction(|: z), reduction(*: p), reduction(min: q), private(t), copyin(v[..n]), copyout(w[lo..]), \
            dtype(host) collapse(1)");
        ok(
            D::KernelsLoop,
            "auto, gang(32), worker, vector(128), collapse = 3",
        );
        ok(D::SerialLoop, "seq, pcopy(a)");
        ok(D::ParallelLoop, "tile(*, 4), gang, vector");
        ok(D::Loop, "gang(static: 8), worker, vector, private(t), reduction(+: s), device_type(nvidia) vector(64)");
        ok(D::Data, "if(c), async(2), wait(devnum: 0: queues: 1, 2), copy(a), copyin(readonly: b[1..=4]), copyout(c), create(d), no_create(e), present(f), deviceptr(g), default(present)");
        ok(
            D::EnterData,
            "if(c), async, wait(1), copyin(a), create(zero: b)",
        );
        ok(
            D::ExitData,
            "if(c), async(1), wait, copyout(a), delete(b), finalize",
        );
        ok(D::HostData, "use_device(a, b), if(c), if_present");
        for a in ["", "read", "write", "update", "capture"] {
            ok(D::Atomic, a);
        }
        ok(D::Declare, "copy(a), copyin(b), copyout(c), create(d), present(e), deviceptr(f), device_resident(g), link(h)");
        ok(D::Routine, "seq, bind(\"fast_poly\"), nohost");
        ok(
            D::Routine,
            "gang(dim: 2), device_type(nvidia) bind(poly_gpu)",
        );
        ok(D::Update, "self(a), host(b[0..4]), device(c), async(1), wait(2), if(x), if_present, device_type(wgpu) async(3)");
        ok(D::Wait, "async(1), if(c)");
        ok(D::Init, "device_type(nvidia), device_num(0), if(c)");
        ok(D::Shutdown, "device_type(multicore)");
        ok(
            D::Set,
            "default_async(2), device_num(1), device_type(host), if(c)",
        );
    }

    #[test]
    fn errors_name_the_directive_and_the_clause() {
        use DirectiveKind as D;
        assert!(err(D::Loop, "copyin(a)").contains("clause `copyin` is not allowed on `loop`"));
        assert!(err(D::Kernels, "private(a)").contains("not allowed on `kernels`"));
        assert!(err(D::EnterData, "copyin(readonly: a)").contains("modifier `readonly:`"));
        assert!(err(D::ExitData, "copyout(zero: a)").contains("modifier `zero:`"));
        assert!(err(D::Parallel, "reduction(avg: s)").contains("unknown reduction operator `avg`"));
        assert!(err(D::Parallel, "reduction(+ s)").contains("expected `:`"));
        assert!(err(D::Loop, "collapse(n)").contains("positive integer literal"));
        assert!(err(D::Loop, "gang(dim: 4)").contains("1, 2 or 3"));
        assert!(err(D::Loop, "seq, independent").contains("`seq` cannot be combined"));
        assert!(err(D::Loop, "tile(4), collapse(2)")
            .contains("`tile` cannot be combined with `collapse`"));
        assert!(err(D::Kernels, "num_gangs(1, 2)").contains("at most 1 value"));
        assert!(err(D::Parallel, "if(a), if(b)").contains("appears more than once"));
        assert!(err(D::Parallel, "copy(a), copyin(a)").contains("`a` appears in both"));
        assert!(err(D::Parallel, "device_type(radeon)").contains("unknown device type `radeon`"));
        assert!(err(D::Update, "if_present").contains("needs at least one of"));
        assert!(err(D::Routine, "seq, gang").contains("exactly one of"));
        assert!(err(D::Atomic, "read, write").contains("at most one"));
        assert!(err(D::Loop, "seq(1)").contains("takes no arguments"));
        assert!(err(D::Parallel, "copy()").contains("at least one variable"));
        assert!(err(D::Parallel, "copy(a[3])").contains("subarray is a range"));
        assert!(err(D::Parallel, "num_gangs").contains("needs an argument"));
        assert!(err(D::Parallel, "firstprivat(x)").contains("did you mean `firstprivate`?"));
        assert!(
            err(D::Parallel, "num_gangs(2, 2), reduction(+: s)").contains("more than one value")
        );
        assert!(err(D::Parallel, "num_gangs(0)").contains("at least 1"));
        assert!(err(D::Loop, "tile(0)").contains("must be positive"));
        assert!(err(D::Loop, "tile(n)").contains("constant positive integer"));
        assert!(err(D::Parallel, "async(-3)").contains("names no queue"));
        assert!(err(D::ParallelLoop, "gang(num: 4)").contains("not allowed on `parallel_loop`"));
        assert!(err(D::KernelsLoop, "gang(dim: 2)").contains("not allowed in a kernels region"));
        assert!(err(D::KernelsLoop, "num_gangs(4), gang(8)").contains("together with `num_gangs`"));
        assert!(err(D::ParallelLoop, "worker(4)").contains("only in a kernels region"));
        assert!(err(D::KernelsLoop, "vector_length(64), vector(32)")
            .contains("without `vector_length`"));
        assert!(err(D::Routine, "gang(num: 2)").contains("takes only `dim:`"));
        assert!(err(D::Routine, "vector(32)").contains("takes no argument"));
        assert!(err(D::Loop, "gang(dim: 2), reduction(+: s)").contains("`gang(dim: 2 or 3)`"));
        assert!(err(D::Loop, "gang(num: 2, num: 3)").contains("at most one `num:`"));
        assert!(err(D::Parallel, "reduction(+: s.total)").contains("not a member"));
        assert!(err(D::HostData, "use_device(a[0..4])").contains("whole variables"));
        assert!(err(D::Declare, "create(a[0..4])").contains("whole variables"));
        assert!(err(D::Init, "device_type(nvidia, wgpu)").contains("one device type"));
        assert!(err(D::EnterData, "attach(p[1..])").contains("whole variables"));
        // Whole variables too: acc's device data holds no pointers to attach.
        assert!(err(D::EnterData, "copyin(a), attach(p)").contains("holds none"));
        assert!(err(D::ExitData, "delete(a), detach(p)").contains("holds none"));
        assert!(err(D::Data, "copy(a), attach(p)").contains("holds none"));
    }

    #[test]
    fn combined_reduction_variable_may_also_be_in_a_data_clause() {
        // 3.3 L1292-1293: reduction on a combined construct implies copy; naming it is allowed.
        ok(DirectiveKind::ParallelLoop, "reduction(+: s), copy(s)");
    }
}
