// The fix: `subject`, the field's real name.
use tool_contract::contract::IdempotencySource;
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SendEmailArgs {
    /// Recipient.
    #[schemars(length(min = 3, max = 254))]
    pub to: String,
    /// Subject line.
    #[schemars(length(min = 1, max = 200))]
    pub subject: String,
}

/// Sends an e-mail; it cannot be unsent. Use it only when the user asked to send this message.
#[tool(
    version = "1.2.0",
    effect = "irreversible_write",
    timeout_ms = 2000,
    approval,
    idempotency(from = [to, subject])
)]
async fn send_email(_args: SendEmailArgs) -> Result<String, ToolError> {
    Ok("sent".into())
}

fn main() {
    assert_eq!(
        SendEmail::contract().idempotency.source,
        IdempotencySource::Derived { fields: vec!["to".into(), "subject".into()] }
    );
}
