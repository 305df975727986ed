// The twin: the only way to a `PreparedCall` is through the registry's checks.
use tool_contract::{tool, Prepared, Registry, ToolArgs, ToolContext, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let registry = Registry::builder().tool(PingService).build().unwrap();
    let ctx = ToolContext::default();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let validated = registry.validate(tool_contract::Proposal::new("ping_service", serde_json::json!({})), &ctx).unwrap();
    assert_eq!(validated.tool(), "ping_service");
    let authorized = registry.authorize(validated, &ctx).unwrap();
    let Ok(Prepared::Ready(call)) = registry.finish(authorized, &ctx) else { panic!("not ready") };
    let obs = rt.block_on(registry.execute(call));
    assert!(obs.ok);
    // An unvalidated proposal is refused before anything runs.
    let rejected = registry.prepare(tool_contract::Proposal::new("ping_service", serde_json::json!({"x": 1})), &ctx);
    assert_eq!(rejected.unwrap_err().observation().code(), Some("INPUT_VALIDATION_FAILED"));
}
