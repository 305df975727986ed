use tool_contract::contract::{DependencyChange, DEFAULT_MAX_OUTPUT_BYTES};
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {}

/// Searches the corpus. Use it to find passages; it changes nothing.
#[tool(
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 100,
    max_output_bytes = 65536,
    open_output = "passes the index's hit metadata through as the index writes it",
    depends_on(
        index = "retrieval-v5",
        corpus(version = "2026-11", on_change = "minor"),
        tokenizer(version = "t3", on_change = "patch")
    )
)]
async fn search_corpus(_args: SearchArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: SearchArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let c = SearchCorpus::contract();
    assert_eq!(c.max_output_bytes, 65536);
    assert!(c.open_output.is_some());
    assert_eq!(c.depends_on["index"].on_change, DependencyChange::Major);
    assert_eq!(c.depends_on["corpus"].on_change, DependencyChange::Minor);
    assert_eq!(c.depends_on["tokenizer"].on_change, DependencyChange::Patch);
    assert_eq!(PingService::contract().max_output_bytes, DEFAULT_MAX_OUTPUT_BYTES);
    assert!(PingService::contract().depends_on.is_empty());
}
