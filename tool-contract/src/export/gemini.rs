//! Gemini function declarations: `parametersJsonSchema` (JSON Schema) or `parameters` (the
//! OpenAPI 3.0 subset of Gemini's `Schema` object).
//!
//! Rules, from the Gemini API / Vertex AI references of `FunctionDeclaration` and `Schema`
//! (<https://ai.google.dev/api/caching#FunctionDeclaration>,
//! <https://cloud.google.com/vertex-ai/docs/reference/rest/v1/Schema>):
//! - `parametersJsonSchema` and `parameters` are mutually exclusive;
//! - no `const` (a single-value `enum` instead), `$ref` without siblings, no `oneOf` (an
//!   `enum` for a union of constants, else `anyOf`);
//! - `propertyOrdering` states the field order (the proto map behind `properties` has none);
//! - OpenAPI mode: one `type` per schema (`STRING`, `NUMBER`, `INTEGER`, `BOOLEAN`, `ARRAY`,
//!   `OBJECT`), `nullable: true` instead of a `null` type, string-valued `enum` only, no
//!   `$ref`, no `additionalProperties`; the keywords are `type`, `format` (float, double,
//!   int32, int64, date, date-time, email, enum), `title`, `description`, `nullable`,
//!   `default`, `items`, `minItems`, `maxItems`, `enum`, `properties`, `propertyOrdering`,
//!   `required`, `minProperties`, `maxProperties`, `minLength`, `maxLength`, `pattern`,
//!   `example`, `anyOf`, `minimum`, `maximum`; the rest moves into the description;
//! - names start with a letter or `_`, then letters, digits, `_`, `.`, `-`, at most 64
//!   characters (the references say 64; we keep to it rather than a looser 128).

use serde_json::{json, Map, Value};

use super::rewrite::{self, Scope};
use super::ExportError;

const FORMATS: &[&str] = &[
    "float",
    "double",
    "int32",
    "int64",
    "date",
    "date-time",
    "email",
    "enum",
];
const KEYWORDS: &[&str] = &[
    "type",
    "format",
    "nullable",
    "default",
    "items",
    "minItems",
    "maxItems",
    "enum",
    "properties",
    "propertyOrdering",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "minimum",
    "maximum",
];

/// The `parametersJsonSchema` of a tool.
pub(super) fn json_parameters(input: &Value, scope: Scope<'_>) -> Result<Value, ExportError> {
    let mut schema = rewrite::prompt_root(input);
    common(&mut schema, "", scope)?;
    Ok(schema)
}

/// The `parameters` (OpenAPI subset) of a tool.
pub(super) fn openapi_parameters(input: &Value, scope: Scope<'_>) -> Result<Value, ExportError> {
    let mut schema = json_parameters(input, scope)?;
    if let Value::Object(m) = &mut schema {
        m.shift_remove("$defs");
        if m.get("properties").is_none() {
            // No arguments: `declaration` leaves the parameters out.
            return Ok(schema);
        }
    }
    openapi(&mut schema, "", scope)?;
    Ok(schema)
}

/// What both modes need: no `const`, bare `$ref`s, no `oneOf`, an explicit property order.
fn common(value: &mut Value, pointer: &str, scope: Scope<'_>) -> Result<(), ExportError> {
    let Value::Object(m) = value else {
        return Ok(());
    };
    if rewrite::normalize(m, pointer, scope)? {
        return Ok(());
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        if props.len() > 1 {
            let order: Vec<Value> = props.keys().map(|k| Value::String(k.clone())).collect();
            m.insert("propertyOrdering".into(), Value::Array(order));
        }
    }
    rewrite::for_each_child(m, pointer, &mut |child, p| common(child, p, scope))
}

fn openapi(value: &mut Value, pointer: &str, scope: Scope<'_>) -> Result<(), ExportError> {
    if let Some(shape) = rewrite::free_form(value) {
        return Err(scope.unrepresentable(pointer, shape));
    }
    let Value::Object(m) = value else {
        return Ok(());
    };
    if let Some(r) = m.get("$ref") {
        return Err(scope.unrepresentable(pointer, format!("a recursive type (`$ref: {r}`)")));
    }
    if let Some(Value::Array(e)) = m.get_mut("enum") {
        if e.contains(&Value::Null) {
            e.retain(|v| !v.is_null());
            m.insert("nullable".into(), Value::Bool(true));
        }
    }
    if let Some(Value::Array(e)) = m.get("enum") {
        if !e.iter().all(Value::is_string) {
            return Err(scope.unrepresentable(pointer, "an enum of non-string values"));
        }
        // Every OpenAPI-subset schema has a type; an enum of strings is a string.
        m.entry("type").or_insert_with(|| json!("string"));
    }
    single_type(m, pointer, scope)?;
    m.shift_remove("additionalProperties");
    rewrite::keep_listed(m, KEYWORDS, FORMATS);
    rewrite::for_each_child(m, pointer, &mut |child, p| openapi(child, p, scope))?;
    if let Some(Value::String(t)) = m.get_mut("type") {
        *t = t.to_uppercase();
    }
    Ok(())
}

/// `["string", "null"]` → `"string"` + `nullable: true`; several real types → `anyOf`.
fn single_type(
    m: &mut Map<String, Value>,
    pointer: &str,
    scope: Scope<'_>,
) -> Result<(), ExportError> {
    let Some(Value::Array(ts)) = m.get("type").cloned() else {
        return Ok(());
    };
    let real: Vec<&Value> = ts.iter().filter(|t| t.as_str() != Some("null")).collect();
    if real.len() < ts.len() {
        m.insert("nullable".into(), Value::Bool(true));
    }
    match real.as_slice() {
        [one] => {
            m.insert("type".into(), (*one).clone());
        }
        [] => return Err(scope.unrepresentable(pointer, "a value that can only be null")),
        many => {
            if m.contains_key("anyOf") {
                return Err(scope.unrepresentable(pointer, "a type list next to `anyOf`"));
            }
            m.shift_remove("type");
            let alts = many.iter().map(|t| json!({ "type": t })).collect();
            m.insert("anyOf".into(), Value::Array(alts));
        }
    }
    Ok(())
}

/// A Gemini function declaration with either kind of parameters; a tool without arguments
/// has none (the references: "for a function with no parameters, this can be left unset").
pub(super) fn declaration(name: &str, description: &str, key: &str, parameters: Value) -> Value {
    let mut d = json!({ "name": name, "description": description });
    let empty = parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(|p| p.is_empty());
    if !empty {
        d[key] = parameters;
    }
    d
}
