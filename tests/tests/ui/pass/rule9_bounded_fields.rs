use std::collections::BTreeSet;
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
    /// Tags to filter by.
    #[schemars(length(max = 8), inner(length(max = 32)))]
    tags: Option<BTreeSet<String>>,
    /// How many results.
    #[schemars(range(min = 1, max = 20))]
    top_k: u32,
    /// Opaque cursor from the previous page.
    #[tool(unbounded = "the handler rejects cursors it did not issue")]
    cursor: Option<String>,
    /// Whether to include archived documents.
    archived: bool,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(_args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![])
}

fn main() {
    let s = &SearchDocuments::contract().input_schema["properties"];
    assert_eq!(s["top_k"]["maximum"], 20);
    assert_eq!(s["tags"]["maxItems"], 8);
    assert_eq!(s["query"]["maxLength"], 500);
}
