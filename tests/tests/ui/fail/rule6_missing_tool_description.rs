use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let _ = PingService::contract();
}
