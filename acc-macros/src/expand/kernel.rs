//! The kernel arm of a compute region: the region's body translated into calls of the kernel
//! IR builder (`::acc::__rt::kernel`), and the captured variables marshalled as the kernel's
//! arguments (docs/design-notes/ir-and-backends.md). What the translation does not cover yet makes the
//! arm an `acc::Error` at run time naming the construct, on kernel devices only; the host and
//! multicore arms are unaffected.

mod access;
mod atomic;
mod cache;
mod expr;
mod ndarray;
mod routine;
mod rust_forms;
mod stmt;
mod struct_values;
mod tuple_return;

use crate::analysis::reduction_update::strip;
pub(crate) use routine::collect_loop_privates;
use routine::{collect_loop_reductions, has_return, self_fields_as_variables, self_routine_calls};
pub use routine::{routine_builder, routine_self_fields, routine_written_fields};

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
    /// The loop (its address in the syntax tree) that the enclosing `kernels` parallel loop,
    /// made a gang loop, left to be its vector loop ([`Tr::kernels_vector_loop`]).
    vector_next: Option<usize>,
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

#[allow(clippy::too_many_arguments)]
fn translate(
    compute: ComputeKind,
    stmts: &[Stmt],
    combined_loop: Option<&Directive>,
    env: &Env,
    region_reductions: &[(RedOp, Ident)],
    privates: &[Ident],
    generic_fn: bool,
    device: Option<&'static str>,
    KernelOptions {
        unchecked,
        vector_length,
        parts,
        uninitialized,
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
    // `a[[i, j]]` of an `ndarray` array: an offset into its elements.
    let (rewritten, nd_lengths) = ndarray::lower(&rewritten);
    // `match` and tuple assignments as the builder takes them.
    let rewritten = rust_forms::lower(&rewritten);
    // `a[i][j]` of a captured 2-D array: `a[i * M + j]`, `M` its row length.
    let (rewritten, two_d) = rows_flattened(rewritten, env);
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
    // In `kernels`, a variable that code outside its reducing loops also reads or writes is the
    // region's variable, its value flowing from statement to statement as on the host (3.3
    // section 2.5.3: the loops run in order): a region local, into which each loop's partials
    // are folded after that loop, not a reduction combined once when the region ends.
    let flowing = if compute == ComputeKind::Kernels && combined_loop.is_none() {
        flowing_out_of(&mut loop_reds, region_reductions, stmts)
    } else {
        Vec::new()
    };
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
    // A loop reduction into a private variable (a gang loop's, or the construct's
    // `firstprivate`) reduces into that copy, not into the captured variable.
    loop_reds.retain(|(_, v)| {
        region_reductions.iter().any(|(_, r)| r == v) || !private_names.contains(&v.to_string())
    });

    let mut tr = Tr {
        in_routine: false,
        arrays_used: Default::default(),
        compute,
        captured: BTreeMap::new(),
        scopes: vec![HashMap::new()],
        region_reductions: region_reductions.to_vec(),
        counter: 0,
        vector_next: None,
        ret: None,
        device,
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
                    let #v = __acc_h.reduction_local(__acc_b, #p, #name_lit, #o);
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
            // A `private` array starts undefined: its original is not read (nor copied in); a
            // scalar's value travels in the launch's arguments anyway.
            let first = !(array && uninitialized.iter().any(|n| n == name));
            locals.push(quote!(let #v = __acc_h.private(__acc_b, #p, #name_lit, #first, #array);));
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
    tr.row_lengths(&two_d, &mut locals)?;
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
    let store_back = tr.flowing_locals(&flowing, &mut locals)?;
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
    let arg_count = arg_lines.len();
    Ok(quote! {{
        #[allow(unused_imports)]
        use ::acc::__rt::kernel::{KindData as _, KindRefuse as _, KindScalar as _};
        #(#self_borrows)*
        #nd_lengths
        let mut __acc_args = ::acc::__rt::kernel::Args::with_capacity(#arg_count);
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
                // `unchecked` (docs/guide/regions.md): the kernel's accesses are not bounds-checked.
                __acc_b.set_unchecked(#unchecked);
                #set_vector_length
                #(#resolve)*
                #(#locals)*
                #body
                #store_back
                ::core::result::Result::Ok(())
            },
        );
        ::core::mem::drop(__acc_args);
        #(#after)*
        #value
    }})
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
