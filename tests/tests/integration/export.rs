//! Prompt-schema exports: snapshots of every dialect for the document service's tools, each strict export
//! checked against its provider's documented rules by a checker written apart from the
//! exporter, and the refusals (free-form shapes, limits, budgets, names).

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use tool_contract::export::{Dialect, ExportError, Exporter};
use tool_contract::{tool, Registry, Tool, ToolArgs, ToolContract, ToolError};

use crate::document_tools;

fn documents() -> Vec<&'static ToolContract> {
    document_tools().contracts().collect()
}

fn export(dialect: Dialect) -> Vec<Value> {
    Exporter::new(dialect)
        .export_contracts(documents())
        .unwrap_or_else(|e| panic!("{dialect}: {e}"))
        .tools
}

/// Snapshots of all dialects for the document service's five tools. `UPDATE_SNAPSHOTS=1` rewrites them.
#[test]
fn every_dialect_matches_its_snapshot() {
    let mut stale = Vec::new();
    for dialect in Dialect::ALL {
        let export = Exporter::new(dialect)
            .export_contracts(documents())
            .unwrap();
        assert!(
            export.warnings.is_empty(),
            "{dialect}: {:?}",
            export.warnings
        );
        assert!(export.renamed.is_empty(), "{dialect}: {:?}", export.renamed);
        stale.extend(crate::stale_snapshot(
            &format!("export.{dialect}.json"),
            &export.to_value(),
        ));
    }
    let loose = Exporter::new(Dialect::Anthropic)
        .strict(false)
        .export_contracts(documents())
        .unwrap();
    stale.extend(crate::stale_snapshot(
        "export.anthropic_non_strict.json",
        &loose.to_value(),
    ));
    assert!(
        stale.is_empty(),
        "run with UPDATE_SNAPSHOTS=1 and review the diff:\n{}",
        stale.join("\n")
    );
}

// ---- The rule checkers: they walk what was emitted, knowing nothing of the exporter. ----

/// Every schema node under `schema`, with its JSON pointer.
fn nodes<'a>(schema: &'a Value, pointer: String, out: &mut Vec<(String, &'a Value)>) {
    let Value::Object(m) = schema else { return };
    out.push((pointer.clone(), schema));
    for (k, v) in m {
        match (k.as_str(), v) {
            ("properties" | "$defs", Value::Object(children)) => {
                for (name, child) in children {
                    nodes(child, format!("{pointer}/{k}/{name}"), out);
                }
            }
            ("items" | "additionalProperties" | "not", child) => {
                nodes(child, format!("{pointer}/{k}"), out)
            }
            ("anyOf" | "oneOf" | "allOf" | "prefixItems", Value::Array(alts)) => {
                for (i, child) in alts.iter().enumerate() {
                    nodes(child, format!("{pointer}/{k}/{i}"), out);
                }
            }
            _ => {}
        }
    }
}

fn all_nodes(schema: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    nodes(schema, String::new(), &mut out);
    out
}

