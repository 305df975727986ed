//! The attribute grammars: `#[tool(...)]` on a handler, on an args struct and on its fields.
//! Only local, per-key errors are reported here; rules that relate several keys live in `check`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::{Ident, LitInt, LitStr, Token};

use crate::ctxt::Ctxt;

pub const TOOL_KEYS: &[&str] = &[
    "name",
    "version",
    "effect",
    "timeout_ms",
    "approval",
    "capabilities",
    "retry",
    "idempotency",
    "policy_version",
    "provenance",
    "confidential",
    "max_output_bytes",
    "open_output",
    "depends_on",
    "model_view",
    "crate",
];
const RETRY_KEYS: &[&str] = &["max_attempts", "backoff_ms", "max_backoff_ms"];
const FIELD_KEYS: &[&str] = &[
    "idempotency_key",
    "model_supplied",
    "unbounded",
    "trusted_only",
    "accepts_untrusted",
    "flows_from",
    "url",
    "command",
];
const CONTAINER_KEYS: &[&str] = &["semantic", "crate"];

/// Upper bound of `timeout_ms`: ten minutes. Longer work belongs in a job the tool starts.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Upper bound of `max_output_bytes`: 64 MiB. Past that an output is no observation for a model.
pub const MAX_OUTPUT_BYTES: u64 = 64 * 1024 * 1024;
/// Lower bound of `max_output_bytes`: the smallest JSON error body fits.
pub const MIN_OUTPUT_BYTES: u64 = 16;
/// Upper bound of `retry(max_attempts)`.
pub const MAX_ATTEMPTS: u32 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EffectKind {
    PureRead,
    ExternalRead,
    ReversibleWrite,
    IrreversibleWrite,
}

impl EffectKind {
    pub const ALL: &'static [(&'static str, EffectKind)] = &[
        ("pure_read", EffectKind::PureRead),
        ("external_read", EffectKind::ExternalRead),
        ("reversible_write", EffectKind::ReversibleWrite),
        ("irreversible_write", EffectKind::IrreversibleWrite),
    ];

    pub fn is_write(self) -> bool {
        matches!(
            self,
            EffectKind::ReversibleWrite | EffectKind::IrreversibleWrite
        )
    }

    pub fn variant(self) -> &'static str {
        match self {
            EffectKind::PureRead => "PureRead",
            EffectKind::ExternalRead => "ExternalRead",
            EffectKind::ReversibleWrite => "ReversibleWrite",
            EffectKind::IrreversibleWrite => "IrreversibleWrite",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalKind {
    Always,
    Conditional,
}

#[derive(Clone, Copy)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

#[derive(Default)]
pub struct Retry {
    pub max_attempts: Option<Spanned<u32>>,
    pub backoff_ms: Option<Spanned<u64>>,
    pub max_backoff_ms: Option<Spanned<u64>>,
}

pub enum IdempotencyKind {
    From(Vec<Ident>),
    Host,
}

/// `#[tool(...)]` on a handler fn.
#[derive(Default)]
pub struct ToolAttr {
    pub name: Option<LitStr>,
    pub version: Option<LitStr>,
    pub effect: Option<Spanned<EffectKind>>,
    pub timeout_ms: Option<Spanned<u64>>,
    pub approval: Option<Spanned<ApprovalKind>>,
    pub capabilities: Vec<LitStr>,
    pub retry: Option<Spanned<Retry>>,
    pub idempotency: Option<Spanned<IdempotencyKind>>,
    pub policy_version: Option<LitStr>,
    pub provenance: Option<(LitStr, Option<LitStr>)>,
    /// `confidential` (the whole output: `[""]`) or `confidential("/pointer", ...)`.
    pub confidential: Option<Vec<LitStr>>,
    pub max_output_bytes: Option<Spanned<u64>>,
    /// `open_output = "why"`.
    pub open_output: Option<LitStr>,
    /// `depends_on(...)`: name, version, `on_change` (`None`: major).
    pub depends_on: Vec<(Ident, LitStr, Option<LitStr>)>,
    /// `model_view = path::to_fn`: what the model sees of the output.
    pub model_view: Option<syn::Path>,
    pub krate: Option<syn::Path>,
    /// Keys written at all, valid or not: a key with a bad value is not also "missing".
    pub seen: Vec<String>,
    /// The attribute stopped parsing early; keys after the error were never read.
    pub syntax_error: bool,
}

impl ToolAttr {
    pub fn max_attempts(&self) -> Option<Spanned<u32>> {
        self.retry.as_ref().and_then(|r| r.value.max_attempts)
    }
}

fn set_once<T>(cx: &Ctxt, meta: &ParseNestedMeta, slot: &mut Option<T>, value: T) {
    if slot.is_some() {
        cx.error_spanned_by(
            &meta.path,
            format!("duplicate `{}`; keep only one", path_name(&meta.path)),
        );
    } else {
        *slot = Some(value);
    }
}

fn path_name(path: &syn::Path) -> String {
    quote::quote!(#path).to_string().replace(' ', "")
}

/// "unknown key `x`", with the closest valid key if there is one, and the list otherwise.
fn unknown_key(cx: &Ctxt, path: &syn::Path, what: &str, valid: &[&str]) {
    let name = path_name(path);
    let best = valid
        .iter()
        .map(|k| (strsim::jaro_winkler(&name, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let msg = match best {
        Some((_, k)) => format!("unknown {what} `{name}`; did you mean `{k}`?"),
        None => format!(
            "unknown {what} `{name}`; expected one of: {}",
            valid.join(", ")
        ),
    };
    cx.error_spanned_by(path, msg);
}

/// Consumes whatever value follows an unknown key, so parsing goes on to the next key.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<syn::Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.input.parse::<proc_macro2::Group>()?;
    }
    Ok(())
}

fn lit_expr(meta: &ParseNestedMeta) -> syn::Result<syn::Expr> {
    meta.value()?.parse::<syn::Expr>()
}

fn expect_str(cx: &Ctxt, meta: &ParseNestedMeta, example: &str) -> syn::Result<Option<LitStr>> {
    let expr = lit_expr(meta)?;
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(Some(s)),
        other => {
            cx.error_spanned_by(
                other,
                format!("expected a string literal, e.g. `{example}`"),
            );
            Ok(None)
        }
    }
}

fn expect_int(cx: &Ctxt, meta: &ParseNestedMeta, example: &str) -> syn::Result<Option<LitInt>> {
    let expr = lit_expr(meta)?;
    match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(i),
            ..
        }) => Ok(Some(i)),
        other => {
            cx.error_spanned_by(
                other,
                format!("expected an integer literal, e.g. `{example}`"),
            );
            Ok(None)
        }
    }
}

