use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {}

/// Searches the corpus. Use it to find passages; it changes nothing.
#[tool(
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 100,
    depends_on(
        index = "retrieval-v5",
        index = "retrieval-v6",
        corpus(on_change = "minor"),
        model(version = "r1", on_change = "sometimes"),
        embeddings = ""
    )
)]
async fn search_corpus(_args: SearchArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Searches the archive. Use it for old passages; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, depends_on = "retrieval-v5")]
async fn search_archive(_args: SearchArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let _ = SearchCorpus::contract();
    let _ = SearchArchive::contract();
}
