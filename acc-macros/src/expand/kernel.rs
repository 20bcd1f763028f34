//! The kernel arm of a compute region: the region's body translated into calls of the kernel
//! IR builder (`::acc::__rt::kernel`), and the captured variables marshalled as the kernel's
//! arguments (docs/design-notes/ir-and-backends.md). What the translation does not cover yet makes the
//! arm an `acc::Error` at run time naming the construct, on kernel devices only; the host and
//! multicore arms are unaffected.

mod access;
mod atomic;
mod cache_directive;
mod expr;
mod ndarray;
mod routine;
mod rust_forms;
mod schedule;
mod stmt;
mod struct_values;
mod translate;
mod tuple_return;

use crate::analysis::reduction_update::strip;
pub(crate) use routine::collect_loop_privates;
use routine::{collect_loop_reductions, has_return, self_fields_as_variables, self_routine_calls};
pub use routine::{routine_builder, routine_self_fields, routine_written_fields};
use translate::translate;

use std::collections::{BTreeMap, HashMap};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::{BinOp, Expr, Ident, Lit, Pat, Stmt, UnOp};

use super::attrs;
use crate::analysis::bindings::Env;
use crate::analysis::uses::{path_ident, scan_stmts};
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
    /// A struct value, `let p = ps[i];` whose fields the code uses (`p.x`): the builder
    /// variable holding its `StructValue` (a local per field).
    Struct(Ident),
    /// A private array of structs, `let mut ps = [P { .. }; 4];`: the builder variable holding
    /// its `StructArray` (a private array per field).
    StructArray(Ident),
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
    /// The loops (their addresses in the syntax tree) that the enclosing parallel loop, made
    /// a gang loop, left to be its vector loops ([`Tr::inner_vector_loops`]).
    vector_next: Vec<usize>,
    /// In a routine with an early `return`: its result local and its "returned" flag. The
    /// body runs inside a loop that `return` breaks out of, and each loop of the body passes
    /// the break on once the flag is set.
    ret: Option<(Ident, Ident)>,
    /// The device type the kernel is built for, when the region's directives have
    /// `device_type` sections (3.3 section 2.4): its loops take that type's clauses.
    device: Option<&'static str>,
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
    let p = match ty {
        syn::Type::Path(p) => p,
        // A type from a `macro_rules!` fragment (`$t`) comes wrapped in a group.
        syn::Type::Group(g) => return scalar_of(&g.elem),
        syn::Type::Paren(p) => return scalar_of(&p.elem),
        _ => return None,
    };
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
        // `half::f16` and `half::bf16` (feature `half`), imported by name.
        "f16" => "F16",
        "bf16" => "BF16",
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
    /// Directive `d` as it applies on the device type the kernel is built for.
    /// A directive as this kernel's device type sees it (3.3 section 2.4); a routine's body,
    /// built for no one device, sees it whole.
    fn on_device(&self, d: &Directive) -> Directive {
        match self.device {
            Some(dev) => d.for_device(dev),
            None => d.clone(),
        }
    }

    fn fresh(&mut self, base: &str) -> Ident {
        self.counter += 1;
        format_ident!("__acc_v{}_{}", self.counter, base.trim_start_matches("r#"))
    }

    fn lookup(&self, name: &str) -> Option<Local> {
        self.scopes.iter().rev().find_map(|s| s.get(name).cloned())
    }

    /// What the plain name `e` is bound to, if it is one.
    fn lookup_path(&self, e: &Expr) -> Option<Local> {
        path_ident(strip(e)).and_then(|id| self.lookup(&id.to_string()))
    }

    fn bind(&mut self, name: String, l: Local) {
        self.scopes.last_mut().expect("a scope").insert(name, l);
    }
}

/// The name of a struct member as the layouts name it (`x`, or `0` of a tuple struct).
fn member_name(m: &syn::Member) -> String {
    match m {
        syn::Member::Named(id) => id.to_string(),
        syn::Member::Unnamed(i) => i.index.to_string(),
    }
}

