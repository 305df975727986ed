//! The example document service: five tools whose policies cover every effect class.
//!
//! | tool | effect | approval | retry | idempotency key |
//! |---|---|---|---|---|
//! | `search_documents` | pure_read | no | 2 | optional (host) |
//! | `read_document_span` | pure_read | no | 2 | not needed |
//! | `create_draft_ticket` | reversible_write | conditional | 1 | required (field) |
//! | `send_email` | irreversible_write | yes | 1 (no auto retry) | required (derived) |
//! | `delete_document` | irreversible_write | yes | 1 (forbidden) | required (derived) |
//!
//! Plus `get_policy_revision` (pure_read), a third read, used by the demo to
//! show a slow backend being cut off at its timeout.

pub mod documents;
pub mod mcp;
pub mod proc_stat;
pub mod store;

pub use documents::*;
pub use store::{Document, DocumentStore, SentMail};

/// The six tools, in their reference order: what the `export` command exports and
/// `tools.lock.json` locks.
pub fn toolset() -> tool_contract::Toolset {
    tool_contract::Toolset::new()
        .with(SearchDocuments)
        .with(ReadDocumentSpan)
        .with(CreateDraftTicket)
        .with(SendEmail)
        .with(DeleteDocument)
        .with(GetPolicyRevision)
}