fn int_in<T>(cx: &Ctxt, lit: &LitInt, lo: T, hi: T, what: &str) -> Option<Spanned<T>>
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
    T::Err: std::fmt::Display,
{
    match lit.base10_parse::<T>() {
        Ok(v) if v >= lo && v <= hi => Some(Spanned {
            value: v,
            span: lit.span(),
        }),
        _ => {
            cx.error_spanned_by(lit, format!("{what} must be between {lo} and {hi}"));
            None
        }
    }
}

/// syn's parse errors name the token but not the grammar; say what an entry looks like.
fn explain_syntax(err: syn::Error) -> syn::Error {
    let msg = err.to_string();
    if msg.contains("write `") {
        return err;
    }
    syn::Error::new(
        err.span(),
        format!("{msg}; `#[tool(...)]` takes comma-separated entries such as `version = \"1.0.0\"`, `approval` or `retry(max_attempts = 2)`"),
    )
}

pub fn parse_tool_attr(cx: &Ctxt, args: TokenStream) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = syn::meta::parser(|meta| parse_tool_key(cx, &mut attr, meta));
    if let Err(err) = parser.parse2(args) {
        cx.syn_error(explain_syntax(err));
        attr.syntax_error = true;
    }
    attr
}

fn parse_tool_key(cx: &Ctxt, attr: &mut ToolAttr, meta: ParseNestedMeta) -> syn::Result<()> {
    let path = &meta.path;
    attr.seen.push(path_name(path));
    if path.is_ident("name") {
        if let Some(s) = expect_str(cx, &meta, "name = \"search_documents\"")? {
            set_once(cx, &meta, &mut attr.name, s);
        }
    } else if path.is_ident("version") {
        if let Some(s) = expect_str(cx, &meta, "version = \"1.0.0\"")? {
            if let Err(err) = semver::Version::parse(&s.value()) {
                cx.error_spanned_by(
                    &s,
                    format!(
                        "`{}` is not a semantic version ({err}); write `major.minor.patch`, e.g. `version = \"1.2.0\"`",
                        s.value()
                    ),
                );
            }
            set_once(cx, &meta, &mut attr.version, s);
        }
    } else if path.is_ident("effect") {
        if let Some(s) = expect_str(cx, &meta, "effect = \"pure_read\"")? {
            let value = s.value();
            match EffectKind::ALL.iter().find(|(n, _)| *n == value) {
                Some(&(_, kind)) => set_once(
                    cx,
                    &meta,
                    &mut attr.effect,
                    Spanned {
                        value: kind,
                        span: s.span(),
                    },
                ),
                None => {
                    let names: Vec<&str> = EffectKind::ALL.iter().map(|(n, _)| *n).collect();
                    let hint = names
                        .iter()
                        .map(|k| (strsim::jaro_winkler(&value, k), *k))
                        .filter(|(score, _)| *score > 0.8)
                        .max_by(|a, b| a.0.total_cmp(&b.0))
                        .map(|(_, k)| format!("; did you mean `{k}`?"))
                        .unwrap_or_else(|| format!("; expected one of: {}", names.join(", ")));
                    cx.error_spanned_by(&s, format!("unknown effect class `{value}`{hint}"));
                }
            }
        }
    } else if path.is_ident("timeout_ms") {
        if let Some(lit) = expect_int(cx, &meta, "timeout_ms = 2000")? {
            if let Some(v) = int_in(cx, &lit, 1u64, MAX_TIMEOUT_MS, "`timeout_ms`") {
                set_once(cx, &meta, &mut attr.timeout_ms, v);
            }
        }
    } else if path.is_ident("approval") {
        let span = path.span();
        if meta.input.is_empty() || meta.input.peek(Token![,]) {
            set_once(
                cx,
                &meta,
                &mut attr.approval,
                Spanned {
                    value: ApprovalKind::Always,
                    span,
                },
            );
        } else if let Some(s) = expect_str(cx, &meta, "approval = \"conditional\"")? {
            let kind = match s.value().as_str() {
                "always" => Some(ApprovalKind::Always),
                "conditional" => Some(ApprovalKind::Conditional),
                other => {
                    cx.error_spanned_by(
                        &s,
                        format!("unknown approval policy `{other}`; write `approval` (always) or `approval = \"conditional\"`"),
                    );
                    None
                }
            };
            if let Some(value) = kind {
                set_once(
                    cx,
                    &meta,
                    &mut attr.approval,
                    Spanned {
                        value,
                        span: s.span(),
                    },
                );
            }
        }
    } else if path.is_ident("capabilities") {
        if !meta.input.peek(syn::token::Paren) {
            skip_value(&meta)?;
            cx.error_spanned_by(
                path,
                "write capabilities as a list: `capabilities(\"documents:search\", ...)`",
            );
            return Ok(());
        }
        let content;
        syn::parenthesized!(content in meta.input);
        let caps = Punctuated::<syn::Expr, Token![,]>::parse_terminated(&content)?;
        if !attr.capabilities.is_empty() {
            cx.error_spanned_by(
                path,
                "duplicate `capabilities`; list them all in one `capabilities(...)`",
            );
        }
        for cap in caps {
            match cap {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => {
                    let v = s.value();
                    if v.is_empty() || v.chars().any(|c| c.is_whitespace() || c.is_control()) {
                        cx.error_spanned_by(
                            &s,
                            "a capability is a non-empty name without spaces, e.g. `\"mail:send\"`",
                        );
                    } else if attr.capabilities.iter().any(|c| c.value() == v) {
                        cx.error_spanned_by(&s, format!("capability `{v}` is listed twice"));
                    } else {
                        attr.capabilities.push(s);
                    }
                }
                other => cx.error_spanned_by(
                    other,
                    "expected a string literal, e.g. `capabilities(\"mail:send\")`",
                ),
            }
        }
    } else if path.is_ident("retry") {
        let span = path.span();
        if !meta.input.peek(syn::token::Paren) {
            skip_value(&meta)?;
            cx.error_spanned_by(
                path,
                "`retry` takes a list: write `retry(max_attempts = 3)`, optionally with `backoff_ms = 100, max_backoff_ms = 1000`",
            );
            return Ok(());
        }
        let mut retry = Retry::default();
        meta.parse_nested_meta(|m| {
            if m.path.is_ident("max_attempts") {
                if let Some(lit) = expect_int(cx, &m, "max_attempts = 2")? {
                    if let Some(v) = int_in(cx, &lit, 1u32, MAX_ATTEMPTS, "`max_attempts`") {
                        set_once(cx, &m, &mut retry.max_attempts, v);
                    }
                }
            } else if m.path.is_ident("backoff_ms") {
                if let Some(lit) = expect_int(cx, &m, "backoff_ms = 100")? {
                    if let Some(v) = int_in(cx, &lit, 0u64, MAX_TIMEOUT_MS, "`backoff_ms`") {
                        set_once(cx, &m, &mut retry.backoff_ms, v);
                    }
                }
            } else if m.path.is_ident("max_backoff_ms") {
                if let Some(lit) = expect_int(cx, &m, "max_backoff_ms = 1000")? {
                    if let Some(v) = int_in(cx, &lit, 0u64, MAX_TIMEOUT_MS, "`max_backoff_ms`") {
                        set_once(cx, &m, &mut retry.max_backoff_ms, v);
                    }
                }
            } else {
                unknown_key(cx, &m.path, "retry key", RETRY_KEYS);
                skip_value(&m)?;
            }
            Ok(())
        })?;
        if let (Some(b), Some(mb)) = (retry.backoff_ms, retry.max_backoff_ms) {
            if b.value > mb.value {
                cx.error_at(mb.span, "`max_backoff_ms` must be at least `backoff_ms`");
            }
        }
        set_once(cx, &meta, &mut attr.retry, Spanned { value: retry, span });
    } else if path.is_ident("idempotency") {
        let span = path.span();
        if !meta.input.peek(syn::token::Paren) {
            skip_value(&meta)?;
            cx.error_spanned_by(
                path,
                "write `idempotency(from = [field, ...])` or `idempotency(host)`",
            );
            return Ok(());
        }
        let mut kind = None;
        meta.parse_nested_meta(|m| {
            if m.path.is_ident("host") {
                set_once(cx, &m, &mut kind, IdempotencyKind::Host);
            } else if m.path.is_ident("from") {
                let value = m.value()?;
                if !value.peek(syn::token::Bracket) {
                    let got: proc_macro2::TokenStream = value
                        .parse::<syn::Expr>()
                        .map(quote::ToTokens::into_token_stream)?;
                    return Err(syn::Error::new_spanned(
                        &got,
                        format!("`from` takes a list: write `from = [{got}]`"),
                    ));
                }
                let content;
                syn::bracketed!(content in value);
                let fields: Vec<Ident> =
                    Punctuated::<Ident, Token![,]>::parse_terminated(&content)?
                        .into_iter()
                        .collect();
                if fields.is_empty() {
                    cx.error_spanned_by(
                        &m.path,
                        "`from` needs at least one field: `from = [to, subject]`",
                    );
                }
                for (i, f) in fields.iter().enumerate() {
                    if fields[..i].contains(f) {
                        cx.error_spanned_by(f, format!("field `{f}` is listed twice"));
                    }
                }
                set_once(cx, &m, &mut kind, IdempotencyKind::From(fields));
            } else {
                unknown_key(cx, &m.path, "idempotency source", &["from", "host"]);
                skip_value(&m)?;
            }
            Ok(())
        })?;
        match kind {
            Some(value) => set_once(cx, &meta, &mut attr.idempotency, Spanned { value, span }),
            None => cx.error_spanned_by(
                path,
                "write `idempotency(from = [field, ...])` or `idempotency(host)`",
            ),
        }
    } else if path.is_ident("policy_version") {
        if let Some(s) = expect_str(cx, &meta, "policy_version = \"tool-policy-12\"")? {
            if s.value().trim().is_empty() {
                cx.error_spanned_by(&s, "`policy_version` must not be empty");
            }
            set_once(cx, &meta, &mut attr.policy_version, s);
        }
    } else if path.is_ident("provenance") {
        let example = "provenance(source = \"/source_id\", revision = \"/revision\")";
        if !meta.input.peek(syn::token::Paren) {
            skip_value(&meta)?;
            cx.error_spanned_by(path, format!("write `{example}`"));
            return Ok(());
        }
        let (mut source, mut revision) = (None, None);
        meta.parse_nested_meta(|m| {
            let slot = if m.path.is_ident("source") {
                &mut source
            } else if m.path.is_ident("revision") {
                &mut revision
            } else {
                unknown_key(cx, &m.path, "provenance key", &["source", "revision"]);
                return skip_value(&m);
            };
            if let Some(s) = expect_str(cx, &m, example)? {
                if !s.value().starts_with('/') {
                    cx.error_spanned_by(&s, "a provenance field is a JSON pointer into the output, e.g. `\"/source_id\"`");
                }
                set_once(cx, &m, slot, s);
            }
            Ok(())
        })?;
        match source {
            Some(s) => set_once(cx, &meta, &mut attr.provenance, (s, revision)),
            None => {
                cx.error_spanned_by(path, format!("`provenance` needs a `source`: `{example}`"))
            }
        }
    } else if path.is_ident("confidential") {
        let pointers = if meta.input.peek(syn::token::Paren) {
            let list = string_list(&meta)?;
            if list.is_empty() {
                cx.error_spanned_by(
                    path,
                    "list the confidential output pointers, `confidential(\"/balance\")`, or write `confidential` for the whole output",
                );
            }
            for p in &list {
                let v = p.value();
                if !v.is_empty() && !v.starts_with('/') {
                    cx.error_spanned_by(
                        p,
                        "a confidential value is a JSON pointer into the output, e.g. `\"/accounts/*/iban\"` (`*` for any key or index)",
                    );
                }
            }
            list
        } else if meta.input.is_empty() || meta.input.peek(Token![,]) {
            vec![LitStr::new("", path.span())]
        } else {
            skip_value(&meta)?;
            cx.error_spanned_by(
                path,
                "write `confidential` for the whole output or `confidential(\"/pointer\", ...)`",
            );
            return Ok(());
        };
        set_once(cx, &meta, &mut attr.confidential, pointers);
    } else if path.is_ident("max_output_bytes") {
        if let Some(lit) = expect_int(cx, &meta, "max_output_bytes = 65536")? {
            match lit.base10_parse::<u64>() {
                Ok(v) if (MIN_OUTPUT_BYTES..=MAX_OUTPUT_BYTES).contains(&v) => set_once(
                    cx,
                    &meta,
                    &mut attr.max_output_bytes,
                    Spanned {
                        value: v,
                        span: lit.span(),
                    },
                ),
                _ => cx.error_spanned_by(
                    &lit,
                    format!(
                        "`max_output_bytes` must be between {MIN_OUTPUT_BYTES} and {MAX_OUTPUT_BYTES} (64 MiB) bytes of output JSON; leave it out for the default of 1 MiB"
                    ),
                ),
            }
        }
    } else if path.is_ident("open_output") {
        if let Some(s) = reason(cx, &meta, "open_output")? {
            set_once(cx, &meta, &mut attr.open_output, s);
        }
    } else if path.is_ident("depends_on") {
        parse_depends_on(cx, attr, &meta)?;
    } else if path.is_ident("model_view") {
        match lit_expr(&meta)? {
            syn::Expr::Path(p) if p.qself.is_none() => {
                set_once(cx, &meta, &mut attr.model_view, p.path);
            }
            other => cx.error_spanned_by(
                other,
                "`model_view` names a function `fn(&Output) -> View` whose `View` derives `Serialize` and `JsonSchema`, as a path without quotes: `model_view = masked_view`",
            ),
        }
    } else if path.is_ident("crate") {
        if let Some(p) = parse_crate_path(cx, &meta)? {
            set_once(cx, &meta, &mut attr.krate, p);
        }
    } else {
        unknown_key(cx, path, "`#[tool]` key", TOOL_KEYS);
        skip_value(&meta)?;
    }
    Ok(())
}

