use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    #[schemars(length(min = 2, max = 500))]
    query: String,
}

fn main() {}
