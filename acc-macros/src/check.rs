//! Checks of a parsed directive that need no knowledge of the code around it: clauses the
//! directive does not take, clauses not allowed after `device_type`, modifiers, repeated and
//! conflicting clauses, and required clauses. Every violation is collected with its span.

use std::collections::HashMap;

use proc_macro2::Span;

use crate::directive::allowed::{allows, allows_after_device_type};
use crate::directive::{
    Clause, ClauseArgs, ClauseName as C, ComputeKind, DeviceTypeSel, Directive, DirectiveKind as D,
    SizeExpr, DEVICE_TYPE_NAMES,
};

/// Every problem with `dir`, each at its span: the clauses one at a time, then the rules on
/// the clause set (per device type, data attributes, constant and level arguments, whole
/// variables, device types, required clauses), then `attach`/`detach`.
pub fn check_directive(dir: &Directive) -> Vec<syn::Error> {
    let mut errs = Vec::new();
    let name = dir.kind.spelling();
    let mut err = |span, msg: String| errs.push(syn::Error::new(span, msg));

    let section = dir.kind.cite();
    let mut disallowed = false;
    check_members_are_data(dir, &mut err);
    for c in &dir.clauses {
        if !allows(dir.kind, c.name) {
            err(
                c.span,
                format!(
                    "clause `{}` is not allowed on `{name}` ({section})",
                    c.name.spelling()
                ),
            );
            disallowed = true;
            continue;
        }
        check_clause(dir, c, &mut err);
    }

    // The rules on the clause set that applies on each device type (3.3 section 2.4, R6).
    for (span, msg) in check_each_device(dir) {
        err(span, msg);
    }
    let atomic_clauses = dir
        .clauses
        .iter()
        .filter(|c| matches!(c.name, C::Read | C::Write | C::Update | C::Capture))
        .count();
    if atomic_clauses > 1 {
        err(
            dir.span,
            "`atomic` takes at most one of `read`, `write`, `update`, `capture` (3.3 section 2.12)"
                .into(),
        );
    }

    check_one_data_attribute(dir, &mut err);
    check_constant_args(dir, &mut err);
    check_level_args(dir, &mut err);
    check_whole_vars(dir, &mut err);
    check_one_device_type(dir, &mut err);
    check_required_clauses(dir, disallowed, &mut err);
    // `attach`/`detach` (3.3 section 2.7.13) fix up pointers held in device memory; the data acc
    // moves holds none (`DeviceCopy` types have no pointers), so there is nothing to attach.
    // (Only when the clause is otherwise right: one error per mistake.)
    drop(err);
    if errs.is_empty() {
        for c in dir
            .clauses
            .iter()
            .filter(|c| matches!(c.name, C::Attach | C::Detach))
        {
            errs.push(syn::Error::new(c.span, format!(
                "`{}` fixes up pointers held in device memory (3.3 section 2.7.13), and the data acc moves holds none (`DeviceCopy` types have no pointers): put the data itself in a data clause (a struct's member as `copyin(g.a)`)",
                c.name.spelling()
            )));
        }
    }
    errs
}

/// Struct members (`g.a`) are data: data clauses and `update` take them; the other lists
/// (private copies, device addresses, `declare`, `cache`) take whole variables.
fn check_members_are_data(dir: &Directive, err: &mut impl FnMut(Span, String)) {
    let name = dir.kind.spelling();
    for c in &dir.clauses {
        let data = matches!(
            c.name,
            C::Copy
                | C::Copyin
                | C::Copyout
                | C::Create
                | C::NoCreate
                | C::Present
                | C::Delete
                | C::Attach
                | C::Detach
                | C::SelfClause
                | C::Host
                | C::Device
        ) && dir.kind != crate::directive::DirectiveKind::Declare;
        if !data {
            for v in c.vars().iter().filter(|v| v.member.is_some()) {
                err(v.span, format!(
                    "`{}` is a member of a struct: `{}` on `{name}` takes whole variables (members go in data clauses and `update`)",
                    v.text, c.name.spelling()
                ));
            }
        }
    }
}