fn keys(props: &Value) -> Vec<String> {
    props
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn types_of(node: &Value) -> Vec<String> {
    match &node["type"] {
        Value::String(t) => vec![t.clone()],
        other => strings(other),
    }
}

/// `^[a-zA-Z0-9_-]{1,64}$`, without a regex engine.
fn openai_anthropic_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn depth(schema: &Value) -> usize {
    let Value::Object(m) = schema else { return 0 };
    let own = usize::from(m.contains_key("properties"));
    let children = m
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.values())
        .chain(m.get("items"))
        .chain(
            m.get("anyOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .map(depth)
        .max()
        .unwrap_or(0);
    own + children
}

/// OpenAI strict mode, from its Structured Outputs guide ("Supported schemas").
fn check_openai(params: &Value, canonical: &ToolContract) -> Vec<String> {
    const SUPPORTED: &[&str] = &[
        "type",
        "description",
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
    let mut bad = Vec::new();
    let (mut props_total, mut enums_total) = (0, 0);
    for (p, node) in all_nodes(params) {
        for k in node.as_object().unwrap().keys() {
            if !SUPPORTED.contains(&k.as_str()) {
                bad.push(format!(
                    "{p}: keyword `{k}` is not supported in strict mode"
                ));
            }
        }
        if let Some(f) = node["format"].as_str() {
            if !FORMATS.contains(&f) {
                bad.push(format!("{p}: format `{f}` is not supported"));
            }
        }
        if node.get("$ref").is_some() && node.as_object().unwrap().len() > 1 {
            bad.push(format!("{p}: `$ref` has siblings"));
        }
        if let Some(props) = node.get("properties") {
            props_total += keys(props).len();
            if node["additionalProperties"] != false {
                bad.push(format!("{p}: object without additionalProperties: false"));
            }
            if strings(&node["required"]) != keys(props) {
                bad.push(format!("{p}: not every property is required, in order"));
            }
        }
        enums_total += node["enum"].as_array().map_or(0, Vec::len);
        if let (Some(e), true) = (
            node["enum"].as_array(),
            types_of(node).contains(&"null".into()),
        ) {
            if !e.contains(&Value::Null) {
                bad.push(format!("{p}: nullable enum without null"));
            }
        }
    }
    if depth(params) > 10 || props_total > 5000 || enums_total > 1000 {
        bad.push("size limits exceeded".into());
    }
    // Optional canonical fields are nullable, so the model can leave them out with `null`.
    let canon = &canonical.input_schema;
    let required = strings(&canon["required"]);
    for name in keys(&canon["properties"]) {
        if !required.contains(&name)
            && !types_of(&params["properties"][&name]).contains(&"null".to_owned())
        {
            bad.push(format!("/properties/{name}: optional but not nullable"));
        }
    }
    bad
}

/// Anthropic strict tool use ("JSON Schema limitations" of structured outputs).
fn check_anthropic(schema: &Value) -> Vec<String> {
    const BANNED: &[&str] = &[
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "maxItems",
        "uniqueItems",
        "$ref",
    ];
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
    let mut bad = Vec::new();
    for (p, node) in all_nodes(schema) {
        for k in BANNED {
            if node.get(*k).is_some() {
                bad.push(format!("{p}: `{k}` is not supported in strict mode"));
            }
        }
        if let Some(n) = node.get("minItems") {
            if n != 0 && n != 1 {
                bad.push(format!("{p}: minItems {n} (only 0 or 1)"));
            }
        }
        if let Some(f) = node["format"].as_str() {
            if !FORMATS.contains(&f) {
                bad.push(format!("{p}: format `{f}` is not supported"));
            }
        }
        if node.get("properties").is_some() && node["additionalProperties"] != false {
            bad.push(format!("{p}: object without additionalProperties: false"));
        }
    }
    bad
}

/// (optional parameters, union-typed parameters) of one strict Anthropic schema.
fn anthropic_usage(schema: &Value) -> (usize, usize) {
    let (mut optional, mut unions) = (0, 0);
    for (_, node) in all_nodes(schema) {
        let required = strings(&node["required"]);
        for (name, prop) in node["properties"].as_object().into_iter().flatten() {
            optional += usize::from(!required.contains(name));
            unions += usize::from(prop.get("anyOf").is_some() || prop["type"].is_array());
        }
    }
    (optional, unions)
}

/// Gemini function declarations; `openapi` adds the OpenAPI-subset rules of `parameters`.
fn check_gemini(schema: &Value, openapi: bool) -> Vec<String> {
    const TYPES: &[&str] = &["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"];
    let mut bad = Vec::new();
    for (p, node) in all_nodes(schema) {
        let m = node.as_object().unwrap();
        for k in ["const", "oneOf", "allOf"] {
            if m.contains_key(k) {
                bad.push(format!("{p}: `{k}`"));
            }
        }
        if m.contains_key("$ref") && m.len() > 1 {
            bad.push(format!("{p}: `$ref` has siblings"));
        }
        if let Some(props) = m.get("properties") {
            if keys(props).len() > 1 && strings(&node["propertyOrdering"]) != keys(props) {
                bad.push(format!(
                    "{p}: propertyOrdering does not follow the properties"
                ));
            }
        }
        if !openapi {
            continue;
        }
        for k in [
            "$ref",
            "$defs",
            "additionalProperties",
            "uniqueItems",
            "exclusiveMinimum",
        ] {
            if m.contains_key(k) {
                bad.push(format!("{p}: `{k}` is not in the OpenAPI subset"));
            }
        }
        match m.get("type") {
            Some(Value::String(t)) if TYPES.contains(&t.as_str()) => {}
            None if m.contains_key("anyOf") => {}
            other => bad.push(format!("{p}: type {other:?} is not one OpenAPI type")),
        }
        if m.get("nullable").is_some_and(|n| !n.is_boolean()) {
            bad.push(format!("{p}: nullable is not a boolean"));
        }
        if let Some(e) = m.get("enum").and_then(Value::as_array) {
            if !e.iter().all(Value::is_string) {
                bad.push(format!("{p}: enum values must be strings"));
            }
        }
    }
    bad
}

#[test]
fn openai_strict_exports_follow_openai_rules() {
    for dialect in [Dialect::OpenAi, Dialect::OpenAiResponses] {
        for (tool, contract) in export(dialect).iter().zip(documents()) {
            let f = if dialect == Dialect::OpenAi {
                &tool["function"]
            } else {
                tool
            };
            assert_eq!(tool["type"], "function");
            assert_eq!(f["strict"], true);
            assert!(openai_anthropic_name(f["name"].as_str().unwrap()));
            assert_eq!(f["description"], contract.description.as_str());
            let bad = check_openai(&f["parameters"], contract);
            assert!(bad.is_empty(), "{dialect} {}: {bad:#?}", contract.name);
            assert_eq!(
                keys(&f["parameters"]["properties"]),
                keys(&contract.input_schema["properties"]),
                "property order follows the struct"
            );
        }
    }
}

#[test]
fn anthropic_strict_exports_follow_anthropic_rules() {
    let tools = export(Dialect::Anthropic);
    let (mut optional, mut unions) = (0, 0);
    for (tool, contract) in tools.iter().zip(documents()) {
        assert_eq!(tool["strict"], true);
        assert!(openai_anthropic_name(tool["name"].as_str().unwrap()));
        let schema = &tool["input_schema"];
        let bad = check_anthropic(schema);
        assert!(bad.is_empty(), "{}: {bad:#?}", contract.name);
        // Optional fields stay optional: Anthropic does not need every field required.
        assert_eq!(schema["required"], contract.input_schema["required"]);
        assert_eq!(
            keys(&schema["properties"]),
            keys(&contract.input_schema["properties"])
        );
        let (o, u) = anthropic_usage(schema);
        optional += o;
        unions += u;
    }
    assert!(
        tools.len() <= 20 && optional <= 24 && unions <= 16,
        "{optional} {unions}"
    );
    // The constraints strict mode drops are still in front of the model, as text.
    let query = &tools
        .iter()
        .find(|t| t["name"] == "search_documents")
        .unwrap()["input_schema"]["properties"]["query"];
    assert!(query["description"]
        .as_str()
        .unwrap()
        .ends_with("(at least 2 characters; at most 500 characters)"));
}

#[test]
fn gemini_exports_follow_gemini_rules() {
    for (dialect, key, openapi) in [
        (Dialect::Gemini, "parametersJsonSchema", false),
        (Dialect::GeminiOpenApi, "parameters", true),
    ] {
        for (decl, contract) in export(dialect).iter().zip(documents()) {
            let name = decl["name"].as_str().unwrap();
            assert!(
                name.len() <= 64 && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            );
            assert!(decl
                .get(if openapi {
                    "parametersJsonSchema"
                } else {
                    "parameters"
                })
                .is_none());
            let bad = check_gemini(&decl[key], openapi);
            assert!(bad.is_empty(), "{dialect} {}: {bad:#?}", contract.name);
        }
    }
    let decls = export(Dialect::GeminiOpenApi);
    let search = &decls[0]["parameters"]["properties"];
    assert_eq!(decls[0]["name"], "search_documents");
    assert_eq!(search["date_from"]["type"], "STRING");
    assert_eq!(search["date_from"]["nullable"], true);
}

#[test]
fn mcp_and_json_schema_exports_keep_the_canonical_schemas() {
    for (entry, contract) in export(Dialect::Mcp).iter().zip(documents()) {
        let name = entry["name"].as_str().unwrap();
        assert!(
            name.len() <= 128
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        );
        assert_eq!(entry["inputSchema"], contract.input_schema);
        // The advertised outputSchema is the envelope union; the canonical output schema is its
        // `data`, minus the root-only `$schema` and `$id` (see export::mcp).
        assert_eq!(
            entry["outputSchema"],
            tool_contract::export::mcp::output_schema(contract)
        );
        let mut data = contract.output_schema.clone();
        let data_map = data.as_object_mut().unwrap();
        data_map.shift_remove("$schema");
        data_map.shift_remove("$id");
        assert_eq!(entry["outputSchema"]["properties"]["data"], data);
    }
    for (entry, contract) in export(Dialect::JsonSchema).iter().zip(documents()) {
        assert_eq!(entry["input_schema"], contract.input_schema);
        assert_eq!(entry["version"], contract.version.as_str());
    }
}

/// The nulls strict mode makes the model send for optional fields are dropped by the pipeline,
/// so the canonical defaults apply.
#[tokio::test]
async fn what_openai_strict_lets_the_model_send_is_accepted_by_the_pipeline() {
    let tool = Exporter::new(Dialect::OpenAi)
        .export_contract(crate::contract("search_documents"))
        .unwrap();
    let args =
        json!({"query": "refund policy", "source_types": null, "date_from": null, "top_k": null});
    let prompt_schema = jsonschema::draft202012::new(&tool["function"]["parameters"]).unwrap();
    assert!(prompt_schema.is_valid(&args));
    let registry = Registry::builder()
        .toolset(document_tools())
        .build()
        .unwrap();
    let raw = json!({"name": "search_documents", "arguments": args}).to_string();
    let obs = registry.handle(&raw, &crate::pipeline::ctx()).await;
    assert!(obs.ok, "{obs:?}");
}

// ---- Refusals ----

/// Arguments of `tag_note`.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct TagNoteArgs {
    /// The note to tag.
    #[schemars(length(max = 100))]
    note_id: String,
    /// Free labels: any key, any value.
    #[tool(unbounded = "test of a free-form map")]
    labels: HashMap<String, String>,
}

/// Tags a note with free labels. Use it after creating a note; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn tag_note(args: TagNoteArgs) -> Result<bool, ToolError> {
    Ok(!args.note_id.is_empty() && args.labels.len() < 100)
}

/// Arguments of `store_blob`.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct StoreBlobArgs {
    /// Any JSON document.
    #[tool(unbounded = "test of an untyped value")]
    payload: Value,
}

