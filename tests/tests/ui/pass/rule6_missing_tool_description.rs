use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
}

/// Finds internal documents.
///
/// Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(_args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![])
}

fn main() {
    let c = SearchDocuments::contract();
    assert_eq!(c.description, "Finds internal documents.\n\nUse it for internal documents only, never for the web.");
    assert_eq!(c.input_schema["properties"]["query"]["description"], "What to look for.");
}
