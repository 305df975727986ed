// The fix: implement `ApprovalCondition` for the args, so `approval = "conditional"` can decide
// per call. A condition needs something to decide on, so the args gain an `urgent` flag.
use tool_contract::contract::ApprovalPolicy;
use tool_contract::{tool, ApprovalCondition, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct TicketArgs {
    /// Request id; repeating it never creates a second ticket.
    #[tool(idempotency_key)]
    #[schemars(length(min = 8, max = 64))]
    pub request_id: String,
    /// Whether it pages the on-call engineer.
    pub urgent: bool,
}

impl ApprovalCondition for TicketArgs {
    fn requires_approval(&self, _ctx: &ToolContext) -> bool {
        self.urgent
    }
}

/// Creates a draft ticket a human files later. Use it to report problems, not to notify anyone.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 1000, approval = "conditional")]
async fn create_draft_ticket(_args: TicketArgs) -> Result<String, ToolError> {
    Ok("T-1".into())
}

fn main() {
    assert_eq!(CreateDraftTicket::contract().approval, ApprovalPolicy::Conditional);
    let ctx = ToolContext::default();
    let calm = TicketArgs { request_id: "req-0001".into(), urgent: false };
    let urgent = TicketArgs { request_id: "req-0002".into(), urgent: true };
    assert!(!CreateDraftTicket::requires_approval(&calm, &ctx));
    assert!(CreateDraftTicket::requires_approval(&urgent, &ctx));
}
