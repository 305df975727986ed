//! Output contracts that catch drift: closed output schemas (`open_output` to opt out), the
//! output size cap, named dependency versions, and pins by contract digest.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tool_contract::contract::{DependencyChange, DEFAULT_MAX_OUTPUT_BYTES};
use tool_contract::lock::Lock;
use tool_contract::{tool, Registry, Tool, ToolArgs, ToolContext, ToolError};

#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// Whether the output carries the field its schema does not declare.
    pub drift: bool,
}

/// A status whose `debug` field was added to the type without reaching its schema: the drift a
/// closed output schema exists to catch.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Status {
    /// The status id.
    pub id: String,
    #[schemars(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debug: Option<String>,
}

fn status(args: &StatusArgs) -> Status {
    Status {
        id: "s-1".into(),
        debug: args.drift.then(|| "internal-host-42".into()),
    }
}

/// Reads the service status. Use it to check the service; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
pub async fn read_status(args: StatusArgs) -> Result<Status, ToolError> {
    Ok(status(&args))
}

/// Reads the raw upstream status. Use it for diagnostics; it changes nothing.
#[tool(
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 100,
    open_output = "passes the upstream status through; its fields are the upstream's"
)]
pub async fn read_raw_status(args: StatusArgs) -> Result<Status, ToolError> {
    Ok(status(&args))
}

/// A hit or a miss, tagged by `kind`: flattened into [`Answer`], a composed schema.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// Found.
    Hit {
        /// The document.
        id: String,
    },
    /// Not found.
    Miss {
        /// Why.
        reason: String,
    },
}

/// An answer: the query and its outcome.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Answer {
    /// The query.
    pub query: String,
    #[serde(flatten)]
    pub outcome: Outcome,
    #[schemars(skip)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub debug: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct AnswerArgs {
    /// Whether it is found.
    pub hit: bool,
    /// Whether the output carries the field its schema does not declare.
    pub drift: bool,
}

/// Looks a query up. Use it to answer; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
pub async fn lookup_answer(args: AnswerArgs) -> Result<Answer, ToolError> {
    let outcome = if args.hit {
        Outcome::Hit { id: "d-1".into() }
    } else {
        Outcome::Miss {
            reason: "no match".into(),
        }
    };
    Ok(Answer {
        query: "refund".into(),
        outcome,
        debug: args.drift.then(|| "internal".into()),
    })
}

#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct TextArgs {
    /// How many `x` to write.
    #[schemars(range(max = 4_000_000))]
    pub len: u32,
}

/// Writes a text of `x`. Use it to test output caps; it changes nothing.
#[tool(
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 1000,
    max_output_bytes = 64
)]
pub async fn write_text(args: TextArgs) -> Result<String, ToolError> {
    Ok("x".repeat(args.len as usize))
}

/// Writes a text of `x` under the default cap. Use it to test output caps; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 1000)]
pub async fn write_long_text(args: TextArgs) -> Result<String, ToolError> {
    Ok("x".repeat(args.len as usize))
}

/// Searches the corpus. Use it to find passages; it changes nothing.
#[tool(
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 100,
    depends_on(
        index = "retrieval-v5",
        corpus(version = "2026-11", on_change = "minor")
    )
)]
pub async fn search_corpus(args: StatusArgs) -> Result<Status, ToolError> {
    Ok(status(&args))
}

fn registry() -> Registry {
    Registry::builder()
        .tool(ReadStatus)
        .tool(ReadRawStatus)
        .tool(LookupAnswer)
        .tool(WriteText)
        .tool(WriteLongText)
        .tool(SearchCorpus)
        .build()
        .unwrap()
}

async fn call(name: &str, args: Value) -> tool_contract::Observation {
    let raw = json!({"name": name, "arguments": args}).to_string();
    registry().handle(&raw, &ToolContext::default()).await
}

