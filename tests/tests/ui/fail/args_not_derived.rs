use tool_contract::{tool, Tool, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![args.query])
}

fn main() {
    let _ = SearchDocuments::contract();
}
