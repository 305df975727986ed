// Every fix the errors name, applied: the tenant comes from a `Tenant` extractor instead of
// `tenant_id`, `deny_unknown_fields`, a bounded `body`, a semantic version, a timeout in range,
// `approval`, a doc comment and a `verb_object` name. With those fixed, rule 3 (checked on the
// types, so not reported while the attribute had errors) asks for a key source: `idempotency(from)`.
use tool_contract::contract::{ApprovalPolicy, IdempotencySource};
use tool_contract::extract::Tenant;
use tool_contract::{tool, ErrorCategory, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SendArgs {
    /// Body.
    #[schemars(length(min = 1, max = 20000))]
    pub body: String,
}

/// Sends a message to the tenant's channel. It cannot be unsent: use it only when the user asked
/// to send this exact text. Every call needs a human's approval.
#[tool(
    name = "send_message",
    version = "1.2.0",
    effect = "irreversible_write",
    timeout_ms = 2000,
    approval,
    idempotency(from = [body])
)]
async fn send(_args: SendArgs, _tenant: Tenant) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let c = Send::contract();
    assert_eq!(c.name, "send_message");
    assert_eq!(c.version, "1.2.0");
    assert_eq!(c.timeout_ms, 2000);
    assert_eq!(c.approval, ApprovalPolicy::Always);
    assert!(c.description.starts_with("Sends a message"));
    assert_eq!(c.authorization.extractors, ["Tenant"]);
    assert_eq!(c.idempotency.source, IdempotencySource::Derived { fields: vec!["body".into()] });
    assert_eq!(c.input_schema["additionalProperties"], false);
    assert_eq!(c.input_schema["properties"]["body"]["maxLength"], 20000);
    assert!(c.input_schema["properties"].get("tenant_id").is_none());

    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let args = || SendArgs { body: "hello".into() };
    let ctx = ToolContext::builder().tenant("acme").build();
    assert!(rt.block_on(Send.call(args(), &ctx)).unwrap());
    let err = rt.block_on(Send.call(args(), &ToolContext::default())).unwrap_err();
    assert_eq!(err.category(), ErrorCategory::Unauthorized);
}