/// The rules on one clause the directive allows: `device_type` sections, modifiers, device
/// type names, the number of `num_gangs` values and `gang(dim: ..)`.
fn check_clause(dir: &Directive, c: &Clause, err: &mut impl FnMut(Span, String)) {
    let name = dir.kind.spelling();
    let section = dir.kind.cite();
    if c.device_types.is_some()
        && c.name != C::DeviceType
        && !allows_after_device_type(dir.kind, c.name)
    {
        err(
            c.span,
            format!(
                "clause `{}` may not follow `device_type` on `{name}` (3.3 section 2.4: only tuning clauses are device specific)",
                c.name.spelling()
            ),
        );
    }
    if let Some(m) = c.modifier() {
        let ok = match (m.to_string().as_str(), c.name) {
            ("readonly", C::Copyin) => dir.kind != D::EnterData,
            ("zero", C::Copyout) => dir.kind != D::ExitData,
            ("zero", C::Create) => true,
            _ => false,
        };
        if !ok {
            err(
                m.span(),
                format!(
                    "modifier `{m}:` is not allowed on `{}` in `{name}` ({section})",
                    c.name.spelling()
                ),
            );
        }
    }
    if let ClauseArgs::DeviceTypes(list) = &c.args {
        for t in list {
            if let DeviceTypeSel::Named(id) = t {
                let n = id.to_string().to_ascii_lowercase();
                if !DEVICE_TYPE_NAMES.contains(&n.as_str()) {
                    err(
                        id.span(),
                        format!(
                            "unknown device type `{id}`; the device types are {} and `*` (3.3 section 2.4)",
                            DEVICE_TYPE_NAMES.join(", ")
                        ),
                    );
                }
            }
        }
    }
    if c.name == C::NumGangs {
        if let ClauseArgs::Exprs(v) = &c.args {
            let max = if dir.kind.compute() == Some(crate::directive::ComputeKind::Kernels) {
                1
            } else {
                3
            };
            if v.len() > max {
                err(
                    c.span,
                    format!(
                        "`num_gangs` takes at most {max} value{} on `{name}` (3.3 section 2.5.10)",
                        if max == 1 { "" } else { "s" }
                    ),
                );
            }
        }
    }
    if let ClauseArgs::Gang { dim: Some(d), .. } = &c.args {
        if let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(l),
            ..
        }) = &**d
        {
            if !matches!(l.base10_parse::<u32>(), Ok(1..=3)) {
                err(
                    l.span(),
                    "`gang(dim: ..)` must be 1, 2 or 3 (3.3 section 2.9.2)".into(),
                );
            }
        }
    }
}

/// The same variable in two data-sharing clauses of one directive.
fn check_one_data_attribute(dir: &Directive, err: &mut impl FnMut(Span, String)) {
    let name = dir.kind.spelling();
    let mut var_clause: HashMap<String, (C, proc_macro2::Span)> = HashMap::new();
    for c in &dir.clauses {
        let sharing = matches!(
            c.name,
            C::Copy
                | C::Copyin
                | C::Copyout
                | C::Create
                | C::NoCreate
                | C::Present
                | C::Deviceptr
                | C::Private
                | C::Firstprivate
                | C::Reduction
        );
        if !sharing {
            continue;
        }
        for v in c.vars() {
            let key = v.name.to_string();
            if let Some((prev, _)) = var_clause.get(&key) {
                let combined_ok = dir.kind.is_combined()
                    && ((*prev == C::Reduction) != (c.name == C::Reduction))
                    && matches!(
                        if *prev == C::Reduction { c.name } else { *prev },
                        C::Copy | C::Copyin | C::Copyout | C::Create | C::Present
                    );
                if !(combined_ok || *prev == C::Reduction && c.name == C::Reduction) {
                    err(v.span, format!("`{key}` appears in both `{}` and `{}` on `{name}`; a variable has one data attribute (3.3 section 2.7)", prev.spelling(), c.name.spelling()));
                }
                if *prev == C::Reduction && c.name == C::Reduction {
                    err(
                        v.span,
                        format!("`{key}` appears in two `reduction` clauses on `{name}`; a reduction variable has one operator (3.3 section 2.5.15)"),
                    );
                }
            } else {
                var_clause.insert(key, (c.name, v.span));
            }
        }
    }
}