#[test]
fn output_schemas_are_closed_unless_opened_with_a_reason() {
    let closed = &ReadStatus::contract().output_schema;
    assert_eq!(closed["additionalProperties"], json!(false));
    assert_eq!(ReadStatus::contract().open_output, None);
    let open = ReadRawStatus::contract();
    assert!(open.output_schema.get("additionalProperties").is_none());
    assert_eq!(
        open.open_output.as_deref(),
        Some("passes the upstream status through; its fields are the upstream's")
    );
    // The input side is the args type's own: not rewritten.
    assert_eq!(
        ReadRawStatus::contract().input_schema,
        ReadStatus::contract()
            .input_schema
            .as_object()
            .map(|m| {
                let mut m = m.clone();
                m.insert("$id".into(), json!("tool://read_raw_status/input/1.0.0"));
                Value::Object(m)
            })
            .unwrap()
    );
}

#[tokio::test]
async fn an_undeclared_output_property_is_withheld() {
    let clean = call("read_status", json!({"drift": false})).await;
    assert!(clean.ok, "{clean:?}");
    assert_eq!(clean.data_value().unwrap(), json!({"id": "s-1"}));

    let drifted = call("read_status", json!({"drift": true})).await;
    assert_eq!(drifted.code(), Some("OUTPUT_CONTRACT_VIOLATION"));
    assert!(drifted.data.is_none());
    assert!(!serde_json::to_string(&drifted)
        .unwrap()
        .contains("internal-host-42"));
}

#[tokio::test]
async fn an_opened_output_passes_undeclared_properties() {
    let obs = call("read_raw_status", json!({"drift": true})).await;
    assert!(obs.ok, "{obs:?}");
    assert_eq!(
        obs.data_value().unwrap(),
        json!({"id": "s-1", "debug": "internal-host-42"})
    );
}

#[tokio::test]
async fn a_composed_output_stays_valid_and_closed() {
    let schema = &LookupAnswer::contract().output_schema;
    // Composed (a flattened tagged enum): closed by `unevaluatedProperties`, so the variants'
    // properties still count as declared.
    assert_eq!(schema["unevaluatedProperties"], json!(false), "{schema:#}");
    assert!(schema.get("additionalProperties").is_none(), "{schema:#}");

    let hit = call("lookup_answer", json!({"hit": true, "drift": false})).await;
    assert_eq!(
        hit.data_value().unwrap(),
        json!({"query": "refund", "kind": "hit", "id": "d-1"})
    );
    let miss = call("lookup_answer", json!({"hit": false, "drift": false})).await;
    assert_eq!(
        miss.data_value().unwrap(),
        json!({"query": "refund", "kind": "miss", "reason": "no match"})
    );
    let drifted = call("lookup_answer", json!({"hit": true, "drift": true})).await;
    assert_eq!(drifted.code(), Some("OUTPUT_CONTRACT_VIOLATION"));
}

#[test]
fn closing_keeps_an_option_and_a_map_meaningful() {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "maybe": {"anyOf": [{"type": "object", "properties": {"a": {"type": "integer"}}}, {"type": "null"}]},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "not_this": {"not": {"type": "object", "properties": {"b": {}}}},
        },
    });
    tool_contract::schema::close_output(&mut schema);
    assert_eq!(schema["additionalProperties"], json!(false));
    let maybe = &schema["properties"]["maybe"];
    assert_eq!(maybe["unevaluatedProperties"], json!(false));
    assert!(maybe["anyOf"][0].get("additionalProperties").is_none());
    let labels = &schema["properties"]["labels"];
    assert_eq!(labels["additionalProperties"], json!({"type": "string"}));
    assert!(schema["properties"]["not_this"]["not"]
        .get("additionalProperties")
        .is_none());
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    assert!(validator.is_valid(&json!({"maybe": {"a": 1}, "labels": {"k": "v"}})));
    assert!(validator.is_valid(&json!({"maybe": null})));
    assert!(!validator.is_valid(&json!({"maybe": {"a": 1, "z": 2}})));
    assert!(!validator.is_valid(&json!({"extra": 1})));
}

