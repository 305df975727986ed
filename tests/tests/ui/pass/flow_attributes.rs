use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct ReplyArgs {
    /// Who receives it: a sender of a mail the user read.
    #[tool(flows_from("read_inbox:/emails/*/sender"))]
    #[schemars(length(max = 254))]
    to: String,
    /// The account to charge: only one the user gave.
    #[tool(trusted_only)]
    #[schemars(length(max = 64))]
    account: String,
    /// A link to include.
    #[tool(url)]
    #[schemars(length(max = 2000))]
    link: String,
    /// The text, which may quote the mail it answers.
    #[tool(accepts_untrusted = "a reply quotes the mail it answers")]
    #[schemars(length(max = 2000))]
    body: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sent {
    /// The account charged.
    account: String,
}

/// Sends a reply and charges the account. Use it only when the user asked to answer a mail.
#[tool(
    version = "1.0.0",
    effect = "reversible_write",
    timeout_ms = 100,
    idempotency(from = [to, body]),
    confidential("/account")
)]
async fn send_reply(args: ReplyArgs) -> Result<Sent, ToolError> {
    let _ = (args.to, args.link, args.body);
    Ok(Sent { account: args.account })
}

fn main() {
    let flow = &SendReply::contract().flow;
    assert_eq!(flow.confidential, ["/account"]);
    assert_eq!(flow.fields["to"].flows_from, ["read_inbox:/emails/*/sender"]);
    assert!(flow.fields["link"].url_or_command);
    assert!(!flow.fields.contains_key("missing"));
}
