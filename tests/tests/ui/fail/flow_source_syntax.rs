use tool_contract::{tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct ReplyArgs {
    /// Who receives it.
    #[tool(flows_from("read_inbox.emails.sender", "read_inbox:emails/*/sender"))]
    #[schemars(length(max = 254))]
    to: String,
    /// The text.
    #[tool(flows_from)]
    #[schemars(length(max = 2000))]
    body: String,
}

/// Shows the user's account. Use it when the user asks about their account.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, confidential("iban"))]
async fn get_account(args: ReplyArgs) -> Result<bool, ToolError> {
    Ok(args.to.is_empty() && args.body.is_empty())
}

fn main() {}
