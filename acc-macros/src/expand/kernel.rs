//! The kernel arm of a compute region: the region's body translated into calls of the kernel
//! IR builder (`::acc::__rt::kernel`), and the captured variables marshalled as the kernel's
//! arguments (DESIGN.md section 3, step 3). What the translation does not cover yet makes the
//! arm an `acc::Error` at run time naming the construct, on kernel devices only; the host and
//! multicore arms are unaffected.

use std::collections::{BTreeMap, HashMap};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::{BinOp, Expr, Ident, Lit, Pat, Stmt, UnOp};

use super::attrs;
use crate::analysis::bindings::Env;
use crate::analysis::uses::{path_ident, scan_stmts};
use crate::directive::parse::parse_directive;
use crate::directive::{
    ClauseArgs, ClauseName as C, ComputeKind, Directive, DirectiveKind, RedOp, SizeExpr,
};

/// How the kernel takes a captured variable.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cap {
    Read,
    Write,
    /// A scalar the region writes: a one-element array in device memory.
    WriteScalar,
    Reduction(RedOp),
}

#[derive(Clone)]
enum Local {
    Scalar(Ident),
    /// A private array (declared by `let t: [T; N]`, not translated yet).
    #[allow(dead_code)]
    Array(Ident),
    /// A subslice of an array, `let row = &a[i * n..(i + 1) * n];` (or `&mut`): the builder
    /// variable holding its `ArrayRef`, indexed from the subslice's start.
    View(Ident),
    /// A reference to one element, `let y = &mut a[k];` (what a loop over `a.iter_mut()`
    /// binds): a view of that element, read as `*y` or `y`, written as `*y = ..`.
    Elem(Ident),
}

struct Tr {
    /// Translating a routine's body: its captured entries are its slice parameters.
    in_routine: bool,
    /// Captured variables the body indexes: resolved to array handles once, up front.
    arrays_used: std::collections::BTreeSet<String>,
    compute: ComputeKind,
    captured: BTreeMap<String, (Cap, Ident)>,
    scopes: Vec<HashMap<String, Local>>,
    region_reductions: Vec<(RedOp, Ident)>,
    counter: usize,
    /// In a routine with an early `return`: its result local and its "returned" flag. The
    /// body runs inside a loop that `return` breaks out of, and each loop of the body passes
    /// the break on once the flag is set.
    ret: Option<(Ident, Ident)>,
}

type R<T> = Result<T, String>;

fn no<T>(what: impl Into<String>) -> R<T> {
    Err(what.into())
}

