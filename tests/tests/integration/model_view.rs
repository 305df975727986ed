//! Model-facing views of an output: the model sees a masked view, the host keeps the full,
//! validated data, and receipts keep only a digest of what was withheld.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_contract::evolve::{classify, ChangeClass, ChangeKind};
use tool_contract::export::{Dialect, Exporter};
use tool_contract::flow::Session;
use tool_contract::receipt::MemorySink;
use tool_contract::{tool, Registry, Tool, ToolArgs, ToolContext, ToolError};

#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct LookupArgs {
    /// The customer's account number.
    #[schemars(length(min = 3, max = 16))]
    pub account: String,
    /// Make the view break its own schema (a test switch).
    #[serde(default)]
    pub bad_view: bool,
    /// Make the full output break its schema (a test switch).
    #[serde(default)]
    pub bad_output: bool,
}

/// Everything the service knows.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Customer {
    /// Internal row id: never for the model.
    pub row_id: u64,
    /// The account number asked for.
    pub account: String,
    /// Full name.
    pub name: String,
    /// E-mail address: personal data.
    pub email: String,
    /// Lifetime value, in cents.
    #[schemars(range(min = 0))]
    pub lifetime_value_cents: i64,
}

/// What the model is shown.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CustomerView {
    /// Full name.
    pub name: String,
    /// The e-mail address, masked.
    #[schemars(length(max = 32))]
    pub email: String,
    /// Whether the customer is a high-value account (the exact figure stays with the host).
    pub high_value: bool,
}

fn masked(customer: &Customer) -> CustomerView {
    let (local, domain) = customer.email.split_once('@').unwrap_or(("", ""));
    let first: String = local.chars().take(1).collect();
    let email = if customer.name.starts_with("Bad") {
        "x".repeat(40)
    } else {
        format!("{first}***@{domain}")
    };
    CustomerView {
        name: customer.name.clone(),
        email,
        high_value: customer.lifetime_value_cents > 1_000_000,
    }
}

/// Looks up a customer by account number. Use it to greet or identify a customer; it changes
/// nothing.
#[tool(
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 100,
    model_view = masked
)]
pub async fn lookup_customer(args: LookupArgs) -> Result<Customer, ToolError> {
    Ok(Customer {
        row_id: 48_113,
        account: args.account,
        name: if args.bad_view {
            "Bad View".into()
        } else {
            "Kim Jiwoo".into()
        },
        email: "jiwoo.kim@example.org".into(),
        lifetime_value_cents: if args.bad_output { -1 } else { 2_500_000 },
    })
}

fn registry(sink: Option<Arc<MemorySink>>) -> Registry {
    let mut b = Registry::builder().tool(LookupCustomer);
    if let Some(sink) = sink {
        b = b.receipts(sink);
    }
    b.build().unwrap()
}

fn call(args: serde_json::Value) -> String {
    json!({ "name": "lookup_customer", "arguments": args }).to_string()
}

#[tokio::test]
async fn the_model_sees_the_view_and_the_host_the_full_output() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry(Some(Arc::clone(&sink)));
    let obs = reg
        .handle(&call(json!({"account": "A-1001"})), &ToolContext::default())
        .await;
    assert!(obs.ok, "{obs:?}");
    assert_eq!(
        obs.data_value().unwrap(),
        json!({"name": "Kim Jiwoo", "email": "j***@example.org", "high_value": true})
    );
    assert!(obs.has_withheld_data());
    let full = obs.host_data_value().unwrap();
    assert_eq!(full["email"], "jiwoo.kim@example.org");
    assert_eq!(full["row_id"], 48_113);

    // Nothing withheld reaches what the model reads.
    for text in [
        obs.to_value().to_string(),
        obs.to_prompt_block(),
        serde_json::to_string(&obs).unwrap(),
    ] {
        for secret in ["jiwoo.kim", "48113", "2500000"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
    }

    // The receipt keeps a digest of what was withheld, not the data.
    let receipt = sink.receipts().pop().unwrap();
    assert_eq!(
        receipt.withheld_output_sha256.as_deref(),
        Some(tool_contract::canonical::sha256(&full).as_str())
    );
    let text = serde_json::to_string(&receipt).unwrap();
    assert!(!text.contains("jiwoo.kim"), "{text}");
}

