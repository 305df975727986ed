// The fix: take `key: IdempotencyKey` and send it downstream, so the retries are deduplicated.
use tool_contract::extract::IdempotencyKey;
use tool_contract::{tool, ErrorCategory, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SendEmailArgs {
    /// Recipient.
    #[schemars(length(min = 3, max = 254))]
    pub to: String,
}

/// Sends an e-mail; it cannot be unsent. Use it only when the user asked to send this message.
#[tool(
    version = "1.2.0",
    effect = "irreversible_write",
    timeout_ms = 2000,
    approval,
    retry(max_attempts = 3),
    idempotency(from = [to])
)]
async fn send_email(_args: SendEmailArgs, key: IdempotencyKey) -> Result<String, ToolError> {
    // The downstream mail API deduplicates on this key, which makes the retries safe.
    Ok(format!("sent:{key}"))
}

fn main() {
    let c = SendEmail::contract();
    assert_eq!(c.retry.max_attempts, 3);
    assert_eq!(c.authorization.extractors, ["IdempotencyKey"]);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let args = || SendEmailArgs { to: "a@b.c".into() };
    let ctx = ToolContext::builder().idempotency_key(IdempotencyKey::new("k-1").unwrap()).build();
    assert_eq!(rt.block_on(SendEmail.call(args(), &ctx)).unwrap(), "sent:k-1");
    let err = rt.block_on(SendEmail.call(args(), &ToolContext::default())).unwrap_err();
    assert_eq!(err.category(), ErrorCategory::Internal);
}
