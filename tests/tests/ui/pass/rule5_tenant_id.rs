// The fix: no `tenant_id` argument; the handler takes `tenant: Tenant` from the trusted context.
use tool_contract::extract::Tenant;
use tool_contract::{tool, ErrorCategory, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    pub query: String,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(args: SearchArgs, tenant: Tenant) -> Result<String, ToolError> {
    Ok(format!("{tenant}/{}", args.query))
}

fn main() {
    let c = SearchDocuments::contract();
    assert_eq!(c.authorization.extractors, ["Tenant"]);
    assert_eq!(c.input_schema["properties"].as_object().unwrap().len(), 1);
    assert!(c.input_schema["properties"].get("tenant_id").is_none());
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let args = || SearchArgs { query: "refund".into() };
    let ctx = ToolContext::builder().tenant("acme").build();
    assert_eq!(rt.block_on(SearchDocuments.call(args(), &ctx)).unwrap(), "acme/refund");
    let err = rt.block_on(SearchDocuments.call(args(), &ToolContext::default())).unwrap_err();
    assert_eq!(err.category(), ErrorCategory::Unauthorized);
}
