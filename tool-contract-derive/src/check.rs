//! The compile-time policy rules (the README's rules table), one function each. Every rule reports through the
//! shared `Ctxt`, so a tool with three mistakes gets three errors in one build.

use proc_macro2::Span;

use crate::ast::{self, ArgsStruct, ToolFn};
use crate::attr::{ApprovalKind, EffectKind, ToolAttr};
use crate::ctxt::Ctxt;

/// Longest tool name: OpenAI and Anthropic reject names over 64 characters.
pub const MAX_NAME_LEN: usize = 64;

pub fn check_tool(cx: &Ctxt, attr: &ToolAttr, f: &ToolFn) {
    check_required_keys(cx, attr);
    check_irreversible_needs_approval(cx, attr);
    check_retried_irreversible_passes_key(cx, attr, f);
    check_description(cx, f);
    check_name(cx, attr, f);
    check_return_type(cx, f);
}

pub fn check_args(cx: &Ctxt, s: &ArgsStruct) {
    check_not_generic(cx, s);
    check_security_context(cx, s);
    check_field_docs(cx, s);
    check_rejects_unknown_fields(cx, s);
    check_bounds(cx, s);
    check_idempotency_key_field(cx, s);
    check_flow_attrs(cx, s);
}

/// Rule 1. `effect`, `version` and `timeout_ms` are required: an effect class decides every later
/// policy, a version tells contracts apart in traces, and a timeout bounds every attempt. Their
/// formats are checked where they are parsed (`attr.rs`).
fn check_required_keys(cx: &Ctxt, attr: &ToolAttr) {
    // After a syntax error the rest of the attribute was never read: "missing" would be a guess.
    if attr.syntax_error {
        return;
    }
    let at = Span::call_site();
    let missing = |key: &str| !attr.seen.iter().any(|k| k == key);
    if missing("effect") {
        cx.error_at(
            at,
            "missing `effect`: say what the tool does to the world, e.g. `effect = \"pure_read\"` (one of pure_read, external_read, reversible_write, irreversible_write)",
        );
    }
    if missing("version") {
        cx.error_at(at, "missing `version`: add a semantic version, e.g. `version = \"1.0.0\"`, so traces and replays tell contracts apart");
    }
    if missing("timeout_ms") {
        cx.error_at(
            at,
            "missing `timeout_ms`: add the longest one attempt may run, e.g. `timeout_ms = 2000`",
        );
    }
}

/// Rule 2. An irreversible write runs only after a human approved that exact call; a condition
/// that can say "no approval needed" defeats the point.
fn check_irreversible_needs_approval(cx: &Ctxt, attr: &ToolAttr) {
    let Some(effect) = attr
        .effect
        .filter(|e| e.value == EffectKind::IrreversibleWrite)
    else {
        return;
    };
    match attr.approval {
        None => cx.error_at(
            effect.span,
            "an `irreversible_write` tool needs human approval: add `approval` to the #[tool] attribute",
        ),
        Some(a) if a.value == ApprovalKind::Conditional => cx.error_at(
            a.span,
            "an `irreversible_write` tool needs approval on every call: write `approval`, not `approval = \"conditional\"`",
        ),
        Some(_) => {}
    }
}

/// Rule 3 is enforced at the type level (the fn attribute cannot see the args struct): writes
/// without `idempotency(...)` require `Args: HasIdempotencyKeyField`, see `expand::tool`. This
/// says whether that bound is needed.
pub fn needs_key_field_bound(attr: &ToolAttr) -> bool {
    attr.effect.is_some_and(|e| e.value.is_write()) && attr.idempotency.is_none()
}

/// Rule 4. Automatic retries of an irreversible write are safe only when the downstream system
/// deduplicates by the same key, so the handler must receive it.
fn check_retried_irreversible_passes_key(cx: &Ctxt, attr: &ToolAttr, f: &ToolFn) {
    let irreversible = attr
        .effect
        .is_some_and(|e| e.value == EffectKind::IrreversibleWrite);
    let Some(max) = attr.max_attempts() else {
        return;
    };
    if irreversible && max.value > 1 && !f.takes_idempotency_key() {
        cx.error_at(
            max.span,
            "an `irreversible_write` tool retried automatically must pass its idempotency key downstream: add a `key: IdempotencyKey` parameter and send it with the request, or set `max_attempts = 1`",
        );
    }
}

