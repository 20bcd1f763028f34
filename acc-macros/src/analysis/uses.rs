//! What a body does with variables it does not bind itself (its free variables), and how it
//! leaves: the facts the expansion needs to privatize, share and parallelize.

use std::collections::{BTreeMap, HashSet};

use proc_macro2::Span;
use quote::ToTokens;
use syn::visit::{self, Visit};
use syn::{BinOp, Expr, Ident, Pat, Stmt};

use super::bindings::pat_bindings;
use crate::directive::parse::tidy;

/// How a body uses one free variable.
#[derive(Clone, Debug, Default)]
pub struct VarUse {
    /// Span of the first use.
    pub span: Option<Span>,
    /// Assigned as a whole: `x = ..`, `x += ..`.
    pub assigned: bool,
    /// Written through: `x[i] = ..`, `x.f = ..`, `*x = ..`.
    pub place_written: bool,
    /// Borrowed mutably: `&mut x[..]`, `&raw mut x`.
    pub mut_borrowed: bool,
    /// Passed where it might be mutated: receiver of a method not known to only read, or a bare
    /// argument of a call.
    pub maybe_mut: bool,
    /// The target of an `atomic` statement.
    pub atomic_target: bool,
    /// Index expressions applied directly to it (`x[e]`), as text.
    pub indexes: Vec<String>,
    /// The same index expressions, as written (with their spans).
    pub index_exprs: Vec<Expr>,
    /// Used other than as `x[e]` or `x.len()`.
    pub unindexed: bool,
}

impl VarUse {
    /// Used other than as a whole-variable read or write (field access, method receiver).
    pub fn unindexed_other(&self) -> bool {
        self.place_written || self.maybe_mut
    }

    /// Written in any way, or possibly written.
    pub fn is_written(&self) -> bool {
        self.assigned
            || self.place_written
            || self.mut_borrowed
            || self.maybe_mut
            || self.atomic_target
    }
    /// Written through (not as a whole).
    pub fn is_definitely_written(&self) -> bool {
        self.assigned || self.place_written || self.mut_borrowed || self.atomic_target
    }
}

/// A body's free variables and its ways out.
#[derive(Default)]
pub struct Uses {
    pub vars: BTreeMap<String, VarUse>,
    /// `break`/`continue` that leave the body, with their spans.
    pub escapes: Vec<(Span, &'static str)>,
    /// `return` and `?` in the body, with their spans.
    pub returns: Vec<(Span, &'static str)>,
}

/// Methods of containers that only read their receiver; std's numeric methods (which take
/// their receiver by value) are the others ([`super::methods::DEVICE_METHODS`]).
const READ_ONLY_METHODS: &[&str] = &[
    "len", "is_empty", "iter", "get", "first", "last", "contains", "clone", "as_ptr",
];

/// Scans `stmts`, treating `bound` as bound outside them (loop variables of the nest).
pub fn scan_stmts(stmts: &[Stmt], bound: &[String]) -> Uses {
    let mut s = Scanner::new(bound);
    for st in stmts {
        s.visit_stmt(st);
    }
    s.uses
}

/// Scans an expression.
pub fn scan_expr(e: &Expr, bound: &[String]) -> Uses {
    let mut s = Scanner::new(bound);
    s.visit_expr(e);
    s.uses
}

struct Scanner {
    scopes: Vec<HashSet<String>>,
    labels: Vec<Option<String>>,
    uses: Uses,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum How {
    Read,
    Write,
    MutBorrow,
    MaybeMut,
    Atomic,
}

/// Whether `op` is a compound assignment (`+=`, `<<=`, ...).
pub fn is_compound(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::AddAssign(_)
            | BinOp::SubAssign(_)
            | BinOp::MulAssign(_)
            | BinOp::DivAssign(_)
            | BinOp::RemAssign(_)
            | BinOp::BitAndAssign(_)
            | BinOp::BitOrAssign(_)
            | BinOp::BitXorAssign(_)
            | BinOp::ShlAssign(_)
            | BinOp::ShrAssign(_)
    )
}

/// The single identifier a path expression names, if it is one.
pub fn path_ident(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Path(p) if p.qself.is_none() && p.path.leading_colon.is_none() => p.path.get_ident(),
        _ => None,
    }
}

/// Whether a statement carries `#[acc::atomic..]`.
pub fn is_atomic_stmt(st: &Stmt) -> bool {
    crate::directive::attrs::stmt_attrs(st).iter().any(|a| {
        crate::directive::attrs::directive_of(a) == Some(crate::directive::DirectiveKind::Atomic)
    })
}

impl Scanner {
    fn new(bound: &[String]) -> Scanner {
        Scanner {
            scopes: vec![bound.iter().cloned().collect()],
            labels: Vec::new(),
            uses: Uses::default(),
        }
    }

