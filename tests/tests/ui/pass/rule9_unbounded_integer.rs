// The fix: `#[schemars(range(min = A, max = B))]` on the integer.
use tool_contract::schema::{tool_schema, Direction};
use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    pub query: String,
    /// How many results.
    #[schemars(range(min = 1, max = 20))]
    pub top_k: u32,
}

fn main() {
    let s = tool_schema::<SearchArgs>("search_documents", "1.0.0", Direction::Input);
    assert_eq!(s["properties"]["top_k"]["minimum"], 1);
    assert_eq!(s["properties"]["top_k"]["maximum"], 20);
}
