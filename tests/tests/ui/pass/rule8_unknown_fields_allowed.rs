// The fix: `#[serde(deny_unknown_fields)]`, so the schema says `additionalProperties: false` and
// deserialization refuses fields the model invents.
use tool_contract::schema::{tool_schema, Direction};
use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What to look for.
    #[schemars(length(min = 2, max = 500))]
    pub query: String,
}

fn main() {
    let s = tool_schema::<SearchArgs>("search_documents", "1.0.0", Direction::Input);
    assert_eq!(s["additionalProperties"], false);
    assert!(serde_json::from_str::<SearchArgs>(r#"{"query": "ab"}"#).is_ok());
    assert!(serde_json::from_str::<SearchArgs>(r#"{"query": "ab", "tenant_id": "x"}"#).is_err());
}