/// The handler returns `Result<Output, ToolError>`. Checked by name (`...Result<..>`) so the
/// mistake is one macro error instead of a trait error at every use of the output type; aliases
/// such as `MyResult<T>` still pass and are checked by the `ToolReturn` bound.
pub fn returns_result(ty: &syn::Type) -> bool {
    ast::last_segment(ty).is_some_and(|s| s.ends_with("Result"))
}

fn check_return_type(cx: &Ctxt, f: &ToolFn) {
    if let Some(ret) = f.ret {
        if !returns_result(ret) {
            cx.error_spanned_by(ret, "a #[tool] handler must return `Result<Output, ToolError>`; wrap the value: `Ok(value)`");
        }
    }
}

/// Rule 6 (tool half). The doc comment is the description the model chooses tools by.
fn check_description(cx: &Ctxt, f: &ToolFn) {
    if f.docs.trim().is_empty() {
        cx.error_spanned_by(
            f.ident(),
            "a tool needs a decision-oriented description: add a `///` doc comment saying when to use it, when not to, and how it differs from similar tools",
        );
    }
}

/// Rule 7. Overlapping vague names (`search`, `find`, `lookup`) raise selection errors; a
/// `verb_object` name says what it acts on. 64 characters is the strictest provider limit.
fn check_name(cx: &Ctxt, attr: &ToolAttr, f: &ToolFn) {
    let (name, span) = match &attr.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (
            f.ident().to_string().trim_start_matches("r#").to_owned(),
            f.ident().span(),
        ),
    };
    if !is_verb_object(&name) {
        cx.error_at(
            span,
            format!(
                "tool name `{name}` is not `verb_object` snake_case: name the action and what it acts on, e.g. `search_documents` (set it with `name = \"...\"` or rename the fn)"
            ),
        );
    }
    if name.len() > MAX_NAME_LEN {
        cx.error_at(
            span,
            format!(
                "tool name `{name}` is {} characters long; providers accept at most {MAX_NAME_LEN}",
                name.len()
            ),
        );
    }
}

/// `^[a-z][a-z0-9]*(_[a-z0-9]+)+$`: at least two snake_case words.
pub fn is_verb_object(name: &str) -> bool {
    let mut parts = name.split('_');
    let Some(first) = parts.next() else {
        return false;
    };
    let starts_ok = first.chars().next().is_some_and(|c| c.is_ascii_lowercase());
    let word = |p: &str| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    let rest: Vec<&str> = parts.collect();
    starts_ok && word(first) && !rest.is_empty() && rest.iter().all(|p| word(p))
}

fn check_not_generic(cx: &Ctxt, s: &ArgsStruct) {
    let g = &s.original.generics;
    if !g.params.is_empty() {
        cx.error_spanned_by(g, "tool arguments cannot be generic or borrow: their schema is fixed when the tool is registered");
    }
}

/// What a security-context field should be replaced with.
#[derive(Debug, PartialEq, Eq)]
pub enum SecurityKind {
    Tenant,
    Principal,
    Privilege,
    Secret,
}

/// Classifies a field name, ignoring case, `_` and `-`, so `tenantId` and `TENANT-ID` match too.
pub fn security_kind(name: &str) -> Option<SecurityKind> {
    let n: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect::<String>()
        .to_lowercase();
    match n.as_str() {
        "tenant" | "tenantid" | "orgid" | "organizationid" => return Some(SecurityKind::Tenant),
        "userid" | "principal" | "principalid" => return Some(SecurityKind::Principal),
        "isadmin" | "role" | "roles" | "scope" | "scopes" => return Some(SecurityKind::Privilege),
        _ => {}
    }
    ["token", "apikey", "password", "secret"]
        .iter()
        .any(|s| n.contains(s))
        .then_some(SecurityKind::Secret)
}

