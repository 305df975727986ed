// A handler's future must be `Send`: the pipeline runs calls on a multi-threaded runtime.
// Here an `Rc` is held across an `.await`; the error points at that await.
use std::rc::Rc;

use tool_contract::{tool, ToolArgs, ToolError};

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
    let query = Rc::new(args.query);
    let hits = backend(&query).await;
    Ok(hits)
}

fn main() {}