/// Stores any JSON document. Use it to keep data for later; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn store_blob(args: StoreBlobArgs) -> Result<bool, ToolError> {
    Ok(!args.payload.is_null())
}

const STRICT: [Dialect; 4] = [
    Dialect::OpenAi,
    Dialect::OpenAiResponses,
    Dialect::Anthropic,
    Dialect::GeminiOpenApi,
];

#[test]
fn free_form_fields_are_refused_naming_tool_field_and_dialect() {
    for dialect in STRICT {
        for (contract, field, shape) in [
            (
                TagNote::contract(),
                "/properties/labels",
                "map with free keys",
            ),
            (
                StoreBlob::contract(),
                "/properties/payload",
                "any JSON value",
            ),
        ] {
            let err = Exporter::new(dialect)
                .export_contract(contract)
                .unwrap_err();
            let ExportError::Unrepresentable {
                tool,
                pointer,
                dialect: d,
                shape: s,
            } = &err
            else {
                panic!("{err:?}");
            };
            assert_eq!(
                (tool.as_str(), pointer.as_str(), *d),
                (contract.name.as_str(), field, dialect)
            );
            assert!(s.contains(shape), "{s}");
            let msg = err.to_string();
            for part in [
                contract.name.as_str(),
                field,
                dialect.as_str(),
                "non-strict fallback",
            ] {
                assert!(msg.contains(part), "{msg} lacks {part}");
            }
        }
    }
    let mut pair = renamed("set_range");
    pair.input_schema = json!({
        "type": "object", "additionalProperties": false, "required": ["range"],
        "properties": {"range": {"type": "array", "description": "From, to.", "minItems": 2, "maxItems": 2,
            "prefixItems": [{"type": "integer"}, {"type": "integer"}], "items": false}}
    });
    for dialect in STRICT {
        let err = Exporter::new(dialect).export_contract(&pair).unwrap_err();
        assert!(
            err.to_string().contains("/properties/range is a tuple"),
            "{err}"
        );
    }
    // Dialects without a strict subset carry them as they are.
    for dialect in [Dialect::JsonSchema, Dialect::Gemini, Dialect::Mcp] {
        Exporter::new(dialect)
            .export_contract(TagNote::contract())
            .unwrap();
    }
}

