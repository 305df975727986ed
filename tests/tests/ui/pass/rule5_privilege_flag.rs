// The fix: no `is_admin` argument; the tool requires a capability the trusted context must grant.
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct ExportArgs {
    /// Which report.
    #[schemars(length(min = 1, max = 64))]
    pub report: String,
}

/// Exports a report with its restricted rows. Use it only for reports the user named.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 2000, capabilities("reports:read_restricted"))]
async fn export_report(_args: ExportArgs) -> Result<String, ToolError> {
    Ok("report.csv".into())
}

fn main() {
    let c = ExportReport::contract();
    assert_eq!(c.authorization.capabilities, ["reports:read_restricted"]);
    assert!(c.input_schema["properties"].get("is_admin").is_none());
    assert!(<ExportArgs as ToolArgs>::FIELDS.iter().all(|f| f.rust_name != "is_admin"));
}
