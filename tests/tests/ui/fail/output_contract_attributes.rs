use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, max_output_bytes = 0)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Reads the raw status. Use it for diagnostics; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, open_output = " ")]
async fn read_raw_status(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Reads the status. Use it to check the service; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, max_output_bytes = "1MiB")]
async fn read_status(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let _ = PingService::contract();
    let _ = ReadRawStatus::contract();
    let _ = ReadStatus::contract();
}