const ON_CHANGE: &[&str] = &["major", "minor", "patch"];
const DEPENDS_ON_EXAMPLE: &str =
    "depends_on(index = \"retrieval-v5\", corpus(version = \"2026-11\", on_change = \"minor\"))";

/// `depends_on(name = "version", name(version = "...", on_change = "minor"), ...)`.
fn parse_depends_on(cx: &Ctxt, attr: &mut ToolAttr, meta: &ParseNestedMeta) -> syn::Result<()> {
    if !meta.input.peek(syn::token::Paren) {
        skip_value(meta)?;
        cx.error_spanned_by(&meta.path, format!("write `{DEPENDS_ON_EXAMPLE}`"));
        return Ok(());
    }
    let before = attr.depends_on.len();
    meta.parse_nested_meta(|m| {
        let Some(name) = m.path.get_ident().cloned() else {
            cx.error_spanned_by(
                &m.path,
                format!("a dependency is named by one identifier: `{DEPENDS_ON_EXAMPLE}`"),
            );
            return skip_value(&m);
        };
        let (version, on_change) = if m.input.peek(syn::token::Paren) {
            let (mut version, mut on_change) = (None, None);
            m.parse_nested_meta(|k| {
                if k.path.is_ident("version") {
                    if let Some(s) = expect_str(cx, &k, "version = \"2026-11\"")? {
                        set_once(cx, &k, &mut version, s);
                    }
                } else if k.path.is_ident("on_change") {
                    if let Some(s) = expect_str(cx, &k, "on_change = \"minor\"")? {
                        if !ON_CHANGE.contains(&s.value().as_str()) {
                            cx.error_spanned_by(
                                &s,
                                format!(
                                    "unknown `on_change` class `{}`; expected one of: major, minor, patch",
                                    s.value()
                                ),
                            );
                        }
                        set_once(cx, &k, &mut on_change, s);
                    }
                } else {
                    unknown_key(cx, &k.path, "dependency key", &["version", "on_change"]);
                    skip_value(&k)?;
                }
                Ok(())
            })?;
            match version {
                Some(v) => (v, on_change),
                None => {
                    cx.error_spanned_by(
                        &name,
                        format!("dependency `{name}` needs a version: `{name}(version = \"2026-11\")`"),
                    );
                    return Ok(());
                }
            }
        } else {
            match expect_str(cx, &m, &format!("{name} = \"retrieval-v5\""))? {
                Some(v) => (v, None),
                None => return Ok(()),
            }
        };
        if version.value().trim().is_empty() {
            cx.error_spanned_by(&version, format!("dependency `{name}` needs a non-empty version"));
        }
        if attr.depends_on.iter().any(|(n, _, _)| *n == name) {
            cx.error_spanned_by(&name, format!("dependency `{name}` is listed twice"));
        }
        attr.depends_on.push((name, version, on_change));
        Ok(())
    })?;
    if attr.depends_on.len() == before {
        cx.error_spanned_by(
            &meta.path,
            format!("list at least one dependency: `{DEPENDS_ON_EXAMPLE}`"),
        );
    }
    Ok(())
}

