// The fix: a `verb_object` name, set with `name = "..."` (the fn keeps its name).
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    pub query: String,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(name = "search_documents", version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search(_args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![])
}

fn main() {
    assert_eq!(Search::contract().name, "search_documents");
    assert_eq!(<Search as Tool>::NAME, "search_documents");
    assert_eq!(Search::contract().input_schema["$id"], "tool://search_documents/input/1.0.0");
}
