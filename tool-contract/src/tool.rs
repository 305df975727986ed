//! The `Tool` and `ToolArgs` traits that `#[tool]` and `#[derive(ToolArgs)]` implement.

use std::future::Future;
use std::pin::Pin;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::context::ToolContext;
use crate::contract::ToolContract;
use crate::effect::EffectClass;
use crate::error::{ToolError, ValidationIssue};

/// A boxed, `Send` future, as object-safe tool calls return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One field of an args struct, as `#[derive(ToolArgs)]` saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArgField {
    /// The Rust field name.
    pub rust_name: &'static str,
    /// The name in JSON (after serde `rename` / `rename_all`).
    pub wire_name: &'static str,
    /// Marked `#[tool(idempotency_key)]`.
    pub idempotency_key: bool,
    /// The reason given with `#[tool(model_supplied = "...")]`.
    pub model_supplied: Option<&'static str>,
    /// The reason given with `#[tool(unbounded = "...")]`.
    pub unbounded: Option<&'static str>,
    /// Its flow control declarations.
    pub flow: FieldFlowSpec,
}

/// A field's flow control attributes, as `#[derive(ToolArgs)]` saw them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct FieldFlowSpec {
    /// `#[tool(trusted_only)]`.
    pub trusted_only: bool,
    /// The reason given with `#[tool(accepts_untrusted = "...")]`.
    pub accepts_untrusted: Option<&'static str>,
    /// `#[tool(flows_from("tool:/pointer", ...))]`.
    pub flows_from: &'static [&'static str],
    /// `#[tool(url)]` or `#[tool(command)]`.
    pub url_or_command: bool,
}

impl FieldFlowSpec {
    #[doc(hidden)]
    pub const NONE: FieldFlowSpec = FieldFlowSpec {
        trusted_only: false,
        accepts_untrusted: None,
        flows_from: &[],
        url_or_command: false,
    };

    #[doc(hidden)]
    pub const fn __new(
        trusted_only: bool,
        accepts_untrusted: Option<&'static str>,
        flows_from: &'static [&'static str],
        url_or_command: bool,
    ) -> Self {
        FieldFlowSpec {
            trusted_only,
            accepts_untrusted,
            flows_from,
            url_or_command,
        }
    }

    /// Whether the field declares anything.
    pub const fn is_declared(&self) -> bool {
        self.trusted_only
            || self.accepts_untrusted.is_some()
            || !self.flows_from.is_empty()
            || self.url_or_command
    }
}

impl ArgField {
    #[doc(hidden)]
    pub const fn __new(
        rust_name: &'static str,
        wire_name: &'static str,
        idempotency_key: bool,
        model_supplied: Option<&'static str>,
        unbounded: Option<&'static str>,
    ) -> Self {
        ArgField {
            rust_name,
            wire_name,
            idempotency_key,
            model_supplied,
            unbounded,
            flow: FieldFlowSpec::NONE,
        }
    }

    #[doc(hidden)]
    pub const fn __flow(mut self, flow: FieldFlowSpec) -> Self {
        self.flow = flow;
        self
    }
}

/// The model-facing arguments of a tool. Implement it with `#[derive(ToolArgs)]`, never by hand:
/// the derive is where the argument rules (no security context, bounds, docs, closed objects) are
/// checked.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool arguments type",
    label = "the first parameter of a #[tool] handler holds the model's arguments",
    note = "add `#[derive(serde::Deserialize, schemars::JsonSchema, tool_contract::ToolArgs)]` to `{Self}`",
    note = "trusted values (tenant, principal, keys) are extractors and come after the arguments"
)]
pub trait ToolArgs: DeserializeOwned + JsonSchema + Send + 'static {
    /// The struct's fields in declaration order.
    const FIELDS: &'static [ArgField];

    /// Semantic and contextual checks the schema cannot express (cross-field rules, dates
    /// relative to today). Set with `#[tool(semantic = path::to_fn)]` on the struct.
    fn semantic_issues(&self, ctx: &ToolContext) -> Vec<ValidationIssue> {
        let _ = ctx;
        Vec::new()
    }

    /// The wire name of the `#[tool(idempotency_key)]` field, if any.
    fn idempotency_key_field() -> Option<&'static str> {
        key_field(Self::FIELDS)
    }
}

