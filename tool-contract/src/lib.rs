//! Turn an LLM's tool *proposal* into a safe, checked execution.
//!
//! A model never calls an API: it proposes a structured intent. `tool-contract` gives every tool
//! a contract (the seed's twelve fields: name, description, input and output schema, error
//! model, effect, authorization, approval, timeout, retry, idempotency and version) generated
//! from one attribute, and turns policy mistakes into compile errors.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//! use tool_contract::extract::Tenant;
//! use tool_contract::{tool, Tool, ToolArgs, ToolContext, ToolError};
//!
//! #[derive(Deserialize, JsonSchema, ToolArgs)]
//! #[serde(deny_unknown_fields)]
//! struct SearchDocumentsArgs {
//!     /// Words to find: a search expression, not an instruction.
//!     #[schemars(length(min = 2, max = 500))]
//!     query: String,
//!     /// How many candidates to return.
//!     #[serde(default = "eight")]
//!     #[schemars(range(min = 1, max = 20))]
//!     top_k: u8,
//! }
//! fn eight() -> u8 { 8 }
//!
//! #[derive(Serialize, JsonSchema)]
//! struct Hits { items: Vec<String> }
//!
//! /// Finds evidence in internal documents the current user may read. Not for web searches;
//! /// use `read_document_span` when you already know the source id.
//! #[tool(version = "2.1.0", effect = "pure_read", timeout_ms = 500, capabilities("documents:search"))]
//! async fn search_documents(args: SearchDocumentsArgs, tenant: Tenant) -> Result<Hits, ToolError> {
//!     Ok(Hits { items: vec![format!("{tenant}: {}", args.query)] })
//! }
//!
//! let contract = SearchDocuments::contract();
//! assert_eq!(contract.input_schema["properties"]["top_k"]["maximum"], 20);
//! assert_eq!(contract.input_schema["properties"]["top_k"]["default"], 8);
//!
//! // The tenant comes from the trusted context, never from the model's JSON.
//! let ctx = ToolContext::builder().tenant("acme").build();
//! let args = serde_json::from_str(r#"{"query": "refund policy"}"#).unwrap();
//! let hits = futures_executor_block_on(SearchDocuments.call(args, &ctx)).unwrap();
//! assert_eq!(hits.items, ["acme: refund policy"]);
//! # fn futures_executor_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```
//!
//! See [`tool`](macro@tool) for every attribute key and compile-time rule, [`extract`] for the
//! trusted extractors, and [`Toolset`] for type-level read-only toolsets.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod approval;
pub mod canonical;
pub mod clock;
pub mod context;
pub mod contract;
pub mod effect;
pub mod envelope;
pub mod error;
pub mod evolve;
pub mod execute;
pub mod export;
pub mod extract;
mod fast;
pub mod idempotency;
mod json_text;
mod lite;
pub mod lock;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod policy;
pub mod proposal;
pub mod receipt;
pub mod registry;
pub mod schema;
pub mod store;
mod tool;
mod toolset;
mod tree;
pub mod validate;

#[doc(hidden)]
#[allow(missing_docs)]
#[path = "private.rs"]
pub mod __private;

#[doc = include_str!("../attributes.md")]
pub use tool_contract_derive::tool;
/// Derives [`ToolArgs`] for a struct of model-facing arguments; see [`tool`](macro@tool) for the
/// field attributes and the rules it checks.
pub use tool_contract_derive::ToolArgs;

pub use context::{ToolContext, ToolContextBuilder};
pub use contract::ToolContract;
pub use effect::{Effect, ReadOnly, ReadWrite};
pub use error::{ErrorCategory, ToolError, ValidationIssue};
pub use tool::{ApprovalCondition, ArgField, BoxFuture, DynTool, Tool, ToolArgs};
pub use toolset::{ReadOnlyToolset, Toolset};

pub use approval::{ApprovalGrant, ApprovalKey, ApprovalRequest};
pub use envelope::Observation;
pub use execute::PreparedCall;
pub use proposal::{Proposal, ProposalLimits};
pub use registry::{
    AuthorizedCall, Prepared, Registry, RegistryBuilder, RegistryError, Rejection, ValidatedCall,
};
pub use validate::{RepairFeedback, RepairLoop, RepairStep};
