use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FetchArgs {
    /// Page to fetch.
    #[schemars(length(min = 1, max = 2000))]
    url: String,
    /// Credential for the upstream API.
    #[schemars(length(max = 128))]
    #[serde(rename = "apiKey")]
    upstream_credential: String,
    /// The calling user.
    #[schemars(length(max = 64))]
    user_id: String,
}

fn main() {}