#[tokio::test]
async fn both_the_full_output_and_the_view_are_checked_against_their_schemas() {
    let sink = Arc::new(MemorySink::new());
    let reg = registry(Some(Arc::clone(&sink)));
    let ctx = ToolContext::default();

    let obs = reg
        .handle(&call(json!({"account": "A-1001", "bad_view": true})), &ctx)
        .await;
    assert_eq!(obs.code(), Some("OUTPUT_CONTRACT_VIOLATION"));
    assert!(!obs.has_withheld_data() && obs.host_data().is_none());
    let diagnostics = sink.receipts().pop().unwrap().diagnostics;
    assert!(
        diagnostics
            .iter()
            .any(|d| d.starts_with("model view: output violates `maxLength` at `/email`")),
        "{diagnostics:?}"
    );

    let obs = reg
        .handle(
            &call(json!({"account": "A-1001", "bad_output": true})),
            &ctx,
        )
        .await;
    assert_eq!(obs.code(), Some("OUTPUT_CONTRACT_VIOLATION"));
    let diagnostics = sink.receipts().pop().unwrap().diagnostics;
    assert!(
        diagnostics
            .iter()
            .any(|d| d.starts_with("output violates `minimum` at `/lifetime_value_cents`")),
        "{diagnostics:?}"
    );
}

#[test]
fn the_contract_carries_both_schemas_closed_and_exports_show_the_view() {
    let c = LookupCustomer::contract();
    let view = c.model_view_schema.as_ref().expect("a view schema");
    assert_eq!(
        view["additionalProperties"], false,
        "closed like the output"
    );
    assert!(view["properties"].get("high_value").is_some());
    assert!(view["properties"].get("row_id").is_none());
    assert!(c.output_schema["properties"].get("row_id").is_some());
    assert_eq!(c.model_output_schema(), view);

    // MCP's outputSchema describes what the model receives: the view, inside the envelope.
    let mcp = Exporter::new(Dialect::Mcp).export_contract(c).unwrap();
    let text = mcp["outputSchema"].to_string();
    assert!(
        text.contains("high_value") && !text.contains("row_id"),
        "{text}"
    );
    // The plain JSON Schema export keeps both.
    let plain = Exporter::new(Dialect::JsonSchema)
        .export_contract(c)
        .unwrap();
    assert!(plain["output_schema"]["properties"].get("row_id").is_some());
    assert_eq!(&plain["model_view_schema"], view);
}

#[test]
fn declaring_or_removing_a_view_is_classified() {
    let with_view = serde_json::to_value(LookupCustomer::contract()).unwrap();
    let mut without = with_view.clone();
    without.as_object_mut().unwrap().remove("model_view_schema");
    let added = classify(&without, &with_view);
    assert!(
        added
            .iter()
            .any(|c| c.kind == ChangeKind::ModelViewAdded && c.class == ChangeClass::Major),
        "{added:?}"
    );
    let removed = classify(&with_view, &without);
    assert!(
        removed
            .iter()
            .any(|c| c.kind == ChangeKind::ModelViewRemoved && c.class == ChangeClass::Security),
        "{removed:?}"
    );
    let mut narrowed = with_view.clone();
    narrowed["model_view_schema"]["properties"]
        .as_object_mut()
        .unwrap()
        .remove("high_value");
    narrowed["model_view_schema"]["required"] = json!(["name", "email"]);
    let changes = classify(&with_view, &narrowed);
    assert!(
        changes
            .iter()
            .any(|c| c.pointer.starts_with("/model_view_schema") && c.class == ChangeClass::Major),
        "a property the model read was removed: {changes:?}"
    );
}

#[tokio::test]
async fn flow_control_records_what_the_model_saw() {
    // The session holds the view: a value only the host saw was never "read" by the model.
    let reg = registry(None);
    let session = Session::new();
    let ctx = ToolContext::builder().session(session.clone()).build();
    let obs = reg.handle(&call(json!({"account": "A-1001"})), &ctx).await;
    assert!(obs.ok);
    let record = session.to_json();
    assert!(
        record.contains("j***@example.org"),
        "the view was recorded: {record}"
    );
    assert!(
        !record.contains("jiwoo.kim"),
        "the full address was never shown to the model: {record}"
    );
}

/// `DynTool::call_value` runs the handler alone: the host gets the full output, never the
/// view, and no output contract is applied (an output that breaks its schema still comes back).
#[tokio::test]
async fn call_value_gives_the_full_output_unchecked() {
    use tool_contract::DynTool;
    let ctx = ToolContext::default();
    let full = LookupCustomer
        .call_value(json!({"account": "A-1001"}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        full,
        json!({
            "row_id": 48_113,
            "account": "A-1001",
            "name": "Kim Jiwoo",
            "email": "jiwoo.kim@example.org",
            "lifetime_value_cents": 2_500_000
        })
    );
    let broken = LookupCustomer
        .call_value(
            json!({"account": "A-1001", "bad_output": true, "bad_view": true}),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(broken["lifetime_value_cents"], -1);
    assert_eq!(broken["name"], "Bad View");
    // Arguments that do not decode are refused as unreadable.
    let err = LookupCustomer
        .call_value(json!({"account": 7}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "ARGUMENTS_UNREADABLE");
}
