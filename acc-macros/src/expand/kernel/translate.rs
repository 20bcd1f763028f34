//! A region's kernel for one device type: its body lowered to the forms the builder takes,
//! each captured variable marshalled as the kernel's argument (read, written, reduced, or
//! privatized), the body translated, and the launch around it.

use std::collections::{BTreeMap, HashMap, HashSet};

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::{Expr, Ident, Stmt};

use super::{
    collect_loop_privates, collect_loop_reductions, flowing_out_of, ndarray, no, red_op,
    rows_flattened, rust_forms, self_fields_as_variables, self_routine_calls, strip, Cap,
    KernelOptions, Local, Tr, R,
};
use crate::analysis::bindings::Env;
use crate::analysis::uses::{path_ident, scan_stmts, Uses, VarUse};
use crate::directive::{ClauseArgs, ClauseName as C, ComputeKind, Directive, RedOp};

/// The kernel arm for device type `device` (`None`: every type), or what the kernel cannot
/// run yet.
#[allow(clippy::too_many_arguments)]
pub(super) fn translate(
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
    let value_tail = region_value(stmts, combined_loop, generic_fn)?;
    let stmts = if value_tail.is_some() {
        &stmts[..stmts.len() - 1]
    } else {
        stmts
    };
    let lowered = Lowered::of(stmts, env);
    let stmts = &lowered.stmts[..];
    let uses = scan_stmts(stmts, &[]);
    let self_borrows = self_borrows(&lowered.self_fields, &uses);
    // Loop-level reductions of captured variables (on the combined loop or any loop inside).
    let mut loop_reds = loop_reductions(combined_loop, stmts);
    // In `kernels`, a variable that code outside its reducing loops also reads or writes is the
    // region's variable, its value flowing from statement to statement as on the host (3.3
    // section 2.5.3: the loops run in order): a region local, into which each loop's partials
    // are folded after that loop, not a reduction combined once when the region ends.
    let flowing = if compute == ComputeKind::Kernels && combined_loop.is_none() {
        flowing_out_of(&mut loop_reds, region_reductions, stmts)
    } else {
        Vec::new()
    };
    let private_names = private_names(privates, stmts, combined_loop);
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
        vector_next: Vec::new(),
        ret: None,
        device,
    };
    let captures = Captures {
        env,
        region_reductions,
        loop_reds: &loop_reds,
        private_names: &private_names,
        privates,
        parts: &parts,
        uninitialized: &uninitialized,
    };
    let mut marshal = Marshal::default();
    for (name, u) in &uses.vars {
        // (`self` itself is only a routine call's receiver here: its fields are variables.)
        if name.starts_with("__acc") || name == "self" {
            continue;
        }
        tr.capture(&captures, name, u, &mut marshal)?;
    }
    let Marshal {
        mut arg_lines,
        after,
        mut locals,
    } = marshal;
    tr.row_lengths(&lowered.two_d, &mut locals)?;
    self_routine_args(stmts, &mut arg_lines);
    let store_back = tr.flowing_locals(&flowing, &mut locals)?;
    let body = tr.region_body(stmts, combined_loop, value_tail.as_ref())?;
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
    let nd_lengths = lowered.nd_lengths;
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

/// A region's value (a compute construct on a function that returns what it computed):
/// a scalar local of the region, read back after the launch. `None` where the region has no
/// value; what the kernel cannot return is refused.
fn region_value(
    stmts: &[Stmt],
    combined_loop: Option<&Directive>,
    generic_fn: bool,
) -> R<Option<Expr>> {
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
    Ok(value_tail)
}

/// The region's statements rewritten into the forms the builder takes, and what the rewrites
/// leave for the launch to bind.
struct Lowered {
    stmts: Vec<Stmt>,
    /// The fields of `self` the region uses, each now a variable `__self_f`.
    self_fields: Vec<String>,
    /// The lengths of the `ndarray` arrays indexed `a[[i, j]]`, bound before the launch.
    nd_lengths: TokenStream,
    /// The 2-D arrays indexed `a[i][j]` ([`rows_flattened`]).
    two_d: Vec<String>,
}

