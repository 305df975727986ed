use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
    /// Whose documents to search.
    #[schemars(length(max = 64))]
    tenant_id: String,
}

fn main() {}
