// The fix: a `///` doc comment on the handler; it becomes the contract's description.
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers.
///
/// Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    assert_eq!(
        PingService::contract().description,
        "Checks that the service answers.\n\nUse it before other calls; it returns nothing else."
    );
}
