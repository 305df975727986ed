use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct TicketArgs {
    /// One-line summary.
    #[schemars(length(min = 5, max = 120))]
    title: String,
}

/// Creates a draft ticket a human files later. Use it to report problems, not to notify anyone.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 1000)]
async fn create_draft_ticket(_args: TicketArgs) -> Result<String, ToolError> {
    Ok("T-1".into())
}

fn main() {
    let _ = CreateDraftTicket::contract();
}
