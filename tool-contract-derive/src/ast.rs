//! The two inputs, parsed into the shapes the checks and expansions read.

use heck::{
    ToKebabCase, ToLowerCamelCase, ToShoutyKebabCase, ToShoutySnakeCase, ToSnakeCase,
    ToUpperCamelCase,
};
use proc_macro2::TokenStream;
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, FnArg, Ident, ReturnType, Signature, Type, Visibility};

use crate::attr::{self, ContainerAttr, FieldAttr, SerdeContainer, SerdeField};
use crate::ctxt::Ctxt;

/// A function item as `#[tool]` reads it: its attributes, visibility and signature. The body is
/// only checked to be one `{ ... }` block and is otherwise left as tokens: nothing reads it, and
/// the item is emitted exactly as written ([`HandlerFn::tokens`]), so parsing it into a syntax
/// tree and printing it back would only cost compile time in every crate that has tools.
pub struct HandlerFn {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub sig: Signature,
    /// The whole item, as written.
    pub tokens: TokenStream,
}

impl HandlerFn {
    /// Parses `item`, which must be a function with a body.
    pub fn parse(item: &TokenStream) -> syn::Result<Self> {
        let parser = |input: ParseStream| {
            let attrs = input.call(Attribute::parse_outer)?;
            let vis: Visibility = input.parse()?;
            let sig: Signature = input.parse()?;
            let body;
            syn::braced!(body in input);
            body.parse::<TokenStream>()?;
            Ok((attrs, vis, sig))
        };
        let (attrs, vis, sig) = parser.parse2(item.clone())?;
        Ok(HandlerFn {
            attrs,
            vis,
            sig,
            tokens: item.clone(),
        })
    }
}

/// A `#[tool]` handler.
pub struct ToolFn<'a> {
    pub original: &'a HandlerFn,
    pub docs: String,
    /// The first parameter: the model's arguments.
    pub args_ty: Option<&'a Type>,
    /// Every later parameter: trusted extractors.
    pub extractors: Vec<&'a Type>,
    pub ret: Option<&'a Type>,
}

impl<'a> ToolFn<'a> {
    /// Reads the signature, reporting shapes a handler cannot have.
    pub fn from_fn(cx: &Ctxt, item: &'a HandlerFn) -> Self {
        let sig = &item.sig;
        if sig.asyncness.is_none() {
            cx.error_spanned_by(sig.fn_token, "a #[tool] handler must be `async fn`");
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            cx.error_spanned_by(&sig.generics, "a #[tool] handler cannot be generic: its schema must be known when it is registered");
        }
        if let Some(v) = &sig.variadic {
            cx.error_spanned_by(v, "a #[tool] handler cannot be variadic");
        }
        let mut typed = Vec::new();
        for input in &sig.inputs {
            match input {
                FnArg::Receiver(r) => cx.error_spanned_by(
                    r,
                    "a #[tool] handler is a free function; move shared values into `State<T>` instead of `self`",
                ),
                FnArg::Typed(pt) => typed.push(&*pt.ty),
            }
        }
        if typed.is_empty() {
            cx.error_spanned_by(
                &sig.ident,
                "a #[tool] handler takes the model's arguments as its first parameter, e.g. `args: SearchDocumentsArgs`",
            );
        }
        let ret = match &sig.output {
            ReturnType::Type(_, ty) => Some(&**ty),
            ReturnType::Default => {
                cx.error_spanned_by(&sig.ident, "a #[tool] handler must return `Result<Output, ToolError>`; add `-> Result<Output, ToolError>`");
                None
            }
        };
        let f = ToolFn {
            original: item,
            docs: attr::doc_text(&item.attrs),
            args_ty: typed.first().copied(),
            extractors: typed.iter().skip(1).copied().collect(),
            ret,
        };
        if f.struct_name().is_none() {
            cx.error_spanned_by(
                &sig.ident,
                format!("cannot name the tool's struct after `{}`: give the fn a `verb_object` name such as `ping_service`", sig.ident),
            );
        }
        f
    }

