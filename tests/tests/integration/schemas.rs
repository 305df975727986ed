use serde_json::{json, Value};

use crate::{contract, document_tools};

/// The reference `search_documents` input schema the tool was written to match.
fn reference_search_schema() -> Value {
    json!({
      "$schema": "https://json-schema.org/draft/2020-12/schema",
      "$id": "tool://search_documents/input/2.1.0",
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "query": {"type": "string", "minLength": 2, "maxLength": 500},
        "source_types": {
          "type": "array",
          "items": {"enum": ["policy", "manual", "incident", "faq"]},
          "uniqueItems": true,
          "maxItems": 4,
          "default": ["policy", "manual"]
        },
        "date_from": {"type": ["string", "null"], "format": "date"},
        "top_k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 8}
      },
      "required": ["query", "source_types", "top_k"]
    })
}

/// Whether every keyword of `expected` is in `actual` with the same value (objects recursively).
fn missing_from(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, v) in e {
                match a.get(k) {
                    Some(av) => missing_from(v, av, &format!("{path}/{k}"), out),
                    None => out.push(format!("{path}/{k} is missing")),
                }
            }
        }
        (e, a) if e == a => {}
        (e, a) => out.push(format!("{path}: reference has {e}, generated has {a}")),
    }
}

#[test]
fn search_documents_schema_has_every_constraint_of_the_seed() {
    let generated = &contract("search_documents").input_schema;
    let mut reference = reference_search_schema();
    // The reference lists defaulted fields as required, which is what a strict-mode prompt export
    // needs; the canonical schema states what deserialization accepts: only `query` is needed,
    // and the others take the defaults it advertises.
    let reference_required = reference
        .as_object_mut()
        .unwrap()
        .remove("required")
        .unwrap();
    let mut missing = Vec::new();
    missing_from(&reference, generated, "", &mut missing);
    assert!(missing.is_empty(), "{missing:#?}");
    assert_eq!(generated["required"], json!(["query"]));
    for name in reference_required.as_array().unwrap() {
        let prop = &generated["properties"][name.as_str().unwrap()];
        assert!(
            name == "query" || prop.get("default").is_some(),
            "{name} neither required nor defaulted"
        );
    }
    // Field order follows the struct, as the reference lists it.
    let order: Vec<_> = generated["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(order, ["query", "source_types", "date_from", "top_k"]);
}

#[test]
fn every_generated_schema_is_valid_draft_2020_12() {
    for c in document_tools().contracts() {
        for (side, schema) in [("input", &c.input_schema), ("output", &c.output_schema)] {
            assert_eq!(
                schema["$schema"],
                "https://json-schema.org/draft/2020-12/schema"
            );
            assert_eq!(
                schema["$id"],
                format!("tool://{}/{side}/{}", c.name, c.version)
            );
            if let Err(err) = jsonschema::draft202012::meta::validate(schema) {
                panic!("{} {side} schema is not valid 2020-12: {err}", c.name);
            }
        }
        assert_eq!(c.input_schema["type"], "object", "{}", c.name);
        assert_eq!(c.input_schema["additionalProperties"], false, "{}", c.name);
        for (name, prop) in c.input_schema["properties"].as_object().unwrap() {
            assert!(
                prop.get("description").is_some(),
                "{}.{name} has no description",
                c.name
            );
        }
    }
}

#[test]
fn the_search_schema_accepts_the_reference_proposal_and_rejects_abuse() {
    let schema = &contract("search_documents").input_schema;
    let v = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap();
    assert!(v.is_valid(&json!({"query": "2026 환불 정책 발효일", "top_k": 8})));
    assert!(v.is_valid(
        &json!({"query": "refund", "source_types": ["incident"], "date_from": null, "top_k": 5})
    ));
    for bad in [
        json!({"query": "x"}),
        json!({"query": "refund", "top_k": 50}),
        json!({"query": "refund", "top_k": 0}),
        json!({"query": "refund", "tenant_id": "globex"}),
        json!({"query": "refund", "source_types": ["policy", "policy"]}),
        json!({"query": "refund", "source_types": ["internet"]}),
        json!({"query": "refund", "date_from": "yesterday"}),
        json!({"query": "a".repeat(501)}),
        json!({"top_k": 8}),
    ] {
        assert!(!v.is_valid(&bad), "accepted {bad}");
    }
}

/// Snapshots of the ten generated schemas. `UPDATE_SNAPSHOTS=1` rewrites them; review the diff.
#[test]
fn generated_schemas_match_their_snapshots() {
    let mut stale = Vec::new();
    for c in document_tools().contracts() {
        for (side, schema) in [("input", &c.input_schema), ("output", &c.output_schema)] {
            stale.extend(crate::stale_snapshot(
                &format!("{}.{side}.json", c.name),
                schema,
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "run with UPDATE_SNAPSHOTS=1 and review the diff:\n{}",
        stale.join("\n")
    );
}

/// What the model reads never names a Rust type: `uint8`, `int32`, `double` and the like are
/// left out of every schema, and the bounds that came with them stay.
#[test]
fn rust_number_formats_are_left_out_and_their_bounds_kept() {
    use std::collections::BTreeMap;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Numbers {
        small: u8,
        signed: i32,
        wide: u64,
        size: usize,
        ratio: f64,
        single: f32,
        maybe: Option<i16>,
        list: Vec<u16>,
        map: BTreeMap<String, i64>,
        /// A format that is not Rust's stays.
        day: chrono::NaiveDate,
    }
    let schema = tool_contract::schema::tool_schema::<Numbers>(
        "t",
        "1.0.0",
        tool_contract::schema::Direction::Input,
    );
    let text = schema.to_string();
    for leak in ["int8", "int16", "int32", "int64", "uint", "double", "float"] {
        assert!(!text.contains(&format!("\"{leak}")), "{leak} in {text}");
    }
    let p = &schema["properties"];
    assert_eq!(p["small"]["maximum"], 255);
    assert_eq!(p["signed"]["minimum"], i32::MIN);
    assert_eq!(p["list"]["items"]["maximum"], u16::MAX);
    assert_eq!(p["day"]["format"], "date");
    // The example tools' exports in every dialect, and their canonical schemas.
    for c in document_tools().contracts() {
        for side in [&c.input_schema, &c.output_schema] {
            let text = side.to_string();
            assert!(
                !text.contains("\"uint") && !text.contains("\"double\""),
                "{text}"
            );
        }
    }
}
