// The fix: `approval` on the irreversible write.
use tool_contract::contract::ApprovalPolicy;
use tool_contract::{tool, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// The document to delete.
    #[tool(idempotency_key)]
    #[schemars(length(min = 1, max = 200))]
    pub source_id: String,
}

/// Deletes one document for good. Use it only when the user asks to delete a named document.
#[tool(version = "1.0.0", effect = "irreversible_write", timeout_ms = 1000, approval)]
async fn delete_document(_args: DeleteArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    assert_eq!(DeleteDocument::contract().approval, ApprovalPolicy::Always);
    let args = DeleteArgs { source_id: "policy/refund".into() };
    assert!(DeleteDocument::requires_approval(&args, &ToolContext::default()));
}
