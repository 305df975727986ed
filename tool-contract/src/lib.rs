#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod context;
pub mod contract;
pub mod effect;
pub mod error;
pub mod extract;
pub mod schema;
mod tool;
mod toolset;

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
