//! The statement forms of the `atomic` construct (3.3 section 2.12; checklist R86-R88) in Rust
//! spelling, parsed once into a [`Form`] that both the host twin (`expand::atomic`) and the
//! kernel IR (`expand::kernel`) expand. A statement that is none of these forms is an error at
//! its span: a form the spec does not allow must never compile into code that is not atomic.
//!
//! The forms (x a scalar place: `c`, `c[k]`, `p[i].f`; v a place; e an expression):
//! - `read`: `v = x;`, `let v = x;`
//! - `write`: `x = e;`
//! - `update` (or no clause): `x op= e;`, `x = x op e;`, `x = e op x;` with op one of
//!   `+ * - / & | ^ << >>` (`&& ||` on `bool`), and `x = x.max(e);`, `x = e.min(x);`,
//!   `x = f64::max(x, e);`, `x = std::cmp::min(e, x);` (Fortran's `max`/`min` intrinsics, R88)
//! - `capture`: `{ v = x; <update>; }` (v gets the old value), `{ <update>; v = x; }` (the new
//!   value), `v = { <update>; x };` (the new value), `{ v = x; x = e; }` (v gets the old value,
//!   x gets e).
//!
//! R87: e must not read x, and neither x nor e may read v. Both are checked by the variable
//! each place is rooted in (`c` for `c[k]`), as a macro cannot tell two indices apart.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{BinOp, Expr, Stmt};

use crate::directive::{ClauseName, Directive};

/// A binary operator of an atomic update (R88).
#[derive(Clone)]
pub struct Op {
    /// The Rust operator (`+`, `<<`, `&&`).
    pub token: TokenStream,
    /// The IR's `BinaryOp` variant.
    pub ir: &'static str,
}

/// How an update computes the new value of `x` from its old value and the operand.
#[derive(Clone)]
pub enum Combine {
    /// `x op= e`, `x = x op e`, or `x = e op x` where `op` commutes: old `op` e.
    Op(Op),
    /// `x = e op x` where `op` does not commute (`-`, `/`, `<<`, `>>`): e `op` old.
    Reversed(Op),
    /// `x = x.max(e)` and the other `max`/`min` forms: the user's call over `__acc_old` (the
    /// old value) and `__acc_v` (the operand).
    Call(Expr),
}

/// An update of `x` by the operand `value`.
#[derive(Clone)]
pub struct Update {
    pub x: Expr,
    /// The operand, evaluated once, before the atomic access (outer parentheses removed).
    pub value: Expr,
    pub combine: Combine,
}

