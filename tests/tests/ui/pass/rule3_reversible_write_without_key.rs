// The fix: the host supplies the key, `idempotency(host)`.
use tool_contract::contract::IdempotencySource;
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct TicketArgs {
    /// One-line summary.
    #[schemars(length(min = 5, max = 120))]
    pub title: String,
}

/// Creates a draft ticket a human files later. Use it to report problems, not to notify anyone.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 1000, idempotency(host))]
async fn create_draft_ticket(_args: TicketArgs) -> Result<String, ToolError> {
    Ok("T-1".into())
}

fn main() {
    let i = &CreateDraftTicket::contract().idempotency;
    assert_eq!(i.source, IdempotencySource::Host);
    assert!(i.required);
}
