// The fix: the tenant comes from the trusted context through the `Tenant` extractor.
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
async fn search_documents(_args: SearchArgs, tenant: Tenant) -> Result<Vec<String>, ToolError> {
    Ok(vec![tenant.to_string()])
}

fn main() {
    assert_eq!(SearchDocuments::contract().authorization.extractors, ["Tenant"]);
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let args = || SearchArgs { query: "refund".into() };
    let ctx = ToolContext::builder().tenant("acme").build();
    assert_eq!(rt.block_on(SearchDocuments.call(args(), &ctx)).unwrap(), ["acme"]);
    let err = rt.block_on(SearchDocuments.call(args(), &ToolContext::default())).unwrap_err();
    assert_eq!(err.category(), ErrorCategory::Unauthorized);
}
