use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
struct SendArgs {
    tenant_id: String,
    /// Body.
    body: String,
}

#[tool(name = "send", version = "one", effect = "irreversible_write", timeout_ms = 0)]
async fn send(_args: SendArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let _ = Send::contract();
}