fn parse_crate_path(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<syn::Path>> {
    Ok(match expect_str(cx, meta, "crate = \"::tool_contract\"")? {
        Some(s) => match s.parse::<syn::Path>() {
            Ok(p) => Some(p),
            Err(_) => {
                cx.error_spanned_by(
                    &s,
                    "expected a path, e.g. `crate = \"::my_reexport::tool_contract\"`",
                );
                None
            }
        },
        None => None,
    })
}

/// `#[tool(...)]` on a field of an args struct.
#[derive(Default)]
pub struct FieldAttr {
    pub idempotency_key: Option<Span>,
    pub model_supplied: Option<LitStr>,
    pub unbounded: Option<LitStr>,
    pub trusted_only: Option<Span>,
    pub accepts_untrusted: Option<LitStr>,
    pub flows_from: Option<Vec<LitStr>>,
    pub url: Option<Span>,
}

/// `("a", "b", ...)` after a key.
fn string_list(meta: &ParseNestedMeta) -> syn::Result<Vec<LitStr>> {
    let content;
    syn::parenthesized!(content in meta.input);
    Ok(Punctuated::<LitStr, Token![,]>::parse_terminated(&content)?
        .into_iter()
        .collect())
}

/// A key that takes no value, e.g. `#[tool(trusted_only)]`.
fn flag(cx: &Ctxt, meta: &ParseNestedMeta, slot: &mut Option<Span>) -> syn::Result<()> {
    if !(meta.input.is_empty() || meta.input.peek(Token![,])) {
        skip_value(meta)?;
        let name = path_name(&meta.path);
        cx.error_spanned_by(
            &meta.path,
            format!("`{name}` takes no value: write `#[tool({name})]`"),
        );
    }
    set_once(cx, meta, slot, meta.path.span());
    Ok(())
}

/// `#[tool(...)]` on an args struct.
#[derive(Default)]
pub struct ContainerAttr {
    pub semantic: Option<syn::Path>,
    pub krate: Option<syn::Path>,
}

fn reason(cx: &Ctxt, meta: &ParseNestedMeta, key: &str) -> syn::Result<Option<LitStr>> {
    let s = expect_str(cx, meta, &format!("{key} = \"why this is safe\""))?;
    if let Some(s) = &s {
        if s.value().trim().is_empty() {
            cx.error_spanned_by(
                s,
                format!("`{key}` needs a reason: say why this is safe, for reviewers"),
            );
        }
    }
    Ok(s)
}

pub fn parse_field_attrs(cx: &Ctxt, attrs: &[syn::Attribute]) -> FieldAttr {
    let mut out = FieldAttr::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("tool")) {
        let res = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("idempotency_key") {
                if !(meta.input.is_empty() || meta.input.peek(Token![,])) {
                    skip_value(&meta)?;
                    cx.error_spanned_by(
                        &meta.path,
                        "`idempotency_key` takes no value: write `#[tool(idempotency_key)]`",
                    );
                }
                set_once(cx, &meta, &mut out.idempotency_key, meta.path.span());
            } else if meta.path.is_ident("model_supplied") {
                if let Some(s) = reason(cx, &meta, "model_supplied")? {
                    set_once(cx, &meta, &mut out.model_supplied, s);
                }
            } else if meta.path.is_ident("unbounded") {
                if let Some(s) = reason(cx, &meta, "unbounded")? {
                    set_once(cx, &meta, &mut out.unbounded, s);
                }
            } else if meta.path.is_ident("trusted_only") {
                flag(cx, &meta, &mut out.trusted_only)?;
            } else if meta.path.is_ident("url") || meta.path.is_ident("command") {
                flag(cx, &meta, &mut out.url)?;
            } else if meta.path.is_ident("accepts_untrusted") {
                if let Some(s) = reason(cx, &meta, "accepts_untrusted")? {
                    set_once(cx, &meta, &mut out.accepts_untrusted, s);
                }
            } else if meta.path.is_ident("flows_from") {
                let example = "flows_from(\"read_inbox:/emails/*/sender\")";
                if !meta.input.peek(syn::token::Paren) {
                    skip_value(&meta)?;
                    cx.error_spanned_by(&meta.path, format!("write `{example}`"));
                    return Ok(());
                }
                let list = string_list(&meta)?;
                if list.is_empty() {
                    cx.error_spanned_by(
                        &meta.path,
                        format!("`flows_from` needs at least one source: `{example}`"),
                    );
                }
                for s in &list {
                    let v = s.value();
                    let ok = v.split_once(':').is_some_and(|(tool, pointer)| {
                        !tool.is_empty()
                            && tool.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
                            && (pointer.is_empty() || pointer.starts_with('/'))
                    });
                    if !ok {
                        cx.error_spanned_by(
                            s,
                            format!("a flow source is `tool_name:/json/pointer` into that tool's output (`*` for any key or index), e.g. `{example}`"),
                        );
                    }
                }
                set_once(cx, &meta, &mut out.flows_from, list);
            } else {
                unknown_key(cx, &meta.path, "field key", FIELD_KEYS);
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(err) = res {
            cx.syn_error(err);
        }
    }
    out
}

pub fn parse_container_attrs(cx: &Ctxt, attrs: &[syn::Attribute]) -> ContainerAttr {
    let mut out = ContainerAttr::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("tool")) {
        let res = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("semantic") {
                let value = meta.value()?;
                let path = if value.peek(LitStr) {
                    value.parse::<LitStr>()?.parse::<syn::Path>()?
                } else {
                    value.parse::<syn::Path>()?
                };
                set_once(cx, &meta, &mut out.semantic, path);
            } else if meta.path.is_ident("crate") {
                if let Some(p) = parse_crate_path(cx, &meta)? {
                    set_once(cx, &meta, &mut out.krate, p);
                }
            } else if TOOL_KEYS.iter().any(|k| meta.path.is_ident(k)) {
                cx.error_spanned_by(
                    &meta.path,
                    format!(
                        "`{}` belongs on the handler's `#[tool(...)]`, not on the args struct; the struct takes only `semantic` and `crate`",
                        path_name(&meta.path)
                    ),
                );
                skip_value(&meta)?;
            } else {
                unknown_key(cx, &meta.path, "struct key", CONTAINER_KEYS);
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(err) = res {
            cx.syn_error(err);
        }
    }
    out
}

/// The parts of `#[serde(...)]` that change what the model sees.
#[derive(Default)]
pub struct SerdeContainer {
    pub deny_unknown_fields: bool,
    pub rename_all: Option<String>,
    pub transparent: bool,
}

#[derive(Default)]
pub struct SerdeField {
    pub rename: Option<String>,
    pub skipped: bool,
    pub flatten: Option<Span>,
}

/// Reads serde's own attribute without judging it: serde reports its own errors.
fn walk_serde(attrs: &[syn::Attribute], mut f: impl FnMut(&ParseNestedMeta) -> syn::Result<bool>) {
    for attr in attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = attr.parse_nested_meta(|meta| {
            if !f(&meta)? {
                skip_value(&meta)?;
            }
            Ok(())
        });
    }
}

