//! Schema rewriting shared by the dialects: walking subschemas with their JSON pointer,
//! turning keywords a dialect drops into description text, spotting shapes no strict dialect
//! can express.

use serde_json::{Map, Value};

use super::{Dialect, ExportError};

/// What the rewrite of one tool needs to name it in errors.
#[derive(Clone, Copy)]
pub(super) struct Scope<'a> {
    pub(super) tool: &'a str,
    pub(super) dialect: Dialect,
}

impl Scope<'_> {
    pub(super) fn unrepresentable(&self, pointer: &str, shape: impl Into<String>) -> ExportError {
        ExportError::Unrepresentable {
            tool: self.tool.to_owned(),
            pointer: if pointer.is_empty() {
                "/".into()
            } else {
                pointer.to_owned()
            },
            dialect: self.dialect,
            shape: shape.into(),
        }
    }
}

/// Keywords whose value is a map of subschemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is one subschema.
const SCHEMA_ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "propertyNames",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords whose value is a list of subschemas.
const SCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Annotations a prompt schema drops without a trace: they guide no model decision.
pub(super) const DROPPED: &[&str] = &[
    "$schema",
    "$id",
    "$comment",
    "title",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// Calls `f` on every direct subschema of `m` with its JSON pointer.
pub(super) fn for_each_child(
    m: &mut Map<String, Value>,
    pointer: &str,
    f: &mut dyn FnMut(&mut Value, &str) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    for (key, value) in m.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAPS.contains(&key) {
            if let Value::Object(children) = value {
                for (name, child) in children.iter_mut() {
                    f(child, &format!("{pointer}/{key}/{}", escape(name)))?;
                }
            }
        } else if SCHEMA_ONE.contains(&key) {
            // `additionalProperties: false` and friends are booleans, not shapes to rewrite.
            if value.is_object() {
                f(value, &format!("{pointer}/{key}"))?;
            }
        } else if SCHEMA_LISTS.contains(&key) {
            if let Value::Array(children) = value {
                for (i, child) in children.iter_mut().enumerate() {
                    f(child, &format!("{pointer}/{key}/{i}"))?;
                }
            }
        }
    }
    Ok(())
}

/// RFC 6901 escaping of one pointer segment.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// The types a schema node declares (`type` as a string or a list).
pub(super) fn types(m: &Map<String, Value>) -> Vec<&str> {
    match m.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The shape of `node` that no strict dialect can express, if any: any JSON value, a map with
/// free keys, an array of anything, a tuple. Only the node itself is looked at, not its
/// children.
pub(super) fn free_form(node: &Value) -> Option<&'static str> {
    let m = match node {
        Value::Bool(true) => return Some("any JSON value (`serde_json::Value`)"),
        Value::Bool(false) => return Some("a schema that accepts nothing"),
        Value::Object(m) => m,
        _ => return Some("a schema that is not an object"),
    };
    let typed = ["type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref"]
        .iter()
        .any(|k| m.contains_key(*k));
    if !typed {
        return Some("any JSON value (`serde_json::Value` or an untyped field)");
    }
    let ts = types(m);
    if ts.contains(&"object") || m.contains_key("properties") {
        let open = match m.get("additionalProperties") {
            None | Some(Value::Bool(false)) => false,
            Some(_) => true,
        };
        if open || m.contains_key("patternProperties") {
            return Some("a map with free keys (`HashMap`, `BTreeMap` or `serde_json::Map`)");
        }
        // `{}` with `additionalProperties: false` is an empty struct: fine. Without it, any
        // object goes.
        if !m.contains_key("properties") && !m.contains_key("additionalProperties") {
            return Some("an object with any keys");
        }
    }
    if m.contains_key("prefixItems") {
        return Some("a tuple (`prefixItems`)");
    }
    if ts.contains(&"array") {
        match m.get("items") {
            None | Some(Value::Bool(true)) => return Some("an array of any JSON values"),
            Some(Value::Object(i)) if i.is_empty() => return Some("an array of any JSON values"),
            _ => {}
        }
    }
    None
}