    fn is_local(&self, name: &str) -> bool {
        self.scopes.iter().any(|s| s.contains(name))
    }

    fn bind(&mut self, pat: &Pat) {
        let names = pat_bindings(pat, false);
        let scope = self.scopes.last_mut().expect("a scope");
        for (n, _) in names {
            scope.insert(n);
        }
    }

    fn record(&mut self, id: &Ident, how: How, direct: bool, index: Option<&Expr>) {
        let name = id.to_string();
        if self.is_local(&name) {
            return;
        }
        let u = self.uses.vars.entry(name).or_default();
        u.span.get_or_insert(id.span());
        match (how, direct) {
            (How::Write, true) => u.assigned = true,
            (How::Write, false) => u.place_written = true,
            (How::MutBorrow, _) => u.mut_borrowed = true,
            (How::MaybeMut, _) => u.maybe_mut = true,
            (How::Atomic, _) => u.atomic_target = true,
            (How::Read, _) => {}
        }
        match index {
            Some(ix) => {
                u.indexes.push(tidy(ix.to_token_stream()));
                u.index_exprs.push(ix.clone());
            }
            None if how != How::Read || direct => u.unindexed = true,
            None => {}
        }
    }

    /// A place expression used as `how`.
    fn place(&mut self, e: &Expr, how: How) {
        match e {
            Expr::Index(ix) => {
                self.visit_expr(&ix.index);
                if let Some(id) = path_ident(&ix.expr) {
                    self.record(id, how, false, Some(&ix.index));
                } else {
                    self.place(&ix.expr, how);
                }
            }
            Expr::Field(f) => {
                if let Some(id) = path_ident(&f.base) {
                    self.record(id, how, false, None);
                    if let Some(u) = self.uses.vars.get_mut(&id.to_string()) {
                        u.unindexed = true;
                    }
                } else {
                    self.place(&f.base, how);
                }
            }
            Expr::Paren(p) => self.place(&p.expr, how),
            Expr::Group(g) => self.place(&g.expr, how),
            // A destructuring assignment `(a[i], b) = ..` writes each place.
            Expr::Tuple(t) => {
                for p in &t.elems {
                    self.place(p, how);
                }
            }
            Expr::Infer(_) => {}
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                if let Some(id) = path_ident(&u.expr) {
                    self.record(id, how, false, None);
                    if let Some(v) = self.uses.vars.get_mut(&id.to_string()) {
                        v.unindexed = true;
                    }
                } else {
                    self.place(&u.expr, how);
                }
            }
            _ => match path_ident(e) {
                Some(id) => self.record(id, how, true, None),
                None => self.visit_expr(e),
            },
        }
    }