// Outside the trait, so it is compiled once rather than once per args type.
fn key_field(fields: &'static [ArgField]) -> Option<&'static str> {
    fields
        .iter()
        .find(|f| f.idempotency_key)
        .map(|f| f.wire_name)
}

/// Decides, per call, whether a tool declared with `approval = "conditional"` needs approval.
///
/// ```
/// use tool_contract::{ApprovalCondition, ToolContext};
///
/// struct TicketArgs { priority: u8 }
///
/// impl ApprovalCondition for TicketArgs {
///     fn requires_approval(&self, _ctx: &ToolContext) -> bool {
///         self.priority >= 3
///     }
/// }
/// assert!(TicketArgs { priority: 4 }.requires_approval(&ToolContext::default()));
/// ```
#[diagnostic::on_unimplemented(
    message = "`approval = \"conditional\"` needs `{Self}` to implement `ApprovalCondition`",
    label = "no approval condition for these arguments",
    note = "implement `tool_contract::ApprovalCondition` for `{Self}` to say when a call needs approval, or use `approval` to always require it"
)]
pub trait ApprovalCondition {
    /// Whether this call needs a human's approval before it runs.
    fn requires_approval(&self, ctx: &ToolContext) -> bool;
}

/// A tool: a handler plus its whole contract. `#[tool]` implements it on a unit struct named
/// after the handler in UpperCamelCase (`send_email` → `SendEmail`).
pub trait Tool: Send + Sync + 'static {
    /// The model-facing arguments.
    type Args: ToolArgs;
    /// The handler's success output.
    type Output: Serialize + JsonSchema + Send + 'static;
    /// The effect class, as a type (for [`Toolset`](crate::Toolset) access checks).
    type Effect: EffectClass;

    /// The stable tool name.
    const NAME: &'static str;
    /// The tool version (semver).
    const VERSION: &'static str;

    /// The contract, built on first use and cached.
    fn contract() -> &'static ToolContract;

    /// Whether this call needs approval before it runs.
    ///
    /// By default, what the contract's approval policy says: never for `Never`, always
    /// otherwise (a `Conditional` policy with no condition fails safe). `#[tool(approval =
    /// "conditional")]` overrides it with the args' [`ApprovalCondition`].
    fn requires_approval(args: &Self::Args, ctx: &ToolContext) -> bool {
        let _ = (args, ctx);
        Self::contract().approval != crate::contract::ApprovalPolicy::Never
    }

    /// Runs the handler: extracts trusted parameters from `ctx`, then calls the function.
    fn call<'a>(
        &'a self,
        args: Self::Args,
        ctx: &'a ToolContext,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send + 'a;

    /// Serializes and checks an output: `#[tool(model_view = f)]` overrides it to check the
    /// full output and its view. Called by the pipeline; not for hand-written calls.
    #[doc(hidden)]
    fn deliver_output(
        output: &Self::Output,
        contract: &crate::output::OutputContract,
    ) -> Result<crate::output::CheckedOutput, ToolError> {
        contract.deliver(output)
    }
}

/// An object-safe view of a [`Tool`], working on JSON values, for registries and toolsets.
pub trait DynTool: Send + Sync + 'static {
    /// The contract.
    fn contract(&self) -> &'static ToolContract;

    /// Deserializes `args`, runs the handler and serializes its output: the handler alone,
    /// with no check of the output (a tool with a model view gives its full output).
    ///
    /// Arguments that do not deserialize give `INVALID_INPUT`/`ARGUMENTS_UNREADABLE`; callers are
    /// expected to have validated them against the input schema first. A `Deserialize` impl
    /// that panics gives an `INTERNAL` error, as in the pipeline.
    fn call_value<'a>(
        &'a self,
        args: Value,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<Value, ToolError>>;
}