/// Constant arguments that must be positive (3.3 sections 2.5.10-2.5.12; R16, R68).
fn check_constant_args(dir: &Directive, err: &mut impl FnMut(Span, String)) {
    for c in dir.clauses.iter() {
        let exprs: Vec<&syn::Expr> = match &c.args {
            ClauseArgs::Exprs(v) if c.name == C::NumGangs => v.iter().collect(),
            ClauseArgs::Expr(e) if matches!(c.name, C::NumWorkers | C::VectorLength) => vec![&**e],
            _ => vec![],
        };
        for e in exprs {
            if int_literal(e) == Some(0) {
                err(
                    lit_span(e),
                    format!(
                        "`{}` must be at least 1 (3.3 section 2.5.10-2.5.12)",
                        c.name.spelling()
                    ),
                );
            }
        }
        if let ClauseArgs::Tile(sizes) = &c.args {
            for s in sizes {
                if let SizeExpr::Expr(e) = s {
                    match int_literal(e) {
                        Some(0) => err(lit_span(e), "a `tile` size must be positive (3.3 section 2.9.8)".into()),
                        Some(_) => {}
                        None => err(lit_span(e), "a `tile` size is a constant positive integer or `*` (3.3 section 2.9.8)".into()),
                    }
                }
            }
        }
        // A constant async argument: a queue (>= 0), or acc_async_noval / acc_async_sync (R112).
        if c.name == C::Async {
            if let Some(v) = c.expr().and_then(negative_literal) {
                if v != 1 && v != 2 {
                    err(c.span, format!("`async(-{v})` names no queue: an async argument is >= 0, `acc::ASYNC_NOVAL` or `acc::ASYNC_SYNC` (3.3 section 2.16.1)"));
                }
            }
        }
    }
}

/// gang, worker and vector arguments by context (3.3 sections 2.9.2-2.9.4; R72-R77, R115).
fn check_level_args(dir: &Directive, err: &mut impl FnMut(Span, String)) {
    let name = dir.kind.spelling();
    for c in &dir.clauses {
        match (&c.args, c.name) {
            (ClauseArgs::Gang { num, dim, static_ }, _) => {
                if dir.kind == D::Routine && (num.is_some() || static_.is_some()) {
                    err(
                        c.span,
                        "`gang` on `routine` takes only `dim:` (3.3 section 2.15.1)".into(),
                    );
                }
                let compute = dir.kind.compute();
                if num.is_some()
                    && matches!(compute, Some(ComputeKind::Parallel | ComputeKind::Serial))
                {
                    err(c.span, format!("`gang(num: ..)` is not allowed on `{name}`: in a parallel or serial region the gang count is the construct's `num_gangs` (3.3 section 2.9.2)"));
                }
                if compute == Some(ComputeKind::Kernels) {
                    if dim.is_some() {
                        err(c.span, "`gang(dim: ..)` is not allowed in a kernels region (3.3 section 2.9.2)".into());
                    }
                    if num.is_some() && dir.has(C::NumGangs) {
                        err(c.span, "`gang(num: ..)` is not allowed together with `num_gangs` (3.3 section 2.9.2)".into());
                    }
                }
                if let Some(d) = dim.as_deref().and_then(int_literal) {
                    if d > 1 && dir.has(C::Reduction) {
                        err(c.span, "`reduction` is not allowed on a loop with `gang(dim: 2 or 3)` (3.3 section 2.9.11)".into());
                    }
                }
            }
            (ClauseArgs::Level { arg: Some(_) }, C::Worker | C::Vector) => {
                let (what, sizing) = if c.name == C::Worker {
                    ("worker", C::NumWorkers)
                } else {
                    ("vector", C::VectorLength)
                };
                let compute = dir.kind.compute();
                let ok = match compute {
                    Some(ComputeKind::Kernels) => !dir.has(sizing),
                    Some(ComputeKind::Parallel) => c.name == C::Vector,
                    _ => false,
                };
                if dir.kind == D::Routine {
                    err(
                        c.span,
                        format!("`{what}` on `routine` takes no argument (3.3 section 2.15.1)"),
                    );
                } else if compute.is_some() && !ok {
                    err(c.span, format!(
                        "`{what}(..)` takes an argument only in a kernels region without `{}` (3.3 section {})",
                        sizing.spelling(),
                        if c.name == C::Worker { "2.9.3" } else { "2.9.4" }
                    ));
                }
            }
            _ => {}
        }
    }
}