    fn atomic_stmt(&mut self, st: &Stmt) {
        // The target of every assignment in an atomic statement is accessed atomically.
        struct Targets<'a>(&'a mut Scanner);
        impl<'ast> Visit<'ast> for Targets<'_> {
            fn visit_expr(&mut self, e: &'ast Expr) {
                match e {
                    Expr::Assign(a) => {
                        self.0.place(&a.left, How::Atomic);
                        self.0.visit_expr(&a.right);
                    }
                    Expr::Binary(b) if is_compound(&b.op) => {
                        self.0.place(&b.left, How::Atomic);
                        self.0.visit_expr(&b.right);
                    }
                    other => self.0.visit_expr(other),
                }
            }
        }
        match st {
            Stmt::Expr(e, _) => Targets(self).visit_expr(e),
            Stmt::Local(l) => {
                if let Some(init) = &l.init {
                    self.visit_expr(&init.expr);
                }
                self.bind(&l.pat);
            }
            other => self.visit_stmt(other),
        }
    }
}

impl<'ast> Visit<'ast> for Scanner {
    fn visit_block(&mut self, b: &'ast syn::Block) {
        self.scopes.push(HashSet::new());
        for st in &b.stmts {
            self.visit_stmt(st);
        }
        self.scopes.pop();
    }

