// The fix: `#[schemars(length(max = N))]` on the string and on the list.
use tool_contract::schema::{tool_schema, Direction};
use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for.
    #[schemars(length(max = 500))]
    pub query: String,
    /// Tags to filter by.
    #[schemars(length(max = 8))]
    pub tags: Option<Vec<String>>,
}

fn main() {
    let s = tool_schema::<SearchArgs>("search_documents", "1.0.0", Direction::Input);
    assert_eq!(s["properties"]["query"]["maxLength"], 500);
    assert_eq!(s["properties"]["tags"]["maxItems"], 8);
}
