use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(_args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![])
}

fn main() {
    assert_eq!(SearchDocuments::contract().input_schema["additionalProperties"], false);
    assert!(serde_json::from_str::<SearchArgs>(r#"{"query": "ab", "tenant_id": "x"}"#).is_err());
}
