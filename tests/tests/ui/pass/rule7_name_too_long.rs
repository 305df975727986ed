// The fix: a name of at most 64 characters (here exactly 64), set with `name = "..."`.
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    pub query: String,
}

/// Finds documents. Use it for internal documents only, never for the web.
#[tool(
    name = "search_documents_in_each_internal_archive_including_the_old_ones",
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 500
)]
async fn search_documents_in_every_internal_archive_including_the_old_ones(
    _args: SearchArgs,
) -> Result<Vec<String>, ToolError> {
    Ok(vec![])
}

fn main() {
    let name = &SearchDocumentsInEveryInternalArchiveIncludingTheOldOnes::contract().name;
    assert_eq!(name, "search_documents_in_each_internal_archive_including_the_old_ones");
    assert_eq!(name.len(), 64);
}