/// Rule 5. Security context comes from the trusted runtime context, never from arguments the
/// model writes: a model that can name a tenant can read another tenant's documents.
fn check_security_context(cx: &Ctxt, s: &ArgsStruct) {
    for f in s
        .fields
        .iter()
        .filter(|f| !f.serde.skipped && f.attr.model_supplied.is_none())
    {
        let Some(kind) = security_kind(&f.rust_name).or_else(|| security_kind(&f.wire_name)) else {
            continue;
        };
        let instead = match kind {
            SecurityKind::Tenant => "take the tenant from the trusted context with a `Tenant` extractor parameter (`tenant: Tenant`)",
            SecurityKind::Principal => "take the caller from the trusted context with a `Principal` extractor parameter (`principal: Principal`)",
            SecurityKind::Privilege => "require it with `capabilities(\"...\")` on the #[tool], checked against the trusted context (or read the `Capabilities` extractor)",
            SecurityKind::Secret => "keep credentials in host state and read them with a `State<T>` extractor parameter",
        };
        let name = if f.wire_name == f.rust_name {
            format!("`{}`", f.rust_name)
        } else {
            format!("`{}` (sent as `{}`)", f.rust_name, f.wire_name)
        };
        cx.error_at(
            ast::field_span(f),
            format!(
                "{name} is security context and must not be a model argument; {instead}; if the model really chooses it, mark the field `#[tool(model_supplied = \"why\")]`"
            ),
        );
    }
}

/// Flow control declarations are one policy per field: `trusted_only` and `accepts_untrusted`
/// contradict each other, and a URL or command field may never take untrusted text (a URL found
/// in a result is never followed automatically).
fn check_flow_attrs(cx: &Ctxt, s: &ArgsStruct) {
    for f in &s.fields {
        let a = &f.attr;
        if let (Some(_), Some(reason)) = (a.trusted_only, &a.accepts_untrusted) {
            cx.error_spanned_by(
                reason,
                format!(
                    "field `{}` is both `trusted_only` and `accepts_untrusted`; keep the one that says where its values may come from",
                    f.rust_name
                ),
            );
        }
        if let (Some(_), Some(reason)) = (a.url, &a.accepts_untrusted) {
            cx.error_spanned_by(
                reason,
                format!(
                    "field `{}` is a URL or command and cannot accept untrusted values: a URL found in a tool result is never followed automatically; remove `accepts_untrusted`, or allowlist the outputs it may come from with `flows_from(\"tool:/pointer\")`",
                    f.rust_name
                ),
            );
        }
    }
}

/// Rule 6 (field half). Field docs become the property descriptions the model fills them by.
fn check_field_docs(cx: &Ctxt, s: &ArgsStruct) {
    for f in s.fields.iter().filter(|f| !f.serde.skipped) {
        if f.docs.trim().is_empty() {
            cx.error_at(
                ast::field_span(f),
                format!(
                    "field `{}` needs a `///` doc comment: it becomes the property's description in the schema the model reads",
                    f.rust_name
                ),
            );
        }
    }
}

