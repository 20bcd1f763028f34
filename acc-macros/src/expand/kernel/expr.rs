//! Expressions in the kernel translation: values, routine arguments, `if` and block values.

use super::*;

impl Tr {
    /// The arguments of a routine call, as the routine's builder takes them.
    pub(super) fn routine_args<'e>(
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
            } else if let Some(Local::Struct(sv)) =
                path_ident(strip(a)).and_then(|id| self.lookup(&id.to_string()))
            {
                // A struct value (or a complex number loaded whole): the routine copies it.
                args.push(quote!(::acc::__rt::kernel::RoutineArg::Struct(#sv.clone())));
            } else if let Some(arg) = self.local_by_reference(a) {
                args.push(arg);
            } else if let Expr::Reference(r) = strip(a).clone() {
                if r.mutability.is_some() {
                    return no(format!("passing `{}` to a routine (a routine may take `&mut` of a variable of the region, or a slice)", a.to_token_stream()));
                }
                // `&e` of a value (`&a[i]` to a routine taking `&f64`): the value.
                let v = self.expr(&r.expr)?;
                args.push(quote!(::acc::__rt::kernel::RoutineArg::Scalar(#v)));
            } else {
                let v = self.expr(a)?;
                args.push(quote!(::acc::__rt::kernel::RoutineArg::Scalar(#v)));
            }
        }
        Ok(args)
    }

    /// A local of the caller that a routine call takes by reference: `&mut t`, `&t` or `t` of a
    /// scalar local, the routine then reading and writing it in place (it is inlined) where it
    /// takes a reference, and copying it where it takes a value; a
    /// private array whole (`&mut x`, `&x`, `&mut x[..]`), or an array parameter of a routine
    /// bound to one, passed on as a slice.
    fn local_by_reference(&self, a: &Expr) -> Option<TokenStream> {
        let bare = match strip(a) {
            Expr::Reference(r) => strip(&r.expr),
            other => other,
        };
        let whole = match bare {
            Expr::Index(ix) if matches!(strip(&ix.index), Expr::Range(r) if r.start.is_none() && r.end.is_none()) => {
                strip(&ix.expr)
            }
            other => other,
        };
        match path_ident(whole).and_then(|id| self.lookup(&id.to_string()))? {
            // (A bare `x` too: a routine's own `&mut f64` parameter passed on. A routine taking
            // the value copies it.)
            Local::Scalar(v) if std::ptr::eq(whole, bare) => {
                Some(quote!(::acc::__rt::kernel::RoutineArg::Local(#v)))
            }
            Local::Array(v) => Some(quote!(::acc::__rt::kernel::RoutineArg::LocalArray(#v))),
            _ => None,
        }
    }

    pub(super) fn expr(&mut self, e: &Expr) -> R<TokenStream> {
        Ok(match e {
            Expr::Paren(p) => self.expr(&p.expr)?,
            Expr::Group(g) => self.expr(&g.expr)?,
            Expr::Lit(l) => literal(&l.lit)?,
            Expr::Path(p) if p.path.segments.len() >= 2 => scalar_constant(e, p)?,
            Expr::Path(_) => self.path_value(e)?,
            Expr::Index(ix) => self.index_value(ix)?,
            Expr::Field(f) => self.field_value(f)?,
            // `Complex { re, im }`.
            Expr::Struct(st)
                if st.rest.is_none() && super::struct_values::is_complex_literal(st) =>
            {
                self.complex_literal(st)?
            }
            Expr::Binary(b) => self.binary_value(b)?,
            Expr::Unary(u) => self.unary_value(u)?,
            Expr::Cast(c) => self.cast_value(c)?,
            Expr::MethodCall(m) => self.method_call_value(m)?,
            Expr::Call(c) => self.call_value(c)?,
            Expr::If(i) => self.if_value(i, false)?,
            Expr::Block(b) if b.block.stmts.len() == 1 => self.block_value(&b.block.stmts)?,
            other => return no(format!("the expression `{}`", short(other))),
        })
    }

    /// A plain name: a local, a captured variable, or (in a routine) an item in scope.
    fn path_value(&mut self, e: &Expr) -> R<TokenStream> {
        let id = path_ident(e).ok_or_else(|| format!("the path `{}`", e.to_token_stream()))?;
        let name = id.to_string();
        Ok(match self.lookup(&name) {
            Some(Local::Scalar(v)) => quote!(__acc_b.get(#v)),
            Some(Local::Array(_)) => {
                return no(format!("the private array `{name}` used as a value"))
            }
            Some(Local::View(_)) => return no(format!("the subslice `{name}` used as a value")),
            Some(Local::StructArray(_)) => {
                return no(format!(
                    "the private array of structs `{name}` used as a value"
                ))
            }
            // A complex number's value (other structs: the kernel's error, naming it).
            Some(Local::Struct(v)) => quote!(#v.value(__acc_b)),
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
                // In a routine, a name that is neither a parameter nor a local is an
                // item in scope where the routine is (a `const`, a `static`): its value,
                // computed by rustc, as a literal of its type.
                None if self.in_routine => {
                    quote!(::acc::__rt::kernel::RoutineConst::literal(&#id, __acc_b))
                }
                _ => return no(format!("the value of `{name}`")),
            },
        })
    }

    /// `a[i]`: an element of a private array or of an array the kernel reads.
    fn index_value(&mut self, ix: &syn::ExprIndex) -> R<TokenStream> {
        let i = self.expr(&ix.index)?;
        if let Some(id) = path_ident(&ix.expr) {
            if let Some(Local::Array(v)) = self.lookup(&id.to_string()) {
                return Ok(quote!({ let __i = #i; __acc_b.get_elem(#v, __i) }));
            }
        }
        let a = self.array(&ix.expr)?;
        Ok(quote!({ let __a = #a; let __i = #i; __acc_b.load(__a, __i) }))
    }

    /// `s.f`: a field of a struct value, of an element of a private array of structs or of an
    /// array of structs, or a complex number's `re` or `im`.
    fn field_value(&mut self, f: &syn::ExprField) -> R<TokenStream> {
        if let Some((v, field)) = self.struct_value_field(f) {
            return Ok(quote!(#v.field(__acc_b, #field)));
        }
        // `ps[i].f` of a private array of structs.
        if let Expr::Index(ix) = strip(&f.base) {
            if let Some(Local::StructArray(sa)) = self.lookup_path(&ix.expr) {
                let field = member_name(&f.member);
                let i = self.expr(&ix.index)?;
                return Ok(quote!({ let __i = #i; #sa.get(__acc_b, #field, __i) }));
            }
        }
        if !matches!(strip(&f.base), Expr::Index(_)) {
            if let syn::Member::Named(m) = &f.member {
                if m == "re" || m == "im" {
                    // `z.re` of a complex value.
                    let name = m.to_string();
                    let v = self.expr(&f.base)?;
                    return Ok(quote!({ let __v = #v; __acc_b.component(__v, #name) }));
                }
            }
        }
        let (a, i) = self.struct_field(f)?;
        Ok(quote!({ let __a = #a; let __i = #i; __acc_b.load(__a, __i) }))
    }

    /// `Complex { re, im }`.
    fn complex_literal(&mut self, st: &syn::ExprStruct) -> R<TokenStream> {
        let field = |n: &str| {
            st.fields
                .iter()
                .find(|fv| matches!(&fv.member, syn::Member::Named(m) if m == n))
        };
        let (Some(re), Some(im)) = (field("re"), field("im")) else {
            return no("a `Complex { .. }` without `re` and `im`");
        };
        let (re, im) = (self.expr(&re.expr)?, self.expr(&im.expr)?);
        Ok(quote!({ let __re = #re; let __im = #im; __acc_b.complex(__re, __im) }))
    }

    /// `l op r` of an operator that is not an assignment.
    fn binary_value(&mut self, b: &syn::ExprBinary) -> R<TokenStream> {
        let (op, compound) = bin_op(&b.op).ok_or_else(|| "an operator".to_string())?;
        if compound {
            return no("an assignment used as a value");
        }
        let op = Ident::new(op, Span::call_site());
        let (l, r) = (self.expr(&b.left)?, self.expr(&b.right)?);
        Ok(
            quote!({ let __l = #l; let __r = #r; __acc_b.binary(::acc::__rt::kernel::BinaryOp::#op, __l, __r) }),
        )
    }

    /// `-x`, `!x`, and `*x` of a reference (a routine's scalar parameter or an element).
    fn unary_value(&mut self, u: &syn::ExprUnary) -> R<TokenStream> {
        let op = match u.op {
            UnOp::Neg(_) => quote!(Neg),
            UnOp::Not(_) => quote!(Not),
            UnOp::Deref(_) => {
                // `*x` of a scalar a routine takes by reference: the caller's local.
                if let Some(Local::Scalar(v)) = self.lookup_path(&u.expr) {
                    return Ok(quote!(__acc_b.get(#v)));
                }
                // `*y` of an element reference: the element.
                let (a, i) = self.elem_place(&u.expr)?;
                return Ok(quote!({ let __a = #a; let __i = #i; __acc_b.load(__a, __i) }));
            }
            _ => return no("this unary operator"),
        };
        let x = self.expr(&u.expr)?;
        Ok(quote!({ let __x = #x; __acc_b.unary(::acc::__rt::kernel::UnaryOp::#op, __x) }))
    }

    /// `x as T` to a scalar type.
    fn cast_value(&mut self, c: &syn::ExprCast) -> R<TokenStream> {
        let t =
            scalar_of(&c.ty).ok_or_else(|| format!("a cast to `{}`", c.ty.to_token_stream()))?;
        let x = self.expr(&c.expr)?;
        Ok(quote!({ let __x = #x; __acc_b.cast(__x, #t) }))
    }

    /// `x.m(..)`: an array's length, a `&self` routine, or one of std's numeric methods.
    fn method_call_value(&mut self, m: &syn::ExprMethodCall) -> R<TokenStream> {
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
        Ok(quote!({ let __args = [#(#args),*]; __acc_b.method(#name, &__args) }))
    }

    /// `f(..)`: a scalar type's function (`f64::max`, `T::from`, `f64::from_bits`), a complex
    /// number, `acc::gang_idx()` or `acc::on_device(..)`, or a routine, inlined.
    fn call_value(&mut self, c: &syn::ExprCall) -> R<TokenStream> {
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
            && scalar_of(&syn::parse_str(&segs[0]).map_err(|_| "a call".to_string())?).is_some();
        let cmp = segs.len() >= 2
            && matches!(segs[segs.len() - 2].as_str(), "cmp")
            && matches!(last.as_str(), "min" | "max");
        let prim_ty = if prim {
            scalar_of(&syn::parse_str(&segs[0]).map_err(|_| "a call".to_string())?)
        } else {
            None
        };
        if crate::analysis::methods::is_complex_new(&segs) && c.args.len() == 2 {
            let (re, im) = (self.expr(&c.args[0])?, self.expr(&c.args[1])?);
            return Ok(quote!({ let __re = #re; let __im = #im; __acc_b.complex(__re, __im) }));
        }
        let method = crate::analysis::methods::DEVICE_METHODS.contains(&last.as_str())
            && last != "len"
            && last != "is_empty";
        if (prim && method) || cmp {
            let args: Vec<TokenStream> = c.args.iter().map(|a| self.expr(a)).collect::<R<_>>()?;
            if let (Some(t), false) = (&prim_ty, args.is_empty()) {
                return Ok(
                    quote!({ let __args = [#(#args),*]; __acc_b.method_of(#t, #last, &__args) }),
                );
            }
            if let (Some(t), true) = (&prim_ty, matches!(last.as_str(), "min_value" | "max_value"))
            {
                let max = last == "max_value";
                return Ok(quote!(__acc_b.type_limit(#t, #max)));
            }
            return Ok(quote!({ let __args = [#(#args),*]; __acc_b.method(#last, &__args) }));
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
                return no("`acc::on_device` with an argument other than a device type constant");
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
        Ok(quote!({ let __args = [#(#args),*]; (#marker.build)(__acc_b, &__args) }))
    }

    /// A block that is one expression, as a value.
    pub(super) fn block_value(&mut self, stmts: &[Stmt]) -> R<TokenStream> {
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
    pub(super) fn if_value(&mut self, i: &syn::ExprIf, stmts_ok: bool) -> R<TokenStream> {
        let Some((_, els)) = &i.else_branch else {
            return no("`if` without `else` as a value");
        };
        let c = self.expr(&i.cond)?;
        // Arms of one expression each (down an `else if` chain), reading no arrays: a
        // `select` of both values.
        fn single(i: &syn::ExprIf) -> bool {
            let plain = |stmts: &[Stmt]| matches!(stmts, [Stmt::Expr(_, None)]);
            plain(&i.then_branch.stmts)
                && match i.else_branch.as_ref().map(|(_, e)| &**e) {
                    Some(Expr::Block(b)) => plain(&b.block.stmts),
                    Some(Expr::If(inner)) => single(inner),
                    _ => true,
                }
        }
        if single(i) && !reads_arrays_or_calls(&i.then_branch.stmts, els) {
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
    pub(super) fn arm(&mut self, stmts: &[Stmt], stmts_ok: bool) -> R<(TokenStream, TokenStream)> {
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
}

/// A literal of a scalar type: an integer, a float or a `bool`, typed by its suffix.
fn literal(lit: &Lit) -> R<TokenStream> {
    Ok(match lit {
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
    })
}

/// A path of two or more segments, `e` (which is `p`): a constant of a scalar type.
fn scalar_constant(e: &Expr, p: &syn::ExprPath) -> R<TokenStream> {
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
    Ok(match ty {
        Some(_) if segs.last().is_some_and(|l| l == "BITS") => {
            quote!(__acc_b.lit_int((#p) as i128, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::U32)))
        }
        // `f16::ONE`, `bf16::MAX`: the constant's bits.
        Some((name, k)) if name == "f16" || name == "bf16" => {
            quote!({ let __v = __acc_b.lit_int((#p).to_bits() as i128, ::core::option::Option::Some(::acc::__rt::kernel::Scalar::U16)); __acc_b.from_bits(#k, __v) })
        }
        Some((name, k)) if name == "f32" || name == "f64" => {
            quote!(__acc_b.lit_float((#p) as f64, ::core::option::Option::Some(#k)))
        }
        Some((name, k)) if name != "bool" => {
            quote!(__acc_b.lit_int((#p) as i128, ::core::option::Option::Some(#k)))
        }
        _ => return no(format!("the path `{}`", e.to_token_stream())),
    })
}
