// The opt-out every rule 5 error names: a security-looking field the model really chooses is
// marked `#[tool(model_supplied = "why")]` and stays an argument.
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct DraftArgs {
    /// What the reply is about.
    #[schemars(length(min = 2, max = 500))]
    pub topic: String,
    /// The persona the answer is written for; a style, not a privilege.
    #[tool(model_supplied = "a writing persona, never checked for access")]
    #[schemars(length(max = 32))]
    pub role: Option<String>,
}

/// Drafts a reply for the user to edit. Use it to propose text; it sends nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 500)]
async fn draft_reply(_args: DraftArgs) -> Result<String, ToolError> {
    Ok(String::new())
}

fn main() {
    let role = <DraftArgs as ToolArgs>::FIELDS.iter().find(|f| f.rust_name == "role").unwrap();
    assert_eq!(role.model_supplied, Some("a writing persona, never checked for access"));
    let s = &DraftReply::contract().input_schema["properties"];
    assert_eq!(s["role"]["maxLength"], 32);
}
