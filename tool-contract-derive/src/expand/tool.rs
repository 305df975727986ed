//! `#[tool]`: keeps the handler as written and adds a unit struct implementing `Tool`.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::ast::{HandlerFn, ToolFn};
use crate::attr::{self, ApprovalKind, EffectKind, IdempotencyKind, ToolAttr};
use crate::check;
use crate::ctxt::Ctxt;

pub fn expand(args: TokenStream, item: TokenStream) -> TokenStream {
    let item = match HandlerFn::parse(&item) {
        Ok(item) => item,
        Err(_) => {
            let err = syn::Error::new(Span::call_site(), "#[tool] goes on an `async fn` handler");
            let err = err.to_compile_error();
            return quote!(#err #item);
        }
    };
    let cx = Ctxt::new();
    let attr = attr::parse_tool_attr(&cx, args);
    let f = ToolFn::from_fn(&cx, &item);
    check::check_tool(&cx, &attr, &f);
    match cx.check() {
        Ok(()) => expand_tool(&attr, &f, true),
        Err(errors) => crate::fallback::tool(&attr, &f, errors),
    }
}

/// The expansion. With `checks == false` (the fallback after an error) the cross-item bounds
/// are left out, so the root cause is the only error.
pub fn expand_tool(attr: &ToolAttr, f: &ToolFn, checks: bool) -> TokenStream {
    let krate = super::krate(attr.krate.as_ref());
    let item = &f.original.tokens;
    let vis = &f.original.vis;
    let fn_ident = f.ident();
    let struct_ident = f.struct_ident();
    let name = attr
        .name
        .as_ref()
        .map(|n| n.value())
        .unwrap_or_else(|| fn_ident.to_string().trim_start_matches("r#").to_owned());
    let struct_doc =
        format!("The `{name}` tool: the contract and entry point of [`{fn_ident}()`].");

    let (Some(args_ty), Some(ret)) = (f.args_ty, f.ret) else {
        // Without a signature to read there is nothing to implement; the struct alone keeps
        // references to it from cascading into "cannot find type".
        return quote! {
            #item
            #[doc = #struct_doc]
            #[derive(Clone, Copy, Debug, Default)]
            #vis struct #struct_ident;
        };
    };

    let version = attr
        .version
        .as_ref()
        .map(|v| v.value())
        .unwrap_or_else(|| "0.0.0".to_owned());
    let effect = attr.effect.map_or(EffectKind::PureRead, |e| e.value);
    let effect_variant = format_ident!("{}", effect.variant());
    let description = &f.docs;
    let capabilities = &attr.capabilities;
    let timeout_ms = attr.timeout_ms.map_or(1, |t| t.value);
    let retry = attr.retry.as_ref().map(|r| &r.value);
    let max_attempts = retry.and_then(|r| r.max_attempts).map_or(1, |v| v.value);
    let backoff_ms = retry
        .and_then(|r| r.backoff_ms)
        .map_or(if max_attempts > 1 { 100 } else { 0 }, |v| v.value);
    let max_backoff_ms = retry
        .and_then(|r| r.max_backoff_ms)
        .map_or(backoff_ms.saturating_mul(10).max(backoff_ms), |v| v.value);
    let policy_version = match &attr.policy_version {
        Some(p) => quote!(::core::option::Option::Some(#p)),
        None => quote!(::core::option::Option::None),
    };
    let approval_policy = match attr.approval.map(|a| a.value) {
        None => quote!(Never),
        Some(ApprovalKind::Always) => quote!(Always),
        Some(ApprovalKind::Conditional) => quote!(Conditional),
    };
    let idempotency = match attr.idempotency.as_ref().map(|i| &i.value) {
        None => quote!(#krate::__private::IdempotencySpec::ArgsField),
        Some(IdempotencyKind::Host) => quote!(#krate::__private::IdempotencySpec::Host),
        Some(IdempotencyKind::From(fields)) => {
            let names = fields.iter().map(|f| f.to_string());
            quote!(#krate::__private::IdempotencySpec::Derived(&[#(#names),*]))
        }
    };
    let extractor_names = f.extractors.iter().map(|ty| extractor_name(ty));
    let confidential = attr.confidential.iter().flatten();
    let max_output_bytes = attr.max_output_bytes.map_or_else(
        || quote!(#krate::__private::DEFAULT_MAX_OUTPUT_BYTES),
        |v| {
            let v = v.value;
            quote!(#v)
        },
    );
    let open_output = match &attr.open_output {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    };
    let depends_on = attr.depends_on.iter().map(|(name, version, on_change)| {
        let name = name.to_string();
        let class = match on_change.as_ref().map(syn::LitStr::value).as_deref() {
            Some("minor") => quote!(Minor),
            Some("patch") => quote!(Patch),
            _ => quote!(Major),
        };
        quote!((#name, #version, #krate::__private::DependencyChange::#class))
    });
    let provenance = match &attr.provenance {
        None => quote!(::core::option::Option::None),
        Some((source, revision)) => {
            let revision = match revision {
                Some(r) => quote!(::core::option::Option::Some(#r)),
                None => quote!(::core::option::Option::None),
            };
            quote!(::core::option::Option::Some((#source, #revision)))
        }
    };

    // Bounds checked through an alias whose name carries the attribute token's span, so the
    // trait error points at `effect = "..."` / `approval = "..."` where the fix is.
    let spanned_alias = |name: &str, span: Span| {
        let alias = syn::Ident::new(name, span);
        (
            quote!(#[allow(non_camel_case_types)] type #alias = #args_ty;),
            alias,
        )
    };
    let mut aliases = Vec::new();
    // Only a conditional policy needs code: the trait's default answers from the contract's
    // policy, so `Never` and `Always` tools have one function body fewer to check and compile.
    let requires_approval = match attr.approval {
        Some(a) if a.value == ApprovalKind::Conditional && checks => {
            let (def, alias) = spanned_alias("__TcApprovalArgs", a.span);
            aliases.push(def);
            let cond = quote_spanned! {a.span=>
                #krate::__private::requires_approval_conditional::<#alias>(__tc_args, __tc_ctx)
            };
            quote! {
                fn requires_approval(__tc_args: &Self::Args, __tc_ctx: &#krate::ToolContext) -> bool {
                    #cond
                }
            }
        }
        _ => TokenStream::new(),
    };

    let extract_idents: Vec<_> = (0..f.extractors.len())
        .map(|i| format_ident!("__tc_e{}", i))
        .collect();
    let extracts = f.extractors.iter().zip(&extract_idents).map(|(ty, id)| {
        quote_spanned! {ty.span()=>
            let #id = #krate::__private::extract::<#ty>(__tc_ctx)?;
        }
    });

    let mut assertions = Vec::new();
    // Rule 3 is independent of every other mistake, so it stays on after an error: a write
    // tool with three problems should show all three.
    if !attr.syntax_error && check::needs_key_field_bound(attr) {
        let span = attr.effect.map_or_else(Span::call_site, |e| e.span);
        let (def, alias) = spanned_alias("__TcKeyArgs", span);
        aliases.push(def);
        assertions.push(quote_spanned! {span=>
            #krate::__private::assert_idempotency_key_field::<#alias>();
        });
    }
    if checks {
        if let Some(IdempotencyKind::From(fields)) = attr.idempotency.as_ref().map(|i| &i.value) {
            let accesses = fields
                .iter()
                .map(|f| quote_spanned!(f.span()=> let _ = &__tc_args.#f;));
            assertions.push(quote! {
                let _ = |__tc_args: &#args_ty| { #(#accesses)* };
            });
        }
        assertions.push(quote_spanned! {ret.span()=>
            #krate::__private::assert_output::<<#ret as #krate::__private::ToolReturn>::Output>();
        });
    }

    let args_ty_spanned = quote_spanned!(args_ty.span()=> #args_ty);
    // A model view: the view's schema for the contract, and delivery that checks both the
    // full output and the view. Spanned at the path, so a function of the wrong shape is
    // reported where it is named.
    let (view_spec, view_items, view_deliver) = match (&attr.model_view, checks) {
        (Some(view), true) => {
            let span = view.span();
            (
                quote!(::core::option::Option::Some(__tc_view_schema)),
                // The user's function is named once, here: a wrong shape is one error, not
                // one per use.
                quote_spanned! {span=>
                    fn __tc_view(
                        __tc_output: &<#ret as #krate::__private::ToolReturn>::Output,
                    ) -> impl #krate::__private::ModelViewOutput + use<> {
                        #view(__tc_output)
                    }

                    fn __tc_view_schema(
                        __tc_tool: &str,
                        __tc_version: &str,
                    ) -> #krate::__private::serde_json::Value {
                        #krate::__private::view_schema::<<#ret as #krate::__private::ToolReturn>::Output, _>(
                            __tc_view, __tc_tool, __tc_version,
                        )
                    }
                },
                quote_spanned! {span=>
                    fn deliver_output(
                        __tc_output: &Self::Output,
                        __tc_contract: &#krate::__private::OutputContract,
                    ) -> ::core::result::Result<#krate::__private::CheckedOutput, #krate::ToolError> {
                        #krate::__private::deliver_view::<Self::Output, _>(__tc_contract, __tc_output, __tc_view)
                    }
                },
            )
        }
        _ => (
            quote!(::core::option::Option::None),
            TokenStream::new(),
            TokenStream::new(),
        ),
    };
    // After an error, a return type that is not a `Result` would only add trait errors.
    let ret_ok = checks || check::returns_result(ret);
    let output_ty = if ret_ok {
        quote_spanned!(ret.span()=> <#ret as #krate::__private::ToolReturn>::Output)
    } else {
        quote!(())
    };
    let body = if checks && f.extractors.is_empty() {
        // Nothing to extract: the handler's own future, whose value already is the
        // `Result<Output, ToolError>` that `ToolReturn` checks for `type Output`. No `async`
        // block or adapter per tool: each would be one more state machine or generic instance
        // for the compiler to build, check and generate.
        quote! {
            let _ = __tc_ctx;
            #fn_ident(__tc_args)
        }
    } else if checks {
        quote! {
            async move {
                let _ = &__tc_ctx;
                #(#extracts)*
                #krate::__private::ToolReturn::into_result(
                    #fn_ident(__tc_args #(, #extract_idents)*).await
                )
            }
        }
    } else {
        // Never runs: the crate does not compile. Calling the handler here could only repeat
        // the error the checks already reported.
        quote! {
            async move {
                let _ = (&__tc_args, &__tc_ctx);
                ::core::unreachable!("this tool failed its compile-time checks")
            }
        }
    };

    quote! {
        #item

        #[doc = #struct_doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #struct_ident;

        const _: () = {
            #(#aliases)*

            #[allow(unused_qualifications, clippy::all)]
            fn __tc_checks() {
                #(#assertions)*
            }

            #view_items

            const __TC_SPEC: #krate::__private::ToolSpec = #krate::__private::ToolSpec {
                name: #name,
                version: #version,
                description: #description,
                effect: #krate::Effect::#effect_variant,
                capabilities: &[#(#capabilities),*],
                approval: #krate::contract::ApprovalPolicy::#approval_policy,
                timeout_ms: #timeout_ms,
                retry: #krate::contract::RetryPolicy::new(#max_attempts, #backoff_ms, #max_backoff_ms),
                idempotency: #idempotency,
                policy_version: #policy_version,
                extractors: &[#(#extractor_names),*],
                provenance: #provenance,
                confidential: &[#(#confidential),*],
                max_output_bytes: #max_output_bytes,
                open_output: #open_output,
                depends_on: &[#(#depends_on),*],
                model_view: #view_spec,
                crate_name: ::core::env!("CARGO_PKG_NAME"),
                crate_version: ::core::env!("CARGO_PKG_VERSION"),
                git_revision: ::core::option_env!("TOOL_CONTRACT_GIT_REVISION"),
            };

            #[automatically_derived]
            #[allow(unused_qualifications)]
            impl #krate::Tool for #struct_ident {
                type Args = #args_ty_spanned;
                type Output = #output_ty;
                type Effect = #krate::__private::#effect_variant;

                const NAME: &'static str = #name;
                const VERSION: &'static str = #version;

                // `#[inline]` here and on `call`: the contract's builder (both schemas, the
                // field table) and the call are then compiled where a tool is registered or
                // exported, not in every crate that only defines tools. The static stays one
                // per tool wherever it is inlined.
                #[inline]
                fn contract() -> &'static #krate::ToolContract {
                    static __TC_CONTRACT: #krate::__private::OnceLock<#krate::ToolContract> =
                        #krate::__private::OnceLock::new();
                    #krate::__private::contract_once(
                        &__TC_CONTRACT,
                        #krate::__private::build_contract::<Self>,
                        &__TC_SPEC,
                    )
                }

                #requires_approval

                #[inline]
                fn call<'__tc_a>(
                    &'__tc_a self,
                    __tc_args: Self::Args,
                    __tc_ctx: &'__tc_a #krate::ToolContext,
                ) -> impl ::core::future::Future<
                    Output = ::core::result::Result<Self::Output, #krate::ToolError>,
                > + ::core::marker::Send + '__tc_a {
                    #body
                }

                #view_deliver
            }
        };
    }
}

/// How an extractor is named in the contract: its last path segment with generics, e.g. `State<Db>`.
fn extractor_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => match p.path.segments.last() {
            Some(seg) => quote!(#seg).to_string().replace(' ', ""),
            None => String::new(),
        },
        other => quote!(#other).to_string().replace(' ', ""),
    }
}
