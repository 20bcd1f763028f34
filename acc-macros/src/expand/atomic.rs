//! The `atomic` construct (3.3 section 2.12): a statement, or a block of two for `capture`,
//! rewritten into calls of `::acc::__rt::atomic` that are atomic across the threads running the
//! region. The address of `x` is taken with `&raw` outside any `unsafe` block, so the user's
//! expressions stay in safe code.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, Stmt};

use super::{expr_stmt, Ctx};
use crate::directive::{ClauseName, Directive};

const FORMS: &str =
    "`atomic update` takes `x op= expr`, `x = x op expr` or `x = expr op x` with op one of \
     + * - / & | ^ << >> (or && || on bool), not % (3.3 section 2.12)";

/// The operator token of a compound assignment (`+=` gives `+`). `%` is not among the
/// operators 3.3 section 2.12 lists (R88), nor is any overloaded operator: the target's type is
/// an atomic scalar (checked through `AtomicScalar`).
fn compound_op(op: &BinOp) -> Option<TokenStream> {
    Some(match op {
        BinOp::AddAssign(_) => quote!(+),
        BinOp::SubAssign(_) => quote!(-),
        BinOp::MulAssign(_) => quote!(*),
        BinOp::DivAssign(_) => quote!(/),
        BinOp::BitAndAssign(_) => quote!(&),
        BinOp::BitOrAssign(_) => quote!(|),
        BinOp::BitXorAssign(_) => quote!(^),
        BinOp::ShlAssign(_) => quote!(<<),
        BinOp::ShrAssign(_) => quote!(>>),
        _ => return None,
    })
}

fn plain_op(op: &BinOp) -> Option<TokenStream> {
    Some(match op {
        BinOp::Add(_) => quote!(+),
        BinOp::Sub(_) => quote!(-),
        BinOp::Mul(_) => quote!(*),
        BinOp::Div(_) => quote!(/),
        BinOp::BitAnd(_) => quote!(&),
        BinOp::BitOr(_) => quote!(|),
        BinOp::BitXor(_) => quote!(^),
        BinOp::Shl(_) => quote!(<<),
        BinOp::Shr(_) => quote!(>>),
        BinOp::And(_) => quote!(&&),
        BinOp::Or(_) => quote!(||),
        _ => return None,
    })
}

fn same(a: &Expr, b: &Expr) -> bool {
    a.to_token_stream().to_string() == b.to_token_stream().to_string()
}

/// An update `x op= e` / `x = x op e` / `x = e op x`: the target and a closure body over
/// `__acc_old` and `__acc_v`.
struct Update {
    target: Expr,
    value: Expr,
    apply: TokenStream,
}