/// Variables that must be whole: no subarrays (R54, R56, R91).
fn check_whole_vars(dir: &Directive, err: &mut impl FnMut(Span, String)) {
    let name = dir.kind.spelling();
    for c in &dir.clauses {
        let whole_only =
            matches!(c.name, C::Attach | C::Detach | C::UseDevice) || dir.kind == D::Declare;
        if whole_only {
            for v in c.vars().iter().filter(|v| v.subarray.is_some()) {
                err(
                    v.span,
                    format!(
                        "`{}` on `{name}` takes whole variables, not subarrays ({})",
                        c.name.spelling(),
                        dir.kind.cite()
                    ),
                );
            }
        }
    }
}

/// init, shutdown and set name one device type (R107).
fn check_one_device_type(dir: &Directive, err: &mut impl FnMut(Span, String)) {
    let name = dir.kind.spelling();
    if matches!(dir.kind, D::Init | D::Shutdown | D::Set) {
        for c in dir.all(C::DeviceType) {
            if matches!(&c.args, ClauseArgs::DeviceTypes(t) if t.len() > 1) {
                err(
                    c.span,
                    format!(
                        "`device_type` on `{name}` names one device type ({})",
                        dir.kind.cite()
                    ),
                );
            }
        }
        if dir.all(C::DeviceType).count() > 1 {
            err(
                dir.span,
                format!(
                    "`device_type` appears more than once on `{name}` ({})",
                    dir.kind.cite()
                ),
            );
        }
    }
}

/// Required clauses (not reported when a clause that is not allowed was probably meant as one,
/// which `disallowed` says).
fn check_required_clauses(dir: &Directive, disallowed: bool, err: &mut impl FnMut(Span, String)) {
    let has_any = |names: &[C]| dir.clauses.iter().any(|c| names.contains(&c.name));
    match dir.kind {
        _ if disallowed => {}
        D::Update if !has_any(&[C::SelfClause, C::Host, C::Device]) => {
            err(dir.span, "`update` needs at least one of `self(..)`, `host(..)`, `device(..)` (3.3 section 2.14.4)".into())
        }
        D::EnterData if !has_any(&[C::Copyin, C::Create, C::Attach]) => {
            err(dir.span, "`enter_data` needs at least one data clause: `copyin`, `create` or `attach` (3.3 section 2.6.6)".into())
        }
        D::ExitData if !has_any(&[C::Copyout, C::Delete, C::Detach]) => {
            err(dir.span, "`exit_data` needs at least one data clause: `copyout`, `delete` or `detach` (3.3 section 2.6.6)".into())
        }
        D::HostData if !has_any(&[C::UseDevice]) => {
            err(dir.span, "`host_data` needs a `use_device(..)` clause (3.3 section 2.8)".into())
        }
        D::Data if !has_any(&[C::Copy, C::Copyin, C::Copyout, C::Create, C::NoCreate, C::Present, C::Deviceptr, C::Attach, C::Default]) => {
            err(dir.span, "`data` needs at least one data clause or `default` (3.3 section 2.6.5)".into())
        }
        D::Declare if dir.clauses.is_empty() => err(dir.span, "`declare` needs at least one data clause (3.3 section 2.13)".into()),
        _ => {}
    }
}

/// Runs [`check_effective`] on the directive as each device type sees it (3.3 section 2.4,
/// L950-953: "if, for any device type, the resulting directive is nonconforming, then the
/// original directive is nonconforming"; R6). A problem that only some device types have says
/// which.
fn check_each_device(dir: &Directive) -> Vec<(Span, String)> {
    let mut out: Vec<(Span, String)> = Vec::new();
    let same = |a: &(Span, String), b: &(Span, String)| {
        format!("{:?}", a.0) == format!("{:?}", b.0) && b.1.starts_with(&a.1)
    };
    for (device, projection) in dir.projections() {
        for e in check_effective(&projection, dir) {
            if device.is_empty() {
                out.push(e);
            } else if !out.iter().any(|o| same(&e, o)) {
                out.push((e.0, format!("{}, for device type `{device}` (3.3 section 2.4: a device type sees its own `device_type` section and the default clauses that section does not override)", e.1)));
            }
        }
    }
    out
}

