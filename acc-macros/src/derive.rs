//! `#[derive(acc::DeviceCopy)]`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput};

pub fn device_copy(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    let Data::Struct(s) = &input.data else {
        return syn::Error::new_spanned(
            &input.ident,
            "`DeviceCopy` can be derived for structs only",
        )
        .to_compile_error();
    };
    let repr_c = input
        .attrs
        .iter()
        .any(|a| a.path().is_ident("repr") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "C"));
    if !repr_c {
        return syn::Error::new_spanned(
            &input.ident,
            "`DeviceCopy` needs `#[repr(C)]`, so that the struct has the same layout on every device",
        )
        .to_compile_error();
    }
    let name = &input.ident;
    let (ig, tg, wc) = input.generics.split_for_impl();
    let checks = s.fields.iter().map(|f| {
        let ty = &f.ty;
        quote!(::acc::__rt::assert_device_copy::<#ty>();)
    });
    // Each field's offset and scalar type (or, for an array field, its elements), for kernels
    // that access the fields of arrays of the struct (and a complex field's parts).
    let fields = s.fields.iter().enumerate().map(|(k, f)| {
        let ty = &f.ty;
        let member = match &f.ident {
            Some(id) => syn::Member::Named(id.clone()),
            None => syn::Member::Unnamed(syn::Index::from(k)),
        };
        let field_name = match &f.ident {
            Some(id) => id.to_string(),
            None => k.to_string(),
        };
        let (re, im) = (format!("{field_name}.re"), format!("{field_name}.im"));
        // A complex field is also its two parts (`ty: None` for any other type: no access).
        quote!(::acc::__rt::StructField {
            name: #field_name,
            offset: ::core::mem::offset_of!(Self, #member) as u32,
            ty: <#ty as ::acc::DeviceCopy>::SCALAR,
            array: <#ty as ::acc::DeviceCopy>::ARRAY,
        }, ::acc::__rt::StructField {
            name: #re,
            offset: ::core::mem::offset_of!(Self, #member) as u32,
            ty: <#ty as ::acc::DeviceCopy>::COMPLEX_PART,
            array: ::core::option::Option::None,
        }, ::acc::__rt::StructField {
            name: #im,
            offset: (::core::mem::offset_of!(Self, #member) + ::core::mem::size_of::<#ty>() / 2) as u32,
            ty: <#ty as ::acc::DeviceCopy>::COMPLEX_PART,
            array: ::core::option::Option::None,
        })
    });
    let name_lit = name.to_string();
    quote! {
        // SAFETY: a `#[repr(C)]` struct of `DeviceCopy` fields is plain data (checked below).
        unsafe impl #ig ::acc::DeviceCopy for #name #tg #wc {
            const LAYOUT: ::core::option::Option<&'static ::acc::__rt::StructLayout> = ::core::option::Option::Some(&::acc::__rt::StructLayout {
                name: #name_lit,
                size: ::core::mem::size_of::<Self>() as u32,
                fields: &[#(#fields),*],
            });
        }
        const _: fn() = || { #(#checks)* };
    }
}