fn as_update(e: &Expr) -> Option<Update> {
    match e {
        Expr::Binary(b) => {
            let op = compound_op(&b.op)?;
            Some(Update {
                target: (*b.left).clone(),
                value: (*b.right).clone(),
                apply: quote!(__acc_old #op __acc_v),
            })
        }
        Expr::Assign(a) => {
            let Expr::Binary(rhs) = strip_parens(&a.right) else {
                return None;
            };
            let op = plain_op(&rhs.op)?;
            if same(&a.left, &rhs.left) {
                Some(Update {
                    target: (*a.left).clone(),
                    value: (*rhs.right).clone(),
                    apply: quote!(__acc_old #op __acc_v),
                })
            } else if same(&a.left, &rhs.right) {
                Some(Update {
                    target: (*a.left).clone(),
                    value: (*rhs.left).clone(),
                    apply: quote!(__acc_v #op __acc_old),
                })
            } else {
                None
            }
        }
        _ => None,
    }
}

fn strip_parens(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip_parens(&p.expr),
        other => other,
    }
}

fn update_call(u: &Update, span: Span) -> TokenStream {
    let (target, value, apply) = (&u.target, &u.value, &u.apply);
    quote_spanned! {span=>
        {
            let __acc_v = #value;
            let __acc_p = &raw mut #target;
            unsafe { ::acc::__rt::atomic::update(__acc_p, |__acc_old| #apply) }
        }
    }
}

fn stmt_expr(st: &Stmt) -> Option<&Expr> {
    match st {
        Stmt::Expr(e, _) => Some(e),
        _ => None,
    }
}

/// The variable an atomic target names (`x` in `x`, `x[i]`, `x.f`).
fn root(e: &Expr) -> Option<String> {
    match e {
        Expr::Index(i) => root(&i.expr),
        Expr::Field(f) => root(&f.base),
        Expr::Paren(p) => root(&p.expr),
        Expr::Unary(u) => root(&u.expr),
        other => crate::analysis::uses::path_ident(other).map(|i| i.to_string()),
    }
}

/// 3.3 section 2.12: in `x op= expr`, `expr` must not access `x` (R87).
fn check_operand(ctx: &mut Ctx, target: &Expr, value: &Expr) {
    let Some(x) = root(target) else { return };
    if crate::analysis::uses::scan_expr(value, &[])
        .vars
        .contains_key(&x)
    {
        ctx.error_spanned(value, format!(
            "in an atomic update of `{x}`, the other operand must not read `{x}`: only one access to it is atomic (3.3 section 2.12)"
        ));
    }
}

/// Expands `#[acc::atomic(..)]` on `st`.
pub fn expand_atomic(ctx: &mut Ctx, dir: &Directive, st: Stmt) -> Stmt {
    let span = st.span();
    if let Some(u) = stmt_expr(&st).and_then(as_update) {
        check_operand(ctx, &u.target, &u.value);
    }
    let clause = [
        ClauseName::Read,
        ClauseName::Write,
        ClauseName::Update,
        ClauseName::Capture,
    ]
    .into_iter()
    .find(|c| dir.has(*c))
    .unwrap_or(ClauseName::Update);
    let out = match clause {
        ClauseName::Read => read(&st, span),
        ClauseName::Write => write(&st, span),
        ClauseName::Update => stmt_expr(&st)
            .and_then(as_update)
            .map(|u| {
                let call = update_call(&u, span);
                quote!(#call;)
            })
            .ok_or(FORMS),
        _ => capture(&st, span),
    };
    match out {
        Ok(ts) if matches!(st, Stmt::Local(_)) => {
            syn::parse2(ts.clone()).unwrap_or_else(|_| expr_stmt(ts))
        }
        Ok(ts) => expr_stmt(ts),
        Err(msg) => {
            ctx.error(span, msg);
            st
        }
    }
}

fn read(st: &Stmt, span: Span) -> Result<TokenStream, &'static str> {
    const MSG: &str = "`atomic read` takes `v = x;` or `let v = x;` (3.3 section 2.12)";
    match st {
        Stmt::Expr(Expr::Assign(a), _) => {
            let (v, x) = (&a.left, &a.right);
            Ok(
                quote_spanned!(span=> #v = { let __acc_p = &raw const #x; unsafe { ::acc::__rt::atomic::load(__acc_p) } };),
            )
        }
        Stmt::Local(l) => {
            let Some(init) = &l.init else { return Err(MSG) };
            let (pat, x) = (&l.pat, &init.expr);
            // The binding must outlive the generated block: declare it, then assign.
            Ok(
                quote_spanned!(span=> let #pat = { let __acc_p = &raw const #x; unsafe { ::acc::__rt::atomic::load(__acc_p) } };),
            )
        }
        _ => Err(MSG),
    }
}

fn write(st: &Stmt, span: Span) -> Result<TokenStream, &'static str> {
    match stmt_expr(st) {
        Some(Expr::Assign(a)) => {
            let (x, e) = (&a.left, &a.right);
            Ok(
                quote_spanned!(span=> { let __acc_v = #e; let __acc_p = &raw mut #x; unsafe { ::acc::__rt::atomic::store(__acc_p, __acc_v) } };),
            )
        }
        _ => Err("`atomic write` takes `x = expr;` (3.3 section 2.12)"),
    }
}

fn capture(st: &Stmt, span: Span) -> Result<TokenStream, &'static str> {
    const MSG: &str = "`atomic capture` takes a block of two statements: `{ v = x; x op= e; }` (v gets the old value), \
         `{ x op= e; v = x; }` (v gets the new value) or `{ v = x; x = e; }` (swap) (3.3 section 2.12)";
    let Some(Expr::Block(b)) = stmt_expr(st) else {
        return Err(MSG);
    };
    let [s1, s2] = b.block.stmts.as_slice() else {
        return Err(MSG);
    };
    let (Some(e1), Some(e2)) = (stmt_expr(s1), stmt_expr(s2)) else {
        return Err(MSG);
    };
    // `v = x; x op= e;` or `v = x; x = e;`
    if let Expr::Assign(read) = e1 {
        if let Some(u) = as_update(e2) {
            if same(&read.right, &u.target) {
                let v = &read.left;
                let call = update_call(&u, span);
                return Ok(quote!(#v = #call.0;));
            }
        }
        if let Expr::Assign(w) = e2 {
            if same(&read.right, &w.left) {
                let (v, x, e) = (&read.left, &w.left, &w.right);
                return Ok(quote_spanned! {span=>
                    #v = {
                        let __acc_v = #e;
                        let __acc_p = &raw mut #x;
                        unsafe { ::acc::__rt::atomic::update(__acc_p, |_| __acc_v) }.0
                    };
                });
            }
        }
    }
    // `x op= e; v = x;`
    if let (Some(u), Expr::Assign(read)) = (as_update(e1), e2) {
        if same(&read.right, &u.target) {
            let v = &read.left;
            let call = update_call(&u, span);
            return Ok(quote!(#v = #call.1;));
        }
    }
    Err(MSG)
}