impl Update {
    /// The new value as a Rust expression over `__acc_old` and `__acc_v`.
    pub fn new_value(&self) -> TokenStream {
        match &self.combine {
            Combine::Op(op) => {
                let t = &op.token;
                quote!(__acc_old #t __acc_v)
            }
            Combine::Reversed(op) => {
                let t = &op.token;
                quote!(__acc_v #t __acc_old)
            }
            Combine::Call(e) => e.to_token_stream(),
        }
    }

    /// The IR operator when the update is `old op value` with a native-able operator (shifts
    /// go through the general form, whose shift count may have another type than `x`).
    pub fn native_op(&self) -> Option<&'static str> {
        match &self.combine {
            Combine::Op(op) if !matches!(op.ir, "Shl" | "Shr") => Some(op.ir),
            _ => None,
        }
    }
}

/// Where `atomic read` puts the value.
#[derive(Clone)]
pub enum ReadInto {
    /// `v = x;`
    Place(Expr),
    /// `let v = x;`, `let v: T = x;`
    Let(Box<syn::Local>),
}

/// One atomic statement.
#[derive(Clone)]
pub enum Form {
    Read {
        v: ReadInto,
        x: Expr,
    },
    Write {
        x: Expr,
        value: Expr,
    },
    Update(Update),
    /// `v` gets the old value of `x` (`new: false`) or the new one.
    Capture {
        v: Expr,
        update: Update,
        new: bool,
    },
    /// `{ v = x; x = e; }`: `v` gets the old value of `x`, `x` gets `value`.
    Swap {
        v: Expr,
        x: Expr,
        value: Expr,
    },
}

/// The atomic clause a directive names (`update` without one, 3.3 section 2.12).
pub fn clause(dir: &Directive) -> ClauseName {
    [
        ClauseName::Read,
        ClauseName::Write,
        ClauseName::Update,
        ClauseName::Capture,
    ]
    .into_iter()
    .find(|c| dir.has(*c))
    .unwrap_or(ClauseName::Update)
}

const UPDATE_FORMS: &str =
    "`atomic update` takes `x op= e;`, `x = x op e;` or `x = e op x;` with op one of \
     + * - / & | ^ << >> (&& || on bool), or `x = x.max(e);` / `x = x.min(e);` (3.3 section 2.12)";
const READ_FORMS: &str = "`atomic read` takes `v = x;` or `let v = x;` with x a variable, an element `a[i]` or a field (3.3 section 2.12)";
const WRITE_FORMS: &str = "`atomic write` takes `x = e;` (3.3 section 2.12)";
const CAPTURE_FORMS: &str = "`atomic capture` takes `{ v = x; x op= e; }` (v gets the old value), \
     `{ x op= e; v = x; }` or `v = { x op= e; x };` (v gets the new value), or `{ v = x; x = e; }` \
     (v gets the old value, x gets e), where the update is any `atomic update` form (3.3 section 2.12)";

/// Parses the statement under `#[acc::atomic(clause)]` into its form, checking R86-R88.
pub fn parse(dir: &Directive, st: &Stmt) -> syn::Result<Form> {
    let mut st = st.clone();
    crate::directive::attrs::take_directives(&mut st);
    let span = &st;
    match clause(dir) {
        ClauseName::Read => read(&st, span),
        ClauseName::Write => match stmt_expr(&st) {
            Some(Expr::Assign(a)) => {
                let value = unparen(&a.right).clone();
                not_reading(&value, &a.left, "the value written")?;
                place(&a.left, WRITE_FORMS)?;
                Ok(Form::Write {
                    x: (*a.left).clone(),
                    value,
                })
            }
            _ => Err(syn::Error::new_spanned(span, WRITE_FORMS)),
        },
        ClauseName::Capture => capture(&st, span),
        _ => match stmt_expr(&st).map(update) {
            Some(Some(u)) => Ok(Form::Update(u?)),
            _ => Err(syn::Error::new_spanned(span, UPDATE_FORMS)),
        },
    }
}

fn stmt_expr(st: &Stmt) -> Option<&Expr> {
    match st {
        Stmt::Expr(e, _) => Some(unparen(e)),
        _ => None,
    }
}

/// `e` without outer parentheses (and invisible groups).
pub fn unparen(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => unparen(&p.expr),
        Expr::Group(g) => unparen(&g.expr),
        other => other,
    }
}

/// Whether two places are written alike (parentheses and attributes aside).
fn same(a: &Expr, b: &Expr) -> bool {
    fn text(e: &Expr) -> String {
        let mut e = unparen(e).clone();
        let mut st = Stmt::Expr(e.clone(), None);
        crate::directive::attrs::take_directives(&mut st);
        if let Stmt::Expr(x, _) = st {
            e = x;
        }
        e.to_token_stream().to_string()
    }
    text(a) == text(b)
}

/// The variable a place is rooted in (`c` for `c`, `c[k]`, `c[k].f`, `*c`).
fn root(e: &Expr) -> Option<String> {
    match unparen(e) {
        Expr::Index(i) => root(&i.expr),
        Expr::Field(f) => root(&f.base),
        Expr::Unary(u) => root(&u.expr),
        Expr::MethodCall(m) => root(&m.receiver),
        other => crate::analysis::uses::path_ident(other).map(|i| i.to_string()),
    }
}

