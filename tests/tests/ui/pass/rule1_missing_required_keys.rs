use tool_contract::{tool, Effect, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.2.0-rc.1", effect = "external_read", timeout_ms = 600000)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let c = PingService::contract();
    assert_eq!(c.version, "1.2.0-rc.1");
    assert_eq!(c.effect, Effect::ExternalRead);
    assert_eq!(c.timeout_ms, 600_000);
}