/// `a[i][j]` of a variable bound outside the region (a 2-D array, `[[T; M]; N]`) rewritten
/// as `a[(i) * __acc_row_a + (j)]`, and the names so rewritten; the kernel binds
/// `__acc_row_a` to `M`, from the parameter ([`Tr`]'s locals).
fn rows_flattened(stmts: Vec<Stmt>, env: &Env) -> (Vec<Stmt>, Vec<String>) {
    struct Flatten<'a> {
        env: &'a Env,
        names: Vec<String>,
    }
    impl syn::visit_mut::VisitMut for Flatten<'_> {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            syn::visit_mut::visit_expr_mut(self, e);
            let Expr::Index(outer) = e else { return };
            let Expr::Index(inner) = strip(&outer.expr).clone() else {
                return;
            };
            let Some(id) = path_ident(&inner.expr) else {
                return;
            };
            let name = id.to_string();
            if self.env.get(&name).is_none()
                || matches!(strip(&inner.index), Expr::Range(_))
                || matches!(strip(&outer.index), Expr::Range(_))
            {
                return;
            }
            let row = format_ident!("__acc_row_{}", name);
            let (i, j) = (&inner.index, &outer.index);
            *e = syn::parse_quote!(#id[(#i) * #row + (#j)]);
            if !self.names.contains(&name) {
                self.names.push(name);
            }
        }
    }
    let mut f = Flatten {
        env,
        names: Vec::new(),
    };
    let mut stmts = stmts;
    for st in &mut stmts {
        syn::visit_mut::VisitMut::visit_stmt_mut(&mut f, st);
    }
    (stmts, f.names)
}

/// Takes out of `loop_reds` the variables that code outside their reducing loops also uses
/// (not the region's own reductions), and returns their names, once each: in `kernels` their
/// value flows through the region ([`Tr::flowing_locals`]).
fn flowing_out_of(
    loop_reds: &mut Vec<(RedOp, Ident)>,
    region_reductions: &[(RedOp, Ident)],
    stmts: &[Stmt],
) -> Vec<String> {
    let mut flowing: Vec<String> = Vec::new();
    loop_reds.retain(|(_, v)| {
        let name = v.to_string();
        let keep = region_reductions.iter().any(|(_, r)| r == v)
            || !super::recognized_reductions::used_outside_reducing_loops(stmts, &name);
        if !keep && !flowing.contains(&name) {
            flowing.push(name);
        }
        keep
    });
    flowing
}

impl Tr {
    /// The row lengths of the 2-D arrays indexed `a[i][j]` ([`rows_flattened`]), as locals set
    /// from their parameters.
    fn row_lengths(&mut self, two_d: &[String], locals: &mut Vec<TokenStream>) -> R<()> {
        for name in two_d {
            let row = format_ident!("__acc_row_{}", name);
            if !self.captured.contains_key(name) {
                return no(format!("indexing `{name}[..][..]`"));
            }
            let p = format_ident!("__acc_p_{}", name);
            let v = self.fresh(&row.to_string());
            locals.push(quote! {
                let #v = { let __r = __acc_h.row(__acc_b, #p, #name); __acc_b.local("row length", ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize), ::core::option::Option::Some(__r)) };
            });
            self.bind(row.to_string(), Local::Scalar(v));
        }
        Ok(())
    }

