//! `atomic` statements in the kernel translation (3.3 section 2.12).

use super::*;

impl Tr {
    /// An `atomic` statement (3.3 section 2.12) as an IR atomic: the form `analysis::atomic`
    /// parsed (the host twin expands the same), the captured value stored into `v` as any
    /// assignment to that place.
    pub(super) fn atomic(&mut self, dir: &Directive, st: &Stmt) -> R<TokenStream> {
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
            Ok(
                quote!({ let __a = #arr; let __i = #idx; let __v = #val; __acc_b.atomic(__a, __i, #op, __v, #old, #new); }),
            )
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
}
