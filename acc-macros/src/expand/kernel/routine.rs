//! `#[acc::routine]` functions and `&self` methods in the kernel translation: the builder of a
//! routine's body, and the fields of `self` a region or routine uses.

use super::*;

/// `stmts` with every `self.f` replaced by the variable `__self_f`; the fields, in order.
pub(super) fn self_fields_as_variables(stmts: &[Stmt], fields: &mut Vec<String>) -> Vec<Stmt> {
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
pub(super) fn self_routine_calls(stmts: &[Stmt]) -> Vec<Ident> {
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

pub(crate) fn collect_loop_privates(stmts: &[Stmt], out: &mut std::collections::HashSet<String>) {
    struct V<'a>(&'a mut std::collections::HashSet<String>);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_stmt(&mut self, st: &'ast Stmt) {
            for a in attrs::stmt_attrs(st) {
                {
                    if let Some(d) = crate::directive::parsed::loop_of(a) {
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

pub(super) fn collect_loop_reductions(stmts: &[Stmt], out: &mut Vec<(RedOp, Ident)>) {
    struct V<'a>(&'a mut Vec<(RedOp, Ident)>);
    impl<'ast> syn::visit::Visit<'ast> for V<'_> {
        fn visit_stmt(&mut self, st: &'ast Stmt) {
            for a in attrs::stmt_attrs(st) {
                {
                    if let Some(d) = crate::directive::parsed::loop_of(a) {
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
pub(super) fn slice_param(ty: &syn::Type) -> Option<bool> {
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
pub(super) fn has_return(stmts: &[Stmt]) -> bool {
    crate::analysis::uses::scan_stmts(stmts, &[])
        .returns
        .iter()
        .any(|(_, w)| *w == "return")
}

/// The routine's `build` function: its parameters bound to the call's arguments (`self`'s
/// fields first), its body translated (inside a loop where it returns early), and its result.
pub(super) fn routine_body(f: &syn::ItemFn) -> R<TokenStream> {
    let type_params = type_params(f)?;
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
        vector_next: Vec::new(),
        ret: None,
        device: None,
    };
    let mut prologue = Vec::new();
    // A `&self` method reads fields of `self`: each is an argument of the call, before the
    // declared ones (`__acc_h` resolves them, as parameters are in a region).
    let mut self_fields = Vec::new();
    let lowered = routine_stmts(f, &mut self_fields)?;
    let stmts = &lowered;
    tr.self_field_params(f, &self_fields, stmts, &mut prologue)?;
    let nf = self_fields.len();
    let typed = f
        .sig
        .inputs
        .iter()
        .filter(|i| matches!(i, syn::FnArg::Typed(_)));
    for (k, input) in typed.enumerate() {
        prologue.push(tr.routine_param(&name, k + nf, input, &generic)?);
    }
    // A tuple result: the body assigns one local per element (`tuple_return`).
    let tuple = super::tuple_return::tuple_arity(f);
    let tuple_body;
    let mut ret_vars = Vec::new();
    let stmts: &[Stmt] = match tuple {
        Some(n) => {
            tuple_body = super::tuple_return::rewrite_body(stmts, n)?;
            ret_vars = tr.tuple_result_locals(n, &mut prologue);
            &tuple_body
        }
        None => stmts,
    };
    let returns_unit = tuple.is_some() || matches!(f.sig.output, syn::ReturnType::Default);
    let (body, result) = match stmts.split_last() {
        // A routine returning `()` ends with a statement (a loop, an `if`), not a value.
        Some((Stmt::Expr(e, None), rest)) if !returns_unit => (rest, Some(e.clone())),
        Some((Stmt::Expr(Expr::Return(r), _), rest)) => (rest, r.expr.as_deref().cloned()),
        _ => (stmts, None),
    };
    let out = tr.routine_statements(body, result.as_ref(), &mut prologue)?;
    let result = tr.routine_result(result, tuple.is_some(), &ret_vars)?;
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

/// A generic routine's parameters of a type parameter take the type of the argument at each
/// call (its IR is built per call, in the caller's kernel): the type parameters. A const
/// parameter is refused.
fn type_params(f: &syn::ItemFn) -> R<Vec<Ident>> {
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
    Ok(type_params)
}

/// The routine's statements as the builder takes them: a `&self` method's fields made
/// variables (the fields into `self_fields`), `match` and tuple assignments lowered.
fn routine_stmts(f: &syn::ItemFn, self_fields: &mut Vec<String>) -> R<Vec<Stmt>> {
    let rewritten;
    let stmts = match f.sig.receiver() {
        None => &f.block.stmts,
        Some(r) if r.reference.is_some() => {
            rewritten = self_fields_as_variables(&f.block.stmts, self_fields);
            &rewritten
        }
        Some(_) => {
            return no("methods taking `self` by value (routines may take `&self` or `&mut self`)")
        }
    };
    // `match` and tuple assignments as the builder takes them.
    Ok(super::rust_forms::lower(stmts))
}

impl Tr {
    /// The fields of `self` a method's body uses, bound to the call's first arguments.
    fn self_field_params(
        &mut self,
        f: &syn::ItemFn,
        self_fields: &[String],
        stmts: &[Stmt],
        prologue: &mut Vec<TokenStream>,
    ) -> R<()> {
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
            self.captured.insert(name, (cap, p));
        }
        let names: Vec<String> = self_fields.iter().map(|f| format!("self.{f}")).collect();
        prologue.push(quote!(let __acc_h = ::acc::__rt::kernel::RoutineSelf::new(__acc_b, &__acc_args[..#nf], &[#(#names),*]);));
        Ok(())
    }

    /// The routine `name`'s parameter `input`, bound to the call's argument `k` by the kind of
    /// its type: a slice, `&mut` of a scalar, a scalar value (or `&` of one), or a struct.
    fn routine_param(
        &mut self,
        name: &str,
        k: usize,
        input: &syn::FnArg,
        generic: &dyn Fn(&syn::Type) -> bool,
    ) -> R<TokenStream> {
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
        Ok(if let Some(writable) = slice_param(&pt.ty) {
            self.slice_param_binding(pname, k, writable, &wrong)
        } else if scalar_mut_reference(&pt.ty, generic) {
            self.scalar_reference_binding(pname, k, &wrong)
        } else if let Some(ty) = scalar_of(shared_referent(&pt.ty))
            .map(|t| quote!(::core::option::Option::Some(#t)))
            .or_else(|| {
                // A generic `T`, or a `num_complex::Complex` (its type is the argument's).
                let value = shared_referent(&pt.ty);
                (generic(value) || complex_type(value))
                    .then(|| quote!(::core::option::Option::None))
            })
        {
            self.value_param_binding(pname, k, ty, &wrong)
        } else if matches!(&*pt.ty, syn::Type::Path(p) if p.qself.is_none()) {
            self.struct_param_binding(pname, k, &wrong)
        } else {
            return no(format!(
                "the parameter `{pname}: {}`",
                pt.ty.to_token_stream()
            ));
        })
    }

    /// A slice of the caller's arrays, or the caller's private array (its elements, the
    /// routine being inlined). `wrong` is the message for a mismatched argument, its two
    /// `{}` to fill.
    fn slice_param_binding(
        &mut self,
        pname: String,
        k: usize,
        writable: bool,
        wrong: &str,
    ) -> TokenStream {
        let a = format_ident!("__acc_a_{}", pname);
        let msg = wrong
            .replacen("{}", "a slice", 1)
            .replacen("{}", "something else", 1);
        let binding = quote! {
            let #a = match __acc_args.get(#k) {
                ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::Array(a)) => *a,
                ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::LocalArray(v)) => __acc_b.private_as_array(*v),
                _ => { __acc_b.fail(#msg); return __acc_b.lit_bool(false); }
            };
        };
        let cap = if writable { Cap::Write } else { Cap::Read };
        self.captured.insert(pname, (cap, a));
        binding
    }

    /// `&mut T` of a scalar: the caller's local itself (routines are inlined).
    fn scalar_reference_binding(&mut self, pname: String, k: usize, wrong: &str) -> TokenStream {
        let v = self.fresh(&pname);
        let msg = wrong
            .replacen("{}", "`&mut` of a scalar variable", 1)
            .replacen(
                "{}",
                "something else (pass `&mut x` of a variable of the region)",
                1,
            );
        let binding = quote! {
            let #v = match __acc_args.get(#k) {
                ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::Local(v)) => *v,
                _ => { __acc_b.fail(#msg); return __acc_b.lit_bool(false); }
            };
        };
        self.bind(pname, Local::Scalar(v));
        binding
    }

    /// A scalar value (or `&` of one) of type `ty` (an `Option<Scalar>`): a local of the
    /// routine holding the argument's value.
    fn value_param_binding(
        &mut self,
        pname: String,
        k: usize,
        ty: TokenStream,
        wrong: &str,
    ) -> TokenStream {
        let v = self.fresh(&pname);
        let msg = wrong
            .replacen("{}", "a value", 1)
            .replacen("{}", "an array", 1);
        let lit = pname.clone();
        let binding = quote! {
            let #v = match __acc_args.get(#k) {
                ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::Scalar(v)) => {
                    __acc_b.local(#lit, #ty, ::core::option::Option::Some(*v))
                }
                // A variable of the caller: its value, copied.
                ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::Local(v)) => {
                    let v = __acc_b.get(*v);
                    __acc_b.local(#lit, #ty, ::core::option::Option::Some(v))
                }
                ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::Struct(s)) => {
                    let v = s.value(__acc_b);
                    __acc_b.local(#lit, #ty, ::core::option::Option::Some(v))
                }
                _ => { __acc_b.fail(#msg); return __acc_b.lit_bool(false); }
            };
        };
        self.bind(pname, Local::Scalar(v));
        binding
    }

    /// A `DeviceCopy` struct passed by value: a copy of the caller's struct value.
    fn struct_param_binding(&mut self, pname: String, k: usize, wrong: &str) -> TokenStream {
        let v = self.fresh(&pname);
        let msg = wrong
            .replacen("{}", "a struct value (or a type kernels do not know)", 1)
            .replacen(
                "{}",
                "something else (pass a value bound by `let p = ps[i];`)",
                1,
            );
        let lit = pname.clone();
        let binding = quote! {
            let #v = match __acc_args.get(#k) {
                ::core::option::Option::Some(::acc::__rt::kernel::RoutineArg::Struct(s)) => s.copy(__acc_b, #lit),
                _ => { __acc_b.fail(#msg); return __acc_b.lit_bool(false); }
            };
        };
        self.bind(pname, Local::Struct(v));
        binding
    }

    /// The locals of a tuple result's `n` elements, which the rewritten body assigns.
    fn tuple_result_locals(&mut self, n: usize, prologue: &mut Vec<TokenStream>) -> Vec<Ident> {
        let mut ret_vars = Vec::new();
        for i in 0..n {
            let name = super::tuple_return::ret_name(i);
            let v = self.fresh(&name);
            prologue.push(quote!(let #v = __acc_b.local(#name, ::core::option::Option::None, ::core::option::Option::None);));
            self.bind(name, Local::Scalar(v.clone()));
            ret_vars.push(v);
        }
        ret_vars
    }

    /// The routine's statements before its result; with an early `return`, run once inside a
    /// loop that the result's local and flag (set up into `prologue`) let `return` leave.
    fn routine_statements(
        &mut self,
        body: &[Stmt],
        result: Option<&Expr>,
        prologue: &mut Vec<TokenStream>,
    ) -> R<TokenStream> {
        let early_return = has_return(body);
        let mut out = TokenStream::new();
        if early_return {
            // The body runs once inside a loop: `return` sets the result and the flag and breaks
            // out (3.3 section 2.15: a routine is called like any function; the IR has no calls).
            let (r, flag) = (self.fresh("result"), self.fresh("returned"));
            prologue.push(quote! {
                let #r = __acc_b.local("result", ::core::option::Option::None, ::core::option::Option::None);
                let #flag = {
                    let __f = __acc_b.lit_bool(false);
                    __acc_b.local("returned", ::core::option::Option::Some(::acc::__rt::kernel::Scalar::Bool), ::core::option::Option::Some(__f))
                };
            });
            self.ret = Some((r.clone(), flag));
            let inner = self.stmts_in_scope(body, true)?;
            let set = match result {
                Some(e) => {
                    let v = self.expr(e)?;
                    quote!({ let __v = #v; __acc_b.set(#r, __v); })
                }
                None => quote!(),
            };
            out.extend(quote!(__acc_b.loop_(|__acc_b| { #inner #set __acc_b.break_(); });));
        } else {
            out.extend(self.stmts_in_scope(body, true)?);
        }
        Ok(out)
    }

    /// The routine's value: its tuple result's elements, the result local an early `return`
    /// sets, its final expression, or nothing (`false`) for a routine returning `()`.
    fn routine_result(
        &mut self,
        result: Option<Expr>,
        tuple: bool,
        ret_vars: &[Ident],
    ) -> R<TokenStream> {
        Ok(match (result, &self.ret) {
            _ if tuple => quote!({
                let __vals = ::std::vec![#(__acc_b.get(#ret_vars)),*];
                __acc_b.set_tuple_result(__vals);
                __acc_b.lit_bool(false)
            }),
            (Some(_), Some((r, _))) => quote!(__acc_b.get(#r)),
            (Some(e), None) => self.expr(&e)?,
            (None, _) => quote!(__acc_b.lit_bool(false)),
        })
    }
}

/// `&mut T` of a scalar or of a type parameter (`&mut f64`): a routine parameter bound to the
/// caller's variable.
fn scalar_mut_reference(ty: &syn::Type, generic: &dyn Fn(&syn::Type) -> bool) -> bool {
    matches!(ty, syn::Type::Reference(r)
        if r.mutability.is_some() && (scalar_of(&r.elem).is_some() || generic(&r.elem)))
}

/// The type a `&T` parameter refers to (a routine takes `&f64` as the value); `ty` otherwise.
fn shared_referent(ty: &syn::Type) -> &syn::Type {
    match ty {
        syn::Type::Reference(r) if r.mutability.is_none() => &r.elem,
        other => other,
    }
}

/// Whether `ty` names `num_complex::Complex` (`Complex<f64>`, `Complex32`, `Complex64`).
fn complex_type(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(p) if p.qself.is_none() && p.path.segments.last().is_some_and(|s| {
        crate::analysis::methods::COMPLEX_TYPES.contains(&s.ident.to_string().as_str())
    }))
}