impl Lowered {
    fn of(stmts: &[Stmt], env: &Env) -> Lowered {
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
        Lowered {
            stmts: rewritten,
            self_fields,
            nd_lengths,
            two_d,
        }
    }
}

/// `let __self_f = &self.f;` for each field of `self` the region uses (`&mut` for one it
/// writes).
fn self_borrows(self_fields: &[String], uses: &Uses) -> Vec<TokenStream> {
    let mut self_borrows = Vec::new();
    for f in self_fields {
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
    self_borrows
}

/// The reductions of the combined loop and of the loops inside the region.
fn loop_reductions(combined_loop: Option<&Directive>, stmts: &[Stmt]) -> Vec<(RedOp, Ident)> {
    let mut loop_reds: Vec<(RedOp, Ident)> = Vec::new();
    if let Some(d) = combined_loop {
        for c in d.general(C::Reduction) {
            if let ClauseArgs::Reduction { op, vars, .. } = &c.args {
                loop_reds.extend(vars.iter().map(|v| (*op, v.name.clone())));
            }
        }
    }
    collect_loop_reductions(stmts, &mut loop_reds);
    loop_reds
}

/// Private copies (region and loop level) are made from the originals' types: the
/// originals travel read-only and are never written back.
fn private_names(
    privates: &[Ident],
    stmts: &[Stmt],
    combined_loop: Option<&Directive>,
) -> HashSet<String> {
    let mut private_names: HashSet<String> = privates.iter().map(|p| p.to_string()).collect();
    collect_loop_privates(stmts, &mut private_names);
    if let Some(d) = combined_loop {
        for c in d.general(C::Private) {
            private_names.extend(c.vars().iter().map(|v| v.name.to_string()));
        }
    }
    private_names
}

/// `&self` routines the region calls: the fields they read travel as parameters too.
fn self_routine_args(stmts: &[Stmt], arg_lines: &mut Vec<TokenStream>) {
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
}

/// What decides how the kernel takes each captured variable.
struct Captures<'a> {
    env: &'a Env,
    region_reductions: &'a [(RedOp, Ident)],
    loop_reds: &'a [(RedOp, Ident)],
    private_names: &'a HashSet<String>,
    privates: &'a [Ident],
    parts: &'a [(String, syn::Expr)],
    uninitialized: &'a [String],
}

/// The marshalling of the captured variables.
#[derive(Default)]
struct Marshal {
    /// Statements that put each variable into the launch's arguments.
    arg_lines: Vec<TokenStream>,
    /// Statements after the launch: the reductions combined back into the variables.
    after: Vec<TokenStream>,
    /// The kernel's locals made before its body: reduction partials and private copies.
    locals: Vec<TokenStream>,
}