#[test]
fn the_fallback_exports_only_the_unrepresentable_tool_non_strict() {
    let registry = Registry::builder()
        .toolset(document_tools())
        .tool(TagNote)
        .tool(StoreBlob)
        .lint_bounds(false)
        .build()
        .unwrap();
    for dialect in STRICT {
        let export = Exporter::new(dialect)
            .fallback_non_strict(true)
            .export_registry(&registry)
            .unwrap();
        assert_eq!(export.tools.len(), 7);
        assert_eq!(export.warnings.len(), 2, "{:?}", export.warnings);
        assert!(
            export.warnings[0].contains("`store_blob`")
                && export.warnings[1].contains("`tag_note`")
        );
        for tool in &export.tools {
            let name = tool["name"]
                .as_str()
                .or(tool["function"]["name"].as_str())
                .unwrap();
            let loose = name == "tag_note" || name == "store_blob";
            let strict = match dialect {
                Dialect::OpenAi => tool["function"]["strict"] == true,
                Dialect::OpenAiResponses => tool["strict"] == true,
                Dialect::Anthropic => tool.get("strict") == Some(&json!(true)),
                _ => tool.get("parameters").is_some(),
            };
            assert_eq!(strict, !loose, "{dialect} {name}");
        }
    }
    // Without the fallback the whole export fails on the first such tool.
    assert!(Exporter::new(Dialect::OpenAi)
        .export_registry(&registry)
        .is_err());
}

