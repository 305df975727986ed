// The fix: a `///` doc comment on the field; it becomes the property's description.
use tool_contract::schema::{tool_schema, Direction};
use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for, in the user's words.
    #[schemars(length(min = 2, max = 500))]
    pub query: String,
}

fn main() {
    let s = tool_schema::<SearchArgs>("search_documents", "1.0.0", Direction::Input);
    assert_eq!(s["properties"]["query"]["description"], "What to look for, in the user's words.");
}
