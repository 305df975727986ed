//! What to emit when a check failed: the errors, plus the items as if the input were right.
//!
//! Without this, one policy error would bring "cannot find type `SendEmail`" and "not a tool"
//! errors at every use site (thiserror `fallback.rs`, clap `dummies.rs`). The cross-item bound
//! checks are left out so they cannot add errors of their own.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::{ArgsStruct, ToolFn};
use crate::attr::ToolAttr;

pub fn tool(attr: &ToolAttr, f: &ToolFn, errors: TokenStream) -> TokenStream {
    let items = crate::expand::tool::expand_tool(attr, f, false);
    quote!(#errors #items)
}

pub fn args(s: Option<&ArgsStruct>, input: &syn::DeriveInput, errors: TokenStream) -> TokenStream {
    let items = match s {
        Some(s) => crate::expand::args::expand_args(s),
        None => crate::expand::args::expand_empty(input),
    };
    quote!(#errors #items)
}
