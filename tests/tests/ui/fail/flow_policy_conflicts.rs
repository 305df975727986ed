use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    /// Who receives it.
    #[tool(trusted_only, accepts_untrusted = "the user may paste addresses")]
    #[schemars(length(max = 254))]
    to: String,
    /// A link to include.
    #[tool(url, accepts_untrusted = "links come from search results")]
    #[schemars(length(max = 2000))]
    link: String,
    /// The text.
    #[tool(accepts_untrusted = "")]
    #[schemars(length(max = 2000))]
    body: String,
}

fn main() {}
