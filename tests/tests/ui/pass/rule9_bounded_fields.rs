// Bounds beyond the twins of the rule 9 failures: a set with bounded items, the `unbounded`
// opt-out, and types that need no bound.
use std::collections::BTreeSet;
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Tags to filter by.
    #[schemars(length(max = 8), inner(length(max = 32)))]
    pub tags: Option<BTreeSet<String>>,
    /// Opaque cursor from the previous page.
    #[tool(unbounded = "the handler rejects cursors it did not issue")]
    pub cursor: Option<String>,
    /// Whether to include archived documents.
    pub archived: bool,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(_args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![])
}

fn main() {
    let s = &SearchDocuments::contract().input_schema["properties"];
    assert_eq!(s["tags"]["maxItems"], 8);
    assert_eq!(s["tags"]["items"]["maxLength"], 32);
    assert!(s["cursor"].get("maxLength").is_none());
    let cursor = <SearchArgs as ToolArgs>::FIELDS.iter().find(|f| f.rust_name == "cursor").unwrap();
    assert_eq!(cursor.unbounded, Some("the handler rejects cursors it did not issue"));
}