impl Tr {
    /// Takes the captured variable `name`, used as `u`, as the kernel's argument: read,
    /// written, reduced, or (a private copy's original) read for its type; and makes the
    /// region's private copy of it.
    fn capture(&mut self, cx: &Captures, name: &str, u: &VarUse, out: &mut Marshal) -> R<()> {
        // A constant (or a static: the macro cannot tell them apart by name) is read like a
        // captured variable: its value travels with the launch.
        let span = u.span.unwrap_or_else(Span::call_site);
        let var = Ident::new(name, span);
        let p = format_ident!("__acc_p_{}", name);
        // The name messages show: `self.f` for a field.
        let shown = name
            .strip_prefix("__self_")
            .map_or_else(|| name.to_string(), |f| format!("self.{f}"));
        let red = cx
            .region_reductions
            .iter()
            .chain(cx.loop_reds)
            .find(|(_, v)| v == name)
            .map(|(op, _)| *op);
        let binding = cx.env.get(name);
        let mut_ref = |var: &Ident| {
            if binding.is_some_and(|b| !b.mutable) {
                quote!(&mut *#var)
            } else {
                quote!(&mut #var)
            }
        };
        let (cap, line) = if red.is_none() && cx.private_names.contains(name) {
            // A private array's length sizes its copies: part of the kernel's signature.
            (
                Cap::Read,
                quote! {
                    let #p = (&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().read(&mut __acc_args, #shown, &#var);
                    __acc_args.private_length(#p);
                },
            )
        } else if let Some(op) = red {
            let target = mut_ref(&var);
            self.capture_reduction(name, u, op, (&var, &p, &shown), target, out)
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
        self.captured.insert(name.to_string(), (cap, p.clone()));
        out.arg_lines.push(line);
        if let Some((_, range)) = cx.parts.iter().find(|(n, _)| n == name) {
            out.arg_lines.push(quote!(__acc_args.part(#p, #range);));
        }
        self.private_copy(cx, name, u, &p, &mut out.locals);
        Ok(())
    }

    /// A reduced variable: reduced into a kernel local (element-wise for an array), its
    /// partials combined back into the variable after the launch. `var`, `p` and `shown` are
    /// the variable, its argument and the name messages show; `target` the variable as `&mut`.
    fn capture_reduction(
        &mut self,
        name: &str,
        u: &VarUse,
        op: RedOp,
        (var, p, shown): (&Ident, &Ident, &str),
        target: TokenStream,
        out: &mut Marshal,
    ) -> (Cap, TokenStream) {
        let o = red_op(op);
        out.after.push(quote!((&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().reduce_back(__acc_dev, #target, &__acc_out, #p, #o);));
        let v = self.fresh(name);
        let name_lit = name.to_string();
        if u.indexes.is_empty() {
            out.locals.push(quote! {
                let #v = __acc_h.reduction_local(__acc_b, #p, #name_lit, #o);
            });
            self.bind(name.to_string(), Local::Scalar(v));
        } else {
            // An array reduced element-wise.
            out.locals.push(quote! {
                let #v = __acc_h.reduction_array(__acc_b, #p, #name_lit, #o);
                __acc_b.reduce_into(#v, #o, #p as u32);
            });
            self.bind(name.to_string(), Local::Array(v));
        }
        (
            Cap::Reduction(op),
            quote!(let #p = (&&::acc::__rt::kernel::Probe::of(&#var)).acc_kind().reduction(&mut __acc_args, #shown, &#var, #o);),
        )
    }

    /// The region's own private copy (3.3 sections 2.5.13, 2.5.14), initialized from the
    /// original.
    fn private_copy(
        &mut self,
        cx: &Captures,
        name: &str,
        u: &VarUse,
        p: &Ident,
        locals: &mut Vec<TokenStream>,
    ) {
        // An array the region only reads needs no copy: it reads the original's values.
        let read_only_array =
            !u.indexes.is_empty() && !u.place_written && !u.assigned && !u.mut_borrowed;
        if cx.privates.iter().any(|v| v == name) && !read_only_array {
            let v = self.fresh(name);
            let array = !u.indexes.is_empty();
            let name_lit = name.to_string();
            // A `private` array starts undefined: its original is not read (nor copied in); a
            // scalar's value travels in the launch's arguments anyway.
            let first = !(array && cx.uninitialized.iter().any(|n| n == name));
            locals.push(quote!(let #v = __acc_h.private(__acc_b, #p, #name_lit, #first, #array);));
            self.bind(
                name.to_string(),
                if array {
                    Local::Array(v)
                } else {
                    Local::Scalar(v)
                },
            );
        }
    }

    /// The region's body as builder calls: the combined construct's loop, or the statements
    /// and then the region's value (`value_tail`) as the kernel's result.
    fn region_body(
        &mut self,
        stmts: &[Stmt],
        combined_loop: Option<&Directive>,
        value_tail: Option<&Expr>,
    ) -> R<TokenStream> {
        Ok(match combined_loop {
            Some(d) => match stmts {
                [Stmt::Expr(e, _)] => self.expr_stmt(e, Some(d.clone()), false)?,
                _ => return no("a combined construct without its loop"),
            },
            None => {
                let mut out = TokenStream::new();
                for st in stmts {
                    out.extend(self.stmt(st, false)?);
                }
                if let Some(tail) = value_tail {
                    let name = path_ident(tail).map(|i| i.to_string()).unwrap_or_default();
                    if !matches!(self.lookup(&name), Some(Local::Scalar(_))) {
                        return no(format!(
                            "a region whose value is `{name}`, not one of its scalar variables"
                        ));
                    }
                    let v = self.expr(tail)?;
                    out.extend(quote!({ let __v = #v; __acc_b.result(__v); }));
                }
                out
            }
        })
    }
}
