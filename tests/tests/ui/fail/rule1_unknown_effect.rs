use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "read_only", timeout_ms = 100, timout_ms = 100)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let _ = PingService::contract();
}
