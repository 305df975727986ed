use tool_contract::extract::{Principal, Tenant};
use tool_contract::{tool, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
    /// The persona the answer is written for; a style, not a privilege.
    #[tool(model_supplied = "a writing persona, never checked for access")]
    #[schemars(length(max = 32))]
    role: Option<String>,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(args: SearchArgs, tenant: Tenant, who: Principal) -> Result<String, ToolError> {
    Ok(format!("{tenant}/{who}/{}", args.query))
}

fn main() {
    let ctx = ToolContext::builder().tenant("acme").principal("user:7").build();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let args = SearchArgs { query: "refund".into(), role: None };
    assert_eq!(rt.block_on(SearchDocuments.call(args, &ctx)).unwrap(), "acme/user:7/refund");
    assert_eq!(SearchDocuments::contract().authorization.extractors, ["Tenant", "Principal"]);
}