    /// The variables whose value flows through a `kernels` region ([`flowing_out_of`]): each a
    /// region local loaded from the variable's device copy first (into `locals`); returns the
    /// statements that store them back last.
    fn flowing_locals(
        &mut self,
        flowing: &[String],
        locals: &mut Vec<TokenStream>,
    ) -> R<TokenStream> {
        let mut store_back = TokenStream::new();
        for name in flowing {
            if !matches!(self.captured.get(name), Some((Cap::WriteScalar, _))) {
                return no(format!(
                    "a reduction of `{name}`, which the region also uses outside its loops"
                ));
            }
            self.arrays_used.insert(name.clone());
            let a = format_ident!("__acc_a_{}", name);
            let v = self.fresh(name);
            let zero = quote!(__acc_b.lit_int(
                0,
                ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize)
            ));
            locals.push(quote! {
                let #v = { let __i = #zero; let __init = __acc_b.load(#a, __i); __acc_b.local(#name, ::core::option::Option::None, ::core::option::Option::Some(__init)) };
            });
            store_back.extend(
                quote!({ let __i = #zero; let __v = __acc_b.get(#v); __acc_b.store(#a, __i, __v); }),
            );
            self.bind(name.clone(), Local::Scalar(v));
        }
        Ok(store_back)
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
    /// `unchecked`: no bounds checks (docs/guide/regions.md).
    pub unchecked: bool,
    /// `vector_length(n)` with a constant `n` (for every device type): the `u32` expression
    /// the builder takes (a literal, or a `const` item's value).
    pub vector_length: Option<TokenStream>,
    /// The subarrays the construct's data clauses name: variable, range as written (3.3
    /// section 2.7.1). The region uses that part of the array when only it is on the device.
    pub parts: Vec<(String, syn::Expr)>,
    /// The construct's `private` variables that no `firstprivate` names (nor the implicit
    /// rule): their copies start undefined (3.3 section 2.5.13), so an array's original is
    /// never read, and never travels to the device.
    pub uninitialized: Vec<String>,
}

/// The kernel arm: argument marshalling, the kernel builder and the launch; or, when the body
/// uses what kernels do not support yet, an error at run time naming it. `options` gives the
/// construct's clauses for a device type (`None`: every type). When the construct or a loop in
/// it has `device_type` sections (3.3 section 2.4), the arm is built once per GPU device type,
/// each with that type's clauses, and the launch picks the one for its device.
#[allow(clippy::too_many_arguments)]
pub fn kernel_arm(
    compute: ComputeKind,
    stmts: &[Stmt],
    combined_loop: Option<&Directive>,
    env: &Env,
    region_reductions: &[(RedOp, Ident)],
    privates: &[Ident],
    generic_fn: bool,
    sections: bool,
    options: impl Fn(Option<&'static str>) -> KernelOptions,
) -> TokenStream {
    let arm = |device: Option<&'static str>| {
        let combined = combined_loop.map(|d| match device {
            Some(dev) => d.for_device(dev),
            None => d.clone(),
        });
        match translate(
            compute,
            stmts,
            combined.as_ref(),
            env,
            region_reductions,
            privates,
            generic_fn,
            device,
            options(device),
        ) {
            Ok(ts) => ts,
            Err(why) => quote!(::acc::__rt::kernel::unsupported(&__ACC_SITE, __acc_dev, #why)),
        }
    };
    if !sections {
        return arm(None);
    }
    let (nvidia, wgpu) = (arm(Some("nvidia")), arm(Some("wgpu")));
    quote! {
        if ::acc::__rt::kernel::device_type_of(__acc_dev) == ::acc::DeviceType::Nvidia {
            #nvidia
        } else {
            #wgpu
        }
    }
}

/// Whether a directive attribute in `stmts` has a `device_type` section.
pub fn has_device_type_sections(stmts: &[Stmt]) -> bool {
    struct Find(bool);
    impl<'ast> syn::visit::Visit<'ast> for Find {
        fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
            let text = a.meta.to_token_stream().to_string();
            if text.contains("device_type") || text.contains("dtype") {
                self.0 = true;
            }
        }
    }
    let mut f = Find(false);
    for st in stmts {
        syn::visit::Visit::visit_stmt(&mut f, st);
    }
    f.0
}

/// One level of a loop nest: its variable, the range's start and end, whether the range is
/// inclusive, and the `.rev()` (`None`) and `.step_by(s)` applied to it, in order.
pub(crate) type Level = (Ident, Box<Expr>, Box<Expr>, bool, Vec<Option<Expr>>);

/// How many loops of the nest the directive's `collapse` or `tile` takes (1 without either).
pub(crate) fn collapse_depth(dir: Option<&Directive>) -> usize {
    dir.and_then(|d| {
        d.clauses.iter().find_map(|c| match &c.args {
            ClauseArgs::Collapse { n, .. } if c.device_types.is_none() => Some(*n),
            ClauseArgs::Tile(s) if c.device_types.is_none() => Some(s.len()),
            _ => None,
        })
    })
    .unwrap_or(1)
}

/// Whether `let` statement `l` holds a loop (in its initialiser or its `else`).
pub(crate) fn holds_a_loop(l: &syn::Local) -> bool {
    struct Find(bool);
    impl<'a> syn::visit::Visit<'a> for Find {
        fn visit_expr(&mut self, e: &'a Expr) {
            if matches!(e, Expr::ForLoop(_) | Expr::While(_) | Expr::Loop(_)) {
                self.0 = true;
            } else {
                syn::visit::visit_expr(self, e);
            }
        }
    }
    let mut f = Find(false);
    syn::visit::Visit::visit_local(&mut f, l);
    f.0
}

#[cfg(test)]
mod tests {
    use crate::directive::DirectiveKind;
    use quote::quote;

    /// The kernel arm of the region in `item` (an `#[acc::offload]` function): the code from
    /// the first kernel arm on, as tokens.
    fn kernel_of(item: proc_macro2::TokenStream) -> String {
        let out = crate::expand::expand_fn(DirectiveKind::Offload, quote!(), item).to_string();
        assert!(!out.contains("compile_error"), "{out}");
        let at = out
            .find("device_type_of")
            .or_else(|| out.find("kernel :: launch"))
            .or_else(|| out.find("kernel :: unsupported"))
            .expect("a kernel arm");
        out[at..].to_string()
    }

    #[test]
    fn a_reduction_loop_is_a_private_copy_and_a_reduced_parallel_loop() {
        let k = kernel_of(quote! {
            fn f(x: &[f32], n: usize) -> f32 {
                let mut s = 0.0f32;
                #[acc::parallel_loop(copyin(x), reduction(+: s))]
                for i in 0..n {
                    s += x[i];
                }
                s
            }
        });
        assert!(
            k.contains("let __acc_v1_s = __acc_h . reduction_local (__acc_b , __acc_p_s , \"s\" , :: acc :: __rt :: kernel :: ReduceOp :: Add)"),
            "{k}"
        );
        // A combined construct's loop: gang and vector, reducing the private copy.
        assert!(
            k.contains("Schedule { gang : true , worker : false , vector : true }"),
            "{k}"
        );
        assert!(
            k.contains("& [(__acc_v1_s , :: acc :: __rt :: kernel :: ReduceOp :: Add)]"),
            "{k}"
        );
        // `s += x[i]`: the current value read, added, set.
        assert!(k.contains("let __cur = __acc_b . get (__acc_v1_s)"), "{k}");
        assert!(k.contains("__acc_b . set (__acc_v1_s , __v)"), "{k}");
    }

    #[test]
    fn branches_and_stores_follow_the_source() {
        let k = kernel_of(quote! {
            fn f(x: &[f32], y: &mut [f32], n: usize) {
                #[acc::parallel_loop(copyin(x), copyout(y))]
                for i in 0..n {
                    if x[i] > 0.0 { y[i] = x[i] * 2.0 + 1.0; } else { y[i] = 0.0; }
                }
            }
        });
        assert!(k.contains("BinaryOp :: Gt"), "{k}");
        assert!(k.contains("__acc_b . if_ (__c , | __acc_b |"), "{k}");
        // `x[i] * 2.0 + 1.0`: the product first, as Rust groups it.
        let (mul, add) = (
            k.find("BinaryOp :: Mul").unwrap(),
            k.find("BinaryOp :: Add").unwrap(),
        );
        assert!(mul < add, "{k}");
        assert_eq!(
            k.matches("__acc_b . store (__a , __i , __v)").count(),
            2,
            "{k}"
        );
    }

    #[test]
    fn a_routine_call_goes_through_its_marker() {
        let k = kernel_of(quote! {
            fn f(x: &[f32], y: &mut [f32], n: usize) {
                #[acc::parallel_loop(copyin(x), copyout(y))]
                for i in 0..n {
                    y[i] = sq(x[i]);
                }
            }
        });
        assert!(k.contains("RoutineArg :: Scalar"), "{k}");
        assert!(
            k.contains("(sq_must_be_an_acc_routine . build) (__acc_b , & __args)"),
            "{k}"
        );
    }

    #[test]
    fn what_kernels_cannot_run_is_an_error_naming_it_at_run_time() {
        let k = kernel_of(quote! {
            fn f(x: &[f32], y: &mut [f32], n: usize) {
                #[acc::parallel_loop(copyin(x), copyout(y))]
                for i in 0..n {
                    y[i] = x[i] + b'a' as f32;
                }
            }
        });
        assert!(
            k.contains("kernel :: unsupported (& __ACC_SITE , __acc_dev , \"the literal `b'a'`\")"),
            "{k}"
        );
    }

    #[test]
    fn device_type_sections_build_an_arm_per_gpu_type() {
        let k = kernel_of(quote! {
            fn f(y: &mut [f32], n: usize) {
                #[acc::parallel_loop(copy(y), device_type(nvidia), vector_length(64))]
                for i in 0..n {
                    y[i] += 1.0;
                }
            }
        });
        assert!(
            k.contains("device_type_of (__acc_dev) == :: acc :: DeviceType :: Nvidia"),
            "{k}"
        );
        assert!(k.matches("for_tiled").count() >= 2, "{k}");
    }
}
