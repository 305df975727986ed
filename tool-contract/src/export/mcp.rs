//! MCP `tools/list` entries.

use serde_json::{json, Value};

use crate::ToolContract;

// Replaced by the MCP work: annotations, _meta, envelope outputSchema.
/// One MCP `tools/list` entry: `{name, description, inputSchema, outputSchema}`.
///
/// ```
/// # use tool_contract::{tool, Tool, ToolArgs, ToolError};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
///
/// let entry = tool_contract::export::mcp::tool_entry(PingService::contract());
/// assert_eq!(entry["name"], "ping_service");
/// assert_eq!(entry["inputSchema"]["type"], "object");
/// ```
pub fn tool_entry(contract: &ToolContract) -> Value {
    json!({
        "name": contract.name,
        "description": contract.description,
        "inputSchema": contract.input_schema,
        "outputSchema": contract.output_schema,
    })
}