#[tokio::test]
async fn an_output_at_its_cap_passes_and_one_byte_over_is_withheld() {
    assert_eq!(WriteText::contract().max_output_bytes, 64);
    // A JSON string of 62 `x` is 64 bytes with its quotes.
    let at = call("write_text", json!({"len": 62})).await;
    assert!(at.ok, "{at:?}");
    assert_eq!(at.data_value().unwrap(), json!("x".repeat(62)));

    let over = call("write_text", json!({"len": 63})).await;
    assert_eq!(over.code(), Some("OUTPUT_CONTRACT_VIOLATION"));
    assert!(over.data.is_none());
    let err = over.error.as_ref().unwrap();
    assert_eq!(err.safe_details()["reason"], json!("output_too_large"));
    assert_eq!(err.safe_details()["max_output_bytes"], json!(64));
    assert!(!serde_json::to_string(&over).unwrap().contains("xxxx"));
}

#[tokio::test]
async fn the_default_cap_is_one_mebibyte() {
    assert_eq!(DEFAULT_MAX_OUTPUT_BYTES, 1024 * 1024);
    assert_eq!(
        WriteLongText::contract().max_output_bytes,
        DEFAULT_MAX_OUTPUT_BYTES
    );
    let cap = DEFAULT_MAX_OUTPUT_BYTES as u32;
    let at = call("write_long_text", json!({"len": cap - 2})).await;
    assert!(at.ok, "{:?}", at.error);
    let over = call("write_long_text", json!({"len": cap - 1})).await;
    assert_eq!(over.code(), Some("OUTPUT_CONTRACT_VIOLATION"));
    assert_eq!(
        over.error.as_ref().unwrap().safe_details()["max_output_bytes"],
        json!(DEFAULT_MAX_OUTPUT_BYTES)
    );
}

#[test]
fn dependencies_are_in_the_contract_fingerprint_and_lock() {
    let c = SearchCorpus::contract();
    assert_eq!(c.depends_on.len(), 2);
    assert_eq!(c.depends_on["index"].version, "retrieval-v5");
    assert_eq!(c.depends_on["index"].on_change, DependencyChange::Major);
    assert_eq!(c.depends_on["corpus"].version, "2026-11");
    assert_eq!(c.depends_on["corpus"].on_change, DependencyChange::Minor);
    assert_eq!(c.fingerprint.dependencies["index"], "retrieval-v5");
    assert_eq!(c.fingerprint.dependencies["corpus"], "2026-11");
    assert!(ReadStatus::contract().depends_on.is_empty());

    let lock = Lock::from_contracts([c]);
    let entry = &lock.tools[0];
    assert_eq!(
        entry.contract.as_ref().unwrap()["depends_on"],
        json!({"corpus": {"version": "2026-11", "on_change": "minor"}, "index": {"version": "retrieval-v5"}})
    );
    assert!(entry.fingerprint.parts.contains_key("depends_on"));

    // The same tool on a new index version, as a lock would see it: major.
    let mut moved = entry.contract.clone().unwrap();
    moved["depends_on"]["index"]["version"] = json!("retrieval-v6");
    let changes = tool_contract::evolve::classify(entry.contract.as_ref().unwrap(), &moved);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].class, tool_contract::evolve::ChangeClass::Major);
    assert_eq!(changes[0].pointer, "/depends_on/index");
}

/// A recursive output type keeps a `$ref` into `$defs`: the definition is closed too, so drift
/// deep in the tree is caught.
#[test]
fn a_recursive_output_is_closed_at_every_depth() {
    #[derive(Serialize, JsonSchema)]
    struct Node {
        /// The node's name.
        name: String,
        /// Its children.
        children: Vec<Node>,
    }
    let mut schema = tool_contract::schema::tool_schema::<Node>(
        "read_tree",
        "1.0.0",
        tool_contract::schema::Direction::Output,
    );
    tool_contract::schema::close_output(&mut schema);
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    let leaf = json!({"name": "b", "children": []});
    assert!(validator.is_valid(&json!({"name": "a", "children": [leaf]})));
    let deep_drift = json!({"name": "a", "children": [{"name": "b", "children": [], "x": 1}]});
    assert!(!validator.is_valid(&deep_drift), "{schema:#}");
}
