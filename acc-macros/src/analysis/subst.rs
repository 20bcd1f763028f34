//! Replaces the free uses of some variables in a body by other expressions (the shared views a
//! parallel loop's threads write through), leaving uses shadowed by local bindings alone.

use std::collections::{HashMap, HashSet};

use syn::visit_mut::{self, VisitMut};
use syn::{Expr, Pat, Stmt};

use super::bindings::pat_bindings;
use super::uses::path_ident;

/// Substitutes `map[name]` for every free use of `name` in `stmts`.
pub fn substitute(stmts: &mut [Stmt], map: &HashMap<String, Expr>) {
    if map.is_empty() {
        return;
    }
    let mut s = Subst {
        map,
        scopes: vec![HashSet::new()],
    };
    for st in stmts {
        s.visit_stmt_mut(st);
    }
}

struct Subst<'a> {
    map: &'a HashMap<String, Expr>,
    scopes: Vec<HashSet<String>>,
}

impl Subst<'_> {
    fn bind(&mut self, pat: &Pat) {
        for (n, _) in pat_bindings(pat, false) {
            self.scopes.last_mut().expect("a scope").insert(n);
        }
    }
    fn replacement(&self, e: &Expr) -> Option<Expr> {
        let id = path_ident(e)?.to_string();
        if self.scopes.iter().any(|s| s.contains(&id)) {
            return None;
        }
        self.map.get(&id).cloned()
    }
}

impl VisitMut for Subst<'_> {
    fn visit_block_mut(&mut self, b: &mut syn::Block) {
        self.scopes.push(HashSet::new());
        for st in &mut b.stmts {
            self.visit_stmt_mut(st);
        }
        self.scopes.pop();
    }

    fn visit_stmt_mut(&mut self, st: &mut Stmt) {
        match st {
            Stmt::Local(l) => {
                if let Some(init) = &mut l.init {
                    self.visit_expr_mut(&mut init.expr);
                    if let Some((_, d)) = &mut init.diverge {
                        self.visit_expr_mut(d);
                    }
                }
                let pat = l.pat.clone();
                self.bind(&pat);
            }
            Stmt::Item(_) => {}
            other => visit_mut::visit_stmt_mut(self, other),
        }
    }

    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Some(r) = self.replacement(e) {
            *e = r;
            return;
        }
        match e {
            Expr::ForLoop(f) => {
                self.visit_expr_mut(&mut f.expr);
                self.scopes.push(HashSet::new());
                let pat = (*f.pat).clone();
                self.bind(&pat);
                self.visit_block_mut(&mut f.body);
                self.scopes.pop();
            }
            Expr::Closure(c) => {
                self.scopes.push(HashSet::new());
                for p in c.inputs.clone().iter() {
                    self.bind(p);
                }
                self.visit_expr_mut(&mut c.body);
                self.scopes.pop();
            }
            Expr::If(i) => {
                self.scopes.push(HashSet::new());
                self.visit_expr_mut(&mut i.cond);
                self.visit_block_mut(&mut i.then_branch);
                self.scopes.pop();
                if let Some((_, els)) = &mut i.else_branch {
                    self.visit_expr_mut(els);
                }
            }
            Expr::While(w) => {
                self.scopes.push(HashSet::new());
                self.visit_expr_mut(&mut w.cond);
                self.visit_block_mut(&mut w.body);
                self.scopes.pop();
            }
            Expr::Let(l) => {
                self.visit_expr_mut(&mut l.expr);
                let pat = (*l.pat).clone();
                self.bind(&pat);
            }
            other => visit_mut::visit_expr_mut(self, other),
        }
    }

    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        self.scopes.push(HashSet::new());
        let pat = arm.pat.clone();
        self.bind(&pat);
        if let Some((_, g)) = &mut arm.guard {
            self.visit_expr_mut(g);
        }
        self.visit_expr_mut(&mut arm.body);
        self.scopes.pop();
    }

    fn visit_field_value_mut(&mut self, fv: &mut syn::FieldValue) {
        // Shorthand `S { x }` must become `S { x: <replacement> }`.
        if fv.colon_token.is_none() {
            if let Some(r) = self.replacement(&fv.expr) {
                fv.colon_token = Some(Default::default());
                fv.expr = r;
                return;
            }
        }
        self.visit_expr_mut(&mut fv.expr);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
