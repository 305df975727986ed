// The fix: the three required keys. Any semantic version works, pre-releases too.
use tool_contract::{tool, Effect, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(name = "ping_service", effect = "external_read", version = "1.2.0-rc.1", timeout_ms = 2000)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let c = PingService::contract();
    assert_eq!(c.effect, Effect::ExternalRead);
    assert_eq!(c.version, "1.2.0-rc.1");
    assert_eq!(c.timeout_ms, 2000);
}