fn renamed(name: &str) -> ToolContract {
    let mut c = crate::contract("read_document_span").clone();
    c.name = name.to_owned();
    c
}

#[test]
fn names_are_mangled_per_dialect_and_map_back() {
    let long = format!("read_{}", "x".repeat(100));
    let contracts = [
        renamed("docs.read span"),
        renamed("2fa_check"),
        renamed(&long),
    ];
    for (dialect, expected) in [
        (Dialect::OpenAi, ["docs_read_span", "2fa_check", ""]),
        (Dialect::Anthropic, ["docs_read_span", "2fa_check", ""]),
        (Dialect::Gemini, ["docs.read_span", "_2fa_check", ""]),
        (Dialect::Mcp, ["docs.read_span", "2fa_check", long.as_str()]),
    ] {
        let export = Exporter::new(dialect).export_contracts(&contracts).unwrap();
        let names: Vec<&str> = export
            .tools
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .or(t["function"]["name"].as_str())
                    .unwrap()
            })
            .collect();
        assert_eq!(names[..2], expected[..2], "{dialect}");
        let max = if dialect == Dialect::Mcp { 128 } else { 64 };
        assert!(
            names[2].len() <= max && names[2].starts_with("read_x"),
            "{dialect} {}",
            names[2]
        );
        if dialect == Dialect::Mcp {
            assert_eq!(names[2], expected[2]);
        }
        for (exported, contract) in names.iter().zip(&contracts) {
            assert_eq!(export.registry_name(exported), contract.name, "{dialect}");
        }
    }
    let err = Exporter::new(Dialect::OpenAi)
        .export_contracts(&[renamed("docs.read"), renamed("docs_read")])
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "tools `docs.read` and `docs_read` both become `docs_read` in openai; rename one of them"
    );
}

