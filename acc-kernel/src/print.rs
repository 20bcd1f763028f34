//! Writes a [`Kernel`] as text, for `ACC_DUMP=ir` and for tests.

use std::fmt::Write;

use super::*;

/// The kernel as text.
pub fn print(k: &Kernel) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel {}{}",
        k.name,
        if k.unchecked { " unchecked" } else { "" }
    );
    for (i, p) in k.params.iter().enumerate() {
        let what = match &p.kind {
            ParamKind::Scalar(s) => format!("{s}"),
            ParamKind::Array { elem, writable } => {
                format!("{}[{elem}]", if *writable { "mut " } else { "" })
            }
        };
        let _ = writeln!(out, "  param p{i} {}: {what}", p.name);
    }
    for (r, p) in &k.reductions {
        let _ = writeln!(out, "  reduction {:?}: l{} into p{p}", r.op, r.local);
    }
    function(&mut out, &k.function, 1);
    out
}

fn function(out: &mut String, f: &Function, depth: usize) {
    let pad = "  ".repeat(depth);
    for (i, l) in f.locals.iter().enumerate() {
        let ty = match l.len {
            Some(n) => format!("[{}; {n}]", l.ty),
            None => l.ty.to_string(),
        };
        let _ = writeln!(out, "{pad}local l{i} {}: {ty}", l.name);
    }
    block(out, f, &f.body, depth);
}

fn expr(f: &Function, h: Handle<Expr>) -> String {
    match &f.exprs[h] {
        Expr::Literal(Literal::Bool(b)) => b.to_string(),
        Expr::Literal(Literal::Int(t, v)) => format!("{v}{t}"),
        Expr::Literal(Literal::Float(t, v)) => format!("{v:?}{t}"),
        Expr::Param(p) => format!("p{p}"),
        Expr::Local(l) => format!("l{l}"),
        Expr::LocalElem { local, index } => format!("l{local}[{}]", expr(f, *index)),
        Expr::Load {
            array,
            field,
            index,
        } => format!("p{array}[{}]{}", expr(f, *index), field_suffix(*field)),
        Expr::Len(a) => format!("len(p{a})"),
        Expr::GangIndex => "gang_index()".to_string(),
        Expr::NestedIndex { element, sub } => format!("{}][{}", expr(f, *element), expr(f, *sub)),
        Expr::Unary(UnaryOp::Neg, a) => format!("-{}", expr(f, *a)),
        Expr::Unary(UnaryOp::Not, a) => format!("!{}", expr(f, *a)),
        Expr::Binary(op, a, b) => format!("({} {} {})", expr(f, *a), op.symbol(), expr(f, *b)),
        Expr::Select {
            cond,
            accept,
            reject,
        } => {
            format!(
                "select({}, {}, {})",
                expr(f, *cond),
                expr(f, *accept),
                expr(f, *reject)
            )
        }
        Expr::Cast(a, t) => format!("({} as {t})", expr(f, *a)),
        Expr::Bitcast(a, t) => format!("bitcast<{t}>({})", expr(f, *a)),
        Expr::Math(m, args) => format!(
            "{}({})",
            m.name(),
            args.iter()
                .map(|a| expr(f, *a))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn block(out: &mut String, f: &Function, b: &[Stmt], depth: usize) {
    let pad = "  ".repeat(depth);
    for s in b {
        match s {
            Stmt::Assign { local, value } => {
                let _ = writeln!(out, "{pad}l{local} = {}", expr(f, *value));
            }
            Stmt::AssignElem {
                local,
                index,
                value,
            } => {
                let _ = writeln!(
                    out,
                    "{pad}l{local}[{}] = {}",
                    expr(f, *index),
                    expr(f, *value)
                );
            }
            Stmt::Store {
                array,
                field,
                index,
                value,
            } => {
                let _ = writeln!(
                    out,
                    "{pad}p{array}[{}]{} = {}",
                    expr(f, *index),
                    field_suffix(*field),
                    expr(f, *value)
                );
            }
            Stmt::If {
                cond,
                accept,
                reject,
            } => {
                let _ = writeln!(out, "{pad}if {} {{", expr(f, *cond));
                block(out, f, accept, depth + 1);
                if !reject.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    block(out, f, reject, depth + 1);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::For {
                levels,
                schedule,
                reductions,
                private,
                tile,
                body,
            } => {
                let lv: Vec<String> = levels
                    .iter()
                    .map(|l| {
                        format!(
                            "l{} = {} step {} x {}",
                            l.var,
                            expr(f, l.start),
                            expr(f, l.step),
                            expr(f, l.trips)
                        )
                    })
                    .collect();
                let sched = match schedule {
                    None => String::from("seq"),
                    Some(s) => format!("parallel({})", s.levels().join(" ")),
                };
                let reds: Vec<String> = reductions
                    .iter()
                    .map(|r| format!("{:?}:l{}", r.op, r.local))
                    .collect();
                let _ = writeln!(
                    out,
                    "{pad}for {} {sched}{}{}{} {{",
                    lv.join(", "),
                    if tile.is_empty() {
                        String::new()
                    } else {
                        // Outermost level first, as the levels are listed.
                        format!(" tile{tile:?}")
                    },
                    if reds.is_empty() {
                        String::new()
                    } else {
                        format!(" reduction({})", reds.join(" "))
                    },
                    if private.is_empty() {
                        String::new()
                    } else {
                        format!(" private({private:?})")
                    }
                );
                block(out, f, body, depth + 1);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Loop { body } => {
                let _ = writeln!(out, "{pad}loop {{");
                block(out, f, body, depth + 1);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::Break => {
                let _ = writeln!(out, "{pad}break");
            }
            Stmt::Continue => {
                let _ = writeln!(out, "{pad}continue");
            }
            Stmt::Atomic {
                array,
                field,
                index,
                op,
                value,
                old,
                new,
            } => {
                let _ = writeln!(
                    out,
                    "{pad}atomic {op:?} p{array}[{}]{} with {} old={old:?} new={new:?}",
                    expr(f, *index),
                    field_suffix(*field),
                    expr(f, *value)
                );
            }
        }
    }
}

/// `.fN` after an element of an array of structs.
/// `.f2` for field 2; `.f1[].f0` for field 0 of the elements of array field 1 (`[]`: the
/// element the index's second part picks), `.f1[]` for a scalar array field's element.
fn field_suffix(field: Option<FieldId>) -> String {
    match field.map(split_field) {
        None => String::new(),
        Some((f, None)) => format!(".f{f}"),
        Some((f, Some(None))) => format!(".f{f}[]"),
        Some((f, Some(Some(g)))) => format!(".f{f}[].f{g}"),
    }
}
