// The fixes: a `major.minor.patch` version and a timeout within 1..=600000 (here the maximum).
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.2.0", effect = "pure_read", timeout_ms = 600000)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let c = PingService::contract();
    assert_eq!(c.version, "1.2.0");
    assert_eq!(<PingService as Tool>::VERSION, "1.2.0");
    assert_eq!(c.timeout_ms, 600_000);
    assert_eq!(c.input_schema["$id"], "tool://ping_service/input/1.2.0");
}
