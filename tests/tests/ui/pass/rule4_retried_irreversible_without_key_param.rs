use tool_contract::extract::IdempotencyKey;
use tool_contract::{tool, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SendEmailArgs {
    /// Recipient.
    #[schemars(length(min = 3, max = 254))]
    to: String,
}

/// Sends an e-mail; it cannot be unsent. Use it only when the user asked to send this message.
#[tool(
    version = "1.2.0",
    effect = "irreversible_write",
    timeout_ms = 2000,
    approval,
    retry(max_attempts = 3, backoff_ms = 100, max_backoff_ms = 1000),
    idempotency(from = [to])
)]
async fn send_email(args: SendEmailArgs, key: IdempotencyKey) -> Result<String, ToolError> {
    // The downstream mail API deduplicates on this key, which makes the retries safe.
    Ok(format!("{}:{}", args.to, key))
}

fn main() {
    assert_eq!(SendEmail::contract().retry.max_attempts, 3);
    let ctx = ToolContext::builder().idempotency_key(IdempotencyKey::new("k-1").unwrap()).build();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let out = rt.block_on(SendEmail.call(SendEmailArgs { to: "a@b.c".into() }, &ctx)).unwrap();
    assert_eq!(out, "a@b.c:k-1");
}
