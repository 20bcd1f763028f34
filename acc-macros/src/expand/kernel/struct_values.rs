//! Struct values in the kernel translation: `let p = a[i];` and struct literals as values (a
//! local per field), elements copied whole, and private arrays of structs (a private array per
//! field).

use super::*;

impl Tr {
    /// `let [mut] p = a[i];` where `rest` uses a field of `p`: a struct value, a local per
    /// field of the element (`StructValue`); `let q = p;` of a struct value `p`: a copy.
    /// `None` for any other statement.
    pub(super) fn struct_let(&mut self, st: &Stmt, rest: &[Stmt]) -> R<Option<TokenStream>> {
        let Stmt::Local(l) = st else { return Ok(None) };
        let Pat::Ident(pi) = strip_type(&l.pat) else {
            return Ok(None);
        };
        let Some(init) = l.init.as_ref().filter(|i| i.diverge.is_none()) else {
            return Ok(None);
        };
        // `let q = p;` of a struct value: a copy in locals of its own.
        if let Some(Local::Struct(sv)) =
            path_ident(strip(&init.expr)).and_then(|id| self.lookup(&id.to_string()))
        {
            let name = pi.ident.to_string();
            let v = self.fresh(&name);
            let lit = name.clone();
            self.bind(name, Local::Struct(v.clone()));
            return Ok(Some(quote!(let #v = #sv.copy(__acc_b, #lit);)));
        }
        // `let p = P { x: .., v: .. };` of a `DeviceCopy` struct: a value of its own.
        if let Expr::Struct(st) = strip(&init.expr) {
            if !is_complex_literal(st) {
                let name = pi.ident.to_string();
                let built = self.struct_literal(st, &name)?;
                let v = self.fresh(&name);
                self.bind(name, Local::Struct(v.clone()));
                return Ok(Some(quote!(let #v = #built;)));
            }
        }
        let Expr::Index(ix) = strip(&init.expr) else {
            return Ok(None);
        };
        if matches!(strip(&ix.index), Expr::Range(_)) {
            return Ok(None);
        }
        let name = pi.ident.to_string();
        // `let p = ps[i];` of a private array of structs: a copy of the element.
        if let Some(Local::StructArray(sa)) = self.lookup_path(&ix.expr) {
            let i = self.expr(&ix.index)?;
            let v = self.fresh(&name);
            let lit = name.clone();
            self.bind(name, Local::Struct(v.clone()));
            return Ok(Some(
                quote!(let #v = { let __i = #i; #sa.load(__acc_b, __i, #lit) };),
            ));
        }
        // Used by field: a struct. Only ever stored whole (`b[j] = p`): whatever the element
        // is, decided when the kernel is built from its type.
        let load = if fields_used(&name, rest) {
            quote!(load)
        } else if stored_whole(&name, rest) {
            quote!(load_any)
        } else {
            return Ok(None);
        };
        let arr = self.array(&ix.expr)?;
        let i = self.expr(&ix.index)?;
        let v = self.fresh(&name);
        let name_lit = name.clone();
        self.bind(name, Local::Struct(v.clone()));
        Ok(Some(quote! {
            let #v = { let __a = #arr; let __i = #i; ::acc::__rt::kernel::StructValue::#load(__acc_b, __a, __i, #name_lit) };
        }))
    }
}

/// Whether `stmts` use the variable `name` only to store it whole into elements (`b[j] =
/// name`), at least once.
fn stored_whole(name: &str, stmts: &[Stmt]) -> bool {
    struct Find<'a> {
        name: &'a str,
        stores: usize,
        mentions: usize,
    }
    impl<'ast> syn::visit::Visit<'ast> for Find<'_> {
        fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
            if matches!(strip(&a.left), Expr::Index(_))
                && matches!(strip(&a.right), Expr::Path(p) if p.path.is_ident(self.name))
            {
                self.stores += 1;
            }
            syn::visit::visit_expr_assign(self, a);
        }
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if p.path.is_ident(self.name) {
                self.mentions += 1;
            }
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            let named = m
                .tokens
                .clone()
                .into_iter()
                .any(|t| matches!(t, proc_macro2::TokenTree::Ident(i) if i == self.name));
            if named {
                self.mentions += 1;
            }
        }
    }
    let mut f = Find {
        name,
        stores: 0,
        mentions: 0,
    };
    for s in stmts {
        syn::visit::Visit::visit_stmt(&mut f, s);
    }
    f.stores > 0 && f.stores == f.mentions
}

/// Whether `stmts` use a field of the variable `name` (`name.x`) before a `let` shadows it.
fn fields_used(name: &str, stmts: &[Stmt]) -> bool {
    struct Find<'a>(&'a str, bool);
    impl<'ast> syn::visit::Visit<'ast> for Find<'_> {
        fn visit_expr_field(&mut self, f: &'ast syn::ExprField) {
            if matches!(&*f.base, Expr::Path(p) if p.path.is_ident(self.0)) {
                self.1 = true;
            }
            syn::visit::visit_expr_field(self, f);
        }
    }
    let mut f = Find(name, false);
    for s in stmts {
        syn::visit::Visit::visit_stmt(&mut f, s);
        if f.1 {
            return true;
        }
    }
    false
}

impl Tr {
    /// The `StructValue` a private array of structs is filled with: a struct literal, or a
    /// struct value (`[p; 4]`); `None` for anything else.
    /// `let ps = [v; n];` of a struct value or literal `v`: a private array of structs (one
    /// private array per field, `StructArray`); `None` for other `let`s.
    pub(super) fn struct_array_let(
        &mut self,
        name: &str,
        init: Option<&Expr>,
    ) -> R<Option<TokenStream>> {
        let Some(Expr::Repeat(r)) = init else {
            return Ok(None);
        };
        let Some(value) = self.struct_repeat_value(&r.expr, name)? else {
            return Ok(None);
        };
        let v = self.fresh(name);
        let len = super::stmt::private_len(&r.len.to_token_stream(), name);
        self.bind(name.to_string(), Local::StructArray(v.clone()));
        Ok(Some(quote! {
            let #v = {
                let __len: u32 = #len;
                let __value = #value;
                ::acc::__rt::kernel::StructArray::filled(__acc_b, &__value, __len, #name)
            };
        }))
    }

