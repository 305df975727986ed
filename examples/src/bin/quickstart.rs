//! The README's first program, as a user writes it in a crate of their own: one tool with a
//! date and an e-mail field, a registry, a trusted context, three proposals.
//!
//! `cargo run -p tool-contract-examples --bin quickstart`

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_contract::extract::Tenant;
use tool_contract::{tool, Registry, ToolArgs, ToolContext, ToolError};

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct ListInvoicesArgs {
    /// Only invoices issued on or after this day.
    since: chrono::NaiveDate, // `"format": "date"`: `2026-02-30` is refused
    /// The customer's billing address.
    #[schemars(email, length(max = 254))] // `"format": "email"`, bounded
    customer_email: String,
    /// How many invoices to return.
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    limit: u8,
}

fn ten() -> u8 {
    10
}

#[derive(Serialize, JsonSchema)]
struct Invoices {
    /// The invoices found, newest first.
    items: Vec<String>,
}

/// Lists a customer's invoices for the current tenant. Use it to answer billing questions;
/// it changes nothing.
#[tool(
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 500,
    capabilities("billing:read")
)]
async fn list_invoices(args: ListInvoicesArgs, tenant: Tenant) -> Result<Invoices, ToolError> {
    let items = (1..=args.limit.min(2))
        .map(|n| format!("{tenant}/{}/{}-{n}", args.customer_email, args.since))
        .collect();
    Ok(Invoices { items })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = Registry::builder().tool(ListInvoices).build()?;
    // Trusted: who is calling, for which tenant, with which capabilities. Never from the model.
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["billing:read"])
        .build();

    for proposal in [
        r#"{"name": "list_invoices", "arguments": {"since": "2026-01-01", "customer_email": "kim@acme.test"}}"#,
        r#"{"name": "list_invoices", "arguments": {"since": "2026-02-30", "customer_email": "kim"}}"#,
        r#"{"name": "list_invoices", "arguments": {"since": "2026-01-01", "customer_email": "kim@acme.test", "tenant_id": "globex"}}"#,
    ] {
        let observation = registry.handle(proposal, &ctx).await;
        println!("{}", observation.to_json());
    }
    Ok(())
}
