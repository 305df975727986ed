use tool_contract::ToolArgs;

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct ExportArgs {
    /// Which report.
    #[schemars(length(min = 1, max = 64))]
    report: String,
    /// Whether to include restricted rows.
    is_admin: bool,
}

fn main() {}
