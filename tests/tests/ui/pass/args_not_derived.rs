// The fix: `#[derive(ToolArgs)]` on the args struct. The derive then checks the argument rules,
// so the field also gets the doc comment (rule 6) and the bound (rule 9) it asks for.
use tool_contract::{tool, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(args: SearchArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![args.query])
}

fn main() {
    let fields: Vec<&str> = <SearchArgs as ToolArgs>::FIELDS.iter().map(|f| f.wire_name).collect();
    assert_eq!(fields, ["query"]);
    let c = SearchDocuments::contract();
    assert_eq!(c.input_schema["required"], serde_json::json!(["query"]));
    assert_eq!(c.input_schema["properties"]["query"]["maxLength"], 500);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let args = SearchArgs { query: "refund".into() };
    let out = rt.block_on(SearchDocuments.call(args, &ToolContext::default())).unwrap();
    assert_eq!(out, ["refund"]);
}