#[test]
fn anthropic_request_budgets_are_reported_and_the_fallback_stays_within_them() {
    let many: Vec<ToolContract> = (0..21)
        .map(|i| renamed(&format!("read_span_{i}")))
        .collect();
    let err = Exporter::new(Dialect::Anthropic)
        .export_contracts(&many)
        .unwrap_err();
    assert!(
        matches!(
            err,
            ExportError::BudgetExceeded {
                actual: 21,
                max: 20,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("21 strict tools, more than the 20"),
        "{err}"
    );

    // search_documents has 3 optional parameters: 9 copies hold 27, over the 24 allowed.
    let searches: Vec<ToolContract> = (0..9)
        .map(|i| {
            let mut c = crate::contract("search_documents").clone();
            c.name = format!("search_{i}");
            c
        })
        .collect();
    let err = Exporter::new(Dialect::Anthropic)
        .export_contracts(&searches)
        .unwrap_err();
    assert!(err.to_string().contains("27 optional parameters"), "{err}");

    // 17 required but nullable fields: 17 union-typed parameters, over the 16 allowed.
    let mut unions = renamed("fill_form");
    let fields: serde_json::Map<String, Value> = (0..17)
        .map(|i| {
            (
                format!("f{i}"),
                json!({"type": ["string", "null"], "description": "A field."}),
            )
        })
        .collect();
    let names: Vec<&String> = fields.keys().collect();
    unions.input_schema = json!({"type": "object", "additionalProperties": false, "required": names, "properties": fields});
    let err = Exporter::new(Dialect::Anthropic)
        .export_contract(&unions)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("17 union-typed parameters across strict tools, more than the 16"),
        "{err}"
    );

    let export = Exporter::new(Dialect::Anthropic)
        .fallback_non_strict(true)
        .export_contracts(&searches)
        .unwrap();
    let strict: Vec<&Value> = export
        .tools
        .iter()
        .filter(|t| t["strict"] == true)
        .collect();
    let optional: usize = strict
        .iter()
        .map(|t| anthropic_usage(&t["input_schema"]).0)
        .sum();
    assert_eq!((strict.len(), optional), (8, 24));
    assert_eq!(export.tools[8].get("strict"), None);
    assert!(
        export.warnings[0].contains("`search_8` exported without strict mode"),
        "{:?}",
        export.warnings
    );
}

#[test]
fn openai_size_limits_are_checked_at_export() {
    let mut wide = renamed("pick_value");
    let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    wide.input_schema = json!({
        "type": "object", "additionalProperties": false, "required": ["v"],
        "properties": {"v": {"type": "string", "description": "A value.", "enum": values}}
    });
    let err = Exporter::new(Dialect::OpenAi)
        .export_contract(&wide)
        .unwrap_err();
    assert!(
        matches!(
            err,
            ExportError::LimitExceeded {
                limit: "enum values",
                actual: 1001,
                max: 1000,
                ..
            }
        ),
        "{err}"
    );

    let mut deep = renamed("nest_value");
    let mut schema = json!({"type": "string", "description": "Leaf."});
    for _ in 0..11 {
        schema = json!({"type": "object", "description": "Level.", "properties": {"n": schema}, "required": ["n"]});
    }
    deep.input_schema = schema;
    let err = Exporter::new(Dialect::OpenAi)
        .export_contract(&deep)
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("11 levels of object nesting, more than the 10"),
        "{err}"
    );
    // Anthropic and Gemini document no such limit.
    Exporter::new(Dialect::Anthropic)
        .export_contract(&deep)
        .unwrap();
}

#[test]
fn recursive_types_are_refused_by_anthropic_strict_and_gemini_openapi() {
    let mut tree = renamed("walk_tree");
    tree.input_schema = json!({
        "type": "object", "additionalProperties": false, "required": ["root"],
        "properties": {"root": {"$ref": "#/$defs/Node", "description": "The root."}},
        "$defs": {"Node": {
            "type": "object", "additionalProperties": false, "required": ["children"],
            "properties": {"children": {"type": "array", "maxItems": 4, "items": {"$ref": "#/$defs/Node"}}}
        }}
    });
    for dialect in [Dialect::Anthropic, Dialect::GeminiOpenApi] {
        let err = Exporter::new(dialect).export_contract(&tree).unwrap_err();
        assert!(
            err.to_string().contains("recursive type"),
            "{dialect}: {err}"
        );
    }
    // OpenAI strict supports recursion through `$defs`, with a bare `$ref`.
    let tool = Exporter::new(Dialect::OpenAi)
        .export_contract(&tree)
        .unwrap();
    assert_eq!(
        tool["function"]["parameters"]["properties"]["root"],
        json!({"$ref": "#/$defs/Node"})
    );
    // With the fallback, Gemini gets the JSON Schema form instead.
    let decl = Exporter::new(Dialect::GeminiOpenApi)
        .fallback_non_strict(true)
        .export_contract(&tree)
        .unwrap();
    assert!(decl.get("parametersJsonSchema").is_some() && decl.get("parameters").is_none());
}

