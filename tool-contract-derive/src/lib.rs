//! Implementation detail of the `tool-contract` crate: the `#[tool]` attribute and
//! `#[derive(ToolArgs)]`. Depend on `tool-contract`, which re-exports both.
//!
//! Each macro parses (`attr`, `ast`), checks the policy rules (`check`) and expands (`expand`);
//! a failed check still emits the handler and a stub impl (`fallback`), so one mistake gives one
//! error and not a cascade.

extern crate proc_macro;

mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod fallback;

use proc_macro::TokenStream;

/// See the `tool-contract` crate's documentation of `tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool::expand(args.into(), item.into()).into()
}

/// See the `tool-contract` crate's documentation of `ToolArgs`.
#[proc_macro_derive(ToolArgs, attributes(tool))]
pub fn derive_tool_args(input: TokenStream) -> TokenStream {
    expand::args::expand(input.into()).into()
}
