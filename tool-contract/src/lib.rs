//! Turn an LLM's tool *proposal* into a safe, checked execution.
//!
//! A model never calls an API: it proposes a structured intent. `tool-contract` gives every tool
//! a contract (twelve fields: name, description, input and output schema, error model, effect,
//! authorization, approval, timeout, retry, idempotency and version) generated from one
//! attribute, turns policy mistakes into compile errors, and runs every proposal through the
//! same checks before anything acts on it.
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
//!
//! # The flow of a call
//!
//! ```text
//! proposal text ─▶ 1 parse ─▶ 2 lookup ─▶ 3 validate ─▶ 4 authorize ─▶ 5 flow ─▶ 6 approval
//!                  proposal    catalog     prepare::     prepare::       prepare::  prepare::finish,
//!                                          validate      authorize       flow       approval (grants)
//!      ─▶ 7 idempotency ─▶ 8 execute ─▶ 9 output ─▶ observation (untrusted) + receipt
//!         idempotency       execute      output       envelope          receipt
//! ```
//!
//! [`Registry`] is the façade: [`prepare`](Registry::prepare) runs stages 1 to 6 and returns a
//! [`PreparedCall`] (or an [`ApprovalRequest`], or a [`Rejection`] naming its [`Stage`]),
//! [`execute`](Registry::execute) runs stages 7 to 9, and [`handle`](Registry::handle) does
//! both. The modules below are listed in that order: first the vocabulary every stage shares,
//! then the stages, then what sits around the pipeline (stores, exports, the contract lock, the
//! MCP server). `ARCHITECTURE.md` in the repository walks through the same map.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// The vocabulary every stage shares.
pub mod error;
pub mod effect;
pub mod contract;
pub mod context;
pub mod budget;
pub mod extract;
pub mod clock;
pub mod stage;
pub mod canonical;
mod security_names;
mod random;
mod json;
pub mod schema;
mod tool;
mod toolset;
mod entry;
mod args;
mod services;
mod call;
mod refuse;

// The pipeline, in call order.
pub mod proposal; //    1 parse
mod catalog; //         2 lookup
mod prepare; //         3 validate, 4 authorize, 5 flow, 6 the approval decision
pub mod repair; //      what the model is told when stage 3 refuses its arguments
pub mod policy; //      4 the trusted context's checks
pub mod flow; //        5 where each argument came from
pub mod approval; //    6 approval requests and grants
pub mod standing; //    6 standing approvals: rules that approve without asking
pub mod idempotency; // 7 keys and the exactly-once lifecycle
mod execute; //         8 the handler
mod output; //          9 the output contract
pub mod envelope; //    the observation
pub mod receipt; //     what really ran
pub mod registry; //    the façade over the stages

// Around the pipeline.
pub mod store;
pub mod export;
pub mod lock;
pub mod evolve;
#[cfg(feature = "mcp")]
pub mod mcp;

#[doc(hidden)]
#[allow(missing_docs)]
#[path = "private.rs"]
pub mod __private;

#[doc = include_str!("../attributes.md")]
pub use tool_contract_derive::tool;
/// Derives [`ToolArgs`] for a struct of model-facing arguments; see [`tool`](macro@tool) for the
/// field attributes and the rules it checks.
pub use tool_contract_derive::ToolArgs;

/// The JSON Schema generator the derives use: implement or derive `schemars::JsonSchema` with
/// this version for types your arguments and outputs contain.
pub use schemars;

pub use context::{ToolContext, ToolContextBuilder, ToolPin};
pub use contract::{ContractSource, ToolContract};
pub use effect::{Effect, ReadOnly, ReadWrite};
pub use error::{ErrorCategory, ToolError, ValidationIssue};
pub use stage::Stage;
pub use tool::{ApprovalCondition, ArgField, BoxFuture, DynTool, FieldFlowSpec, Tool, ToolArgs};
pub use toolset::{ReadOnlyToolset, Toolset};

pub use approval::{ApprovalGrant, ApprovalKey, ApprovalRequest};
pub use call::{AuthorizedCall, PreparedCall, ValidatedCall};
pub use envelope::Observation;
pub use prepare::Prepared;
pub use proposal::{Proposal, ProposalLimits};
pub use random::RandomUnavailable;
pub use refuse::Rejection;
pub use registry::{PendingApproval, Registry, RegistryBuilder, RegistryError};
pub use repair::{RepairFeedback, RepairLoop, RepairStep};
