// The fix: derive the key from the args with `idempotency(from = [..])`.
use tool_contract::contract::IdempotencySource;
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SendEmailArgs {
    /// Recipient.
    #[schemars(length(min = 3, max = 254))]
    pub to: String,
}

/// Sends an e-mail; it cannot be unsent. Use it only when the user asked to send this message.
#[tool(version = "1.2.0", effect = "irreversible_write", timeout_ms = 2000, approval, idempotency(from = [to]))]
async fn send_email(_args: SendEmailArgs) -> Result<String, ToolError> {
    Ok("sent".into())
}

fn main() {
    let i = &SendEmail::contract().idempotency;
    assert_eq!(i.source, IdempotencySource::Derived { fields: vec!["to".into()] });
    assert!(i.required);
}
