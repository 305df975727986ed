//! Anthropic Messages API tools: `{name, description, input_schema}`, with or without `strict`.
//!
//! Rules for `strict: true`, from Anthropic's "Strict tool use" and "Structured outputs → JSON
//! Schema limitations" pages
//! (<https://platform.claude.com/docs/en/agents-and-tools/tool-use/strict-tool-use>,
//! <https://platform.claude.com/docs/en/build-with-claude/structured-outputs#json-schema-limitations>):
//! - every object has `additionalProperties: false`; optional properties stay optional;
//! - no numeric constraints (`minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//!   `multipleOf`) and no length constraints (`minLength`, `maxLength`, `maxItems`,
//!   `uniqueItems`): they move into the description as text; `minItems` only 0 or 1 (a larger
//!   one becomes 1 plus text);
//! - `format` only date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid;
//! - no recursive schemas;
//! - per request: at most 20 strict tools, 24 optional parameters and 16 parameters with a
//!   union type (`anyOf` or a type list) across all strict schemas;
//! - names match `^[a-zA-Z0-9_-]{1,64}$`.

use serde_json::{json, Map, Value};

use super::rewrite::{self, Scope};
use super::ExportError;

const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords a strict schema may not carry; they become description text.
const MOVED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "contains",
    "propertyNames",
    "patternProperties",
];

/// Strict tools per request.
pub(super) const MAX_STRICT_TOOLS: usize = 20;
/// Optional parameters across all strict schemas of a request.
pub(super) const MAX_OPTIONAL: usize = 24;
/// Parameters with a union type across all strict schemas of a request.
pub(super) const MAX_UNIONS: usize = 16;

/// The strict `input_schema` of a tool.
pub(super) fn strict_input_schema(input: &Value, scope: Scope<'_>) -> Result<Value, ExportError> {
    let mut schema = rewrite::prompt_root(input);
    let root = schema.clone();
    node(&mut schema, "", &root, scope)?;
    Ok(schema)
}

fn node(
    value: &mut Value,
    pointer: &str,
    root: &Value,
    scope: Scope<'_>,
) -> Result<(), ExportError> {
    if let Some(shape) = rewrite::free_form(value) {
        return Err(scope.unrepresentable(pointer, shape));
    }
    let Value::Object(m) = value else {
        return Ok(());
    };
    if let Some(Value::String(r)) = m.get("$ref") {
        if rewrite::is_recursive(root, r) {
            return Err(scope.unrepresentable(pointer, format!("a recursive type (`$ref: {r}`)")));
        }
    }
    rewrite::simplify_unions(m, pointer, scope)?;
    let moved: Vec<String> = m
        .iter()
        .filter(|(k, v)| {
            MOVED.contains(&k.as_str())
                || (k.as_str() == "format" && !v.as_str().is_some_and(|f| FORMATS.contains(&f)))
                || rewrite::DROPPED.contains(&k.as_str())
        })
        .map(|(k, _)| k.clone())
        .collect();
    rewrite::keep_only(m, &|k, _| !moved.iter().any(|x| x == k));
    if let Some(n) = m.get("minItems").and_then(Value::as_u64).filter(|n| *n > 1) {
        m.insert("minItems".into(), json!(1));
        rewrite::append_description(m, &format!("(at least {n} items)"));
    }
    rewrite::for_each_child(m, pointer, &mut |child, p| node(child, p, root, scope))?;
    if m.contains_key("properties") {
        m.insert("additionalProperties".into(), Value::Bool(false));
    }
    Ok(())
}

/// How much of the per-request budgets one strict schema uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Usage {
    pub(super) optional: usize,
    pub(super) unions: usize,
}

/// Counts optional and union-typed parameters at every level of `schema`.
pub(super) fn usage(schema: &Value) -> Usage {
    fn walk(value: &Value, usage: &mut Usage) {
        let Value::Object(m) = value else { return };
        if let Some(Value::Object(props)) = m.get("properties") {
            let required = required(m);
            for (name, prop) in props {
                if !required.contains(&name.as_str()) {
                    usage.optional += 1;
                }
                if is_union(prop) {
                    usage.unions += 1;
                }
            }
        }
        for v in m.values() {
            match v {
                Value::Object(_) => walk(v, usage),
                Value::Array(a) => a.iter().for_each(|v| walk(v, usage)),
                _ => {}
            }
        }
    }
    let mut usage = Usage::default();
    walk(schema, &mut usage);
    usage
}

fn required(m: &Map<String, Value>) -> Vec<&str> {
    m.get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn is_union(prop: &Value) -> bool {
    prop.get("anyOf").is_some() || prop.get("type").is_some_and(Value::is_array)
}

/// An Anthropic tool definition.
pub(super) fn tool(name: &str, description: &str, input_schema: Value, strict: bool) -> Value {
    let mut tool = json!({
        "name": name,
        "description": description,
        "input_schema": input_schema,
    });
    if strict {
        tool["strict"] = Value::Bool(true);
    }
    tool
}
