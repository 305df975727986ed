// Key sources name the fields as the model sends them: a serde `rename` on the key field, and
// `rename_all` for the fields of `idempotency(from = [..])`.
use tool_contract::contract::IdempotencySource;
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct TicketArgs {
    /// Request id; repeating it never creates a second ticket.
    #[tool(idempotency_key)]
    #[serde(rename = "requestId")]
    #[schemars(length(min = 8, max = 64))]
    pub request_id: String,
}

/// Creates a draft ticket a human files later. Use it to report problems, not to notify anyone.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 1000)]
async fn create_draft_ticket(_args: TicketArgs) -> Result<String, ToolError> {
    Ok("T-1".into())
}

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SendEmailArgs {
    /// Recipient.
    #[schemars(length(min = 3, max = 254))]
    pub to_address: String,
    /// Subject line.
    #[schemars(length(min = 1, max = 200))]
    pub subject: String,
}

/// Sends an e-mail; it cannot be unsent. Use it only when the user asked to send this message.
#[tool(version = "1.2.0", effect = "irreversible_write", timeout_ms = 2000, approval, idempotency(from = [to_address, subject]))]
async fn send_email(_args: SendEmailArgs) -> Result<String, ToolError> {
    Ok("sent".into())
}

fn main() {
    assert_eq!(
        CreateDraftTicket::contract().idempotency.source,
        IdempotencySource::Field { field: "requestId".into() }
    );
    assert_eq!(
        SendEmail::contract().idempotency.source,
        IdempotencySource::Derived { fields: vec!["toAddress".into(), "subject".into()] }
    );
}