/// `rename = "x"` or `rename(deserialize = "x", ...)`: the name deserialization accepts.
fn de_name(meta: &ParseNestedMeta) -> syn::Result<Option<String>> {
    if meta.input.peek(Token![=]) {
        return Ok(Some(meta.value()?.parse::<LitStr>()?.value()));
    }
    let mut out = None;
    meta.parse_nested_meta(|m| {
        let v = m.value()?.parse::<LitStr>()?.value();
        if m.path.is_ident("deserialize") {
            out = Some(v);
        }
        Ok(())
    })?;
    Ok(out)
}

pub fn parse_serde_container(attrs: &[syn::Attribute]) -> SerdeContainer {
    let mut out = SerdeContainer::default();
    walk_serde(attrs, |meta| {
        Ok(if meta.path.is_ident("deny_unknown_fields") {
            out.deny_unknown_fields = true;
            true
        } else if meta.path.is_ident("transparent") {
            out.transparent = true;
            true
        } else if meta.path.is_ident("rename_all") {
            out.rename_all = de_name(meta)?;
            true
        } else {
            false
        })
    });
    out
}

pub fn parse_serde_field(attrs: &[syn::Attribute]) -> SerdeField {
    let mut out = SerdeField::default();
    walk_serde(attrs, |meta| {
        Ok(if meta.path.is_ident("rename") {
            out.rename = de_name(meta)?;
            true
        } else if meta.path.is_ident("skip") || meta.path.is_ident("skip_deserializing") {
            out.skipped = true;
            true
        } else if meta.path.is_ident("flatten") {
            out.flatten = Some(meta.path.span());
            true
        } else {
            false
        })
    });
    out
}

