//! Gang-redundant updates of a `parallel` construct's reduction variables (3.3 sections 2.5.1
//! and 2.5.15). Every gang runs the code outside the region's gang-partitioned loops, each on
//! its own copy of a reduction variable set to the operator's identity, and the copies are
//! combined at the end: with `num_gangs(4)`, `s += 1.0` there adds 4. acc runs that code once
//! on every device (one thread on a GPU, the launching thread on multicore), so it repeats each
//! such update `num_gangs` times instead; the rewrite is of the source, before any device's
//! code is made from it, so every device gives the same answer. It is exact while gang-redundant
//! code only updates the variable with its operator and never reads it otherwise, which is what
//! is checked here. Without `num_gangs` that code counts as one gang's, as acc launches it.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::visit::Visit;
use syn::{Expr, Ident, Stmt};

use super::{attrs, Ctx};
use crate::analysis::reduction_update::{assignment, strip};
use crate::directive::{ClauseArgs, ClauseName as C, Directive, DirectiveKind, RedOp};

/// Repeats the gang-redundant updates of the construct's reduction variables `num_gangs`
/// times in `stmts` (the body of a `parallel` construct that is not combined), and reports
/// other uses of those variables in gang-redundant code.
pub fn repeat_updates(ctx: &mut Ctx, dir: &Directive, stmts: &mut [Stmt]) {
    let Some(gangs) = dir.general(C::NumGangs).next().and_then(|c| match &c.args {
        ClauseArgs::Exprs(v) if v.len() == 1 => Some(v[0].clone()),
        _ => None,
    }) else {
        return;
    };
    let vars: Vec<(RedOp, Ident)> = dir
        .general(C::Reduction)
        .flat_map(|c| match &c.args {
            ClauseArgs::Reduction { op, vars, .. } => {
                vars.iter().map(|v| (*op, v.name.clone())).collect()
            }
            _ => Vec::new(),
        })
        .collect();
    if vars.is_empty() {
        return;
    }
    let mut r = Rewrite {
        ctx,
        vars: &vars,
        gangs: quote!(((#gangs) as usize)),
    };
    r.stmts(stmts);
}

struct Rewrite<'a> {
    ctx: &'a mut Ctx,
    vars: &'a [(RedOp, Ident)],
    gangs: TokenStream,
}

impl Rewrite<'_> {
    fn stmts(&mut self, stmts: &mut [Stmt]) {
        for st in stmts {
            self.stmt(st);
        }
    }

    fn stmt(&mut self, st: &mut Stmt) {
        let acc_attrs: Vec<_> = attrs::stmt_attrs(st)
            .iter()
            .filter_map(|a| attrs::directive_of(a).map(|k| (k, a)))
            .collect();
        for (kind, a) in &acc_attrs {
            if *kind != DirectiveKind::Loop {
                // An atomic, a nested construct: not a reduction update; its own checks apply.
                return;
            }
            if gang_partitioned(a) {
                return;
            }
        }
        match st {
            Stmt::Expr(e, semi) => match self.update(e) {
                Ok(true) => {
                    let gangs = &self.gangs;
                    let update = quote!(#e #semi);
                    let repeated: Expr = syn::parse_quote! {
                        for __acc_gang in 0..#gangs { #update }
                    };
                    *st = Stmt::Expr(repeated, None);
                }
                Ok(false) => self.expr(e),
                Err(u) => self.read_error(u),
            },
            Stmt::Local(l) => {
                if let Some(init) = &l.init {
                    self.no_reads(&init.expr);
                    if let Some((_, e)) = &init.diverge {
                        self.no_reads(e);
                    }
                }
            }
            Stmt::Macro(_) | Stmt::Item(_) => {}
        }
    }

    /// Descends into the blocks of control flow, checking the rest for reads.
    fn expr(&mut self, e: &mut Expr) {
        match e {
            Expr::ForLoop(f) => {
                self.no_reads(&f.expr);
                self.stmts(&mut f.body.stmts);
            }
            Expr::While(w) => {
                self.no_reads(&w.cond);
                self.stmts(&mut w.body.stmts);
            }
            Expr::Loop(l) => self.stmts(&mut l.body.stmts),
            Expr::Block(b) => self.stmts(&mut b.block.stmts),
            Expr::Unsafe(b) => self.stmts(&mut b.block.stmts),
            Expr::If(i) => {
                self.no_reads(&i.cond);
                self.stmts(&mut i.then_branch.stmts);
                if let Some((_, other)) = &mut i.else_branch {
                    self.expr(other);
                }
            }
            other => self.no_reads(other),
        }
    }

    /// Whether `e` is an update of a reduction variable with its operator (`Ok(true)`), does
    /// not touch one (`Ok(false)`), or uses one otherwise (the span of that use).
    fn update(&self, e: &Expr) -> Result<bool, Use> {
        if matches!(
            e,
            Expr::ForLoop(_)
                | Expr::While(_)
                | Expr::Loop(_)
                | Expr::Block(_)
                | Expr::Unsafe(_)
                | Expr::If(_)
        ) {
            // Control flow: `expr` looks inside.
            return Ok(false);
        }
        let Some(a) = assignment(e) else {
            return self.untouched(e);
        };
        let Some((op, name)) = self.target(a.target) else {
            return self.untouched(e);
        };
        let here = (span_of(e), name.to_string());
        // The target's index (`hist[k] += 1`) may not read a reduction variable either.
        if let Expr::Index(ix) = strip(a.target) {
            self.untouched(&ix.index)?;
        }
        if a.op == Some(op) && self.untouched(a.operand).is_ok() {
            Ok(true)
        } else {
            Err(here)
        }
    }

    /// The reduction variable `e` is (`s`) or indexes (`s[k]`), with its operator.
    fn target(&self, e: &Expr) -> Option<(RedOp, &Ident)> {
        let base = match strip(e) {
            Expr::Index(ix) => strip(&ix.expr),
            other => other,
        };
        let Expr::Path(p) = base else { return None };
        let id = p.path.get_ident()?;
        self.vars
            .iter()
            .find(|(_, v)| v == id)
            .map(|(op, v)| (*op, v))
    }

    /// `Ok(false)` when `e` does not mention a reduction variable, else the mention's span.
    fn untouched(&self, e: &Expr) -> Result<bool, Use> {
        let mut find = Mentions {
            vars: self.vars,
            found: None,
        };
        find.visit_expr(e);
        match find.found {
            Some(u) => Err(u),
            None => Ok(false),
        }
    }

    fn no_reads(&mut self, e: &Expr) {
        if let Err(u) = self.untouched(e) {
            self.read_error(u);
        }
    }

    fn read_error(&mut self, (span, name): Use) {
        let forms = match self
            .vars
            .iter()
            .find(|(_, v)| *v == name)
            .map(|(op, _)| *op)
        {
            Some(op @ (RedOp::Max | RedOp::Min)) => {
                format!("`{name} = {name}.{}(e)`", op.spelling())
            }
            Some(op @ (RedOp::And | RedOp::Or)) => {
                format!("`{name} = {name} {} e`", op.spelling())
            }
            Some(op) => format!("`{name} {0}= e` or `{name} = {name} {0} e`", op.spelling()),
            None => "updates with its operator".into(),
        };
        self.ctx.error(span, format!(
            "`{name}` is a reduction variable of this `parallel` construct, used here in code every gang runs (outside the gang loops, with `num_gangs` given); each gang has its own copy (3.3 section 2.5.15), so acc allows only {forms} there, with `e` free of reduction variables; read it inside a gang loop or after the region"
        ));
    }
}

/// Whether a `loop` directive shares its iterations among gangs: `gang`, or no level at all
/// (in a `parallel` region acc gives the outermost such loop to gangs).
fn gang_partitioned(a: &syn::Attribute) -> bool {
    let Ok(d) = crate::directive::parsed::of_attr(DirectiveKind::Loop, a) else {
        // Reported where the directive is checked; leave its loop alone.
        return true;
    };
    d.has(C::Gang) || !(d.has(C::Worker) || d.has(C::Vector) || d.has(C::Seq))
}

fn span_of(e: &Expr) -> Span {
    syn::spanned::Spanned::span(e)
}

/// A use of a reduction variable that gang-redundant code may not make: where, and which.
type Use = (Span, String);

/// Finds the first path naming one of the reduction variables.
struct Mentions<'a> {
    vars: &'a [(RedOp, Ident)],
    found: Option<Use>,
}

impl<'ast> Visit<'ast> for Mentions<'_> {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if self.found.is_none() {
            if let Some(id) = p.path.get_ident() {
                if self.vars.iter().any(|(_, v)| v == id) {
                    self.found = Some((id.span(), id.to_string()));
                }
            }
        }
    }
}
