//! MCP: the `tools/list` export, the rmcp server handler without network, and the HTTP endpoint
//! on loopback (tests of real third-party clients are in `examples/tests/mcp_interop.rs`).

mod export;
mod exposure;
mod handler;
mod http;
mod repairs;
mod revisions;
mod stateless;

use tool_contract::{Registry, ToolContext};
use tool_contract_examples::mcp::{document_registry, local_user_context};
use tool_contract_examples::DocumentStore;

/// The document service's five tools.
pub fn registry() -> Registry {
    document_registry().unwrap()
}

/// A user who may search, read, draft and mail, but not delete.
pub fn ctx(store: &DocumentStore) -> ToolContext {
    local_user_context(store)
}
