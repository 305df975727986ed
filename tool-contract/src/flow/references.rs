//! Checks, when the registry is built, that every `flows_from` reference names a registered
//! tool and a pointer that exists in its output schema, of a type that can flow into the field,
//! and that every confidential pointer exists in its own tool's output schema.

use serde_json::Value;

use super::decide::split_source;
use crate::contract::ToolContract;

/// A flow declaration that does not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BadReference {
    pub(crate) tool: String,
    pub(crate) field: String,
    pub(crate) reference: String,
    pub(crate) reason: String,
}

/// Checks every declaration of `contracts` against the others.
pub(crate) fn check(contracts: &[&ToolContract]) -> Result<(), BadReference> {
    for c in contracts {
        for pointer in &c.flow.confidential {
            if !pointer.is_empty() && resolve(c.model_output_schema(), &segments(pointer)).is_none()
            {
                return Err(BadReference {
                    tool: c.name.clone(),
                    field: "(confidential)".into(),
                    reference: pointer.clone(),
                    reason: "this pointer does not exist in the tool's output schema".into(),
                });
            }
        }
        for (field, flow) in &c.flow.fields {
            let field_schema = c.input_schema.get("properties").and_then(|p| p.get(field));
            for reference in &flow.flows_from {
                let bad = |reason: &str| BadReference {
                    tool: c.name.clone(),
                    field: field.clone(),
                    reference: reference.clone(),
                    reason: reason.to_owned(),
                };
                let Some((tool, pointer)) = split_source(reference) else {
                    return Err(bad(
                        "write it as `tool_name:/json/pointer` (`*` for any key or index)",
                    ));
                };
                let sources: Vec<&&ToolContract> =
                    contracts.iter().filter(|s| s.name == tool).collect();
                if sources.is_empty() {
                    return Err(bad(&format!("no tool `{tool}` is registered")));
                }
                for source in sources {
                    let Some(leaf) = resolve(source.model_output_schema(), &segments(&pointer))
                    else {
                        return Err(bad(&format!(
                            "`{pointer}` does not exist in the output schema of `{tool}` {}",
                            source.version
                        )));
                    };
                    if let Some(field_schema) = field_schema {
                        if !compatible(leaf, field_schema) {
                            return Err(bad(&format!(
                                "`{tool}:{pointer}` is {} and cannot flow into this field",
                                types(leaf).join(" or ")
                            )));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn segments(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// The subschema at `segments` (a `*` is any key or index), looking through unions.
fn resolve<'s>(schema: &'s Value, segments: &[String]) -> Option<&'s Value> {
    let Some((first, rest)) = segments.split_first() else {
        return Some(schema);
    };
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(alts) = schema.get(key).and_then(Value::as_array) {
            if let Some(found) = alts.iter().find_map(|a| resolve(a, segments)) {
                return Some(found);
            }
        }
    }
    let index = first == "*" || first.parse::<usize>().is_ok();
    if let Some(p) = schema.get("properties").and_then(|p| p.get(first.as_str())) {
        return resolve(p, rest);
    }
    if index {
        if let Some(items) = schema.get("items").filter(|i| i.is_object()) {
            return resolve(items, rest);
        }
    }
    match schema.get("additionalProperties") {
        Some(extra @ Value::Object(_)) => resolve(extra, rest),
        _ => None,
    }
}

/// The JSON types a schema admits (through unions), without `null`.
fn types(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.clone()),
        Some(Value::Array(ts)) => {
            out.extend(ts.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        for alt in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(types(alt));
        }
    }
    out.retain(|t| t != "null");
    out.sort();
    out.dedup();
    out
}

/// Whether a value of `source`'s types can be a value of `field` (or of one of its items).
fn compatible(source: &Value, field: &Value) -> bool {
    let from = types(source);
    let mut to = types(field);
    if to.iter().any(|t| t == "array") {
        if let Some(items) = field.get("items") {
            to.extend(types(items));
        }
    }
    if from.is_empty() || to.is_empty() {
        // An `enum`, a `const` or an unconstrained value: nothing to compare.
        return true;
    }
    let widen = |t: &str| {
        if t == "integer" {
            "number".to_owned()
        } else {
            t.to_owned()
        }
    };
    from.iter()
        .any(|f| to.iter().any(|t| f == t || widen(f) == widen(t)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_resolve_through_arrays_options_and_maps() {
        let schema = json!({"type": "object", "properties": {
            "emails": {"type": "array", "items": {"type": "object", "properties": {
                "sender": {"type": "string"},
                "cc": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
            }}},
            "tags": {"type": "object", "additionalProperties": {"type": "integer"}}
        }});
        let at = |p: &str| resolve(&schema, &segments(p)).map(types);
        assert_eq!(at("/emails/*/sender"), Some(vec!["string".to_owned()]));
        assert_eq!(at("/emails/0/sender"), Some(vec!["string".to_owned()]));
        assert_eq!(at("/emails/*/cc/*"), Some(vec!["string".to_owned()]));
        assert_eq!(at("/tags/anything"), Some(vec!["integer".to_owned()]));
        assert_eq!(at("/emails/*/missing"), None);
        assert_eq!(at("/nope"), None);
        assert!(compatible(
            &json!({"type": "integer"}),
            &json!({"type": "number"})
        ));
        assert!(!compatible(
            &json!({"type": "integer"}),
            &json!({"type": "string"})
        ));
        assert!(compatible(
            &json!({"type": "string"}),
            &json!({"type": "array", "items": {"type": "string"}})
        ));
    }
}
