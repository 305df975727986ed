use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct LookupArgs {}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Customer {
    row_id: u64,
    email: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct CustomerView {
    email_domain: String,
}

mod views {
    pub fn domain_only(c: &super::Customer) -> super::CustomerView {
        super::CustomerView {
            email_domain: c.email.rsplit('@').next().unwrap_or_default().to_owned(),
        }
    }
}

/// Looks up a customer. Use it to identify one; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, model_view = views::domain_only)]
async fn lookup_customer(_args: LookupArgs) -> Result<Customer, ToolError> {
    Ok(Customer { row_id: 1, email: "kim@example.org".into() })
}

fn main() {
    let c = LookupCustomer::contract();
    assert!(c.model_view_schema.is_some());
    assert!(c.output_schema["properties"].get("row_id").is_some());
}
