// The fix: the write tool joins a `Toolset<ReadWrite>` (the default `Toolset`).
use tool_contract::{tool, Effect, ReadWrite, ToolArgs, ToolError, Toolset};

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
    let writer = Toolset::<ReadWrite>::new().with(DeleteDocument);
    let effects: Vec<Effect> = writer.contracts().map(|c| c.effect).collect();
    assert_eq!(effects, [Effect::IrreversibleWrite]);
    let names: Vec<&str> = writer.contracts().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["delete_document"]);
}
