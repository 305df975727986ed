//! Behaviour tests of the generated contracts, one module per topic (schemars layout).

mod adversarial;
mod approval;
mod contracts;
mod defaults;
mod executor;
mod extractors;
mod pipeline;
mod probe;
mod receipts;
mod schemas;

use tool_contract::{ToolContract, Toolset};
use tool_contract_examples::{
    CreateDraftTicket, DeleteDocument, ReadDocumentSpan, SearchDocuments, SendEmail,
};

/// The seed's five tools, in the seed's order.
pub fn seed_tools() -> Toolset {
    Toolset::new()
        .with(SearchDocuments)
        .with(ReadDocumentSpan)
        .with(CreateDraftTicket)
        .with(SendEmail)
        .with(DeleteDocument)
}

pub fn contract(name: &str) -> &'static ToolContract {
    seed_tools()
        .contracts()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}