/// `x` must be a scalar place: a variable, an element, a field (R87).
fn place(x: &Expr, forms: &str) -> syn::Result<()> {
    let ok = match unparen(x) {
        Expr::Index(i) => root(&i.expr).is_some(),
        Expr::Field(f) => root(&f.base).is_some(),
        Expr::Unary(u) => matches!(u.op, syn::UnOp::Deref(_)) && root(&u.expr).is_some(),
        other => crate::analysis::uses::path_ident(other).is_some(),
    };
    if ok {
        Ok(())
    } else {
        Err(syn::Error::new_spanned(
            x,
            format!(
                "`{}` is not a variable, an element or a field: {forms}",
                x.to_token_stream()
            ),
        ))
    }
}

fn reads(e: &Expr, var: &str) -> bool {
    crate::analysis::uses::scan_expr(e, &[])
        .vars
        .contains_key(var)
}

/// R87: `e` (what) must not access `x`'s storage, checked by the variable `x` is rooted in.
fn not_reading(e: &Expr, x: &Expr, what: &str) -> syn::Result<()> {
    match root(x) {
        Some(r) if reads(e, &r) => Err(syn::Error::new_spanned(
            e,
            format!(
                "in an atomic access of `{x}`, {what} must not read `{r}`: only the one access to `{x}` is atomic, \
                 a second read of it would race (3.3 section 2.12)",
                x = crate::directive::parse::tidy(x.to_token_stream()),
            ),
        )),
        _ => Ok(()),
    }
}

/// R87: neither `x` nor the operand may access `v`, and `v` may not be `x`.
fn v_apart(v: &Expr, x: &Expr, value: Option<&Expr>) -> syn::Result<()> {
    place(v, CAPTURE_FORMS)?;
    let Some(rv) = root(v) else { return Ok(()) };
    let msg = |what: &str| {
        format!(
            "in an atomic capture into `{}`, {what} must not access `{rv}` (3.3 section 2.12)",
            crate::directive::parse::tidy(v.to_token_stream())
        )
    };
    if reads(x, &rv) {
        return Err(syn::Error::new_spanned(x, msg("the atomic place")));
    }
    if let Some(e) = value.filter(|e| reads(e, &rv)) {
        return Err(syn::Error::new_spanned(e, msg("the operand")));
    }
    Ok(())
}

fn compound_op(op: &BinOp) -> Option<Op> {
    let (token, ir) = match op {
        BinOp::AddAssign(_) => (quote!(+), "Add"),
        BinOp::SubAssign(_) => (quote!(-), "Sub"),
        BinOp::MulAssign(_) => (quote!(*), "Mul"),
        BinOp::DivAssign(_) => (quote!(/), "Div"),
        BinOp::BitAndAssign(_) => (quote!(&), "BitAnd"),
        BinOp::BitOrAssign(_) => (quote!(|), "BitOr"),
        BinOp::BitXorAssign(_) => (quote!(^), "BitXor"),
        BinOp::ShlAssign(_) => (quote!(<<), "Shl"),
        BinOp::ShrAssign(_) => (quote!(>>), "Shr"),
        _ => return None,
    };
    Some(Op { token, ir })
}

/// A plain binary operator of an update and whether it commutes.
fn plain_op(op: &BinOp) -> Option<(Op, bool)> {
    let (token, ir, commutes) = match op {
        BinOp::Add(_) => (quote!(+), "Add", true),
        BinOp::Sub(_) => (quote!(-), "Sub", false),
        BinOp::Mul(_) => (quote!(*), "Mul", true),
        BinOp::Div(_) => (quote!(/), "Div", false),
        BinOp::BitAnd(_) => (quote!(&), "BitAnd", true),
        BinOp::BitOr(_) => (quote!(|), "BitOr", true),
        BinOp::BitXor(_) => (quote!(^), "BitXor", true),
        BinOp::Shl(_) => (quote!(<<), "Shl", false),
        BinOp::Shr(_) => (quote!(>>), "Shr", false),
        BinOp::And(_) => (quote!(&&), "And", true),
        BinOp::Or(_) => (quote!(||), "Or", true),
        _ => return None,
    };
    Some((Op { token, ir }, commutes))
}