/// The rules on one device type's clause set: clauses that may appear once, clauses that
/// exclude each other, and the routine's single level. `dir` is a projection without
/// `device_type` sections; `original` is the directive as written.
fn check_effective(dir: &Directive, original: &Directive) -> Vec<(Span, String)> {
    let mut errs = Vec::new();
    let name = dir.kind.spelling();
    let section = dir.kind.cite();
    let mut err = |span, msg: String| errs.push((span, msg));
    // Clauses that may appear once (per device type).
    let once = [
        C::If,
        C::SelfClause,
        C::Default,
        C::Collapse,
        C::NumGangs,
        C::NumWorkers,
        C::VectorLength,
        C::Async,
        C::Tile,
        C::Bind,
        C::DeviceNum,
        C::DefaultAsync,
    ];
    let mut seen: Vec<C> = Vec::new();
    for c in &dir.clauses {
        if !once.contains(&c.name) || (c.name == C::SelfClause && dir.kind == D::Update) {
            continue;
        }
        if seen.contains(&c.name) {
            err(
                c.span,
                format!(
                    "clause `{}` appears more than once on `{name}` ({section})",
                    c.name.spelling()
                ),
            );
        }
        seen.push(c.name);
    }

    // Loop-level conflicts (3.3 section 2.9: seq excludes the others; independent excludes auto).
    // On `routine` the rule is "exactly one level", reported below.
    if let Some(seq) = dir.find(C::Seq).filter(|_| dir.kind != D::Routine) {
        for other in [C::Gang, C::Worker, C::Vector, C::Independent, C::Auto] {
            if dir.has(other) {
                err(
                    seq.span,
                    format!(
                        "`seq` cannot be combined with `{}` on `{name}` (3.3 section 2.9.5)",
                        other.spelling()
                    ),
                );
            }
        }
    }
    if let (Some(a), true) = (dir.find(C::Auto), dir.has(C::Independent)) {
        err(
            a.span,
            format!("`auto` cannot be combined with `independent` on `{name}` (3.3 section 2.9.7)"),
        );
    }
    if let (Some(t), true) = (dir.find(C::Tile), dir.has(C::Collapse)) {
        err(
            t.span,
            format!("`tile` cannot be combined with `collapse` on `{name}` (3.3 section 2.9.8)"),
        );
    }
    if dir.kind == D::Routine {
        let levels = dir
            .clauses
            .iter()
            .filter(|c| matches!(c.name, C::Gang | C::Worker | C::Vector | C::Seq))
            .count();
        if levels != 1 {
            err(original.span, "`routine` needs exactly one of `gang`, `worker`, `vector`, `seq` (3.3 section 2.15.1)".into());
        }
    }
    // reduction with several gang dimensions (3.3 L1136-1137; R11).
    if dir.has(C::Reduction) {
        if let Some(ng) = dir.find(C::NumGangs) {
            if matches!(&ng.args, ClauseArgs::Exprs(v) if v.len() > 1) {
                err(ng.span, format!("`reduction` is not allowed on `{name}` when `num_gangs` has more than one value (3.3 section 2.5.4)"));
            }
        }
    }
    errs
}

/// Whether `e` is an expression of integer literals and `const` items (paths in upper case,
/// `NC * NF`, `config::BINS as usize`), whose value rustc computes: a clause may use it where
/// a length must be known when compiling.
pub(crate) fn constant_expr(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(_),
            ..
        }) => true,
        syn::Expr::Paren(p) => constant_expr(&p.expr),
        syn::Expr::Group(g) => constant_expr(&g.expr),
        syn::Expr::Binary(b) => constant_expr(&b.left) && constant_expr(&b.right),
        syn::Expr::Cast(c) => constant_expr(&c.expr),
        syn::Expr::Path(p) => p.path.segments.last().is_some_and(|s| {
            let n = s.ident.to_string();
            n.chars().any(|c| c.is_ascii_uppercase()) && !n.chars().any(|c| c.is_ascii_lowercase())
        }),
        _ => false,
    }
}

/// The value of an integer literal expression.
pub(crate) fn int_literal(e: &syn::Expr) -> Option<u64> {
    match e {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(l),
            ..
        }) => l.base10_parse().ok(),
        syn::Expr::Paren(p) => int_literal(&p.expr),
        _ => None,
    }
}

/// `n` for the literal `-n`.
fn negative_literal(e: &syn::Expr) -> Option<u64> {
    match e {
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => int_literal(&u.expr),
        syn::Expr::Paren(p) => negative_literal(&p.expr),
        _ => None,
    }
}

fn lit_span(e: &syn::Expr) -> proc_macro2::Span {
    syn::spanned::Spanned::span(e)
}