#[test]
fn gemini_replaces_const_and_type_lists() {
    let mut c = renamed("set_mode");
    c.input_schema = json!({
        "type": "object", "additionalProperties": false, "required": ["mode", "level"],
        "properties": {
            "mode": {"const": "fast", "description": "Mode."},
            "level": {"type": ["integer", "string", "null"], "description": "Level."}
        }
    });
    let decl = Exporter::new(Dialect::GeminiOpenApi)
        .export_contract(&c)
        .unwrap();
    let props = &decl["parameters"]["properties"];
    assert_eq!(props["mode"]["enum"], json!(["fast"]));
    assert_eq!(props["level"]["nullable"], true);
    assert_eq!(
        props["level"]["anyOf"],
        json!([{"type": "INTEGER"}, {"type": "STRING"}])
    );
    assert!(check_gemini(&decl["parameters"], true).is_empty());
}

/// Arguments of `ping_service`: none.
#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingServiceArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: PingServiceArgs) -> Result<bool, ToolError> {
    Ok(true)
}

#[test]
fn a_tool_without_arguments_exports_in_every_dialect() {
    let c = PingService::contract();
    for dialect in Dialect::ALL {
        let tool = Exporter::new(dialect)
            .export_contract(c)
            .unwrap_or_else(|e| panic!("{dialect}: {e}"));
        match dialect {
            Dialect::OpenAi => {
                let params = &tool["function"]["parameters"];
                assert_eq!(params["properties"], json!({}));
                assert!(check_openai(params, c).is_empty(), "{params}");
            }
            Dialect::Anthropic => assert!(check_anthropic(&tool["input_schema"]).is_empty()),
            // "For a function with no parameters, this can be left unset."
            Dialect::Gemini | Dialect::GeminiOpenApi => {
                assert_eq!(tool.as_object().unwrap().len(), 2, "{tool}")
            }
            _ => {}
        }
    }
}

#[test]
fn a_registry_refuses_at_build_time_what_a_required_dialect_cannot_express() {
    use tool_contract::RegistryError;
    // The document service's tools build under every strict dialect at once.
    let mut builder = Registry::builder().toolset(document_tools());
    for d in Dialect::ALL {
        builder = builder.check_export(Exporter::new(d));
    }
    builder
        .build()
        .expect("the document service's tools export everywhere");

    let refused = Registry::builder()
        .tool(TagNote)
        .lint_bounds(false)
        .check_export(Exporter::new(Dialect::Mcp))
        .check_export(Exporter::new(Dialect::Anthropic))
        .build()
        .unwrap_err();
    match &refused {
        RegistryError::Export(ExportError::Unrepresentable {
            tool,
            pointer,
            dialect,
            ..
        }) => {
            assert_eq!(tool, "tag_note");
            assert_eq!(pointer, "/properties/labels");
            assert_eq!(*dialect, Dialect::Anthropic);
        }
        other => panic!("{other:?}"),
    }
    // With the fallback the host asked for, the same registry builds.
    Registry::builder()
        .tool(TagNote)
        .lint_bounds(false)
        .check_export(Exporter::new(Dialect::Anthropic).fallback_non_strict(true))
        .build()
        .expect("non-strict fallback");
}

/// A model that sends an argument to a tool that takes none is told which property is
/// unexpected, as it is for a tool with fields.
#[tokio::test]
async fn an_unknown_argument_to_a_tool_without_arguments_is_named() {
    let reg = tool_contract::Registry::builder()
        .tool(PingService)
        .build()
        .unwrap();
    let ctx = tool_contract::ToolContext::builder()
        .principal("user:kim")
        .build();
    let obs = reg
        .handle(
            r#"{"name": "ping_service", "arguments": {"account_id": "acc_1"}}"#,
            &ctx,
        )
        .await;
    let issue = &obs.to_value()["error"]["safe_details"]["issues"][0];
    assert_eq!(issue["keyword"], "additionalProperties", "{issue}");
    assert_eq!(issue["actual"], json!(["account_id"]), "{issue}");
}