fn ident(name: &str) -> Expr {
    let id = syn::Ident::new(name, Span::call_site());
    syn::parse_quote!(#id)
}

/// `x = x.max(e)`, `x = e.max(x)`, `x = P::max(x, e)`, `x = P::max(e, x)` (and `min`): the
/// operand and the call over `__acc_old` and `__acc_v`.
fn min_max(x: &Expr, rhs: &Expr) -> Option<(Expr, Expr)> {
    let (old, v) = (ident("__acc_old"), ident("__acc_v"));
    match rhs {
        Expr::MethodCall(m)
            if (m.method == "max" || m.method == "min")
                && m.args.len() == 1
                && m.turbofish.is_none() =>
        {
            let method = &m.method;
            let arg = &m.args[0];
            if same(x, &m.receiver) {
                Some((unparen(arg).clone(), syn::parse_quote!(#old.#method(#v))))
            } else if same(x, arg) {
                Some((
                    unparen(&m.receiver).clone(),
                    syn::parse_quote!(#v.#method(#old)),
                ))
            } else {
                None
            }
        }
        Expr::Call(c) if c.args.len() == 2 => {
            let Expr::Path(p) = unparen(&c.func) else {
                return None;
            };
            let last = p.path.segments.last()?;
            if !(last.ident == "max" || last.ident == "min") || p.path.segments.len() < 2 {
                return None;
            }
            let func = &c.func;
            let (a, b) = (&c.args[0], &c.args[1]);
            if same(x, a) {
                Some((unparen(b).clone(), syn::parse_quote!(#func(#old, #v))))
            } else if same(x, b) {
                Some((unparen(a).clone(), syn::parse_quote!(#func(#v, #old))))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// An update form, `None` when `e` has none of their shapes.
fn update(e: &Expr) -> Option<syn::Result<Update>> {
    let u = match e {
        Expr::Binary(b) => {
            let Some(op) = compound_op(&b.op) else {
                if matches!(b.op, BinOp::RemAssign(_)) {
                    return Some(Err(syn::Error::new_spanned(
                        b.op,
                        "`%` is not an operator of `atomic update` (3.3 section 2.12 lists + * - / & | ^ << >>)",
                    )));
                }
                return None;
            };
            Update {
                x: (*b.left).clone(),
                value: unparen(&b.right).clone(),
                combine: Combine::Op(op),
            }
        }
        Expr::Assign(a) => {
            let rhs = unparen(&a.right);
            if let Some((value, call)) = min_max(&a.left, rhs) {
                Update {
                    x: (*a.left).clone(),
                    value,
                    combine: Combine::Call(call),
                }
            } else {
                let Expr::Binary(b) = rhs else { return None };
                if matches!(b.op, BinOp::Rem(_))
                    && (same(&a.left, &b.left) || same(&a.left, &b.right))
                {
                    return Some(Err(syn::Error::new_spanned(
                        b.op,
                        "`%` is not an operator of `atomic update` (3.3 section 2.12 lists + * - / & | ^ << >>)",
                    )));
                }
                let (op, commutes) = plain_op(&b.op)?;
                if same(&a.left, &b.left) {
                    Update {
                        x: (*a.left).clone(),
                        value: unparen(&b.right).clone(),
                        combine: Combine::Op(op),
                    }
                } else if same(&a.left, &b.right) {
                    Update {
                        x: (*a.left).clone(),
                        value: unparen(&b.left).clone(),
                        combine: if commutes {
                            Combine::Op(op)
                        } else {
                            Combine::Reversed(op)
                        },
                    }
                } else {
                    return None;
                }
            }
        }
        _ => return None,
    };
    Some(
        place(&u.x, UPDATE_FORMS)
            .and_then(|()| not_reading(&u.value, &u.x, "the other operand"))
            .map(|()| u),
    )
}

fn read(st: &Stmt, span: &Stmt) -> syn::Result<Form> {
    match st {
        Stmt::Local(l) => {
            let Some(init) = l.init.as_ref().filter(|i| i.diverge.is_none()) else {
                return Err(syn::Error::new_spanned(span, READ_FORMS));
            };
            let x = unparen(&init.expr).clone();
            place(&x, READ_FORMS)?;
            Ok(Form::Read {
                v: ReadInto::Let(Box::new(l.clone())),
                x,
            })
        }
        _ => match stmt_expr(st) {
            Some(Expr::Assign(a)) => {
                let x = unparen(&a.right).clone();
                place(&x, READ_FORMS)?;
                v_apart(&a.left, &x, None)?;
                Ok(Form::Read {
                    v: ReadInto::Place((*a.left).clone()),
                    x,
                })
            }
            _ => Err(syn::Error::new_spanned(span, READ_FORMS)),
        },
    }
}

/// `v = x` where `x` is the given place.
fn read_of<'a>(e: &'a Expr, x: &Expr) -> Option<&'a Expr> {
    match e {
        Expr::Assign(a) if same(&a.right, x) => Some(&a.left),
        _ => None,
    }
}

fn capture(st: &Stmt, span: &Stmt) -> syn::Result<Form> {
    let err = || syn::Error::new_spanned(span, CAPTURE_FORMS);
    match stmt_expr(st) {
        // `v = { x op= e; x };`
        Some(Expr::Assign(a)) => {
            let Expr::Block(b) = unparen(&a.right) else {
                return Err(err());
            };
            let [Stmt::Expr(first, Some(_)), Stmt::Expr(last, None)] = b.block.stmts.as_slice()
            else {
                return Err(err());
            };
            let u = update(unparen(first)).ok_or_else(err)??;
            if !same(last, &u.x) {
                return Err(err());
            }
            v_apart(&a.left, &u.x, Some(&u.value))?;
            Ok(Form::Capture {
                v: (*a.left).clone(),
                update: u,
                new: true,
            })
        }
        Some(Expr::Block(b)) => {
            let [s1, s2] = b.block.stmts.as_slice() else {
                return Err(err());
            };
            let (Some(e1), Some(e2)) = (stmt_expr(s1), stmt_expr(s2)) else {
                return Err(err());
            };
            // `{ x op= e; v = x; }`
            if let Some(u) = update(e1) {
                let u = u?;
                let v = read_of(e2, &u.x).ok_or_else(err)?;
                v_apart(v, &u.x, Some(&u.value))?;
                return Ok(Form::Capture {
                    v: v.clone(),
                    update: u,
                    new: true,
                });
            }
            // `{ v = x; <update> }` or `{ v = x; x = e; }`
            let Expr::Assign(first) = e1 else {
                return Err(err());
            };
            let x = unparen(&first.right);
            let v = &first.left;
            if let Some(u) = update(e2) {
                let u = u?;
                if !same(&u.x, x) {
                    return Err(err());
                }
                v_apart(v, &u.x, Some(&u.value))?;
                return Ok(Form::Capture {
                    v: (**v).clone(),
                    update: u,
                    new: false,
                });
            }
            match e2 {
                Expr::Assign(w) if same(&w.left, x) => {
                    let value = unparen(&w.right).clone();
                    place(x, CAPTURE_FORMS)?;
                    if let Some(r) = root(x).filter(|r| reads(&value, r)) {
                        return Err(syn::Error::new_spanned(
                            &w.right,
                            format!(
                                "in `atomic capture` `{{ v = x; x = e; }}`, e must not read `{r}`: \
                                 only the one access to `{x}` is atomic. An update of `{x}` must be one of \
                                 `x op= e`, `x = x op e`, `x = e op x`, `x = x.max(e)` (3.3 section 2.12)",
                                x = crate::directive::parse::tidy(x.to_token_stream()),
                            ),
                        ));
                    }
                    v_apart(v, x, Some(&value))?;
                    Ok(Form::Swap {
                        v: (**v).clone(),
                        x: x.clone(),
                        value,
                    })
                }
                _ => Err(err()),
            }
        }
        _ => Err(err()),
    }
}
