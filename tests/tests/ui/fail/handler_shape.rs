use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the other service. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_other(_args: PingArgs) -> bool {
    true
}

fn main() {
    let _ = PingService::contract();
    let _ = PingOther::contract();
}
