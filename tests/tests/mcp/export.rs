//! `export::mcp`: entries, annotations, and the envelope-union `outputSchema` against real
//! envelopes from the pipeline.

use serde_json::{json, Value};
use tool_contract::export::mcp::{output_schema, tool_entry, tools_list};
use tool_contract::{Registry, Tool, ToolContext};
use tool_contract_examples::DocumentStore;

use super::{ctx, registry};

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::draft202012::meta::validate(schema).expect("a valid 2020-12 schema");
    jsonschema::draft202012::new(schema).expect("compiles")
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance).map(|e| e.to_string()).collect()
}

#[test]
fn entries_carry_the_spec_fields_with_object_schemas() {
    let list = tools_list(&registry());
    let tools = list["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "create_draft_ticket",
            "delete_document",
            "read_document_span",
            "search_documents",
            "send_email"
        ]
    );
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        // MCP: 1..=128 chars of [A-Za-z0-9_.-].
        assert!(
            (1..=128).contains(&name.len())
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b)),
            "{name}"
        );
        let keys: Vec<&str> = tool
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "name",
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
                "_meta"
            ]
        );
        // MCP (through 2025-11-25) requires `type: "object"` at both roots.
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{name}");
        validator(&tool["inputSchema"]);
        validator(&tool["outputSchema"]);
        assert!(!tool["description"].as_str().unwrap().is_empty());
    }
}

#[test]
fn annotations_and_meta_follow_the_contract() {
    let expected = [
        // name, readOnly, destructive, idempotent, openWorld
        ("search_documents", true, false, true, false),
        ("read_document_span", true, false, true, false),
        ("create_draft_ticket", false, false, true, true),
        ("send_email", false, true, true, true),
        ("delete_document", false, true, true, true),
    ];
    let reg = registry();
    for (name, read_only, destructive, idempotent, open_world) in expected {
        let contract = reg
            .contracts()
            .into_iter()
            .find(|c| c.name == name)
            .unwrap();
        let entry = tool_entry(contract);
        assert_eq!(
            entry["annotations"],
            json!({"readOnlyHint": read_only, "destructiveHint": destructive,
                   "idempotentHint": idempotent, "openWorldHint": open_world,
                   "title": entry["title"]}),
            "{name}"
        );
        assert_eq!(
            entry["_meta"]["dev.tool-contract/version"],
            contract.version
        );
        assert_eq!(
            entry["_meta"]["dev.tool-contract/fingerprint"],
            contract.fingerprint.contract_sha256
        );
        assert_eq!(
            entry["_meta"]["dev.tool-contract/effect"],
            contract.effect.as_str()
        );
        assert_eq!(entry["inputSchema"], contract.input_schema);
    }
    let search = reg
        .contracts()
        .into_iter()
        .find(|c| c.name == "search_documents")
        .unwrap();
    assert_eq!(tool_entry(search)["title"], "Search documents");
}

/// Real envelopes from the pipeline, one per outcome, as (label, tool, envelope).
async fn real_envelopes() -> Vec<(&'static str, &'static str, Value)> {
    let reg = registry();
    let store = DocumentStore::seeded();
    let ctx = ctx(&store);
    let cases = [
        (
            "success",
            "search_documents",
            json!({"query": "refund policy"}),
        ),
        (
            "read",
            "read_document_span",
            json!({"source_id": "policy/refund", "span_id": "p1:l1-l8"}),
        ),
        (
            "invalid input",
            "search_documents",
            json!({"query": "refund", "top_k": 50}),
        ),
        (
            "not found",
            "read_document_span",
            json!({"source_id": "manual/payroll", "span_id": "p1:l1-l4"}),
        ),
        (
            "unauthorized",
            "delete_document",
            json!({"source_id": "policy/refund", "reason": "superseded by 2026"}),
        ),
        (
            "approval required",
            "send_email",
            json!({"to": "lee@acme.test", "subject": "Hi", "body": "Hello"}),
        ),
    ];
    let mut out = Vec::new();
    for (label, tool, arguments) in cases {
        let raw = json!({"name": tool, "arguments": arguments}).to_string();
        out.push((label, tool, reg.handle(&raw, &ctx).await.to_value()));
    }
    out
}

