//! Leaving a data region early: `return`, `?`, and `break`/`continue` to a loop outside the
//! region leave the region first (3.3 section 2.6.5: the data lifetime ends "on exit from the
//! region", whichever way it is left), so `copy`/`copyout` data is copied out on every path.
//! The exit borrows the clause variables mutably, which a guard's `Drop` could not do.

use proc_macro2::TokenStream;
use syn::visit_mut::{self, VisitMut};
use syn::{parse_quote, Expr};

/// `body` (a block) with `exit` run before every way out of it other than its end.
pub fn leave_first(body: TokenStream, exit: &TokenStream) -> TokenStream {
    let Ok(mut expr) = syn::parse2::<Expr>(body.clone()) else {
        return body;
    };
    let exit: syn::Block = match syn::parse2(exit.clone()) {
        Ok(b) => b,
        Err(_) => return body,
    };
    let mut r = Rewriter {
        exit,
        labels: Vec::new(),
    };
    // The body itself is a block: its own label (if any) is inside.
    if let Expr::Block(b) = &mut expr {
        visit_mut::visit_block_mut(&mut r, &mut b.block);
    } else {
        r.visit_expr_mut(&mut expr);
    }
    quote::quote!(#expr)
}

struct Rewriter {
    exit: syn::Block,
    /// Enclosing loops and labeled blocks inside the region: `Some("")` for an unlabeled loop,
    /// `Some(name)` for a labeled loop, `Some("block:name")` for a labeled block, `None` for
    /// a closure or async block (nothing in it leaves the region).
    labels: Vec<Option<String>>,
}

impl Rewriter {
    fn in_closure(&self) -> bool {
        self.labels.iter().any(|l| l.is_none())
    }

    fn leaves(&self, label: Option<&syn::Lifetime>) -> bool {
        if self.in_closure() {
            return false;
        }
        match label {
            None => !self
                .labels
                .iter()
                .any(|l| l.as_deref().is_some_and(|s| !s.starts_with("block:"))),
            Some(l) => {
                let n = l.ident.to_string();
                let block = format!("block:{n}");
                !self.labels.iter().any(|x| {
                    x.as_deref() == Some(n.as_str()) || x.as_deref() == Some(block.as_str())
                })
            }
        }
    }

    fn in_loop(&mut self, label: Option<&syn::Label>, f: impl FnOnce(&mut Self)) {
        self.labels.push(Some(
            label.map_or(String::new(), |l| l.name.ident.to_string()),
        ));
        f(self);
        self.labels.pop();
    }
}

impl VisitMut for Rewriter {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        match e {
            Expr::Closure(_) | Expr::Async(_) => {
                self.labels.push(None);
                visit_mut::visit_expr_mut(self, e);
                self.labels.pop();
            }
            Expr::ForLoop(l) => {
                self.visit_expr_mut(&mut l.expr);
                let label = l.label.clone();
                self.in_loop(label.as_ref(), |r| r.visit_block_mut(&mut l.body));
            }
            Expr::While(l) => {
                self.visit_expr_mut(&mut l.cond);
                let label = l.label.clone();
                self.in_loop(label.as_ref(), |r| r.visit_block_mut(&mut l.body));
            }
            Expr::Loop(l) => {
                let label = l.label.clone();
                self.in_loop(label.as_ref(), |r| r.visit_block_mut(&mut l.body));
            }
            Expr::Block(b) if b.label.is_some() => {
                let name = b.label.as_ref().map(|l| format!("block:{}", l.name.ident));
                self.labels.push(name);
                self.visit_block_mut(&mut b.block);
                self.labels.pop();
            }
            Expr::Return(r) => {
                if let Some(v) = &mut r.expr {
                    self.visit_expr_mut(v);
                }
                if self.in_closure() {
                    return;
                }
                let exit = &self.exit;
                *e = match r.expr.take() {
                    Some(v) => parse_quote!(return { let __acc_leaving = #v; #exit __acc_leaving }),
                    None => parse_quote!({ #exit return }),
                };
            }
            Expr::Try(t) => {
                self.visit_expr_mut(&mut t.expr);
                if self.in_closure() {
                    return;
                }
                let (v, exit) = (&t.expr, &self.exit);
                *e = parse_quote!(match ::acc::__rt::TryLeave::split(#v) {
                    ::core::result::Result::Ok(__acc_v) => __acc_v,
                    ::core::result::Result::Err(__acc_residual) => {
                        #exit
                        match __acc_residual? {}
                    }
                });
            }
            Expr::Break(b) => {
                if let Some(v) = &mut b.expr {
                    self.visit_expr_mut(v);
                }
                if !self.leaves(b.label.as_ref()) {
                    return;
                }
                let (label, exit) = (&b.label, &self.exit);
                *e = match b.expr.take() {
                    Some(v) => {
                        parse_quote!({ let __acc_leaving = #v; #exit break #label __acc_leaving })
                    }
                    None => parse_quote!({ #exit break #label }),
                };
            }
            Expr::Continue(c) => {
                if !self.leaves(c.label.as_ref()) {
                    return;
                }
                let (label, exit) = (&c.label, &self.exit);
                *e = parse_quote!({ #exit continue #label });
            }
            _ => visit_mut::visit_expr_mut(self, e),
        }
    }

    // Nested functions and other items are not part of the region's control flow.
    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite(body: &str) -> String {
        let exit = quote::quote!({
            exit();
        });
        leave_first(body.parse().unwrap(), &exit)
            .to_string()
            .replace(' ', "")
    }

    #[test]
    fn every_way_out_leaves_first_and_inner_ones_do_not() {
        let out = rewrite("{ if a { return 1; } let x = f()?; for i in v { if i { break; } continue; } loop { break 'outer; } || { return 2; }; }");
        assert!(
            out.contains("return{let__acc_leaving=1;{exit();}__acc_leaving}"),
            "{out}"
        );
        assert!(out.contains("::acc::__rt::TryLeave::split(f())"), "{out}");
        assert!(
            out.contains("ifi{break;}continue;"),
            "loops inside the region are left alone: {out}"
        );
        assert!(out.contains("{{exit();}break'outer}"), "{out}");
        assert!(
            out.contains("||{return2;}"),
            "closures are left alone: {out}"
        );
    }

    #[test]
    fn a_break_out_of_the_region_leaves_it() {
        let out = rewrite("{ if done { break; } }");
        assert!(out.contains("{{exit();}break}"), "{out}");
    }
}