/// The text that replaces `keyword: value` in a description, for a model to read.
fn note(keyword: &str, value: &Value) -> Option<String> {
    let v = value.to_string();
    Some(match keyword {
        "minLength" => format!("at least {}", count(value, "character")),
        "maxLength" => format!("at most {}", count(value, "character")),
        "minimum" => format!("minimum {v}"),
        "maximum" => format!("maximum {v}"),
        "exclusiveMinimum" => format!("greater than {v}"),
        "exclusiveMaximum" => format!("less than {v}"),
        "multipleOf" => format!("a multiple of {v}"),
        "minItems" => format!("at least {}", count(value, "item")),
        "maxItems" => format!("at most {}", count(value, "item")),
        "uniqueItems" if value == &Value::Bool(true) => "items must be unique".into(),
        "uniqueItems" => return None,
        "minProperties" => format!("at least {v} properties"),
        "maxProperties" => format!("at most {v} properties"),
        "format" => format!("format {}", value.as_str().unwrap_or(&v)),
        "pattern" => format!("matches the pattern {v}"),
        "default" => format!("default {v}"),
        _ => format!("{keyword}: {v}"),
    })
}

/// `1 character`, `5 characters`.
fn count(n: &Value, noun: &str) -> String {
    match n.as_u64() {
        Some(1) => format!("1 {noun}"),
        _ => format!("{n} {noun}s"),
    }
}

/// Appends text to the description: `Words to find. (at most 500 characters)`.
pub(super) fn append_description(m: &mut Map<String, Value>, text: &str) {
    let new = match m.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} {text}"),
        _ => text.to_owned(),
    };
    m.insert("description".into(), Value::String(new));
}

/// Keeps only the keywords in `keep`; drops annotations; moves the rest into the description
/// as one parenthesized list of notes.
pub(super) fn keep_only(m: &mut Map<String, Value>, keep: &dyn Fn(&str, &Value) -> bool) {
    let moved: Vec<String> = m
        .iter()
        .filter(|(k, v)| k.as_str() != "description" && !keep(k, v))
        .map(|(k, _)| k.clone())
        .collect();
    let mut notes = Vec::new();
    for k in moved {
        if let Some(value) = m.shift_remove(&k) {
            if !DROPPED.contains(&k.as_str()) {
                notes.extend(note(&k, &value));
            }
        }
    }
    if !notes.is_empty() {
        append_description(m, &format!("({})", notes.join("; ")));
    }
}

/// Keeps `keywords` (and `format` only with one of `formats`); see [`keep_only`].
pub(super) fn keep_listed(m: &mut Map<String, Value>, keywords: &[&str], formats: &[&str]) {
    keep_only(m, &|k, v| {
        keywords.contains(&k) && (k != "format" || v.as_str().is_some_and(|f| formats.contains(&f)))
    });
}

/// What OpenAI and Gemini both need: a `$ref` loses its siblings (then `Ok(true)`: nothing
/// else to rewrite there), `oneOf`/`allOf` are simplified, `const` becomes `enum`.
pub(super) fn normalize(
    m: &mut Map<String, Value>,
    pointer: &str,
    scope: Scope<'_>,
) -> Result<bool, ExportError> {
    if m.contains_key("$ref") {
        bare_ref(m);
        return Ok(true);
    }
    simplify_unions(m, pointer, scope)?;
    const_to_enum(m);
    Ok(false)
}

/// `const: x` → `enum: [x]`, same meaning, accepted by every dialect.
fn const_to_enum(m: &mut Map<String, Value>) {
    if let Some(c) = m.get("const").cloned() {
        replace_key(m, "const", "enum", Value::Array(vec![c]));
    }
}

/// Replaces `old` by `new: value` at the same position, so keyword order stays readable.
fn replace_key(m: &mut Map<String, Value>, old: &str, new: &str, value: Value) {
    let mut value = Some(value);
    *m = std::mem::take(m)
        .into_iter()
        .filter_map(|(k, v)| match k == old {
            true => value.take().map(|v| (new.to_owned(), v)),
            false => Some((k, v)),
        })
        .collect();
}

/// A `$ref` with siblings keeps only the `$ref` (providers ignore or reject the siblings).
fn bare_ref(m: &mut Map<String, Value>) {
    if let Some(r) = m.get("$ref").cloned() {
        m.clear();
        m.insert("$ref".into(), r);
    }
}

/// `oneOf` → a plain `enum` when every branch is one constant (a Rust enum with documented
/// variants: the variant docs go into the description), else `anyOf` (exclusivity is lost in
/// the prompt; the canonical schema still enforces it). A one-member `allOf` is merged;
/// a real intersection is refused.
pub(super) fn simplify_unions(
    m: &mut Map<String, Value>,
    pointer: &str,
    scope: Scope<'_>,
) -> Result<(), ExportError> {
    if let Some(Value::Array(alts)) = m.get("oneOf").cloned() {
        match constants(&alts) {
            Some((values, ty, docs)) => {
                replace_key(m, "oneOf", "enum", Value::Array(values));
                if let Some(ty) = ty {
                    m.entry("type").or_insert(Value::String(ty));
                }
                if !docs.is_empty() {
                    append_description(m, &format!("{}.", docs.join("; ")));
                }
            }
            None => replace_key(m, "oneOf", "anyOf", Value::Array(alts)),
        }
    }
    if let Some(Value::Array(mut parts)) = m.shift_remove("allOf") {
        if parts.len() != 1 {
            return Err(scope.unrepresentable(
                &format!("{pointer}/allOf"),
                format!("an intersection of {} schemas (`allOf`)", parts.len()),
            ));
        }
        if let Value::Object(part) = parts.remove(0) {
            for (k, v) in part {
                m.entry(k).or_insert(v);
            }
        }
    }
    Ok(())
}