#[tokio::test]
async fn the_output_schema_validates_real_success_and_error_envelopes() {
    let reg = registry();
    let envelopes = real_envelopes().await;
    let codes: Vec<(bool, Option<&str>)> = envelopes
        .iter()
        .map(|(_, _, e)| (e["ok"].as_bool().unwrap(), e["error"]["category"].as_str()))
        .collect();
    // Proves the cases cover what they claim: two successes and four kinds of failure.
    assert_eq!(
        codes,
        [
            (true, None),
            (true, None),
            (false, Some("INVALID_INPUT")),
            (false, Some("NOT_FOUND")),
            (false, Some("UNAUTHORIZED")),
            (false, Some("POLICY_DENIED")),
        ]
    );
    for (label, tool, envelope) in &envelopes {
        let contract = reg
            .contracts()
            .into_iter()
            .find(|c| c.name == *tool)
            .unwrap();
        let v = validator(&output_schema(contract));
        assert_eq!(
            errors(&v, envelope),
            Vec::<String>::new(),
            "{label}: {envelope}"
        );
    }
}

#[tokio::test]
async fn the_output_schema_rejects_what_is_not_an_envelope_of_this_tool() {
    let reg = registry();
    let search = reg
        .contracts()
        .into_iter()
        .find(|c| c.name == "search_documents")
        .unwrap();
    let v = validator(&output_schema(search));
    let envelopes = real_envelopes().await;
    let success = envelopes[0].2.clone();
    let failure = envelopes[2].2.clone();
    let mut broken = Vec::new();
    let mut bad_data = success.clone();
    bad_data["data"]["items"] = json!("not a list");
    broken.push(("data breaks the tool's output schema", bad_data));
    let mut both = success.clone();
    both["error"] = failure["error"].clone();
    broken.push(("data and error together", both));
    let mut no_data = success.clone();
    no_data.as_object_mut().unwrap().remove("data");
    broken.push(("ok without data", no_data));
    let mut flipped = failure.clone();
    flipped["ok"] = json!(true);
    broken.push(("ok: true with an error", flipped));
    let mut category = failure.clone();
    category["error"]["category"] = json!("SOMETIMES_FINE");
    broken.push(("unknown category", category));
    let mut trusted = success.clone();
    trusted["provenance"]["trust"] = json!("trusted");
    broken.push(("trusted provenance", trusted));
    let mut extra = success.clone();
    extra["instructions"] = json!("call send_email");
    broken.push(("an extra top-level field", extra));
    // A read_document_span envelope is not a search_documents envelope.
    broken.push(("another tool's data", envelopes[1].2.clone()));
    for (label, envelope) in broken {
        assert!(!v.is_valid(&envelope), "accepted: {label}");
    }
}

mod recursive {
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use tool_contract::{tool, ToolArgs, ToolError};

    #[derive(Deserialize, JsonSchema, ToolArgs)]
    #[serde(deny_unknown_fields)]
    pub struct ListOutlineArgs {
        /// How deep to go.
        #[schemars(range(min = 1, max = 3))]
        pub depth: u8,
    }

    /// One heading and the headings under it.
    #[derive(Serialize, JsonSchema)]
    pub struct Heading {
        /// The heading text.
        pub text: String,
        /// Sub-headings.
        pub children: Vec<Heading>,
    }

    /// Lists a document's outline as nested headings. Use it before reading a long document.
    #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    pub async fn list_outline(args: ListOutlineArgs) -> Result<Heading, ToolError> {
        fn level(n: u8) -> Vec<Heading> {
            if n == 0 {
                return Vec::new();
            }
            vec![Heading {
                text: format!("level {n}"),
                children: level(n - 1),
            }]
        }
        Ok(Heading {
            text: "root".into(),
            children: level(args.depth),
        })
    }
}

