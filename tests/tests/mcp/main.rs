//! MCP: the `tools/list` export and the rmcp server handler, without network (tests of real
//! third-party clients are in `examples/tests/mcp_interop.rs`).

mod export;
mod handler;

use std::time::{Duration, Instant};

use tool_contract::{Registry, ToolContext, Toolset};
use tool_contract_examples::{
    CreateDraftTicket, DeleteDocument, DocumentStore, ReadDocumentSpan, SearchDocuments, SendEmail,
};

/// The seed's five tools.
pub fn registry() -> Registry {
    let tools = Toolset::new()
        .with(SearchDocuments)
        .with(ReadDocumentSpan)
        .with(CreateDraftTicket)
        .with(SendEmail)
        .with(DeleteDocument);
    Registry::builder().toolset(tools).build().unwrap()
}

/// A user who may search, read, draft and mail, but not delete.
pub fn ctx(store: &DocumentStore) -> ToolContext {
    ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities([
            "documents:search",
            "documents:read",
            "tickets:create",
            "mail:send",
        ])
        .deadline(Instant::now() + Duration::from_secs(30))
        .state(store.clone())
        .build()
}