    fn struct_repeat_value(&mut self, e: &Expr, name: &str) -> R<Option<TokenStream>> {
        match strip(e) {
            Expr::Struct(st) if !is_complex_literal(st) => Ok(Some(self.struct_literal(st, name)?)),
            other => match self.lookup_path(other) {
                Some(Local::Struct(sv)) => Ok(Some(quote!(#sv.copy(__acc_b, #name)))),
                _ => Ok(None),
            },
        }
    }

    /// A struct literal `P { x: e, .. }` as a `StructValue` named `name`, each field's value
    /// computed in the order written.
    pub(super) fn struct_literal(&mut self, st: &syn::ExprStruct, name: &str) -> R<TokenStream> {
        if st.rest.is_some() {
            return no(format!(
                "the struct literal `{}` with `..` (give every field)",
                short(&Expr::Struct(st.clone()))
            ));
        }
        let path = &st.path;
        let mut values = TokenStream::new();
        let mut pairs = Vec::new();
        for (k, f) in st.fields.iter().enumerate() {
            let field = member_name(&f.member);
            let v = self.expr(&f.expr)?;
            let x = format_ident!("__f{}", k);
            values.extend(quote!(let #x = #v;));
            pairs.push(quote!((#field, #x)));
        }
        Ok(quote!({
            #values
            ::acc::__rt::kernel::StructValue::literal(__acc_b, <#path as ::acc::DeviceCopy>::LAYOUT, #name, &[#(#pairs),*])
        }))
    }

    /// `ps[i].f op= v` and `ps[i] = p` where `ps` is a private array of structs; `None` for
    /// other targets.
    pub(super) fn struct_array_assign(
        &mut self,
        target: &Expr,
        op: Option<&str>,
        value: &Expr,
    ) -> R<Option<TokenStream>> {
        let (ix, field) = match strip(target) {
            Expr::Field(f) => match strip(&f.base) {
                Expr::Index(ix) => (ix, Some(member_name(&f.member))),
                _ => return Ok(None),
            },
            Expr::Index(ix) => (ix, None),
            _ => return Ok(None),
        };
        let Some(Local::StructArray(sa)) = self.lookup_path(&ix.expr) else {
            return Ok(None);
        };
        match field {
            Some(field) => {
                let v = self.expr(value)?;
                let i = self.expr(&ix.index)?;
                let value = match op {
                    None => quote!(__v),
                    Some(op) => {
                        let op = Ident::new(op, Span::call_site());
                        quote!({ let __cur = #sa.get(__acc_b, #field, __i); __acc_b.binary(::acc::__rt::kernel::BinaryOp::#op, __cur, __v) })
                    }
                };
                // (Rust evaluates the value, then the place.)
                Ok(Some(quote!({
                    let __v = #v;
                    let __i = #i;
                    let __i = __acc_b.local("index", ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize), ::core::option::Option::Some(__i));
                    let __i = __acc_b.get(__i);
                    let __x = #value;
                    #sa.set(__acc_b, #field, __i, __x);
                })))
            }
            None => {
                let sv = match (op, self.lookup_path(value)) {
                    (None, Some(Local::Struct(sv))) => quote!(#sv),
                    (None, _) if matches!(strip(value), Expr::Struct(_)) => {
                        let Expr::Struct(st) = strip(value) else { unreachable!("matched above") };
                        self.struct_literal(st, "value")?
                    }
                    _ => return no(format!("assigning `{}` to an element of a private array of structs (assign a struct value or its fields)", short(value))),
                };
                let i = self.expr(&ix.index)?;
                Ok(Some(
                    quote!({ let __sv = #sv; let __i = #i; #sa.store(__acc_b, __i, &__sv); }),
                ))
            }
        }
    }

    /// `b[j] = a[i]` of struct elements: field by field, decided when the kernel is built from
    /// the elements' type (scalars take the plain assignment); `None` for other assignments.
    pub(super) fn whole_element_copy(
        &mut self,
        target: &Expr,
        op: Option<&str>,
        value: &Expr,
    ) -> R<Option<TokenStream>> {
        if let (None, Expr::Index(to), Expr::Index(from)) = (op, strip(target), strip(value)) {
            let plain = |e: &Expr| !matches!(strip(e), Expr::Range(_));
            let captured = |e: &Expr| {
                path_ident(e).is_some_and(|id| {
                    !matches!(self.lookup(&id.to_string()), Some(Local::Array(_)))
                })
            };
            let captured = captured(&from.expr) && captured(&to.expr);
            if plain(&to.index) && plain(&from.index) && captured {
                if let (Ok(src), Ok(dst)) = (self.array(&from.expr), self.array(&to.expr)) {
                    let si = self.expr(&from.index)?;
                    let di = self.expr(&to.index)?;
                    let name = format!("{}[..]", from.expr.to_token_stream());
                    let regular = self.assign_value(target, op, value)?;
                    return Ok(Some(quote!({
                        let __src = #src;
                        if ::acc::__rt::kernel::whole_struct(&__src) {
                            let __si = #si;
                            let __sv = ::acc::__rt::kernel::StructValue::load(__acc_b, __src, __si, #name);
                            let __a = #dst;
                            let __i = #di;
                            __sv.store(__acc_b, __a, __i);
                        } else {
                            #regular
                        }
                    })));
                }
            }
        }
        Ok(None)
    }
}

/// Whether `st` is `Complex { re, im }` (a complex number, not a `DeviceCopy` struct's value).
pub(super) fn is_complex_literal(st: &syn::ExprStruct) -> bool {
    st.path.segments.last().is_some_and(|s| {
        crate::analysis::methods::COMPLEX_TYPES.contains(&s.ident.to_string().as_str())
    })
}