/// Rule 8. Unknown fields are refused (`additionalProperties: false`), so a field the model
/// invents is an error it can repair, not a value silently dropped. `flatten` would reopen it:
/// serde ignores `deny_unknown_fields` through a flattened field.
fn check_rejects_unknown_fields(cx: &Ctxt, s: &ArgsStruct) {
    if !s.serde.deny_unknown_fields {
        cx.error_at(
            s.span(),
            format!(
                "tool arguments must reject unknown fields: add `#[serde(deny_unknown_fields)]` to `{}` so the schema says `additionalProperties: false`",
                s.ident()
            ),
        );
    }
    for f in &s.fields {
        if let Some(span) = f.serde.flatten {
            cx.error_at(span, "`#[serde(flatten)]` disables `deny_unknown_fields`; write the fields out in this struct");
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum BoundKind {
    Text,
    Collection,
    Integer,
}

/// What bound a field type needs, looking through `Option`, `Box` and references.
pub fn bound_kind(ty: &syn::Type) -> Option<BoundKind> {
    let syn::Type::Path(p) = ty else {
        if let syn::Type::Reference(r) = ty {
            return bound_kind(&r.elem);
        }
        return None;
    };
    let seg = p.path.segments.last()?;
    let name = seg.ident.to_string();
    match name.as_str() {
        "Option" | "Box" => {
            if let syn::PathArguments::AngleBracketed(a) = &seg.arguments {
                if let Some(syn::GenericArgument::Type(inner)) = a.args.first() {
                    return bound_kind(inner);
                }
            }
            None
        }
        "String" | "str" | "Cow" => Some(BoundKind::Text),
        "Vec" | "VecDeque" | "HashSet" | "BTreeSet" | "HashMap" | "BTreeMap" | "IndexMap"
        | "IndexSet" => Some(BoundKind::Collection),
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => Some(BoundKind::Integer),
        _ => None,
    }
}

/// Rule 9. Every string, list and integer the model writes is bounded: `maxLength`/`maxItems`
/// cap prompt and backend resources, `minimum`/`maximum` stop `top_k: 1000000`. Nested types
/// are linted when the registry is built.
fn check_bounds(cx: &Ctxt, s: &ArgsStruct) {
    for f in s
        .fields
        .iter()
        .filter(|f| !f.serde.skipped && f.attr.unbounded.is_none())
    {
        let ty = &f.original.ty;
        let (keys, what, fix): (&[&str], &str, &str) = match bound_kind(ty) {
            Some(BoundKind::Text) => (
                &["length"],
                "an unbounded string",
                "#[schemars(length(max = N))]",
            ),
            Some(BoundKind::Collection) => (
                &["length"],
                "an unbounded collection",
                "#[schemars(length(max = N))]",
            ),
            Some(BoundKind::Integer) => (
                &["range"],
                "an unbounded integer",
                "#[schemars(range(min = A, max = B))]",
            ),
            None => continue,
        };
        if !crate::attr::has_bound(&f.original.attrs, keys) {
            cx.error_spanned_by(
                ty,
                format!(
                    "field `{}` is {what}: add `{fix}` so the schema caps what a model can send, or `#[tool(unbounded = \"why\")]`",
                    f.rust_name
                ),
            );
        }
    }
}

/// A key field is a string (optionally `Option<String>`), and there is at most one.
fn check_idempotency_key_field(cx: &Ctxt, s: &ArgsStruct) {
    let keys: Vec<_> = s
        .fields
        .iter()
        .filter(|f| f.attr.idempotency_key.is_some())
        .collect();
    for extra in keys.iter().skip(1) {
        cx.error_at(
            extra.attr.idempotency_key.unwrap_or_else(Span::call_site),
            "only one field can be the `idempotency_key`; use `idempotency(from = [...])` on the #[tool] to combine fields",
        );
    }
    for f in &keys {
        if bound_kind(&f.original.ty) != Some(BoundKind::Text) {
            cx.error_spanned_by(
                &f.original.ty,
                "an `idempotency_key` field must be a `String` (or `Option<String>`)",
            );
        }
        if f.serde.skipped {
            cx.error_at(ast::field_span(f), "an `idempotency_key` field cannot be skipped by serde: the key must come with the arguments");
        }
    }
}

/// The runtime crate's copy of the security-name list, which checks the properties of nested
/// and flattened types when a registry is built: compiled here to check the two agree.
#[cfg(test)]
#[path = "../../tool-contract/src/security_names.rs"]
#[allow(dead_code)]
mod runtime_names;

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn verb_object_names() {
        for ok in [
            "search_documents",
            "read_document_span",
            "get_policy_revision",
            "send_email2",
        ] {
            assert!(is_verb_object(ok), "{ok}");
        }
        for bad in [
            "search",
            "Search_documents",
            "search__documents",
            "_search",
            "search_",
            "searchDocuments",
            "검색_문서",
            "",
        ] {
            assert!(!is_verb_object(bad), "{bad}");
        }
    }

    #[test]
    fn security_names_are_caught_in_any_spelling() {
        assert_eq!(security_kind("tenant_id"), Some(SecurityKind::Tenant));
        assert_eq!(security_kind("tenantId"), Some(SecurityKind::Tenant));
        assert_eq!(security_kind("USER-ID"), Some(SecurityKind::Principal));
        assert_eq!(security_kind("is_admin"), Some(SecurityKind::Privilege));
        assert_eq!(security_kind("refresh_token"), Some(SecurityKind::Secret));
        assert_eq!(security_kind("apiKey"), Some(SecurityKind::Secret));
        assert_eq!(security_kind("query"), None);
        assert_eq!(security_kind("console"), None);
    }

    #[test]
    fn bound_kinds_see_through_option() {
        let t = |ty: syn::Type| bound_kind(&ty);
        assert_eq!(t(parse_quote!(String)), Some(BoundKind::Text));
        assert_eq!(
            t(parse_quote!(Option<std::string::String>)),
            Some(BoundKind::Text)
        );
        assert_eq!(t(parse_quote!(Vec<u8>)), Some(BoundKind::Collection));
        assert_eq!(t(parse_quote!(Option<u32>)), Some(BoundKind::Integer));
        assert_eq!(t(parse_quote!(bool)), None);
        assert_eq!(t(parse_quote!(SourceType)), None);
    }

    fn args_errors(input: syn::DeriveInput) -> Vec<String> {
        let cx = Ctxt::new();
        if let Some(s) = ArgsStruct::from_ast(&cx, &input) {
            check_args(&cx, &s);
        }
        match cx.check() {
            Ok(()) => vec![],
            Err(ts) => ts
                .to_string()
                .split("compile_error")
                .skip(1)
                .map(str::to_owned)
                .collect(),
        }
    }

    #[test]
    fn args_rules_accumulate() {
        let errs = args_errors(parse_quote! {
            struct Bad {
                tenant_id: String,
                /// Documented but unbounded.
                query: String,
                /// Fine.
                #[schemars(range(min = 1, max = 20))]
                top_k: u8,
            }
        });
        // tenant_id: security + docs + bounds; query: bounds; struct: deny_unknown_fields.
        assert_eq!(errs.len(), 5, "{errs:#?}");
        assert!(errs
            .iter()
            .any(|e| e.contains("security context") && e.contains("Tenant")));
        assert!(errs.iter().any(|e| e.contains("deny_unknown_fields")));
    }

    #[test]
    fn opt_outs_are_respected() {
        let errs = args_errors(parse_quote! {
            #[serde(deny_unknown_fields)]
            struct Ok {
                /// The model picks which role to draft the e-mail as.
                #[tool(model_supplied = "a persona name, not a privilege")]
                #[schemars(length(max = 20))]
                role: String,
                /// Free text.
                #[tool(unbounded = "truncated by the handler")]
                note: String,
                #[serde(skip)]
                tenant_id: String,
            }
        });
        assert!(errs.is_empty(), "{errs:#?}");
    }

    /// The derive's list and the runtime's list classify every name alike.
    #[test]
    fn the_runtime_checks_the_same_names() {
        let stems = [
            "tenant",
            "tenant_id",
            "org_id",
            "organization_id",
            "user_id",
            "principal",
            "principal_id",
            "is_admin",
            "role",
            "roles",
            "scope",
            "scopes",
            "token",
            "api_key",
            "password",
            "secret",
            "query",
            "title",
            "owner",
            "user",
            "admin",
            "organization",
            "top_k",
            "scoped",
            "tokens_used",
            "secretary",
            "",
        ];
        for stem in stems {
            let camel: String = stem
                .split('_')
                .enumerate()
                .map(|(i, w)| {
                    let mut c = w.chars();
                    match (i, c.next()) {
                        (0, Some(f)) => f.to_string() + c.as_str(),
                        (_, Some(f)) => f.to_uppercase().collect::<String>() + c.as_str(),
                        (_, None) => String::new(),
                    }
                })
                .collect();
            for name in [
                stem.to_owned(),
                stem.to_uppercase().replace('_', "-"),
                camel,
                format!("x_{stem}"),
            ] {
                assert_eq!(
                    security_kind(&name).map(|k| format!("{k:?}")),
                    super::runtime_names::security_name(&name).map(|k| format!("{k:?}")),
                    "{name}"
                );
            }
        }
    }
}
