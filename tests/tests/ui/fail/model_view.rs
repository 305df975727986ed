use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct LookupArgs {}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Customer {
    email: String,
}

// Not `JsonSchema`: the view's schema could not be generated.
#[derive(serde::Serialize)]
struct Unschematic {
    email: String,
}

fn unschematic(c: &Customer) -> Unschematic {
    Unschematic { email: c.email.clone() }
}

fn takes_a_string(email: &String) -> String {
    email.clone()
}

/// Looks up a customer. Use it to identify one; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, model_view = "masked")]
async fn quoted_view(_args: LookupArgs) -> Result<Customer, ToolError> {
    Ok(Customer { email: String::new() })
}

/// Looks up a customer. Use it to identify one; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, model_view = unschematic)]
async fn view_without_schema(_args: LookupArgs) -> Result<Customer, ToolError> {
    Ok(Customer { email: String::new() })
}

/// Looks up a customer. Use it to identify one; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100, model_view = takes_a_string)]
async fn view_of_another_type(_args: LookupArgs) -> Result<Customer, ToolError> {
    Ok(Customer { email: String::new() })
}

fn main() {
    let _ = QuotedView::contract();
    let _ = ViewWithoutSchema::contract();
    let _ = ViewOfAnotherType::contract();
}
