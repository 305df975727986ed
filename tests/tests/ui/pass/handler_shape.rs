// The fixes: the first handler is `async fn`, the second returns `Result<bool, ToolError>` and
// wraps its value in `Ok(..)`.
use tool_contract::{tool, Tool, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the other service. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_other(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    assert_eq!(PingService::contract().output_schema["type"], "boolean");
    assert_eq!(PingOther::contract().output_schema["type"], "boolean");
    let ctx = ToolContext::default();
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert!(rt.block_on(PingService.call(PingArgs {}, &ctx)).unwrap());
    assert!(rt.block_on(PingOther.call(PingArgs {}, &ctx)).unwrap());
}
