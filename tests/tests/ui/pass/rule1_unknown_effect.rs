// The fixes: a known effect class, and the misspelled `timout_ms` removed (`timeout_ms` is
// already set; renaming it would make a duplicate).
use tool_contract::{tool, Effect, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let c = PingService::contract();
    assert_eq!(c.effect, Effect::PureRead);
    assert_eq!(c.timeout_ms, 100);
}
