use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// Tags to filter by.
    tags: Option<Vec<String>>,
}

fn main() {}