fn red_op(op: RedOp) -> TokenStream {
    let v = Ident::new(op.marker(), Span::call_site());
    quote!(::acc::__rt::kernel::ReduceOp::#v)
}

fn scalar_of(ty: &syn::Type) -> Option<TokenStream> {
    let syn::Type::Path(p) = ty else { return None };
    let id = p.path.get_ident()?.to_string();
    let v = match id.as_str() {
        "bool" => "Bool",
        "i8" => "I8",
        "i16" => "I16",
        "i32" => "I32",
        "i64" => "I64",
        "isize" => "ISize",
        "u8" => "U8",
        "u16" => "U16",
        "u32" => "U32",
        "u64" => "U64",
        "usize" => "USize",
        "f32" => "F32",
        "f64" => "F64",
        _ => return None,
    };
    let v = Ident::new(v, Span::call_site());
    Some(quote!(::acc::__rt::kernel::Scalar::#v))
}

fn suffix_scalar(suffix: &str) -> R<TokenStream> {
    if suffix.is_empty() {
        return Ok(quote!(::core::option::Option::None));
    }
    let ty: syn::Type = syn::parse_str(suffix).map_err(|_| format!("literal suffix `{suffix}`"))?;
    let s = scalar_of(&ty).ok_or_else(|| format!("literal suffix `{suffix}`"))?;
    Ok(quote!(::core::option::Option::Some(#s)))
}

/// The scalar type a `let` names (`let x: f32`), as an `Option<Scalar>` expression.
fn let_type(name: &str, ty: Option<&syn::Type>) -> R<TokenStream> {
    Ok(match ty {
        Some(t) => {
            let s = scalar_of(t).ok_or_else(|| format!("`let {name}: {}`", t.to_token_stream()))?;
            quote!(::core::option::Option::Some(#s))
        }
        None => quote!(::core::option::Option::None),
    })
}

fn bin_op(op: &BinOp) -> Option<(&'static str, bool)> {
    // (IR operator, is compound assignment)
    Some(match op {
        BinOp::Add(_) => ("Add", false),
        BinOp::Sub(_) => ("Sub", false),
        BinOp::Mul(_) => ("Mul", false),
        BinOp::Div(_) => ("Div", false),
        BinOp::Rem(_) => ("Rem", false),
        BinOp::BitAnd(_) => ("BitAnd", false),
        BinOp::BitOr(_) => ("BitOr", false),
        BinOp::BitXor(_) => ("BitXor", false),
        BinOp::Shl(_) => ("Shl", false),
        BinOp::Shr(_) => ("Shr", false),
        BinOp::Eq(_) => ("Eq", false),
        BinOp::Ne(_) => ("Ne", false),
        BinOp::Lt(_) => ("Lt", false),
        BinOp::Le(_) => ("Le", false),
        BinOp::Gt(_) => ("Gt", false),
        BinOp::Ge(_) => ("Ge", false),
        BinOp::And(_) => ("And", false),
        BinOp::Or(_) => ("Or", false),
        BinOp::AddAssign(_) => ("Add", true),
        BinOp::SubAssign(_) => ("Sub", true),
        BinOp::MulAssign(_) => ("Mul", true),
        BinOp::DivAssign(_) => ("Div", true),
        BinOp::RemAssign(_) => ("Rem", true),
        BinOp::BitAndAssign(_) => ("BitAnd", true),
        BinOp::BitOrAssign(_) => ("BitOr", true),
        BinOp::BitXorAssign(_) => ("BitXor", true),
        BinOp::ShlAssign(_) => ("Shl", true),
        BinOp::ShrAssign(_) => ("Shr", true),
        _ => return None,
    })
}

impl Tr {
    fn fresh(&mut self, base: &str) -> Ident {
        self.counter += 1;
        format_ident!("__acc_v{}_{}", self.counter, base.trim_start_matches("r#"))
    }

    fn lookup(&self, name: &str) -> Option<Local> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    fn bind(&mut self, name: String, l: Local) {
        self.scopes.last_mut().expect("a scope").insert(name, l);
    }

    /// `&a[s..e]` / `&mut a[s..e]` (any range form) as a routine argument: a subslice of the
    /// array `a`.
    fn subslice_arg(&mut self, arg: &Expr) -> R<Option<TokenStream>> {
        let Expr::Reference(r) = strip(arg) else {
            return Ok(None);
        };
        let Expr::Index(ix) = strip(&r.expr) else {
            return Ok(None);
        };
        let Expr::Range(range) = strip(&ix.index) else {
            return Ok(None);
        };
        let arr = self.array(&ix.expr)?;
        let start = match &range.start {
            Some(s) => self.expr(s)?,
            None => quote!(__acc_b.lit_int(
                0,
                ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize)
            )),
        };
        let end = match (&range.end, &range.limits) {
            (Some(e), syn::RangeLimits::HalfOpen(_)) => self.expr(e)?,
            (Some(e), syn::RangeLimits::Closed(_)) => {
                let e = self.expr(e)?;
                quote!({ let __e = #e; let __one = __acc_b.lit_int(1, ::core::option::Option::None); __acc_b.binary(::acc::__rt::kernel::BinaryOp::Add, __e, __one) })
            }
            (None, _) => quote!(__acc_b.len(__a)),
        };
        Ok(Some(
            quote!({ let __a = #arr; let __s = #start; let __e = #end; __acc_b.subslice(__a, __s, __e) }),
        ))
    }

    /// The element an element reference `y` (of `*y`) stands for: its one-element view and
    /// index 0.
    fn elem_place(&mut self, e: &Expr) -> R<(TokenStream, TokenStream)> {
        match path_ident(e).and_then(|id| self.lookup(&id.to_string())) {
            Some(Local::Elem(v)) => Ok((
                quote!(#v),
                quote!(__acc_b.lit_int(0, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize))),
            )),
            _ => no(format!("`*{}` (a dereference)", e.to_token_stream())),
        }
    }

    /// `&a[k]` / `&mut a[k]` (an index, not a range): a view of that one element.
    fn elem_ref(&mut self, e: &Expr) -> R<Option<TokenStream>> {
        let Expr::Reference(r) = strip(e) else {
            return Ok(None);
        };
        let Expr::Index(ix) = strip(&r.expr) else {
            return Ok(None);
        };
        if matches!(strip(&ix.index), Expr::Range(_)) {
            return Ok(None);
        }
        let arr = self.array(&ix.expr)?;
        let k = self.expr(&ix.index)?;
        Ok(Some(quote!({
            let __a = #arr;
            let __s = #k;
            let __k = #k;
            let __one = __acc_b.lit_int(1, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize));
            let __e = __acc_b.binary(::acc::__rt::kernel::BinaryOp::Add, __k, __one);
            __acc_b.subslice(__a, __s, __e)
        })))
    }

    /// `a.len()`: of a private array of the region (a constant), or of a captured one.
    fn array_len(&mut self, receiver: &Expr) -> R<TokenStream> {
        if let Some(Local::Array(v)) =
            path_ident(receiver).and_then(|id| self.lookup(&id.to_string()))
        {
            return Ok(quote!(__acc_b.local_len(#v)));
        }
        let a = self.array(receiver)?;
        Ok(quote!({ let __a = #a; __acc_b.len(__a) }))
    }

    fn array(&mut self, e: &Expr) -> R<TokenStream> {
        let id = path_ident(e).ok_or_else(|| format!("indexing `{}`", e.to_token_stream()))?;
        if let Some(Local::View(v)) = self.lookup(&id.to_string()) {
            return Ok(quote!(#v));
        }
        match self.captured.get(&id.to_string()) {
            Some((Cap::Read | Cap::Write, _)) => {
                self.arrays_used.insert(id.to_string());
                let a = format_ident!("__acc_a_{}", id.to_string());
                Ok(quote!(#a))
            }
            _ => no(format!("indexing `{id}`")),
        }
    }

    /// The array and index of an atomic or written place: `a[i]`, or a written scalar `x`
    /// (element 0 of its one-element array).
    fn place(&mut self, e: &Expr) -> R<(TokenStream, TokenStream)> {
        match strip(e) {
            Expr::Index(ix) => Ok((self.array(&ix.expr)?, self.expr(&ix.index)?)),
            Expr::Unary(u) if matches!(u.op, UnOp::Deref(_)) => self.elem_place(&u.expr),
            Expr::Field(f) => self.struct_field(f),
            other => {
                let id = path_ident(other)
                    .ok_or_else(|| format!("the atomic target `{}`", other.to_token_stream()))?;
                match self.captured.get(&id.to_string()) {
                    Some((Cap::WriteScalar, _)) => {
                        self.arrays_used.insert(id.to_string());
                        let a = format_ident!("__acc_a_{}", id.to_string());
                        Ok((
                            quote!(#a),
                            quote!(__acc_b.lit_int(
                                0,
                                ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize)
                            )),
                        ))
                    }
                    _ => no(format!("the atomic target `{id}`")),
                }
            }
        }
    }

    /// `let __acc_a_<name> = ..;`: the array handle of captured variable `name` (through
    /// `__acc_h`), for a body that indexes it; `missing(message)` leaves the builder where it
    /// is not an array.
    fn array_binding(&self, name: &str, missing: impl Fn(&str) -> TokenStream) -> TokenStream {
        let (_, p) = &self.captured[name];
        let a = format_ident!("__acc_a_{}", name);
        let shown = name
            .strip_prefix("__self_")
            .map_or_else(|| name.to_string(), |f| format!("self.{f}"));
        let on_missing = missing(&format!("`{shown}` is used as an array but is not one"));
        quote!(let #a = match __acc_h.array(#p) {
            ::core::option::Option::Some(a) => a,
            ::core::option::Option::None => #on_missing,
        };)
    }

    /// `a[i].f` on an array of `#[derive(DeviceCopy)]` structs: the array's view of field `f`
    /// (the IR builder finds its offset and type in the struct's layout), and the index.
    fn struct_field(&mut self, f: &syn::ExprField) -> R<(TokenStream, TokenStream)> {
        let Expr::Index(ix) = strip(&f.base) else {
            return no(format!(
                "the field access `{}` (kernels read fields of array elements, `a[i].f`)",
                short(&Expr::Field(f.clone()))
            ));
        };
        let name = match &f.member {
            syn::Member::Named(id) => id.to_string(),
            syn::Member::Unnamed(i) => i.index.to_string(),
        };
        let a = self.array(&ix.expr)?;
        let i = self.expr(&ix.index)?;
        Ok((quote!({ let __s = #a; __acc_b.field(__s, #name) }), i))
    }

    /// An `atomic` statement (3.3 section 2.12) as an IR atomic: the form `analysis::atomic`
    /// parsed (the host twin expands the same), the captured value stored into `v` as any
    /// assignment to that place.
    fn atomic(&mut self, dir: &Directive, st: &Stmt) -> R<TokenStream> {
        use crate::analysis::atomic::{parse, Form, ReadInto};
        let form = parse(dir, st).map_err(|e| e.to_string())?;
        let opt = |v: &Option<Ident>| match v {
            Some(v) => quote!(::core::option::Option::Some(#v)),
            None => quote!(::core::option::Option::None),
        };
        // A fresh local that receives a captured value, and the store of it into `v`.
        let capture = |tr: &mut Tr, v: &Expr| -> R<(Ident, TokenStream, TokenStream)> {
            let c = tr.fresh("capture");
            let decl = quote!(let #c = __acc_b.local("atomic capture", ::core::option::Option::None, ::core::option::Option::None););
            tr.scopes.push(HashMap::new());
            tr.bind("__acc_captured".into(), Local::Scalar(c.clone()));
            let store = tr.assign(v, None, &syn::parse_quote!(__acc_captured));
            tr.scopes.pop();
            Ok((c, decl, store?))
        };
        let place_op = |tr: &mut Tr,
                        x: &Expr,
                        op: TokenStream,
                        val: TokenStream,
                        old: Option<Ident>,
                        new: Option<Ident>|
         -> R<TokenStream> {
            let (arr, idx) = tr.place(x)?;
            let (old, new) = (opt(&old), opt(&new));
            Ok(quote!({ let __a = #arr; let __i = #idx; let __v = #val; __acc_b.atomic(__a, __i, #op, __v, #old, #new); }))
        };
        // An update: a native read-modify-write (`old op v`), or the new value as an
        // expression of the old one over locals `__acc_old` and `__acc_v`.
        let update = |tr: &mut Tr,
                      u: &crate::analysis::atomic::Update,
                      old: Option<Ident>,
                      new: Option<Ident>|
         -> R<TokenStream> {
            if let Some(op) = u.native_op() {
                let op = Ident::new(op, Span::call_site());
                let v = tr.expr(&u.value)?;
                return place_op(
                    tr,
                    &u.x,
                    quote!(::acc::__rt::kernel::AtomicOp::Update(::acc::__rt::kernel::BinaryOp::#op)),
                    v,
                    old,
                    new,
                );
            }
            let (o, v) = (tr.fresh("atomic_old"), tr.fresh("atomic_operand"));
            let value = tr.expr(&u.value)?;
            tr.scopes.push(HashMap::new());
            tr.bind("__acc_old".into(), Local::Scalar(o.clone()));
            tr.bind("__acc_v".into(), Local::Scalar(v.clone()));
            let new_value = syn::parse2::<Expr>(u.new_value())
                .map_err(|e| e.to_string())
                .and_then(|e| tr.expr(&e));
            tr.scopes.pop();
            let new_value = new_value?;
            let (arr, idx) = tr.place(&u.x)?;
            let (old, new) = (opt(&old), opt(&new));
            Ok(quote!({
                let #v = { let __x = #value; __acc_b.local("atomic operand", ::core::option::Option::None, ::core::option::Option::Some(__x)) };
                let #o = __acc_b.local("atomic old value", ::core::option::Option::None, ::core::option::Option::None);
                let __a = #arr;
                let __i = #idx;
                let __n = #new_value;
                __acc_b.atomic_combine(__a, __i, #o, __n, #old, #new);
            }))
        };
        let exchange = quote!(::acc::__rt::kernel::AtomicOp::Exchange);
        match form {
            Form::Update(u) => update(self, &u, None, None),
            Form::Write { x, value } => {
                let v = self.expr(&value)?;
                place_op(self, &x, exchange, v, None, None)
            }
            Form::Read { v, x } => {
                let zero = quote!(__acc_b.lit_int(0, ::core::option::Option::None));
                let read = quote!(::acc::__rt::kernel::AtomicOp::Read);
                match v {
                    ReadInto::Let(l) => {
                        let Pat::Ident(pi) = strip_type(&l.pat) else {
                            return no("this atomic read form");
                        };
                        let name = pi.ident.to_string();
                        let t = self.fresh(&name);
                        let decl = quote!(let #t = __acc_b.local(#name, ::core::option::Option::None, ::core::option::Option::None););
                        let access = place_op(self, &x, read, zero, Some(t.clone()), None)?;
                        self.bind(name, Local::Scalar(t));
                        Ok(quote!(#decl #access))
                    }
                    ReadInto::Place(v) => {
                        let (c, decl, store) = capture(self, &v)?;
                        let access = place_op(self, &x, read, zero, Some(c), None)?;
                        Ok(quote!(#decl #access #store))
                    }
                }
            }
            Form::Capture { v, update: u, new } => {
                let (c, decl, store) = capture(self, &v)?;
                let access = if new {
                    update(self, &u, None, Some(c))?
                } else {
                    update(self, &u, Some(c), None)?
                };
                Ok(quote!(#decl #access #store))
            }
            Form::Swap { v, x, value } => {
                let (c, decl, store) = capture(self, &v)?;
                let val = self.expr(&value)?;
                let access = place_op(self, &x, exchange, val, Some(c), None)?;
                Ok(quote!(#decl #access #store))
            }
        }
    }

    /// The arguments of a routine call, as the routine's builder takes them.
    fn routine_args<'e>(
        &mut self,
        call_args: impl Iterator<Item = &'e Expr>,
    ) -> R<Vec<TokenStream>> {
        let mut args = Vec::new();
        for a in call_args {
            let bare = match strip(a) {
                Expr::Reference(r) => strip(&r.expr).clone(),
                other => other.clone(),
            };
            let captured =
                path_ident(&bare).and_then(|id| self.captured.get(&id.to_string()).cloned());
            // (In a routine, the captured entries are its slice parameters, and the fields of
            // its `&self`, which may be either.)
            let self_field =
                path_ident(&bare).is_some_and(|id| id.to_string().starts_with("__self_"));
            if let (Some((Cap::Read, p)), true) = (&captured, !self.in_routine || self_field) {
                // A scalar or an array: the argument's run-time type decides.
                args.push(quote!(match __acc_h.array(#p) {
                    ::core::option::Option::Some(a) => ::acc::__rt::kernel::RoutineArg::Array(a),
                    ::core::option::Option::None => ::acc::__rt::kernel::RoutineArg::Scalar(__acc_h.scalar(__acc_b, #p)),
                }));
            } else if matches!(captured, Some((Cap::Read | Cap::Write, _)))
                || path_ident(&bare)
                    .is_some_and(|id| matches!(self.lookup(&id.to_string()), Some(Local::View(_))))
            {
                // A captured array, or a subslice binding (`let row = &a[..]`).
                let arr = self.array(&bare)?;
                args.push(quote!(::acc::__rt::kernel::RoutineArg::Array(#arr)));
            } else if let Some(view) = self.subslice_arg(a)? {
                args.push(quote!(::acc::__rt::kernel::RoutineArg::Array(#view)));
            } else if matches!(strip(a), Expr::Reference(_)) {
                return no(format!("passing `{}` to a routine", a.to_token_stream()));
            } else {
                let v = self.expr(a)?;
                args.push(quote!(::acc::__rt::kernel::RoutineArg::Scalar(#v)));
            }
        }
        Ok(args)
    }

    fn expr(&mut self, e: &Expr) -> R<TokenStream> {
        Ok(match e {
            Expr::Paren(p) => self.expr(&p.expr)?,
            Expr::Group(g) => self.expr(&g.expr)?,
            Expr::Lit(l) => match &l.lit {
                Lit::Int(i) => {
                    let v: i128 = i
                        .base10_parse()
                        .map_err(|_| "an integer literal".to_string())?;
                    let s = suffix_scalar(i.suffix())?;
                    quote!(__acc_b.lit_int(#v, #s))
                }
                Lit::Float(f) => {
                    let v: f64 = f
                        .base10_parse()
                        .map_err(|_| "a float literal".to_string())?;
                    let s = suffix_scalar(f.suffix())?;
                    quote!(__acc_b.lit_float(#v, #s))
                }
                Lit::Bool(b) => {
                    let v = b.value;
                    quote!(__acc_b.lit_bool(#v))
                }
                other => return no(format!("the literal `{}`", other.to_token_stream())),
            },
            Expr::Path(p) if p.path.segments.len() >= 2 => {
                // Constants of the scalar types (`u64::MAX`, `f64::EPSILON`,
                // `std::f64::consts::PI`): rustc computes the value, the kernel gets a literal.
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let ty = segs.iter().rev().skip(1).find_map(|s| {
                    syn::parse_str::<syn::Type>(s)
                        .ok()
                        .and_then(|t| scalar_of(&t).map(|k| (s.clone(), k)))
                });
                match ty {
                    Some(_) if segs.last().is_some_and(|l| l == "BITS") => {
                        quote!(__acc_b.lit_int((#p) as i128, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::U32)))
                    }
                    Some((name, k)) if name == "f32" || name == "f64" => {
                        quote!(__acc_b.lit_float((#p) as f64, ::core::option::Option::Some(#k)))
                    }
                    Some((name, k)) if name != "bool" => {
                        quote!(__acc_b.lit_int((#p) as i128, ::core::option::Option::Some(#k)))
                    }
                    _ => return no(format!("the path `{}`", e.to_token_stream())),
                }
            }
            Expr::Path(_) => {
                let id =
                    path_ident(e).ok_or_else(|| format!("the path `{}`", e.to_token_stream()))?;
                let name = id.to_string();
                match self.lookup(&name) {
                    Some(Local::Scalar(v)) => quote!(__acc_b.get(#v)),
                    Some(Local::Array(_)) => {
                        return no(format!("the private array `{name}` used as a value"))
                    }
                    Some(Local::View(_)) => {
                        return no(format!("the subslice `{name}` used as a value"))
                    }
                    // `x` of `&f64` in arithmetic (Rust's operators take references): the element.
                    Some(Local::Elem(v)) => {
                        quote!({ let __i = __acc_b.lit_int(0, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize)); __acc_b.load(#v, __i) })
                    }
                    None => match self.captured.get(&name) {
                        Some((Cap::Read, p)) => quote!(__acc_h.scalar(__acc_b, #p)),
                        Some((Cap::WriteScalar, _)) => {
                            let (a, i) = self.place(e)?;
                            quote!({ let __a = #a; let __i = #i; __acc_b.load(__a, __i) })
                        }
                        _ => return no(format!("the value of `{name}`")),
                    },
                }
            }
            Expr::Index(ix) => {
                let i = self.expr(&ix.index)?;
                if let Some(id) = path_ident(&ix.expr) {
                    if let Some(Local::Array(v)) = self.lookup(&id.to_string()) {
                        return Ok(quote!({ let __i = #i; __acc_b.get_elem(#v, __i) }));
                    }
                }
                let a = self.array(&ix.expr)?;
                quote!({ let __a = #a; let __i = #i; __acc_b.load(__a, __i) })
            }
            Expr::Field(f) => {
                let (a, i) = self.struct_field(f)?;
                quote!({ let __a = #a; let __i = #i; __acc_b.load(__a, __i) })
            }
            Expr::Binary(b) => {
                let (op, compound) = bin_op(&b.op).ok_or_else(|| "an operator".to_string())?;
                if compound {
                    return no("an assignment used as a value");
                }
                let op = Ident::new(op, Span::call_site());
                let (l, r) = (self.expr(&b.left)?, self.expr(&b.right)?);
                quote!({ let __l = #l; let __r = #r; __acc_b.binary(::acc::__rt::kernel::BinaryOp::#op, __l, __r) })
            }
            Expr::Unary(u) => {
                let op = match u.op {
                    UnOp::Neg(_) => quote!(Neg),
                    UnOp::Not(_) => quote!(Not),
                    UnOp::Deref(_) => {
                        // `*y` of an element reference: the element.
                        let (a, i) = self.elem_place(&u.expr)?;
                        return Ok(quote!({ let __a = #a; let __i = #i; __acc_b.load(__a, __i) }));
                    }
                    _ => return no("this unary operator"),
                };
                let x = self.expr(&u.expr)?;
                quote!({ let __x = #x; __acc_b.unary(::acc::__rt::kernel::UnaryOp::#op, __x) })
            }
            Expr::Cast(c) => {
                let t = scalar_of(&c.ty)
                    .ok_or_else(|| format!("a cast to `{}`", c.ty.to_token_stream()))?;
                let x = self.expr(&c.expr)?;
                quote!({ let __x = #x; __acc_b.cast(__x, #t) })
            }
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                if name == "len" && m.args.is_empty() {
                    return self.array_len(&m.receiver);
                }
                if name == "is_empty" && m.args.is_empty() {
                    let len = self.array_len(&m.receiver)?;
                    return Ok(quote!({
                        let __n = #len;
                        let __z = __acc_b.lit_int(0, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize));
                        __acc_b.binary(::acc::__rt::kernel::BinaryOp::Eq, __n, __z)
                    }));
                }
                if path_ident(strip(&m.receiver)).is_some_and(|r| r == "self") {
                    // `self.r(..)`: a routine taking `&self` (3.3 section 2.15). The fields its
                    // body reads were captured for the launch (`__acc_sp_r`, the parameters
                    // `r_acc_self_args` added); they come first among its arguments.
                    if self.in_routine {
                        return no(format!("calling the `&self` routine `.{name}()` from a routine (call it from the region)"));
                    }
                    let sp = format_ident!("__acc_sp_{}", name);
                    let marker = crate::check_region::routine_marker(&m.method);
                    let args = self.routine_args(m.args.iter())?;
                    return Ok(quote!({
                        let mut __args: ::std::vec::Vec<::acc::__rt::kernel::RoutineArg> = ::std::vec::Vec::new();
                        for &__p in #sp.iter() {
                            __args.push(match __acc_h.array(__p) {
                                ::core::option::Option::Some(a) => ::acc::__rt::kernel::RoutineArg::Array(a),
                                ::core::option::Option::None => ::acc::__rt::kernel::RoutineArg::Scalar(__acc_h.scalar(__acc_b, __p)),
                            });
                        }
                        let __rest = [#(#args),*];
                        __args.extend(__rest);
                        (Self::#marker.build)(__acc_b, &__args)
                    }));
                }
                // std's numeric methods (the region check admitted only those).
                let mut args = vec![self.expr(&m.receiver)?];
                for a in &m.args {
                    args.push(self.expr(a)?);
                }
                quote!({ let __args = [#(#args),*]; __acc_b.method(#name, &__args) })
            }
            Expr::Call(c) => {
                let Expr::Path(p) = &*c.func else {
                    return no("a call");
                };
                let segs: Vec<String> = p
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let last = segs.last().cloned().unwrap_or_default();
                let prim = segs.len() == 2
                    && scalar_of(&syn::parse_str(&segs[0]).map_err(|_| "a call".to_string())?)
                        .is_some();
                let cmp = segs.len() >= 2
                    && matches!(segs[segs.len() - 2].as_str(), "cmp")
                    && matches!(last.as_str(), "min" | "max");
                let prim_ty = if prim {
                    scalar_of(&syn::parse_str(&segs[0]).map_err(|_| "a call".to_string())?)
                } else {
                    None
                };
                let method = crate::analysis::methods::DEVICE_METHODS.contains(&last.as_str())
                    && last != "len"
                    && last != "is_empty";
                if (prim && method) || cmp {
                    let args: Vec<TokenStream> =
                        c.args.iter().map(|a| self.expr(a)).collect::<R<_>>()?;
                    if let (Some(t), false) = (&prim_ty, args.is_empty()) {
                        return Ok(
                            quote!({ let __args = [#(#args),*]; __acc_b.method_of(#t, #last, &__args) }),
                        );
                    }
                    if let (Some(t), true) =
                        (&prim_ty, matches!(last.as_str(), "min_value" | "max_value"))
                    {
                        let max = last == "max_value";
                        return Ok(quote!(__acc_b.type_limit(#t, #max)));
                    }
                    return Ok(
                        quote!({ let __args = [#(#args),*]; __acc_b.method(#last, &__args) }),
                    );
                }
                // `f64::from_bits(u)`: the float with those bits.
                if let (Some(t), "from_bits", 1) = (&prim_ty, last.as_str(), c.args.len()) {
                    let x = self.expr(&c.args[0])?;
                    return Ok(quote!({ let __x = #x; __acc_b.from_bits(#t, __x) }));
                }
                // `T::from(x)` between scalars is lossless (rustc checked the impl exists): a cast.
                if prim && last == "from" && c.args.len() == 1 {
                    let t = scalar_of(&syn::parse_str(&segs[0]).map_err(|_| "a call".to_string())?)
                        .ok_or("a call")?;
                    let x = self.expr(&c.args[0])?;
                    return Ok(quote!({ let __x = #x; __acc_b.cast(__x, #t) }));
                }
                if segs.len() == 2 && segs[0] == "acc" && last == "gang_idx" && c.args.is_empty() {
                    return Ok(quote!(__acc_b.gang_index()));
                }
                // The device a kernel runs on is known when it is built (kernels are cached per
                // device type); the argument must not depend on the kernel's values.
                if segs.len() == 2 && segs[0] == "acc" && last == "on_device" && c.args.len() == 1 {
                    let arg = &c.args[0];
                    if !matches!(strip(arg), Expr::Path(p) if p.path.segments.len() >= 2) {
                        return no(
                            "`acc::on_device` with an argument other than a device type constant",
                        );
                    }
                    return Ok(quote!(__acc_b.lit_bool(__acc_h.on_device(#arg))));
                }
                if segs.first().is_some_and(|s| s == "acc") || prim {
                    return no(format!("a call of `{}` in a kernel", segs.join("::")));
                }
                // A routine: its body is built into the kernel here (inlined).
                let mut marker = p.path.clone();
                if let Some(seg) = marker.segments.last_mut() {
                    seg.ident = crate::check_region::routine_marker(&seg.ident);
                    seg.arguments = syn::PathArguments::None;
                }
                let args = self.routine_args(c.args.iter())?;
                quote!({ let __args = [#(#args),*]; (#marker.build)(__acc_b, &__args) })
            }
            Expr::If(i) => self.if_value(i, false)?,
            Expr::Block(b) if b.block.stmts.len() == 1 => self.block_value(&b.block.stmts)?,
            other => return no(format!("the expression `{}`", short(other))),
        })
    }

    /// A block that is one expression, as a value.
    fn block_value(&mut self, stmts: &[Stmt]) -> R<TokenStream> {
        match stmts {
            [Stmt::Expr(e, None)] => self.expr(e),
            _ => no("a block with statements, used as a value"),
        }
    }

    /// `if c { a } else { r }` as a value. Arms that read arrays or call routines run only when
    /// taken, as in Rust: a temporary set in each branch of an `if` statement, so that the arm
    /// not taken cannot report an out-of-range index (or do a routine's work). Other arms are a
    /// `select` of both values. `stmts_ok` when the `if` is the whole value of a `let` or an
    /// assignment, where arms may hold statements: nothing else in the statement is evaluated
    /// before them.
    fn if_value(&mut self, i: &syn::ExprIf, stmts_ok: bool) -> R<TokenStream> {
        let Some((_, els)) = &i.else_branch else {
            return no("`if` without `else` as a value");
        };
        let c = self.expr(&i.cond)?;
        if !reads_arrays_or_calls(&i.then_branch.stmts, els) {
            let a = self.block_value(&i.then_branch.stmts)?;
            let r = match &**els {
                Expr::Block(b) => self.block_value(&b.block.stmts)?,
                other => self.expr(other)?,
            };
            return Ok(
                quote!({ let __c = #c; let __a = #a; let __r = #r; __acc_b.select(__c, __a, __r) }),
            );
        }
        let (sa, a) = self.arm(&i.then_branch.stmts, stmts_ok)?;
        let (sr, r) = match &**els {
            Expr::Block(b) => self.arm(&b.block.stmts, stmts_ok)?,
            Expr::If(inner) => (quote!(), self.if_value(inner, stmts_ok)?),
            other => (quote!(), self.expr(other)?),
        };
        Ok(quote!({
            let __c = #c;
            let __t = __acc_b.local("if value", ::core::option::Option::None, ::core::option::Option::None);
            __acc_b.if_(
                __c,
                |__acc_b| { #sa let __v = #a; __acc_b.set(__t, __v); },
                |__acc_b| { #sr let __v = #r; __acc_b.set(__t, __v); },
            );
            __acc_b.get(__t)
        }))
    }

    /// An `if` arm as statements and its value (statements only when `stmts_ok`).
    fn arm(&mut self, stmts: &[Stmt], stmts_ok: bool) -> R<(TokenStream, TokenStream)> {
        let Some((Stmt::Expr(e, None), rest)) = stmts.split_last() else {
            return no("an `if` arm without a value, used as a value");
        };
        if !rest.is_empty() && !stmts_ok {
            return no("an `if` arm with statements, used as a value inside a larger expression (make it the whole value of a `let`)");
        }
        self.scopes.push(HashMap::new());
        let mut out = TokenStream::new();
        let mut result = Ok(());
        for st in rest {
            match self.stmt(st, true) {
                Ok(t) => out.extend(t),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let value = result.and_then(|()| self.expr(e));
        self.scopes.pop();
        Ok((out, value?))
    }

    fn stmts(&mut self, stmts: &[Stmt], in_parallel: bool) -> R<TokenStream> {
        self.scopes.push(HashMap::new());
        let mut out = TokenStream::new();
        for st in stmts {
            out.extend(self.stmt(st, in_parallel)?);
        }
        self.scopes.pop();
        Ok(out)
    }

    fn stmt(&mut self, st: &Stmt, in_parallel: bool) -> R<TokenStream> {
        let dirs: Vec<_> = attrs::stmt_attrs(st)
            .iter()
            .filter_map(|a| attrs::directive_of(a).map(|k| (k, a)))
            .collect();
        let loop_dir = match dirs.first() {
            Some((DirectiveKind::Loop, a)) => {
                let args = attrs::attr_args(a).map_err(|e| e.to_string())?;
                Some(
                    parse_directive(DirectiveKind::Loop, Span::call_site(), args)
                        .map_err(|e| e.to_string())?,
                )
            }
            Some((DirectiveKind::Atomic, a)) => {
                let args = attrs::attr_args(a).map_err(|e| e.to_string())?;
                let d = parse_directive(DirectiveKind::Atomic, Span::call_site(), args)
                    .map_err(|e| e.to_string())?;
                return self.atomic(&d, st);
            }
            Some((k, _)) => return no(format!("`{}` inside a region", k.spelling())),
            None => None,
        };
        Ok(match st {
            // `let _ = e;` evaluates nothing a kernel must keep (expressions are pure).
            Stmt::Local(l) if matches!(strip_type(&l.pat), Pat::Wild(_)) => quote!(),
            Stmt::Local(l) if matches!(strip_type(&l.pat), Pat::Tuple(_)) => self.let_tuple(l)?,
            Stmt::Local(l) => {
                let Pat::Ident(pi) = strip_type(&l.pat) else {
                    return no("a `let` pattern");
                };
                let name = pi.ident.to_string();
                let ty = match &l.pat {
                    Pat::Type(pt) => Some(&*pt.ty),
                    _ => None,
                };
                let array_init = l
                    .init
                    .as_ref()
                    .map(|i| strip(&i.expr))
                    .filter(|e| matches!(e, Expr::Repeat(_) | Expr::Array(_)));
                if matches!(ty, Some(syn::Type::Array(_))) || array_init.is_some() {
                    return self.local_array(&name, ty, array_init);
                }
                // `let row = &a[s..e];` (or `&mut`): a view of the array, not a value; and
                // `let y = &mut a[k];`, a view of one element.
                if let Some(i) = l.init.as_ref().filter(|i| i.diverge.is_none()) {
                    if let Some(view) = self.elem_ref(&i.expr)? {
                        let v = self.fresh(&name);
                        self.bind(name, Local::Elem(v.clone()));
                        return Ok(quote!(let #v = #view;));
                    }
                    if let Some(view) = self.subslice_arg(&i.expr)? {
                        let v = self.fresh(&name);
                        self.bind(name, Local::View(v.clone()));
                        return Ok(quote!(let #v = #view;));
                    }
                }
                let ty_tokens = let_type(&name, ty)?;
                let init = match &l.init {
                    Some(i) if i.diverge.is_some() => return no("`let .. else`"),
                    Some(i) => {
                        let v = match strip(&i.expr) {
                            Expr::If(e) => self.if_value(e, true)?,
                            other => self.expr(other)?,
                        };
                        quote!(::core::option::Option::Some(#v))
                    }
                    None => quote!(::core::option::Option::None),
                };
                let v = self.fresh(&name);
                let name_lit = name.clone();
                self.bind(name, Local::Scalar(v.clone()));
                quote!(let #v = { let __init = #init; __acc_b.local(#name_lit, #ty_tokens, __init) };)
            }
            Stmt::Expr(e, _) => self.expr_stmt(e, loop_dir, in_parallel)?,
            Stmt::Macro(m)
                if m.mac
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.ident == "cache") =>
            {
                quote!()
            }
            Stmt::Macro(_) => return no("a macro"),
            Stmt::Item(_) => return no("an item"),
        })
    }

    /// `let (a, mut b, _) = (x, y, z);` (a type on the tuple, `(f64, u32)`, types the names):
    /// every value is computed before any name is bound, as in Rust.
    fn let_tuple(&mut self, l: &syn::Local) -> R<TokenStream> {
        let Pat::Tuple(pt) = strip_type(&l.pat) else {
            return no("a `let` pattern");
        };
        let types: Vec<Option<&syn::Type>> = match &l.pat {
            Pat::Type(t) => match &*t.ty {
                syn::Type::Tuple(tt) if tt.elems.len() == pt.elems.len() => {
                    tt.elems.iter().map(Some).collect()
                }
                other => {
                    return no(format!(
                        "a `let` tuple of type `{}`",
                        other.to_token_stream()
                    ))
                }
            },
            _ => vec![None; pt.elems.len()],
        };
        let values = match l.init.as_ref().map(|i| strip(&i.expr)) {
            Some(Expr::Tuple(t))
                if t.elems.len() == pt.elems.len()
                    && l.init.as_ref().is_some_and(|i| i.diverge.is_none()) =>
            {
                t.elems
                    .iter()
                    .map(|e| self.expr(e))
                    .collect::<R<Vec<_>>>()?
            }
            _ => {
                return no(
                    "a `let` tuple pattern whose value is not a tuple expression of its length",
                )
            }
        };
        let mut out = TokenStream::new();
        for ((p, value), ty) in pt.elems.iter().zip(values).zip(types) {
            let name = match p {
                Pat::Wild(_) => continue,
                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                    pi.ident.to_string()
                }
                other => {
                    return no(format!(
                        "the pattern `{}` in a `let` tuple",
                        other.to_token_stream()
                    ))
                }
            };
            let ty_tokens = let_type(&name, ty)?;
            let v = self.fresh(&name);
            out.extend(quote!(let #v = { let __init = #value; __acc_b.local(#name, #ty_tokens, ::core::option::Option::Some(__init)) };));
            self.bind(name, Local::Scalar(v));
        }
        Ok(out)
    }

    /// `let t = [v; N];` or `let t: [T; N] = [a, b, ..];`: a private array of the region
    /// (DESIGN.md 4.2), each element set from its initializer.
    fn local_array(
        &mut self,
        name: &str,
        ty: Option<&syn::Type>,
        init: Option<&Expr>,
    ) -> R<TokenStream> {
        let annotated = match ty {
            Some(syn::Type::Array(a)) => Some(a),
            Some(other) => return no(format!("`let {name}: {}`", other.to_token_stream())),
            None => None,
        };
        let elem = match annotated {
            Some(a) => {
                let s = scalar_of(&a.elem)
                    .ok_or_else(|| format!("a private array of `{}`", a.elem.to_token_stream()))?;
                quote!(::core::option::Option::Some(#s))
            }
            None => quote!(::core::option::Option::None),
        };
        let v = self.fresh(name);
        let (len, sets) = match init {
            Some(Expr::Repeat(r)) => {
                let value = self.expr(&r.expr)?;
                let len = &r.len;
                (
                    quote!(#len),
                    quote! {
                        let __e = #value;
                        let __t = __acc_b.local("element", ::core::option::Option::None, ::core::option::Option::Some(__e));
                        for __k in 0..__len {
                            let __i = __acc_b.lit_int(__k as i128, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize));
                            let __x = __acc_b.get(__t);
                            __acc_b.set_elem(#v, __i, __x);
                        }
                    },
                )
            }
            Some(Expr::Array(a)) => {
                let n = a.elems.len();
                let mut sets = TokenStream::new();
                for (k, e) in a.elems.iter().enumerate() {
                    let value = self.expr(e)?;
                    let k = k as i128;
                    sets.extend(quote! {{
                        let __x = #value;
                        let __i = __acc_b.lit_int(#k, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize));
                        __acc_b.set_elem(#v, __i, __x);
                    }});
                }
                (quote!(#n), sets)
            }
            _ => match annotated {
                Some(a) => {
                    let len = &a.len;
                    (quote!(#len), quote!())
                }
                None => return no(format!("the private array `{name}` without a length")),
            },
        };
        let name_lit = name.to_string();
        self.bind(name.to_string(), Local::Array(v.clone()));
        // A private array lives in each thread's local memory: a bound keeps a mistaken length
        // from exhausting it.
        Ok(quote! {
            let #v = {
                let __len: usize = #len;
                if __len > 4096 {
                    __acc_b.fail(::std::format!("the private array `{}` has {} elements; kernels hold at most 4096 per thread", #name_lit, __len));
                }
                __acc_b.local_array_of(#name_lit, #elem, __len.min(4096) as u32)
            };
            {
                #[allow(unused_variables)]
                let __len: u32 = { let __n: usize = #len; __n.min(4096) as u32 };
                #sets
            }
        })
    }

    fn expr_stmt(
        &mut self,
        e: &Expr,
        loop_dir: Option<Directive>,
        in_parallel: bool,
    ) -> R<TokenStream> {
        Ok(match e {
            // Statements from `macro_rules!` arrive in invisible groups.
            Expr::Group(g) => self.expr_stmt(&g.expr, loop_dir, in_parallel)?,
            Expr::Assign(a) => self.assign(&a.left, None, &a.right)?,
            Expr::Binary(b) => match bin_op(&b.op) {
                Some((op, true)) => self.assign(&b.left, Some(op), &b.right)?,
                _ => return no("an expression statement"),
            },
            Expr::If(i) => {
                let c = self.expr(&i.cond)?;
                let a = self.stmts(&i.then_branch.stmts, in_parallel)?;
                let r = match &i.else_branch {
                    None => quote!(),
                    Some((_, els)) => match &**els {
                        Expr::Block(b) => self.stmts(&b.block.stmts, in_parallel)?,
                        other => self.expr_stmt(other, None, in_parallel)?,
                    },
                };
                quote!({ let __c = #c; __acc_b.if_(__c, |__acc_b| { #a }, |__acc_b| { #r }); })
            }
            Expr::Block(b) if b.label.is_none() => {
                let s = self.stmts(&b.block.stmts, in_parallel)?;
                quote!({ #s })
            }
            Expr::While(w) if w.label.is_none() => {
                let c = self.expr(&w.cond)?;
                let body = self.stmts(&w.body.stmts, in_parallel)?;
                let pass = self.pass_return();
                quote!(__acc_b.loop_(|__acc_b| {
                    let __c = #c;
                    let __stop = __acc_b.unary(::acc::__rt::kernel::UnaryOp::Not, __c);
                    __acc_b.if_(__stop, |__acc_b| __acc_b.break_(), |_| {});
                    #body
                }); #pass)
            }
            Expr::Loop(l) if l.label.is_none() => {
                let body = self.stmts(&l.body.stmts, in_parallel)?;
                let pass = self.pass_return();
                quote!(__acc_b.loop_(|__acc_b| { #body }); #pass)
            }
            Expr::Break(b) if b.label.is_none() && b.expr.is_none() => quote!(__acc_b.break_();),
            Expr::Continue(c) if c.label.is_none() => quote!(__acc_b.continue_();),
            Expr::ForLoop(f) if f.label.is_none() => {
                if loop_dir.is_some() && self.ret.is_some() && has_return(&f.body.stmts) {
                    return no("`return` inside a loop with a `loop` directive");
                }
                let l = self.for_loop(f, loop_dir, in_parallel)?;
                let pass = self.pass_return();
                quote!(#l #pass)
            }
            // `return` in a routine (`routine_body` set up `ret`): the result, the flag, and a
            // break towards the loop around the body.
            Expr::Return(r) if self.ret.is_some() => {
                let (result, flag) = self.ret.clone().expect("checked");
                let set = match &r.expr {
                    Some(e) => {
                        let v = self.expr(e)?;
                        quote!({ let __v = #v; __acc_b.set(#result, __v); })
                    }
                    None => quote!(),
                };
                quote!({
                    #set
                    let __t = __acc_b.lit_bool(true);
                    __acc_b.set(#flag, __t);
                    __acc_b.break_();
                })
            }
            Expr::Call(_) => {
                let call = self.expr(e)?;
                quote!({ let _ = #call; })
            }
            // `self.r(..);`: a method routine called for its effect.
            Expr::MethodCall(m) if path_ident(strip(&m.receiver)).is_some_and(|r| r == "self") => {
                let call = self.expr(e)?;
                quote!({ let _ = #call; })
            }
            other => return no(format!("the statement `{}`", short(other))),
        })
    }

    /// After a loop in a routine with an early `return`: break on out of the enclosing loop
    /// once the body has returned.
    fn pass_return(&self) -> TokenStream {
        match &self.ret {
            Some((_, flag)) => quote!({
                let __r = __acc_b.get(#flag);
                __acc_b.if_(__r, |__acc_b| __acc_b.break_(), |_| {});
            }),
            None => quote!(),
        }
    }

    fn assign(&mut self, target: &Expr, op: Option<&str>, value: &Expr) -> R<TokenStream> {
        // Rust evaluates the value before the place it is assigned to.
        let v = match strip(value) {
            Expr::If(e) => self.if_value(e, true)?,
            other => self.expr(other)?,
        };
        let combine = |cur: TokenStream| -> TokenStream {
            match op {
                None => quote!(#v),
                Some(op) => {
                    let op = Ident::new(op, Span::call_site());
                    quote!({ let __cur = #cur; let __v = #v; __acc_b.binary(::acc::__rt::kernel::BinaryOp::#op, __cur, __v) })
                }
            }
        };
        if let Some(id) = path_ident(target) {
            return match self.lookup(&id.to_string()) {
                Some(Local::Scalar(var)) => {
                    let value = combine(quote!(__acc_b.get(#var)));
                    Ok(quote!({ let __v = #value; __acc_b.set(#var, __v); }))
                }
                _ if matches!(
                    self.captured.get(&id.to_string()),
                    Some((Cap::WriteScalar, _))
                ) =>
                {
                    let (a, i) = self.place(target)?;
                    let value = combine(quote!(__acc_b.load(__a, __i)));
                    Ok(
                        quote!({ let __a = #a; let __i = #i; let __v = #value; __acc_b.store(__a, __i, __v); }),
                    )
                }
                _ => no(format!("assigning the captured variable `{id}`")),
            };
        }
        if let Expr::Index(ix) = target {
            let i = self.expr(&ix.index)?;
            if let Some(id) = path_ident(&ix.expr) {
                if let Some(Local::Array(var)) = self.lookup(&id.to_string()) {
                    let value = combine(quote!(__acc_b.get_elem(#var, __i)));
                    return Ok(
                        quote!({ let __i = #i; let __v = #value; __acc_b.set_elem(#var, __i, __v); }),
                    );
                }
            }
            let a = self.array(&ix.expr)?;
            let value = combine(quote!(__acc_b.load(__a, __i)));
            return Ok(
                quote!({ let __a = #a; let __i = #i; let __v = #value; __acc_b.store(__a, __i, __v); }),
            );
        }
        if let Expr::Field(f) = target {
            let (a, i) = self.struct_field(f)?;
            let value = combine(quote!(__acc_b.load(__a, __i)));
            return Ok(
                quote!({ let __a = #a; let __i = #i; let __v = #value; __acc_b.store(__a, __i, __v); }),
            );
        }
        // `*y = ..` through an element reference.
        if let Expr::Unary(u) = strip(target) {
            if matches!(u.op, UnOp::Deref(_)) {
                let (a, i) = self.elem_place(&u.expr)?;
                let value = combine(quote!(__acc_b.load(__a, __i)));
                return Ok(
                    quote!({ let __a = #a; let __i = #i; let __v = #value; __acc_b.store(__a, __i, __v); }),
                );
            }
        }
        no(format!("assigning `{}`", target.to_token_stream()))
    }

    fn for_loop(
        &mut self,
        f: &syn::ExprForLoop,
        dir: Option<Directive>,
        in_parallel: bool,
    ) -> R<TokenStream> {
        let depth = dir
            .as_ref()
            .and_then(|d| {
                d.clauses.iter().find_map(|c| match &c.args {
                    ClauseArgs::Collapse { n, .. } if c.device_types.is_none() => Some(*n),
                    ClauseArgs::Tile(s) if c.device_types.is_none() => Some(s.len()),
                    _ => None,
                })
            })
            .unwrap_or(1);
        let mut levels = Vec::new();
        // Each level's line, which rustc gives (`line!()` at the `for` keyword's span).
        let mut lines = Vec::new();
        let mut cur = f;
        loop {
            let span = cur.for_token.span;
            lines.push(quote::quote_spanned!(span=> ::core::line!()));
            let name = match &*cur.pat {
                Pat::Ident(pi) => pi.ident.clone(),
                Pat::Wild(w) => Ident::new("_unused", w.underscore_token.span),
                _ => return no("a loop pattern other than a name"),
            };
            // `(a..b)`, with `.rev()` / `.step_by(s)` applied in order.
            let mut ops: Vec<Option<Expr>> = Vec::new();
            let mut it = strip(&cur.expr);
            loop {
                match it {
                    Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() => ops.push(None),
                    Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                        ops.push(Some(m.args[0].clone()))
                    }
                    _ => break,
                }
                let Expr::MethodCall(m) = it else { break };
                it = strip(&m.receiver);
            }
            ops.reverse();
            let (start, end, incl) = match it {
                Expr::Range(r) => match (&r.start, &r.end) {
                    (Some(s), Some(e)) => (
                        s.clone(),
                        e.clone(),
                        matches!(r.limits, syn::RangeLimits::Closed(_)),
                    ),
                    _ => return no("an open range"),
                },
                _ => return no("a loop over something other than a range"),
            };
            levels.push((name, start, end, incl, ops));
            if levels.len() == depth {
                break;
            }
            match cur.body.stmts.as_slice() {
                [Stmt::Expr(Expr::ForLoop(inner), _)] => cur = inner,
                _ => return no("collapsed loops with code between them"),
            }
        }
        let body_stmts = &cur.body.stmts;

        // Parallel only at the outermost parallelizable loop, as on multicore.
        let parallel = !in_parallel && self.parallel(dir.as_ref(), &levels, body_stmts);
        let schedule = if parallel {
            let has = |c| dir.as_ref().is_some_and(|d| d.general(c).next().is_some());
            let (g, w, v) = (has(C::Gang), has(C::Worker), has(C::Vector));
            let (g, w, v) = if !(g || w || v) {
                (true, false, true)
            } else {
                (g, w, v)
            };
            quote!(::core::option::Option::Some(::acc::__rt::kernel::Schedule { gang: #g, worker: #w, vector: #v }))
        } else if in_parallel
            && dir.as_ref().is_some_and(|d| {
                d.general(C::Vector).next().is_some() || d.general(C::Worker).next().is_some()
            })
        {
            // An explicit worker or vector loop inside the parallel loop: a GPU backend may
            // share its iterations among the threads of the gang running the enclosing
            // iteration (3.3 sections 2.9.3, 2.9.4); elsewhere it runs in order.
            let has = |c| dir.as_ref().is_some_and(|d| d.general(c).next().is_some());
            let (w, v) = (has(C::Worker), has(C::Vector));
            quote!(::core::option::Option::Some(
                ::acc::__rt::kernel::Schedule {
                    gang: false,
                    worker: #w,
                    vector: #v
                }
            ))
        } else {
            quote!(::core::option::Option::None)
        };
        // Reductions: the loop's own, and the region's it updates (on a parallel loop).
        let mut reductions: Vec<(RedOp, Ident)> = dir
            .iter()
            .flat_map(|d| d.general(C::Reduction))
            .flat_map(|c| match &c.args {
                ClauseArgs::Reduction { op, vars, .. } => vars
                    .iter()
                    .map(|v| (*op, v.name.clone()))
                    .collect::<Vec<_>>(),
                _ => vec![],
            })
            .collect();
        if parallel {
            let used = scan_stmts(body_stmts, &[]);
            for (op, v) in &self.region_reductions {
                if used.vars.contains_key(&v.to_string()) && !reductions.iter().any(|(_, r)| r == v)
                {
                    reductions.push((*op, v.clone()));
                }
            }
        }
        // Loop-level private copies (3.3 section 2.9.10), one per iteration.
        let private_vars: Vec<Ident> = dir
            .iter()
            .flat_map(|d| d.general(C::Private))
            .flat_map(|c| c.vars().iter().map(|v| v.name.clone()))
            .collect();
        let private_uses = scan_stmts(body_stmts, &[]);
        let mut private_tokens = Vec::new();
        let mut private_binds = Vec::new();
        for pv in &private_vars {
            let name = pv.to_string();
            let fresh = self.fresh(&name);
            let indexed = private_uses
                .vars
                .get(&name)
                .is_some_and(|u| !u.indexes.is_empty());
            let (tokens, local) = match self.lookup(&name) {
                Some(Local::Scalar(o)) => (
                    quote!(let #fresh = __acc_b.local_like(#name, #o);),
                    Local::Scalar(fresh.clone()),
                ),
                Some(Local::Array(o)) => (
                    quote!(let #fresh = __acc_b.local_like(#name, #o);),
                    Local::Array(fresh.clone()),
                ),
                Some(Local::View(_) | Local::Elem(_)) => {
                    return no(format!("a private copy of the reference `{name}`"));
                }
                None => match self.captured.get(&name) {
                    Some((_, p)) => (
                        quote!(let #fresh = __acc_h.private(__acc_b, #p, #name, false, #indexed);),
                        if indexed {
                            Local::Array(fresh.clone())
                        } else {
                            Local::Scalar(fresh.clone())
                        },
                    ),
                    // Not used in the region: nothing to privatize.
                    None => continue,
                },
            };
            private_tokens.push(tokens);
            private_binds.push((name, local));
        }
        let mut red_tokens = Vec::new();
        for (op, v) in &reductions {
            match self.lookup(&v.to_string()) {
                Some(Local::Scalar(var) | Local::Array(var)) => {
                    let o = red_op(*op);
                    red_tokens.push(quote!((#var, #o)));
                }
                _ => return no(format!("a reduction of `{v}`")),
            }
        }
        self.scopes.push(HashMap::new());
        let mut level_tokens = Vec::new();
        let mut binds = Vec::new();
        for (k, (name, start, end, incl, ops)) in levels.iter().enumerate() {
            let (s, e) = (self.expr(start)?, self.expr(end)?);
            let (sv, stv, tv) = (
                format_ident!("__s{}", k),
                format_ident!("__st{}", k),
                format_ident!("__t{}", k),
            );
            let name_lit = name.to_string();
            level_tokens.push(quote!(let (#sv, #stv, #tv) = { let __a = #s; let __b = #e; __acc_b.range_space(__a, __b, #incl, ::core::option::Option::None) };));
            for op in ops {
                level_tokens.push(match op {
                    None => quote!(let (#sv, #stv, #tv) = __acc_b.space_rev(#sv, #stv, #tv);),
                    Some(by) => {
                        let by = self.expr(by)?;
                        quote!(let (#sv, #stv, #tv) = { let __by = #by; __acc_b.space_step_by(#sv, #stv, #tv, __by) };)
                    }
                });
            }
            binds.push(quote!((#name_lit, ::core::option::Option::None, #sv, #stv, #tv)));
            let var = self.fresh(&name_lit);
            self.scopes
                .last_mut()
                .expect("a scope")
                .insert(name_lit, Local::Scalar(var.clone()));
        }
        let vars: Vec<Ident> = levels
            .iter()
            .map(|(n, ..)| match self.lookup(&n.to_string()) {
                Some(Local::Scalar(v)) => v,
                _ => n.clone(),
            })
            .collect();
        let idx: Vec<usize> = (0..vars.len()).collect();
        for (name, local) in private_binds {
            self.bind(name, local);
        }
        let body = self.stmts(body_stmts, in_parallel || parallel)?;
        self.scopes.pop();
        // `tile(..)` sizes as written (innermost loop first; `*` is the backend's choice).
        let tile: Vec<TokenStream> = dir
            .iter()
            .flat_map(|d| d.general(C::Tile))
            .flat_map(|c| match &c.args {
                ClauseArgs::Tile(sizes) => sizes.clone(),
                _ => vec![],
            })
            .map(|s| match s {
                SizeExpr::Expr(e) => match crate::check::int_literal(&e) {
                    Some(n) => {
                        let n = u32::try_from(n).unwrap_or(u32::MAX);
                        quote!(::core::option::Option::Some(#n))
                    }
                    None => quote!(::core::option::Option::None),
                },
                SizeExpr::Star(_) => quote!(::core::option::Option::None),
            })
            .collect();
        Ok(quote!({
            #(#level_tokens)*
            __acc_b.at_lines(&[#(#lines),*]);
            __acc_b.for_tiled(&[#(#binds),*], &[#(#tile),*], #schedule, &[#(#red_tokens),*], &[], |__acc_b, __lv| {
                #(let #vars = __lv[#idx];)*
                #(#private_tokens)*
                #body
            });
        }))
    }

    #[allow(clippy::type_complexity)]
    fn parallel(
        &self,
        dir: Option<&Directive>,
        levels: &[(Ident, Box<Expr>, Box<Expr>, bool, Vec<Option<Expr>>)],
        body: &[Stmt],
    ) -> bool {
        if self.compute == ComputeKind::Serial
            || dir.is_some_and(|d| d.general(C::Seq).next().is_some())
        {
            return false;
        }
        let independent = dir.is_some_and(|d| d.general(C::Independent).next().is_some());
        match (self.compute, dir) {
            (_, _) if independent => true,
            (ComputeKind::Parallel, Some(d)) if d.general(C::Auto).next().is_none() => true,
            (ComputeKind::Parallel, None) => false,
            // `kernels` loops, and `auto` loops in `parallel`: parallel where the dependence
            // test proves it, the loop's own reductions and the region's set apart (as the
            // multicore rewrite decides, `RegionCx::parallelizable`).
            _ => {
                let mut reds: std::collections::HashSet<String> = self
                    .region_reductions
                    .iter()
                    .map(|(_, v)| v.to_string())
                    .collect();
                for c in dir.into_iter().flat_map(|d| d.general(C::Reduction)) {
                    reds.extend(c.vars().iter().map(|v| v.name.to_string()));
                }
                levels.len() == 1
                    && crate::analysis::depend::provably_independent(
                        &levels[0].0.to_string(),
                        body,
                        &reds,
                    )
            }
        }
    }
}

/// Whether the arms of an `if` read arrays or call functions (so must not run when not taken).
fn reads_arrays_or_calls(then: &[Stmt], els: &Expr) -> bool {
    struct Find(bool);
    impl<'a> syn::visit::Visit<'a> for Find {
        fn visit_expr(&mut self, e: &'a Expr) {
            match e {
                Expr::Index(_) | Expr::Call(_) => self.0 = true,
                _ => syn::visit::visit_expr(self, e),
            }
        }
    }
    let mut f = Find(false);
    for st in then {
        syn::visit::Visit::visit_stmt(&mut f, st);
    }
    syn::visit::Visit::visit_expr(&mut f, els);
    f.0
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        other => other,
    }
}

fn strip_type(p: &Pat) -> &Pat {
    match p {
        Pat::Type(t) => strip_type(&t.pat),
        other => other,
    }
}

fn short(e: &Expr) -> String {
    let s = crate::directive::parse::tidy(e.to_token_stream());
    if s.len() > 60 {
        format!(
            "{}..",
            &s[..s.char_indices().nth(57).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// What the compute construct's clauses say about its kernel as a whole.
#[derive(Clone, Default)]
pub struct KernelOptions {
    /// `unchecked`: no bounds checks (DESIGN.md 4.2).
    pub unchecked: bool,
    /// `vector_length(n)` with a constant `n` (for every device type).
    pub vector_length: Option<u32>,
    /// The subarrays the construct's data clauses name: variable, range as written (3.3
    /// section 2.7.1). The region uses that part of the array when only it is on the device.
    pub parts: Vec<(String, syn::Expr)>,
}

/// The kernel arm: argument marshalling, the kernel builder and the launch; or, when the body
/// uses what kernels do not support yet, an error at run time naming it.
#[allow(clippy::too_many_arguments)]
pub fn kernel_arm(
    compute: ComputeKind,
    stmts: &[Stmt],
    combined_loop: Option<&Directive>,
    env: &Env,
    region_reductions: &[(RedOp, Ident)],
    privates: &[Ident],
    generic_fn: bool,
    options: KernelOptions,
) -> TokenStream {
    match translate(
        compute,
        stmts,
        combined_loop,
        env,
        region_reductions,
        privates,
        generic_fn,
        options,
    ) {
        Ok(ts) => ts,
        Err(why) => quote!(::acc::__rt::kernel::unsupported(&__ACC_SITE, __acc_dev, #why)),
    }
}

#[allow(clippy::too_many_arguments)]
fn translate(
    compute: ComputeKind,
    stmts: &[Stmt],
    combined_loop: Option<&Directive>,
    env: &Env,
    region_reductions: &[(RedOp, Ident)],
    privates: &[Ident],
    generic_fn: bool,
    KernelOptions {
        unchecked,
        vector_length,
        parts,
    }: KernelOptions,
) -> R<TokenStream> {
    // A region's value (a compute construct on a function that returns what it computed):
    // a scalar local of the region, read back after the launch.
    let mut value_tail = None;
    if let Some(Stmt::Expr(e, None)) = stmts.last() {
        // (Not in generic functions: the value's type must be known to be a device scalar.)
        if combined_loop.is_none()
            && !generic_fn
            && matches!(strip(e), Expr::Path(p) if p.path.get_ident().is_some())
        {
            value_tail = Some(strip(e).clone());
        } else if !matches!(
            stmts.last(),
            Some(Stmt::Expr(
                Expr::ForLoop(_) | Expr::If(_) | Expr::While(_) | Expr::Loop(_) | Expr::Block(_),
                None
            ))
        ) {
            return no("a region that computes a value other than one of its scalar variables");
        }
    }
    let stmts = if value_tail.is_some() {
        &stmts[..stmts.len() - 1]
    } else {
        stmts
    };
    // `self.f` (a method's region reading or writing its struct's fields) becomes a captured
    // variable of its own, borrowed from `self` for the launch.
    let mut self_fields = Vec::new();
    let rewritten = self_fields_as_variables(stmts, &mut self_fields);
    let stmts = &rewritten[..];
    let uses = scan_stmts(stmts, &[]);
    let mut self_borrows = Vec::new();
    for f in &self_fields {
        let var = format_ident!("__self_{}", f);
        let field = Ident::new(f, Span::call_site());
        let written = uses
            .vars
            .get(&var.to_string())
            .is_some_and(|u| u.assigned || u.place_written || u.mut_borrowed || u.atomic_target);
        self_borrows.push(if written {
            quote!(#[allow(unused_mut)] let mut #var = &mut self.#field;)
        } else {
            quote!(let #var = &self.#field;)
        });
    }
    // Loop-level reductions of captured variables (on the combined loop or any loop inside).
    let mut loop_reds: Vec<(RedOp, Ident)> = Vec::new();
    if let Some(d) = combined_loop {
        for c in d.general(C::Reduction) {
            if let ClauseArgs::Reduction { op, vars, .. } = &c.args {
                loop_reds.extend(vars.iter().map(|v| (*op, v.name.clone())));
            }
        }
    }
    collect_loop_reductions(stmts, &mut loop_reds);
    // Private copies (region and loop level) are made from the originals' types: the
    // originals travel read-only and are never written back.
    let mut private_names: std::collections::HashSet<String> =
        privates.iter().map(|p| p.to_string()).collect();
    collect_loop_privates(stmts, &mut private_names);
    if let Some(d) = combined_loop {
        for c in d.general(C::Private) {
            private_names.extend(c.vars().iter().map(|v| v.name.to_string()));
        }
    }

    let mut tr = Tr {
        in_routine: false,
        arrays_used: Default::default(),
        compute,
        captured: BTreeMap::new(),
        scopes: vec![HashMap::new()],
        region_reductions: region_reductions.to_vec(),
        counter: 0,
        ret: None,
    };
    let mut arg_lines = Vec::new();
    let mut after = Vec::new();
    let mut locals = Vec::new();
    for (name, u) in &uses.vars {
        // (`self` itself is only a routine call's receiver here: its fields are variables.)
        if name.starts_with("__acc") || name == "self" {
            continue;
        }
        // A constant (or a static: the macro cannot tell them apart by name) is read like a
        // captured variable: its value travels with the launch.
        let span = u.span.unwrap_or_else(Span::call_site);
        let var = Ident::new(name, span);
        let p = format_ident!("__acc_p_{}", name);
        // The name messages show: `self.f` for a field.
        let shown = name
            .strip_prefix("__self_")
            .map_or_else(|| name.clone(), |f| format!("self.{f}"));
        let red = region_reductions
            .iter()
            .chain(&loop_reds)
            .find(|(_, v)| v == name)
            .map(|(op, _)| *op);
        let binding = env.get(name);
        let mut_ref = |var: &Ident| {
            if binding.is_some_and(|b| !b.mutable) {
                quote!(&mut *#var)
            } else {
                quote!(&mut #var)
            }
        };
        let (cap, line) = if red.is_none() && private_names.contains(name) {
            // A private array's length sizes its copies: part of the kernel's signature.
            (
                Cap::Read,
                quote! {
                    let #p = (&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().read(&mut __acc_args, #shown, &#var);
                    __acc_args.private_length(#p);
                },
            )
        } else if let Some(op) = red {
            let o = red_op(op);
            let target = mut_ref(&var);
            after.push(quote!((&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().reduce_back(__acc_dev, #target, &__acc_out, #p, #o);));
            let v = tr.fresh(name);
            let name_lit = name.clone();
            if u.indexes.is_empty() {
                locals.push(quote! {
                    let #v = { let __t = __acc_h.scalar_type(__acc_b, #p); __acc_b.reduction_local(#name_lit, __t, #o) };
                    __acc_b.reduce_into(#v, #o, #p as u32);
                });
                tr.bind(name.clone(), Local::Scalar(v));
            } else {
                // An array reduced element-wise.
                locals.push(quote! {
                    let #v = __acc_h.reduction_array(__acc_b, #p, #name_lit, #o);
                    __acc_b.reduce_into(#v, #o, #p as u32);
                });
                tr.bind(name.clone(), Local::Array(v));
            }
            (
                Cap::Reduction(op),
                quote!(let #p = (&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().reduction(&mut __acc_args, #shown, &#var, #o);),
            )
        } else if (u.assigned || u.atomic_target)
            && u.indexes.is_empty()
            && !u.mut_borrowed
            && !u.unindexed_other()
        {
            let target = mut_ref(&var);
            (
                Cap::WriteScalar,
                quote!(let #p = (&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().write(&mut __acc_args, #shown, #target);),
            )
        } else if u.mut_borrowed && !u.assigned && !u.unindexed_other() {
            // `&mut v` passed to a routine that writes the array.
            let target = mut_ref(&var);
            (
                Cap::Write,
                quote!(let #p = (&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().write(&mut __acc_args, #shown, #target);),
            )
        } else if u.assigned || u.mut_borrowed {
            return no(format!("writing the captured variable `{name}` as a whole"));
        } else if u.place_written || u.atomic_target {
            let target = mut_ref(&var);
            (
                Cap::Write,
                quote!(let #p = (&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().write(&mut __acc_args, #shown, #target);),
            )
        } else {
            (
                Cap::Read,
                quote!(let #p = (&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().read(&mut __acc_args, #shown, &#var);),
            )
        };
        tr.captured.insert(name.clone(), (cap, p.clone()));
        arg_lines.push(line);
        if let Some((_, range)) = parts.iter().find(|(n, _)| n == name) {
            arg_lines.push(quote!(__acc_args.part(#p, #range);));
        }
        // The region's own private copy (3.3 sections 2.5.13, 2.5.14), initialized from the
        // original.
        // An array the region only reads needs no copy: it reads the original's values.
        let read_only_array =
            !u.indexes.is_empty() && !u.place_written && !u.assigned && !u.mut_borrowed;
        if privates.iter().any(|v| v == name) && !read_only_array {
            let v = tr.fresh(name);
            let array = !u.indexes.is_empty();
            let name_lit = name.clone();
            locals.push(quote!(let #v = __acc_h.private(__acc_b, #p, #name_lit, true, #array);));
            tr.bind(
                name.clone(),
                if array {
                    Local::Array(v)
                } else {
                    Local::Scalar(v)
                },
            );
        }
    }
    // `&self` routines the region calls: the fields they read travel as parameters too.
    for method in self_routine_calls(stmts) {
        let sp = format_ident!("__acc_sp_{}", method);
        let marker = crate::check_region::routine_marker(&method);
        // `self` reborrowed as the routine's receiver takes it (`&Self` or `&mut Self`).
        arg_lines.push(
            quote!(let #sp: ::std::vec::Vec<usize> = match Self::#marker.self_args {
            ::core::option::Option::Some(__f) => __f(self, &mut __acc_args),
            ::core::option::Option::None => ::std::vec::Vec::new(),
        };),
        );
    }
    let body = match combined_loop {
        Some(d) => match stmts {
            [Stmt::Expr(e, _)] => tr.expr_stmt(e, Some(d.clone()), false)?,
            _ => return no("a combined construct without its loop"),
        },
        None => {
            let mut out = TokenStream::new();
            for st in stmts {
                out.extend(tr.stmt(st, false)?);
            }
            if let Some(tail) = &value_tail {
                let name = path_ident(tail).map(|i| i.to_string()).unwrap_or_default();
                if !matches!(tr.lookup(&name), Some(Local::Scalar(_))) {
                    return no(format!(
                        "a region whose value is `{name}`, not one of its scalar variables"
                    ));
                }
                let v = tr.expr(tail)?;
                out.extend(quote!({ let __v = #v; __acc_b.result(__v); }));
            }
            out
        }
    };
    let value = if value_tail.is_some() {
        quote!(::acc::__rt::kernel::region_value(&__acc_out))
    } else {
        quote!()
    };
    let resolve: Vec<TokenStream> = tr
        .arrays_used
        .iter()
        .map(|name| {
            tr.array_binding(
                name,
                |msg| quote!(return ::core::result::Result::Err(#msg.into())),
            )
        })
        .collect();
    let set_vector_length = match vector_length {
        Some(n) => quote!(__acc_b.set_vector_length(#n);),
        None => quote!(),
    };
    Ok(quote! {{
        #[allow(unused_imports)]
        use ::acc::__rt::kernel::{KindData as _, KindRefuse as _, KindScalar as _};
        #(#self_borrows)*
        let mut __acc_args = ::acc::__rt::kernel::Args::new();
        #(#arg_lines)*
        static __ACC_KERNEL: ::acc::__rt::kernel::KernelCache = ::acc::__rt::kernel::KernelCache::new();
        #[allow(unused_variables, unused_braces)]
        let __acc_out = ::acc::__rt::kernel::launch(
            __acc_dev,
            &__acc_launch,
            &__ACC_SITE,
            &__ACC_KERNEL,
            &mut __acc_args,
            &|__acc_b: &mut ::acc::__rt::kernel::KernelBuilder, __acc_h: &::acc::__rt::kernel::Params| -> ::core::result::Result<(), ::std::string::String> {
                // `unchecked` (DESIGN.md 4.2): the kernel's accesses are not bounds-checked.
                __acc_b.set_unchecked(#unchecked);
                #set_vector_length
                #(#resolve)*
                #(#locals)*
                #body
                ::core::result::Result::Ok(())
            },
        );
        ::core::mem::drop(__acc_args);
        #(#after)*
        #value
    }})
}

/// `stmts` with every `self.f` replaced by the variable `__self_f`; the fields, in order.
fn self_fields_as_variables(stmts: &[Stmt], fields: &mut Vec<String>) -> Vec<Stmt> {
    struct V<'a>(&'a mut Vec<String>);
    impl syn::visit_mut::VisitMut for V<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            if let Expr::Field(f) = e {
                if let (Expr::Path(base), syn::Member::Named(m)) = (strip(&f.base), &f.member) {
                    if base.path.is_ident("self") {
                        let name = m.to_string();
                        if !self.0.contains(&name) {
                            self.0.push(name.clone());
                        }
                        let id = format_ident!("__self_{}", name, span = m.span());
                        *e = syn::parse_quote!(#id);
                        return;
                    }
                }
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
        fn visit_item_mut(&mut self, _: &mut syn::Item) {}
    }
    let mut out = stmts.to_vec();
    let mut v = V(fields);
    for st in &mut out {
        syn::visit_mut::VisitMut::visit_stmt_mut(&mut v, st);
    }
    out
}

/// The methods called on `self` in `stmts` (`&self` routines), once each, in order.
fn self_routine_calls(stmts: &[Stmt]) -> Vec<Ident> {
    struct V(Vec<Ident>);
    impl<'ast> syn::visit::Visit<'ast> for V {
        fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
            if path_ident(strip(&m.receiver)).is_some_and(|r| r == "self")
                && !self.0.contains(&m.method)
            {
                self.0.push(m.method.clone());
            }
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut v = V(Vec::new());
    for st in stmts {
        syn::visit::Visit::visit_stmt(&mut v, st);
    }
    v.0
}

/// The fields of `self` a `&self` routine's body reads, in order (none for other functions).
pub fn routine_self_fields(f: &syn::ItemFn) -> Option<Vec<String>> {
    let r = f.sig.receiver()?;
    let mut fields = Vec::new();
    if r.reference.is_some() {
        self_fields_as_variables(&f.block.stmts, &mut fields);
    }
    Some(fields)
}

/// For a `&mut self` routine: the fields of `self` (of [`routine_self_fields`]) whose
/// elements its body writes, which travel as written arrays.
pub fn routine_written_fields(f: &syn::ItemFn) -> Vec<String> {
    let mut fields = Vec::new();
    let stmts = self_fields_as_variables(&f.block.stmts, &mut fields);
    let uses = scan_stmts(&stmts, &[]);
    fields
        .into_iter()
        .filter(|field| {
            uses.vars
                .get(&format!("__self_{field}"))
                .is_some_and(|u| u.place_written || u.atomic_target || u.mut_borrowed)
        })
        .collect()
}

fn collect_loop_privates(stmts: &[Stmt], out: &mut std::collections::HashSet<String>) {
    struct V<'a>(&'a mut std::collections::HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_stmt(&mut self, st: &'ast Stmt) {
            for a in attrs::stmt_attrs(st) {
                if attrs::directive_of(a) == Some(DirectiveKind::Loop) {
                    if let Ok(d) = attrs::attr_args(a)
                        .and_then(|t| parse_directive(DirectiveKind::Loop, Span::call_site(), t))
                    {
                        for c in d.general(C::Private) {
                            self.0.extend(c.vars().iter().map(|v| v.name.to_string()));
                        }
                    }
                }
            }
            syn::visit::visit_stmt(self, st);
        }
    }
    let mut v = V(out);
    for st in stmts {
        syn::visit::Visit::visit_stmt(&mut v, st);
    }
}

fn collect_loop_reductions(stmts: &[Stmt], out: &mut Vec<(RedOp, Ident)>) {
    struct V<'a>(&'a mut Vec<(RedOp, Ident)>);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_stmt(&mut self, st: &'ast Stmt) {
            for a in attrs::stmt_attrs(st) {
                if attrs::directive_of(a) == Some(DirectiveKind::Loop) {
                    if let Ok(d) = attrs::attr_args(a)
                        .and_then(|t| parse_directive(DirectiveKind::Loop, Span::call_site(), t))
                    {
                        for c in d.general(C::Reduction) {
                            if let ClauseArgs::Reduction { op, vars, .. } = &c.args {
                                self.0.extend(vars.iter().map(|v| (*op, v.name.clone())));
                            }
                        }
                    }
                }
            }
            syn::visit::visit_stmt(self, st);
        }
    }
    let mut v = V(out);
    for st in stmts {
        syn::visit::Visit::visit_stmt(&mut v, st);
    }
}

/// The builder of an `#[acc::routine]`: a function that builds the routine's body into the
/// calling kernel (routines are inlined), for the marker's `build`.
pub fn routine_builder(f: &syn::ItemFn) -> TokenStream {
    let name = f.sig.ident.to_string();
    match routine_body(f) {
        Ok(ts) => ts,
        Err(why) => {
            let msg = format!("the routine `{name}` cannot run in a kernel yet: {why}");
            quote! {
                fn build(__acc_b: &mut ::acc::__rt::kernel::KernelBuilder, _: &[::acc::__rt::kernel::RoutineArg]) -> ::acc::__rt::kernel::Value {
                    __acc_b.fail(#msg);
                    __acc_b.lit_bool(false)
                }
            }
        }
    }
}

/// The element type of a slice parameter (`&[T]`, `&mut [T]`, `&Vec<T>`, `&mut Vec<T>`), and
/// whether it is writable.
fn slice_param(ty: &syn::Type) -> Option<bool> {
    let syn::Type::Reference(r) = ty else {
        return None;
    };
    let is_slice = match &*r.elem {
        syn::Type::Slice(_) => true,
        syn::Type::Path(p) => p.path.segments.last().is_some_and(|s| s.ident == "Vec"),
        _ => false,
    };
    is_slice.then_some(r.mutability.is_some())
}

/// Whether `stmts` hold a `return` (at any depth).
fn has_return(stmts: &[Stmt]) -> bool {
    crate::analysis::uses::scan_stmts(stmts, &[])
        .returns
        .iter()
        .any(|(_, w)| *w == "return")
}

fn routine_body(f: &syn::ItemFn) -> R<TokenStream> {
    // A generic routine's parameters of a type parameter take the type of the argument at each
    // call (its IR is built per call, in the caller's kernel).
    let mut type_params = Vec::new();
    for p in &f.sig.generics.params {
        match p {
            syn::GenericParam::Lifetime(_) => {}
            syn::GenericParam::Type(t) => type_params.push(t.ident.clone()),
            syn::GenericParam::Const(c) => {
                return no(format!("the const parameter `{}` of a routine", c.ident))
            }
        }
    }
    let generic = |ty: &syn::Type| match ty {
        syn::Type::Path(p) if p.qself.is_none() => {
            p.path.get_ident().is_some_and(|i| type_params.contains(i))
        }
        _ => false,
    };
    let name = f.sig.ident.to_string();
    let mut tr = Tr {
        in_routine: true,
        arrays_used: Default::default(),
        compute: ComputeKind::Serial,
        captured: BTreeMap::new(),
        scopes: vec![HashMap::new()],
        region_reductions: Vec::new(),
        counter: 0,
        ret: None,
    };
    let mut prologue = Vec::new();
    // A `&self` method reads fields of `self`: each is an argument of the call, before the
    // declared ones (`__acc_h` resolves them, as parameters are in a region).
    let mut self_fields = Vec::new();
    let rewritten;
    let stmts = match f.sig.receiver() {
        None => &f.block.stmts,
        Some(r) if r.reference.is_some() => {
            rewritten = self_fields_as_variables(&f.block.stmts, &mut self_fields);
            &rewritten
        }
        Some(_) => {
            return no("methods taking `self` by value (routines may take `&self` or `&mut self`)")
        }
    };
    // A `&mut self` routine may write elements of array fields (they travel as written
    // arrays); a scalar field is a value of the launch, which an assignment could not return.
    let written = routine_written_fields(f);
    let field_uses = scan_stmts(stmts, &[]);
    let nf = self_fields.len();
    for (k, field) in self_fields.iter().enumerate() {
        let name = format!("__self_{field}");
        if field_uses.vars.get(&name).is_some_and(|u| u.assigned) {
            return no(format!("assigning the field `self.{field}` as a whole (a `&mut self` routine may write the elements of `self`'s arrays)"));
        }
        let p = format_ident!("__acc_p_{}", name);
        prologue.push(quote!(let #p: usize = #k;));
        let cap = if written.contains(field) {
            Cap::Write
        } else {
            Cap::Read
        };
        tr.captured.insert(name, (cap, p));
    }
    let names: Vec<String> = self_fields.iter().map(|f| format!("self.{f}")).collect();
    prologue.push(quote!(let __acc_h = ::acc::__rt::kernel::RoutineSelf::new(__acc_b, &__acc_args[..#nf], &[#(#names),*]);));
    let typed = f
        .sig
        .inputs
        .iter()
        .filter(|i| matches!(i, syn::FnArg::Typed(_)));
    for (k, input) in typed.enumerate() {
        let k = k + nf;
        let syn::FnArg::Typed(pt) = input else {
            return no("methods taking `self`");
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return no("a parameter pattern");
        };
        let pname = pi.ident.to_string();
        let wrong = format!(
            "the routine `{name}` takes `{pname}` as {}, but the call passes {}",
            "{}", "{}"
        );
        if let Some(writable) = slice_param(&pt.ty) {
            let a = format_ident!("__acc_a_{}", pname);
            let msg = wrong
                .replacen("{}", "a slice", 1)
                .replacen("{}", "something else", 1);
            prologue.push(quote! {
                let #a = match __acc_args.get(#k) {
                    ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::Array(a)) => *a,
                    _ => { __acc_b.fail(#msg); return __acc_b.lit_bool(false); }
                };
            });
            let cap = if writable { Cap::Write } else { Cap::Read };
            tr.captured.insert(pname, (cap, a));
        } else if let Some(ty) = scalar_of(&pt.ty)
            .map(|t| quote!(::core::option::Option::Some(#t)))
            .or_else(|| generic(&pt.ty).then(|| quote!(::core::option::Option::None)))
        {
            let v = tr.fresh(&pname);
            let msg = wrong
                .replacen("{}", "a value", 1)
                .replacen("{}", "an array", 1);
            let lit = pname.clone();
            prologue.push(quote! {
                let #v = match __acc_args.get(#k) {
                    ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::Scalar(v)) => {
                        __acc_b.local(#lit, #ty, ::core::option::Option::Some(*v))
                    }
                    _ => { __acc_b.fail(#msg); return __acc_b.lit_bool(false); }
                };
            });
            tr.bind(pname, Local::Scalar(v));
        } else {
            return no(format!(
                "the parameter `{pname}: {}`",
                pt.ty.to_token_stream()
            ));
        }
    }
    let returns_unit = matches!(f.sig.output, syn::ReturnType::Default);
    let (body, result) = match stmts.split_last() {
        // A routine returning `()` ends with a statement (a loop, an `if`), not a value.
        Some((Stmt::Expr(e, None), rest)) if !returns_unit => (rest, Some(e.clone())),
        Some((Stmt::Expr(Expr::Return(r), _), rest)) => (rest, r.expr.as_deref().cloned()),
        _ => (stmts.as_slice(), None),
    };
    let early_return = has_return(body);
    let mut out = TokenStream::new();
    if early_return {
        // The body runs once inside a loop: `return` sets the result and the flag and breaks
        // out (3.3 section 2.15: a routine is called like any function; the IR has no calls).
        let (r, flag) = (tr.fresh("result"), tr.fresh("returned"));
        prologue.push(quote! {
            let #r = __acc_b.local("result", ::core::option::Option::None, ::core::option::Option::None);
            let #flag = {
                let __f = __acc_b.lit_bool(false);
                __acc_b.local("returned", ::core::option::Option::Some(::acc::__rt::kernel::Scalar::Bool), ::core::option::Option::Some(__f))
            };
        });
        tr.ret = Some((r.clone(), flag));
        let mut inner = TokenStream::new();
        for st in body {
            inner.extend(tr.stmt(st, true)?);
        }
        let set = match &result {
            Some(e) => {
                let v = tr.expr(e)?;
                quote!({ let __v = #v; __acc_b.set(#r, __v); })
            }
            None => quote!(),
        };
        out.extend(quote!(__acc_b.loop_(|__acc_b| { #inner #set __acc_b.break_(); });));
    } else {
        for st in body {
            out.extend(tr.stmt(st, true)?);
        }
    }
    let result = match (result, &tr.ret) {
        (Some(_), Some((r, _))) => quote!(__acc_b.get(#r)),
        (Some(e), None) => tr.expr(&e)?,
        (None, _) => quote!(__acc_b.lit_bool(false)),
    };
    // The fields of `self` the body indexes, as arrays.
    for name in tr.arrays_used.iter().filter(|n| n.starts_with("__self_")) {
        prologue.push(tr.array_binding(
            name,
            |msg| quote!({ __acc_b.fail(#msg); return __acc_b.lit_bool(false); }),
        ));
    }
    let n = f
        .sig
        .inputs
        .iter()
        .filter(|i| matches!(i, syn::FnArg::Typed(_)))
        .count()
        + nf;
    let count_msg = format!("the routine `{name}` takes {n} arguments");
    Ok(quote! {
        #[allow(unused_variables, unused_braces)]
        fn build(__acc_b: &mut ::acc::__rt::kernel::KernelBuilder, __acc_args: &[::acc::__rt::kernel::RoutineArg]) -> ::acc::__rt::kernel::Value {
            if __acc_args.len() != #n {
                __acc_b.fail(#count_msg);
                return __acc_b.lit_bool(false);
            }
            #(#prologue)*
            #out
            #result
        }
    })
}
