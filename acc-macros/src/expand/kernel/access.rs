//! Arrays in the kernel translation: captured arrays, subslice views and element references,
//! the places assignments and atomics write, struct fields.

use super::*;

impl Tr {
    /// `&a[s..e]` / `&mut a[s..e]` (any range form) as a routine argument: a subslice of the
    /// array `a`.
    pub(super) fn subslice_arg(&mut self, arg: &Expr) -> R<Option<TokenStream>> {
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
    pub(super) fn elem_place(&mut self, e: &Expr) -> R<(TokenStream, TokenStream)> {
        match path_ident(e).and_then(|id| self.lookup(&id.to_string())) {
            Some(Local::Elem(v)) => Ok((
                quote!(#v),
                quote!(__acc_b.lit_int(
                    0,
                    ::core::option::Option::Some(::acc::__rt::kernel::Scalar::USize)
                )),
            )),
            _ => no(format!("`*{}` (a dereference)", e.to_token_stream())),
        }
    }

    /// `&a[k]` / `&mut a[k]` (an index, not a range): a view of that one element.
    pub(super) fn elem_ref(&mut self, e: &Expr) -> R<Option<TokenStream>> {
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
    pub(super) fn array_len(&mut self, receiver: &Expr) -> R<TokenStream> {
        if let Some(Local::StructArray(sa)) = self.lookup_path(receiver) {
            return Ok(quote!(#sa.len(__acc_b)));
        }
        if let Some(Local::Array(v)) =
            path_ident(receiver).and_then(|id| self.lookup(&id.to_string()))
        {
            return Ok(quote!(__acc_b.local_len(#v)));
        }
        let a = self.array(receiver)?;
        Ok(quote!({ let __a = #a; __acc_b.len(__a) }))
    }

    pub(super) fn array(&mut self, e: &Expr) -> R<TokenStream> {
        // `boxes[l].nei` (indexed next, `boxes[l].nei[k]`): the array field of one element.
        if let Expr::Field(f) = strip(e) {
            if let Expr::Index(ix) = strip(&f.base) {
                let name = member_name(&f.member);
                let a = self.array(&ix.expr)?;
                let i = self.expr(&ix.index)?;
                return Ok(
                    quote!({ let __o = #a; let __oi = #i; __acc_b.nested(__o, __oi, #name) }),
                );
            }
        }
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
    pub(super) fn place(&mut self, e: &Expr) -> R<(TokenStream, TokenStream)> {
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
    pub(super) fn array_binding(
        &self,
        name: &str,
        missing: impl Fn(&str) -> TokenStream,
    ) -> TokenStream {
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
    /// `p.x` of a struct value (`let p = ps[i]`): its builder variable and the field's name.
    pub(super) fn struct_value_field(&self, f: &syn::ExprField) -> Option<(Ident, String)> {
        let Some(Local::Struct(v)) =
            path_ident(&f.base).and_then(|id| self.lookup(&id.to_string()))
        else {
            return None;
        };
        let name = member_name(&f.member);
        Some((v, name))
    }

    pub(super) fn struct_field(&mut self, f: &syn::ExprField) -> R<(TokenStream, TokenStream)> {
        let Expr::Index(ix) = strip(&f.base) else {
            return no(format!(
                "the field access `{}` (kernels read fields of array elements, `a[i].f`)",
                short(&Expr::Field(f.clone()))
            ));
        };
        let name = member_name(&f.member);
        let a = self.array(&ix.expr)?;
        let i = self.expr(&ix.index)?;
        Ok((quote!({ let __s = #a; __acc_b.field(__s, #name) }), i))
    }
}