/// Whether a field carries a length or range bound that schemars turns into schema keywords
/// (`#[schemars(length/range)]`, or the `validator`/`garde` spellings schemars also reads), or
/// replaces its schema wholesale (`with`, `schema_with`).
pub fn has_bound(attrs: &[syn::Attribute], keys: &[&str]) -> bool {
    let mut found = false;
    for attr in attrs {
        let p = attr.path();
        if !(p.is_ident("schemars") || p.is_ident("validate") || p.is_ident("garde")) {
            continue;
        }
        let _ = attr.parse_nested_meta(|meta| {
            let is = |k: &str| meta.path.is_ident(k);
            if keys.iter().any(|k| is(k)) || is("with") || is("schema_with") {
                found = true;
            }
            skip_value(&meta)
        });
    }
    found
}

/// Doc comment text, joined and trimmed as rustdoc (and schemars) would show it.
pub fn doc_text(attrs: &[syn::Attribute]) -> String {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta {
            if let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
            {
                let v = s.value();
                lines.push(v.strip_prefix(' ').unwrap_or(&v).trim_end().to_owned());
            }
        }
    }
    // Paragraphs join with a blank line, lines within one with a space (schemars does the same).
    let mut out = String::new();
    let mut blank = false;
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { " " });
        }
        blank = false;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;
    use syn::parse_quote;

    fn parse(ts: TokenStream) -> (ToolAttr, Vec<String>) {
        let cx = Ctxt::new();
        let attr = parse_tool_attr(&cx, ts);
        let errs = match cx.check() {
            Ok(()) => vec![],
            Err(ts) => ts
                .to_string()
                .split("compile_error")
                .skip(1)
                .map(str::to_owned)
                .collect(),
        };
        (attr, errs)
    }

    #[test]
    fn full_grammar_parses() {
        let (a, errs) = parse(quote! {
            name = "send_email", version = "1.2.0", effect = "irreversible_write", timeout_ms = 2000,
            approval, capabilities("mail:send", "mail:read"), retry(max_attempts = 1, backoff_ms = 10, max_backoff_ms = 20),
            idempotency(from = [to, subject, body]), policy_version = "tool-policy-12"
        });
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(a.name.unwrap().value(), "send_email");
        assert_eq!(a.effect.unwrap().value, EffectKind::IrreversibleWrite);
        assert_eq!(a.timeout_ms.unwrap().value, 2000);
        assert_eq!(a.approval.unwrap().value, ApprovalKind::Always);
        assert_eq!(a.capabilities.len(), 2);
        assert_eq!(a.retry.unwrap().value.max_attempts.unwrap().value, 1);
        match a.idempotency.unwrap().value {
            IdempotencyKind::From(f) => assert_eq!(f.len(), 3),
            IdempotencyKind::Host => panic!("expected from"),
        }
    }

    #[test]
    fn errors_accumulate_across_keys() {
        let (_, errs) = parse(quote! {
            version = "1.2", effect = "pure_reed", timeout_ms = 0, colour = "red", approval = "maybe"
        });
        assert_eq!(errs.len(), 5, "{errs:?}");
        assert!(errs[0].contains("not a semantic version"));
        assert!(errs[1].contains("did you mean `pure_read`"));
        assert!(errs[2].contains("between 1 and 600000"));
        assert!(errs[3].contains("unknown `#[tool]` key `colour`"));
        assert!(errs[4].contains("unknown approval policy"));
    }

    #[test]
    fn duplicate_and_misspelled_keys() {
        let (_, errs) = parse(quote! { version = "1.0.0", version = "1.0.1", timout_ms = 5 });
        assert_eq!(errs.len(), 2, "{errs:?}");
        assert!(errs[0].contains("duplicate `version`"));
        assert!(errs[1].contains("did you mean `timeout_ms`"));
    }

    #[test]
    fn wrong_value_kinds_are_explained() {
        let (_, errs) =
            parse(quote! { timeout_ms = "2000", effect = pure_read, retry(max_attempts = 11) });
        assert_eq!(errs.len(), 3, "{errs:?}");
        assert!(errs[0].contains("expected an integer literal"));
        assert!(errs[1].contains("expected a string literal"));
        assert!(errs[2].contains("between 1 and 10"));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let (_, errs) = parse(quote! { = = , 5 });
        assert!(!errs.is_empty());
        let (_, errs) = parse(quote! { idempotency(from = [a, a]), capabilities("x y") });
        assert_eq!(errs.len(), 2, "{errs:?}");
    }

    #[test]
    fn serde_and_doc_scanning() {
        let s: syn::ItemStruct = parse_quote! {
            /// First line
            /// continues.
            ///
            /// Second paragraph.
            #[serde(deny_unknown_fields, rename_all = "camelCase")]
            struct A { #[serde(rename(deserialize = "x", serialize = "y"), default)] a: u8 }
        };
        let c = parse_serde_container(&s.attrs);
        assert!(c.deny_unknown_fields);
        assert_eq!(c.rename_all.as_deref(), Some("camelCase"));
        assert_eq!(
            doc_text(&s.attrs),
            "First line continues.\n\nSecond paragraph."
        );
        let f = s.fields.iter().next().unwrap();
        assert_eq!(parse_serde_field(&f.attrs).rename.as_deref(), Some("x"));
    }
}
