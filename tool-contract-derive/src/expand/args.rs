//! `#[derive(ToolArgs)]`: the field table, the semantic hook and the idempotency-key marker.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::ArgsStruct;
use crate::check;
use crate::ctxt::Ctxt;

pub fn expand(input: TokenStream) -> TokenStream {
    let input: syn::DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(err) => return err.to_compile_error(),
    };
    let cx = Ctxt::new();
    let parsed = ArgsStruct::from_ast(&cx, &input);
    if let Some(s) = &parsed {
        check::check_args(&cx, s);
    }
    match cx.check() {
        Ok(()) => match &parsed {
            Some(s) => expand_args(s),
            None => expand_empty(&input),
        },
        Err(errors) => crate::fallback::args(parsed.as_ref(), &input, errors),
    }
}

pub fn expand_args(s: &ArgsStruct) -> TokenStream {
    let krate = super::krate(s.attr.krate.as_ref());
    let ident = s.ident();
    let fields = s.fields.iter().filter(|f| !f.serde.skipped).map(|f| {
        let rust = &f.rust_name;
        let wire = &f.wire_name;
        let key = f.attr.idempotency_key.is_some();
        let opt = |o: &Option<syn::LitStr>| match o {
            Some(s) => quote!(::core::option::Option::Some(#s)),
            None => quote!(::core::option::Option::None),
        };
        let model_supplied = opt(&f.attr.model_supplied);
        let unbounded = opt(&f.attr.unbounded);
        let field =
            quote!(#krate::ArgField::__new(#rust, #wire, #key, #model_supplied, #unbounded));
        let a = &f.attr;
        if a.trusted_only.is_none()
            && a.accepts_untrusted.is_none()
            && a.flows_from.is_none()
            && a.url.is_none()
        {
            return field;
        }
        let trusted_only = a.trusted_only.is_some();
        let accepts_untrusted = opt(&a.accepts_untrusted);
        let sources = a.flows_from.iter().flatten();
        let url = a.url.is_some();
        quote!(#field.__flow(#krate::FieldFlowSpec::__new(
            #trusted_only,
            #accepts_untrusted,
            &[#(#sources),*],
            #url,
        )))
    });
    let semantic = s.attr.semantic.as_ref().map(|path| {
        quote! {
            fn semantic_issues(
                &self,
                __tc_ctx: &#krate::ToolContext,
            ) -> #krate::__private::Vec<#krate::ValidationIssue> {
                #path(self, __tc_ctx)
            }
        }
    });
    let key_marker = s
        .fields
        .iter()
        .any(|f| f.attr.idempotency_key.is_some())
        .then(|| {
            quote! {
                #[automatically_derived]
                impl #krate::__private::HasIdempotencyKeyField for #ident {}
            }
        });
    // No `const _: () = { ... }` around the impls: every path in them is absolute, so there is
    // nothing to scope, and the wrapper would be one more body per args type to check.
    quote! {
        #[automatically_derived]
        #[allow(unused_qualifications)]
        impl #krate::ToolArgs for #ident {
            const FIELDS: &'static [#krate::ArgField] = &[#(#fields),*];
            #semantic
        }
        #key_marker
    }
}

/// For inputs that are not named-field structs: an impl with no fields, so uses of the type in a
/// `#[tool]` do not add "not a tool arguments type" to the real error.
pub fn expand_empty(input: &syn::DeriveInput) -> TokenStream {
    let ident = &input.ident;
    let (impl_g, ty_g, where_c) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_g ::tool_contract::ToolArgs for #ident #ty_g #where_c {
            const FIELDS: &'static [::tool_contract::ArgField] = &[];
        }
    }
}