    fn visit_stmt(&mut self, st: &'ast Stmt) {
        if is_atomic_stmt(st) {
            return self.atomic_stmt(st);
        }
        match st {
            Stmt::Local(l) => {
                if let Some(init) = &l.init {
                    self.visit_expr(&init.expr);
                    if let Some((_, d)) = &init.diverge {
                        self.visit_expr(d);
                    }
                }
                self.bind(&l.pat);
            }
            Stmt::Item(_) => {}
            other => visit::visit_stmt(self, other),
        }
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Assign(a) => {
                self.place(&a.left, How::Write);
                self.visit_expr(&a.right);
            }
            Expr::Binary(b) if is_compound(&b.op) => {
                self.place(&b.left, How::Write);
                self.visit_expr(&b.right);
            }
            Expr::Reference(r) if r.mutability.is_some() => self.place(&r.expr, How::MutBorrow),
            Expr::RawAddr(r) if matches!(r.mutability, syn::PointerMutability::Mut(_)) => {
                self.place(&r.expr, How::MutBorrow)
            }
            Expr::MethodCall(m) => {
                let m_name = m.method.to_string();
                let how = if READ_ONLY_METHODS.contains(&m_name.as_str())
                    || super::methods::DEVICE_METHODS.contains(&m_name.as_str())
                {
                    How::Read
                } else {
                    How::MaybeMut
                };
                if m_name == "len" && path_ident(&m.receiver).is_some() {
                    // `x.len()` reads only the length: it does not count as an unindexed use.
                    let id = path_ident(&m.receiver).expect("checked");
                    if !self.is_local(&id.to_string()) {
                        let u = self.uses.vars.entry(id.to_string()).or_default();
                        u.span.get_or_insert(id.span());
                    }
                } else {
                    self.place(&m.receiver, how);
                }
                for a in &m.args {
                    self.visit_expr(a);
                }
            }
            Expr::Call(c) => {
                if path_ident(&c.func).is_none() {
                    self.visit_expr(&c.func);
                }
                // `f64::max(x, y)`, `std::cmp::min(x, y)`: std's numeric functions take
                // their arguments by value.
                let by_value = matches!(&*c.func, Expr::Path(p) if p.path.segments.len() >= 2
                && p.path.segments.last().is_some_and(|s| {
                    super::methods::DEVICE_METHODS.contains(&s.ident.to_string().as_str())
                })
                && p.path.segments.first().is_some_and(|s| {
                    matches!(s.ident.to_string().as_str(), "std" | "core" | "f32" | "f64" | "i8" | "i16"
                        | "i32" | "i64" | "isize" | "u8" | "u16" | "u32" | "u64" | "usize" | "f16" | "bf16")
                }));
                for a in &c.args {
                    if path_ident(a).is_some() && !by_value {
                        self.place(a, How::MaybeMut);
                    } else {
                        self.visit_expr(a);
                    }
                }
            }
            Expr::Index(_) => self.place(e, How::Read),
            Expr::Path(_) => {
                if let Some(id) = path_ident(e) {
                    self.record(id, How::Read, true, None);
                }
            }
            Expr::ForLoop(f) => {
                self.visit_expr(&f.expr);
                self.scopes.push(HashSet::new());
                self.bind(&f.pat);
                self.labels
                    .push(f.label.as_ref().map(|l| l.name.ident.to_string()));
                self.visit_block(&f.body);
                self.labels.pop();
                self.scopes.pop();
            }
            Expr::While(w) => {
                self.scopes.push(HashSet::new());
                self.visit_expr(&w.cond);
                self.labels
                    .push(w.label.as_ref().map(|l| l.name.ident.to_string()));
                self.visit_block(&w.body);
                self.labels.pop();
                self.scopes.pop();
            }
            Expr::Loop(l) => {
                self.labels
                    .push(l.label.as_ref().map(|l| l.name.ident.to_string()));
                self.visit_block(&l.body);
                self.labels.pop();
            }
            Expr::Let(l) => {
                self.visit_expr(&l.expr);
                self.bind(&l.pat);
            }
            Expr::If(i) => {
                self.scopes.push(HashSet::new());
                self.visit_expr(&i.cond);
                self.visit_block(&i.then_branch);
                self.scopes.pop();
                if let Some((_, els)) = &i.else_branch {
                    self.visit_expr(els);
                }
            }
            Expr::Closure(c) => {
                self.scopes.push(HashSet::new());
                for p in &c.inputs {
                    self.bind(p);
                }
                self.labels.push(Some(String::from("<closure>")));
                self.visit_expr(&c.body);
                self.labels.pop();
                self.scopes.pop();
            }
            Expr::Break(b) => {
                self.escape(b.label.as_ref(), b.break_token.span, "break");
                if let Some(v) = &b.expr {
                    self.visit_expr(v);
                }
            }
            Expr::Continue(c) => self.escape(c.label.as_ref(), c.continue_token.span, "continue"),
            Expr::Return(r) => {
                if !self.in_closure() {
                    self.uses.returns.push((r.return_token.span, "return"));
                }
                if let Some(v) = &r.expr {
                    self.visit_expr(v);
                }
            }
            Expr::Try(t) => {
                if !self.in_closure() {
                    self.uses.returns.push((t.question_token.span, "?"));
                }
                self.visit_expr(&t.expr);
            }
            Expr::Block(b) => {
                // A labeled block can be left with `break 'label`.
                if let Some(l) = &b.label {
                    self.labels.push(Some(format!("block:{}", l.name.ident)));
                    self.visit_block(&b.block);
                    self.labels.pop();
                } else {
                    self.visit_block(&b.block);
                }
            }
            Expr::Macro(_) => {}
            other => visit::visit_expr(self, other),
        }
    }

    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        self.scopes.push(HashSet::new());
        self.bind(&arm.pat);
        if let Some((_, g)) = &arm.guard {
            self.visit_expr(g);
        }
        self.visit_expr(&arm.body);
        self.scopes.pop();
    }

    fn visit_field_value(&mut self, fv: &'ast syn::FieldValue) {
        self.visit_expr(&fv.expr);
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

impl Scanner {
    fn in_closure(&self) -> bool {
        self.labels
            .iter()
            .any(|l| l.as_deref() == Some("<closure>"))
    }

    fn escape(&mut self, label: Option<&syn::Lifetime>, span: Span, what: &'static str) {
        if self.in_closure() {
            return;
        }
        let inside = match label {
            None => self
                .labels
                .iter()
                .any(|l| !l.as_deref().is_some_and(|s| s.starts_with("block:"))),
            Some(l) => {
                let n = l.ident.to_string();
                self.labels.iter().any(|x| {
                    x.as_deref() == Some(&n) || x.as_deref() == Some(&format!("block:{n}"))
                })
            }
        };
        if !inside {
            self.uses.escapes.push((span, what));
        }
    }
}