    pub fn ident(&self) -> &Ident {
        &self.original.sig.ident
    }

    /// The generated unit struct's name: the handler's name in UpperCamelCase, or `None` when
    /// that is not an identifier (`_1` → `1`).
    pub fn struct_name(&self) -> Option<Ident> {
        let name = self.ident().to_string();
        let name = name
            .strip_prefix("r#")
            .unwrap_or(&name)
            .to_upper_camel_case();
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && syn::parse_str::<Ident>(&name).is_ok();
        valid.then(|| Ident::new(&name, self.ident().span()))
    }

    /// The struct name, or a placeholder after `struct_name` failed (the error is reported).
    pub fn struct_ident(&self) -> Ident {
        self.struct_name()
            .unwrap_or_else(|| Ident::new("__TcUnnamedTool", self.ident().span()))
    }

    /// Whether a parameter's type is the `IdempotencyKey` extractor (by its last path segment).
    pub fn takes_idempotency_key(&self) -> bool {
        self.extractors
            .iter()
            .any(|ty| last_segment(ty).is_some_and(|s| s == "IdempotencyKey"))
    }
}

/// The last path segment's name of a type, through references.
pub fn last_segment(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        Type::Reference(r) => last_segment(&r.elem),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// An args struct field.
pub struct ArgField<'a> {
    pub original: &'a syn::Field,
    pub ident: &'a Ident,
    pub rust_name: String,
    pub wire_name: String,
    pub docs: String,
    pub attr: FieldAttr,
    pub serde: SerdeField,
}

/// A `#[derive(ToolArgs)]` struct.
pub struct ArgsStruct<'a> {
    pub original: &'a syn::DeriveInput,
    pub fields: Vec<ArgField<'a>>,
    pub attr: ContainerAttr,
    pub serde: SerdeContainer,
}

impl<'a> ArgsStruct<'a> {
    pub fn from_ast(cx: &Ctxt, input: &'a syn::DeriveInput) -> Option<Self> {
        let attr = attr::parse_container_attrs(cx, &input.attrs);
        let serde = attr::parse_serde_container(&input.attrs);
        let named = match &input.data {
            syn::Data::Struct(syn::DataStruct {
                fields: syn::Fields::Named(named),
                ..
            }) => named,
            syn::Data::Struct(s) => {
                cx.error_spanned_by(
                    &s.fields,
                    "tool arguments are a JSON object: use a struct with named fields, e.g. `struct Args { query: String }`",
                );
                return None;
            }
            syn::Data::Enum(e) => {
                cx.error_spanned_by(e.enum_token, "tool arguments are a JSON object: derive `ToolArgs` on a struct with named fields and use the enum as a field type");
                return None;
            }
            syn::Data::Union(u) => {
                cx.error_spanned_by(u.union_token, "tool arguments cannot be a union");
                return None;
            }
        };
        let container_serde = &serde;
        let fields = named
            .named
            .iter()
            .filter_map(|f| {
                let ident = f.ident.as_ref()?;
                let rust_name = ident.to_string().trim_start_matches("r#").to_owned();
                let serde = attr::parse_serde_field(&f.attrs);
                let wire_name = serde.rename.clone().unwrap_or_else(|| {
                    rename_all(&rust_name, container_serde.rename_all.as_deref())
                });
                Some(ArgField {
                    original: f,
                    ident,
                    rust_name,
                    wire_name,
                    docs: attr::doc_text(&f.attrs),
                    attr: attr::parse_field_attrs(cx, &f.attrs),
                    serde,
                })
            })
            .collect();
        Some(ArgsStruct {
            original: input,
            fields,
            attr,
            serde,
        })
    }

    pub fn ident(&self) -> &Ident {
        &self.original.ident
    }

    pub fn span(&self) -> proc_macro2::Span {
        self.original.ident.span()
    }
}