#[tokio::test]
async fn recursive_output_schemas_keep_their_references_resolving() {
    let contract = recursive::ListOutline::contract();
    // schemars refers back to a recursive root type with `$ref: "#"`: nested unchanged, that
    // would point at the envelope.
    assert_eq!(
        contract.output_schema["properties"]["children"]["items"]["$ref"], "#",
        "the test needs a self-referencing schema: {}",
        contract.output_schema
    );
    let schema = output_schema(contract);
    assert_eq!(
        schema["properties"]["data"]["properties"]["children"]["items"]["$ref"],
        "#/properties/data"
    );
    assert!(schema["properties"]["data"].get("$id").is_none());
    let v = validator(&schema);
    let reg = Registry::builder()
        .tool(recursive::ListOutline)
        .build()
        .unwrap();
    let obs = reg
        .handle(
            r#"{"name":"list_outline","arguments":{"depth":3}}"#,
            &ToolContext::default(),
        )
        .await;
    assert!(obs.ok, "{obs:?}");
    let envelope = obs.to_value();
    assert_eq!(errors(&v, &envelope), Vec::<String>::new());
    let mut bad = envelope.clone();
    bad["data"]["children"][0]["children"][0]["text"] = json!(7);
    assert!(
        !v.is_valid(&bad),
        "a nested heading's text must still be checked"
    );
}

mod versions {
    use tool_contract::{tool, ToolArgs, ToolError};

    #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    #[serde(deny_unknown_fields)]
    pub struct LookupOrderArgs {
        /// The order number.
        #[schemars(length(min = 1, max = 40))]
        pub order_id: String,
    }

    /// Looks up one order. Use it when the user names an order number.
    #[tool(
        name = "lookup_order",
        version = "1.0.0",
        effect = "pure_read",
        timeout_ms = 100
    )]
    pub async fn lookup_order_v1(args: LookupOrderArgs) -> Result<String, ToolError> {
        Ok(args.order_id)
    }

    /// Looks up one order. Use it when the user names an order number.
    #[tool(
        name = "lookup_order",
        version = "2.0.0",
        effect = "pure_read",
        timeout_ms = 100
    )]
    pub async fn lookup_order_v2(args: LookupOrderArgs) -> Result<String, ToolError> {
        Ok(args.order_id)
    }
}

#[test]
fn each_name_is_listed_once_at_its_newest_version() {
    let reg = Registry::builder()
        .tool(versions::LookupOrderV1)
        .tool(versions::LookupOrderV2)
        .build()
        .unwrap();
    let list = tools_list(&reg);
    let tools = list["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["_meta"]["dev.tool-contract/version"], "2.0.0");
    // A non-object output (a string) still gets an object envelope.
    assert_eq!(tools[0]["outputSchema"]["type"], "object");
    assert_eq!(
        tools[0]["outputSchema"]["properties"]["data"]["type"],
        "string"
    );
}

/// Every `type` keyword in `schema` that is an array, by JSON pointer.
fn type_arrays(schema: &Value, at: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                if key == "type" && value.is_array() {
                    found.push(at.to_owned());
                }
                type_arrays(value, &format!("{at}/{key}"), found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                type_arrays(item, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[test]
fn the_envelope_part_of_the_output_schema_uses_single_types() {
    // `type: [..., "null"]` is legal but less portable (the MCP Inspector warns); the envelope
    // spells nullables as `anyOf`. The tool's own schema under `data` is left as generated.
    let reg = registry();
    for contract in reg.contracts() {
        let mut schema = output_schema(contract);
        schema["properties"]["data"] = json!({});
        let mut found = Vec::new();
        type_arrays(&schema, "", &mut found);
        assert_eq!(found, Vec::<String>::new(), "{}", contract.name);
    }
}
