//! Code generation. Expansion never rejects input: every rule ran in `check` first.

pub mod args;
pub mod tool;

use proc_macro2::TokenStream;
use quote::quote;

/// The runtime crate's path: `crate = "..."` if given, else `::tool_contract`.
pub fn krate(path: Option<&syn::Path>) -> TokenStream {
    match path {
        Some(p) => quote!(#p),
        None => quote!(::tool_contract),
    }
}