type Constants = (Vec<Value>, Option<String>, Vec<String>);

/// The values, common type and per-value docs of a union of constants.
fn constants(alts: &[Value]) -> Option<Constants> {
    let mut values = Vec::new();
    let mut docs = Vec::new();
    let mut ty: Option<Option<String>> = None;
    for alt in alts {
        let m = alt.as_object()?;
        let value = m.get("const").cloned().or_else(|| match m.get("enum") {
            Some(Value::Array(e)) if e.len() == 1 => Some(e[0].clone()),
            _ => None,
        })?;
        if m.keys()
            .any(|k| !["const", "enum", "type", "description", "title"].contains(&k.as_str()))
        {
            return None;
        }
        let t = m.get("type").and_then(Value::as_str).map(str::to_owned);
        match &ty {
            None => ty = Some(t),
            Some(prev) if *prev != t => ty = Some(None),
            Some(_) => {}
        }
        if let Some(d) = m.get("description").and_then(Value::as_str) {
            let shown = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            docs.push(format!("`{shown}`: {}", d.trim_end_matches('.')));
        }
        values.push(value);
    }
    Some((values, ty.flatten(), docs))
}

/// Whether `node` accepts `null`.
pub(super) fn allows_null(node: &Value) -> bool {
    let Value::Object(m) = node else {
        return node == &Value::Bool(true);
    };
    types(m).contains(&"null")
        || m.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
        || ["anyOf", "oneOf"].iter().any(|k| {
            m.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(allows_null))
        })
}

/// Makes `node` accept `null` as well: `"string"` → `["string", "null"]`, `null` joins an
/// `enum`, a `$ref` or union gets a `{"type": "null"}` branch.
pub(super) fn make_nullable(node: &mut Value) {
    if allows_null(node) {
        return;
    }
    let Value::Object(m) = node else { return };
    if m.contains_key("$ref") || (m.contains_key("anyOf") && !m.contains_key("type")) {
        let description = m.shift_remove("description");
        let inner = std::mem::take(m);
        let mut alts = match inner.get("anyOf") {
            Some(Value::Array(alts)) if inner.len() == 1 => alts.clone(),
            _ => vec![Value::Object(inner)],
        };
        alts.push(serde_json::json!({"type": "null"}));
        if let Some(d) = description {
            m.insert("description".into(), d);
        }
        m.insert("anyOf".into(), Value::Array(alts));
        return;
    }
    match m.get_mut("type") {
        Some(Value::String(t)) => {
            let t = std::mem::take(t);
            m.insert("type".into(), serde_json::json!([t, "null"]));
        }
        Some(Value::Array(ts)) => ts.push(Value::String("null".into())),
        _ => {}
    }
    if let Some(Value::Array(e)) = m.get_mut("enum") {
        e.push(Value::Null);
    }
}

/// The root of a prompt schema: the canonical one without `$schema`, `$id` and the args
/// struct's own doc (`Arguments of ...`), which the tool description already covers.
pub(super) fn prompt_root(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(m) = &mut schema {
        for k in ["$schema", "$id", "description"] {
            m.shift_remove(k);
        }
    }
    schema
}

/// Whether the `$ref` target `reference` (e.g. `#/$defs/Tree`) reaches itself again.
pub(super) fn is_recursive(root: &Value, reference: &str) -> bool {
    fn refs(node: &Value, out: &mut Vec<String>) {
        match node {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let resolve = |r: &str| -> Option<&Value> { root.pointer(r.strip_prefix('#')?) };
    let mut stack = vec![reference.to_owned()];
    let mut seen = std::collections::HashSet::new();
    while let Some(r) = stack.pop() {
        if !seen.insert(r.clone()) {
            continue;
        }
        let Some(target) = resolve(&r) else { continue };
        let mut found = Vec::new();
        refs(target, &mut found);
        if found.iter().any(|f| f == reference) {
            return true;
        }
        stack.extend(found);
    }
    false
}