/// serde's `rename_all` rules, applied to a snake_case field name.
pub fn rename_all(field: &str, rule: Option<&str>) -> String {
    match rule {
        Some("lowercase") => field.to_lowercase(),
        Some("UPPERCASE") => field.to_uppercase(),
        Some("PascalCase") => field.to_upper_camel_case(),
        Some("camelCase") => field.to_lower_camel_case(),
        Some("snake_case") => field.to_snake_case(),
        Some("SCREAMING_SNAKE_CASE") => field.to_shouty_snake_case(),
        Some("kebab-case") => field.to_kebab_case(),
        Some("SCREAMING-KEBAB-CASE") => field.to_shouty_kebab_case(),
        _ => field.to_owned(),
    }
}

/// The span to point at for a field: its name.
pub fn field_span(f: &ArgField) -> proc_macro2::Span {
    f.ident.span()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;
    use syn::parse_quote;

    #[test]
    fn handler_signature_is_split_into_args_and_extractors() {
        let f = HandlerFn::parse(&quote! {
            /// Sends it.
            async fn send_email(args: SendEmailArgs, key: IdempotencyKey, t: tool_contract::extract::Tenant)
                -> Result<Receipt, ToolError> { todo!() }
        })
        .unwrap();
        let cx = Ctxt::new();
        let tf = ToolFn::from_fn(&cx, &f);
        cx.check().unwrap();
        assert_eq!(last_segment(tf.args_ty.unwrap()).unwrap(), "SendEmailArgs");
        assert_eq!(tf.extractors.len(), 2);
        assert!(tf.takes_idempotency_key());
        assert_eq!(tf.struct_ident().to_string(), "SendEmail");
        assert_eq!(tf.docs, "Sends it.");
    }

    #[test]
    fn bad_signatures_accumulate() {
        let f = HandlerFn::parse(&quote! { fn bad<T>(&self) {} }).unwrap();
        let cx = Ctxt::new();
        let _ = ToolFn::from_fn(&cx, &f);
        let errs = cx.check().unwrap_err().to_string();
        assert_eq!(errs.matches("compile_error").count(), 5, "{errs}");
    }

    #[test]
    fn a_handler_is_read_without_its_body_and_kept_as_written() {
        let item = quote! {
            /// Pings.
            #[allow(unused)]
            pub(crate) async fn ping_service(args: PingArgs) -> Result<Pong, ToolError> {
                let x = { 1 };
                Ok(Pong { x })
            }
        };
        let f = HandlerFn::parse(&item).unwrap();
        assert_eq!(f.sig.ident, "ping_service");
        assert_eq!(f.attrs.len(), 2);
        assert!(matches!(f.vis, Visibility::Restricted(_)));
        assert_eq!(f.tokens.to_string(), item.to_string());
        // Not a function with a body: refused, so `#[tool]` can say where it goes.
        assert!(HandlerFn::parse(&quote! { struct PingArgs; }).is_err());
        assert!(HandlerFn::parse(&quote! { fn ping_service(args: PingArgs); }).is_err());
        assert!(HandlerFn::parse(&quote! { fn ping_service(args: PingArgs) {} extra }).is_err());
    }

    #[test]
    fn wire_names_follow_serde() {
        assert_eq!(rename_all("top_k", Some("camelCase")), "topK");
        assert_eq!(rename_all("top_k", Some("SCREAMING-KEBAB-CASE")), "TOP-K");
        assert_eq!(rename_all("top_k", None), "top_k");
        let d: syn::DeriveInput = parse_quote! {
            #[serde(rename_all = "PascalCase")]
            struct A { date_from: u8, #[serde(rename = "k")] key: u8 }
        };
        let cx = Ctxt::new();
        let s = ArgsStruct::from_ast(&cx, &d).unwrap();
        cx.check().unwrap();
        let names: Vec<_> = s.fields.iter().map(|f| f.wire_name.as_str()).collect();
        assert_eq!(names, ["DateFrom", "k"]);
    }
}
