use tool_contract::{tool, ReadOnlyToolset, ToolArgs, ToolError, Toolset};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct DocArgs {
    /// The document.
    #[tool(idempotency_key)]
    #[schemars(length(min = 1, max = 200))]
    pub source_id: String,
}

/// Reads a document. Use it when you know the id.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn read_document(_args: DocArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Fetches a web page. Use it for public pages only.
#[tool(version = "1.0.0", effect = "external_read", timeout_ms = 500)]
async fn fetch_page(_args: DocArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Deletes one document for good. Use it only when the user asks to delete a named document.
#[tool(version = "1.0.0", effect = "irreversible_write", timeout_ms = 1000, approval)]
async fn delete_document(_args: DocArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let reader = ReadOnlyToolset::new().with(ReadDocument).with(FetchPage);
    let writer: Toolset = Toolset::from(reader.clone()).with(DeleteDocument);
    assert_eq!(reader.len(), 2);
    assert_eq!(writer.len(), 3);
}
