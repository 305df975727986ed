use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(name = "search_documents", version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search(_args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![])
}

/// Reads a revision. Use it when you know the policy id.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn get_policy_revision2(_args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![])
}

fn main() {
    assert_eq!(Search::contract().name, "search_documents");
    assert_eq!(<Search as Tool>::NAME, "search_documents");
    assert_eq!(GetPolicyRevision2::contract().name, "get_policy_revision2");
}
