// A tool with every optional key, callable as written: the handler stays a plain async fn.
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, capabilities("ops:ping"), policy_version = "p-1", crate = "::tool_contract")]
pub async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    assert!(rt.block_on(ping_service(PingArgs {})).unwrap());
    assert_eq!(PingService::contract().authorization.capabilities, ["ops:ping"]);
    assert_eq!(PingService::contract().policy_version.as_deref(), Some("p-1"));
}
