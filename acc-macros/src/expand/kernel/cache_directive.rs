//! `acc::cache!(a[lo..hi], ..)` in a kernel: each window of an array the kernel indexes becomes
//! a `cache` entry of the IR builder (3.3 section 2.10), which the GPU backends may stage in
//! shared memory for the loop whose body the directive tops. The directive was checked where
//! it was written (`expand::executable`); anything the builder cannot take stays a hint.

use super::*;
use crate::directive::DirectiveKind;
use crate::expand::executable::window_length;

impl Tr {
    pub(super) fn cache(&mut self, mac: &syn::Macro) -> TokenStream {
        let tokens = crate::expand::executable::cache_elements_as_ranges(mac.tokens.clone());
        let Ok(dir) = crate::directive::parsed::of_tokens(
            DirectiveKind::Cache,
            Span::call_site(),
            quote!(copyin(#tokens)),
        ) else {
            return TokenStream::new();
        };
        let span = mac
            .path
            .segments
            .last()
            .map_or_else(Span::call_site, |s| s.ident.span());
        let line = quote::quote_spanned!(span=> ::core::line!());
        let mut out = TokenStream::new();
        for v in dir.clauses.iter().flat_map(|c| c.vars()) {
            if v.member.is_some() {
                continue;
            }
            let Some(sub) = v.subarray.as_deref() else {
                continue;
            };
            // `a[lo..hi]` (a constant length), or one element `a[i]`.
            let (lo, len) = match strip(sub) {
                Expr::Range(r) => match (window_length(r), r.start.as_deref()) {
                    (Some(len), Some(lo)) => (lo.clone(), len),
                    (Some(len), None) => (syn::parse_quote!(0usize), len),
                    (None, _) => continue,
                },
                e => (e.clone(), 1),
            };
            let name = &v.name;
            let array: Expr = syn::parse_quote!(#name);
            // A name that is not an array the kernel may index, or a start the kernel cannot
            // compute, leaves the directive a hint.
            let (Ok(a), Ok(start)) = (self.array(&array), self.expr(&lo)) else {
                continue;
            };
            out.extend(quote!({
                let __a = #a;
                let __s = #start;
                __acc_b.cache(__a, __s, #len, #line);
            }));
        }
        out
    }
}
