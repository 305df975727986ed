//! OpenAI function tools, Chat Completions and Responses shapes, strict mode.
//!
//! Rules, from OpenAI's Structured Outputs guide, "Supported schemas"
//! (<https://developers.openai.com/api/docs/guides/structured-outputs#supported-schemas>) and
//! the API reference of function names:
//! - every object has `additionalProperties: false`, and every property is in `required`; an
//!   optional property becomes nullable (`[T, "null"]`), and the pipeline drops that `null`
//!   again before validation, so the canonical default applies;
//! - supported keywords: `type`, `description`, `properties`, `required`,
//!   `additionalProperties`, `items`, `enum`, `anyOf`, `$ref`/`$defs`, and the constraints
//!   `pattern`, `format` (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid),
//!   `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minItems`,
//!   `maxItems`; everything else (`minLength`, `maxLength`, `uniqueItems`, `default`, other
//!   formats, ...) is moved into the description as text;
//! - no `oneOf`/`allOf`, no siblings next to `$ref`;
//! - at most 10 levels of object nesting, 5000 properties in total, 1000 enum values;
//! - names match `^[a-zA-Z0-9_-]{1,64}$`.

use serde_json::{json, Map, Value};

use super::rewrite::{self, Scope};
use super::ExportError;

/// `format` values OpenAI strict mode accepts.
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords OpenAI strict mode accepts (`format` is checked against [`FORMATS`]).
const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
/// Documented size limits of a strict schema.
pub(super) const MAX_DEPTH: usize = 10;
/// Properties in the whole schema.
pub(super) const MAX_PROPERTIES: usize = 5000;
/// Enum values in the whole schema.
pub(super) const MAX_ENUM_VALUES: usize = 1000;

/// The strict `parameters` schema of a tool.
pub(super) fn strict_parameters(input: &Value, scope: Scope<'_>) -> Result<Value, ExportError> {
    let mut schema = rewrite::prompt_root(input);
    node(&mut schema, "", scope)?;
    let mut size = Size::default();
    measure(&schema, 1, &mut size);
    for (limit, actual, max) in [
        ("levels of object nesting", size.depth, MAX_DEPTH),
        ("properties", size.properties, MAX_PROPERTIES),
        ("enum values", size.enum_values, MAX_ENUM_VALUES),
    ] {
        if actual > max {
            return Err(ExportError::LimitExceeded {
                tool: scope.tool.to_owned(),
                dialect: scope.dialect,
                limit,
                actual,
                max,
            });
        }
    }
    Ok(schema)
}

fn node(value: &mut Value, pointer: &str, scope: Scope<'_>) -> Result<(), ExportError> {
    if let Some(shape) = rewrite::free_form(value) {
        return Err(scope.unrepresentable(pointer, shape));
    }
    let Value::Object(m) = value else {
        return Ok(());
    };
    if rewrite::normalize(m, pointer, scope)? {
        return Ok(());
    }
    rewrite::keep_listed(m, KEYWORDS, FORMATS);
    rewrite::for_each_child(m, pointer, &mut |child, p| node(child, p, scope))?;
    if m.contains_key("properties") || rewrite::types(m).contains(&"object") {
        // An empty struct still lists its (no) properties, as strict mode wants.
        m.entry("properties").or_insert_with(|| json!({}));
        close_object(m);
    }
    Ok(())
}

/// `additionalProperties: false`, every property required, optional ones nullable.
fn close_object(m: &mut Map<String, Value>) {
    let required: Vec<String> = m
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut all = Vec::new();
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.contains(name) {
                rewrite::make_nullable(prop);
            }
            all.push(Value::String(name.clone()));
        }
    }
    m.insert("additionalProperties".into(), Value::Bool(false));
    m.insert("required".into(), Value::Array(all));
}

#[derive(Default)]
struct Size {
    depth: usize,
    properties: usize,
    enum_values: usize,
}

fn measure(value: &Value, depth: usize, size: &mut Size) {
    let Value::Object(m) = value else { return };
    if let Some(Value::Array(e)) = m.get("enum") {
        size.enum_values += e.len();
    }
    let nested = if let Some(Value::Object(props)) = m.get("properties") {
        size.properties += props.len();
        size.depth = size.depth.max(depth);
        depth + 1
    } else {
        depth
    };
    for (k, v) in m {
        match (k.as_str(), v) {
            ("properties" | "$defs", Value::Object(children)) => {
                children.values().for_each(|c| measure(c, nested, size));
            }
            ("items", c) => measure(c, nested, size),
            ("anyOf", Value::Array(alts)) => alts.iter().for_each(|c| measure(c, nested, size)),
            _ => {}
        }
    }
}

/// A Chat Completions tool: `{"type": "function", "function": {...}}`.
pub(super) fn chat_tool(name: &str, description: &str, parameters: Value, strict: bool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": parameters,
            "strict": strict,
        }
    })
}

/// A Responses API tool: the function fields at the top level.
pub(super) fn responses_tool(
    name: &str,
    description: &str,
    parameters: Value,
    strict: bool,
) -> Value {
    json!({
        "type": "function",
        "name": name,
        "description": description,
        "parameters": parameters,
        "strict": strict,
    })
}
