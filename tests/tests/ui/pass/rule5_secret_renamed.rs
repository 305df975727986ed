// The fixes: the credential lives in host state (`State<T>`), the caller comes from the
// `Principal` extractor; neither is an argument any more.
use tool_contract::extract::{Principal, State};
use tool_contract::{tool, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FetchArgs {
    /// Page to fetch.
    #[schemars(length(min = 1, max = 2000))]
    pub url: String,
}

/// The upstream API credential, held by the host.
#[derive(Clone)]
pub struct UpstreamCredential(pub &'static str);

/// Fetches a page from the upstream API. Use it for pages the user named, never to crawl.
#[tool(version = "1.0.0", effect = "external_read", timeout_ms = 2000)]
async fn fetch_page(
    args: FetchArgs,
    principal: Principal,
    credential: State<UpstreamCredential>,
) -> Result<String, ToolError> {
    Ok(format!("{principal}:{}:{}", credential.0 .0, args.url))
}

fn main() {
    let c = FetchPage::contract();
    assert_eq!(c.authorization.extractors, ["Principal", "State<UpstreamCredential>"]);
    let props: Vec<&String> = c.input_schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(props, ["url"]);
    let ctx = ToolContext::builder().principal("user:7").state(UpstreamCredential("k-42")).build();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let out = rt.block_on(FetchPage.call(FetchArgs { url: "https://x.test/a".into() }, &ctx)).unwrap();
    assert_eq!(out, "user:7:k-42:https://x.test/a");
}
