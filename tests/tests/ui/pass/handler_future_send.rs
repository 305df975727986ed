// The fix: share with `Arc` (or drop the `Rc` before the `.await`), so the handler's future is
// `Send` and the tool runs on a multi-threaded runtime.
use std::sync::Arc;

use tool_contract::{tool, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
}

async fn backend(query: &str) -> Vec<String> {
    vec![query.to_owned()]
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn search_documents(args: SearchArgs) -> Result<Vec<String>, ToolError> {
    let query = Arc::new(args.query);
    let hits = backend(&query).await;
    Ok(hits)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .build()
        .unwrap();
    let args = SearchArgs { query: "refund".into() };
    // `spawn` takes only a `Send` future: what the failing twin's handler is not.
    let task = rt.spawn(async move {
        let ctx = ToolContext::default();
        SearchDocuments.call(args, &ctx).await
    });
    let out = rt.block_on(task).unwrap().unwrap();
    assert_eq!(out, ["refund"]);
}
