use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    query: String,
}

fn main() {}
