//! Trusted extractors: the only way a handler receives anything besides the model's arguments.
//!
//! A `#[tool]` handler's first parameter is the model's arguments; every other parameter must
//! implement [`FromToolContext`], which sees only the trusted [`ToolContext`]. Security context
//! therefore cannot come from model JSON by construction, as axum's `FromRequestParts` cannot
//! read a request body.
//!
//! ```
//! use tool_contract::extract::{FromToolContext, Tenant};
//! use tool_contract::{ErrorCategory, ToolContext};
//!
//! let ctx = ToolContext::builder().tenant("acme").build();
//! assert_eq!(Tenant::from_tool_context(&ctx).unwrap().as_str(), "acme");
//!
//! let anonymous = ToolContext::default();
//! let err = Tenant::from_tool_context(&anonymous).unwrap_err();
//! assert_eq!(err.category(), ErrorCategory::Unauthorized);
//! ```

use std::ops::Deref;
use std::sync::Arc;

use crate::context::ToolContext;
use crate::error::ToolError;

/// The trusted values a context carries, extracted by the impls below.
pub use crate::context::{CallMeta, IdempotencyKey, Principal, Tenant};

/// Builds a handler parameter from the trusted context alone.
///
/// Implement it for your own extractors (a database handle scoped to the tenant, say); the
/// error you return becomes the call's observation and the handler does not run.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a trusted extractor",
    label = "handler parameters after the arguments must come from the trusted context",
    note = "a #[tool] handler takes the model's arguments first, then only extractors: `Tenant`, `Principal`, `Capabilities`, `IdempotencyKey`, `CallMeta`, `State<T>`, or your own `FromToolContext` type"
)]
pub trait FromToolContext: Sized {
    /// Extracts the value, or explains why the call cannot proceed.
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError>;
}

impl FromToolContext for Tenant {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        ctx.tenant().cloned().ok_or_else(|| {
            ToolError::unauthorized("TENANT_MISSING", "no tenant is bound to this call")
        })
    }
}

impl FromToolContext for Principal {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        ctx.principal().cloned().ok_or_else(|| {
            ToolError::unauthorized(
                "PRINCIPAL_MISSING",
                "no authenticated principal is bound to this call",
            )
        })
    }
}

/// The capabilities granted to the caller, for handlers that decide per resource.
#[derive(Clone, Debug)]
pub struct Capabilities(Arc<std::collections::BTreeSet<String>>);

impl Capabilities {
    /// Whether `capability` was granted.
    pub fn contains(&self, capability: &str) -> bool {
        self.0.contains(capability)
    }
    /// Every granted capability, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

impl FromToolContext for Capabilities {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        Ok(Capabilities(Arc::new(ctx.capabilities().clone())))
    }
}

impl FromToolContext for IdempotencyKey {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        // The pipeline resolves the key before the handler runs; its absence is a host bug.
        ctx.idempotency_key().cloned().ok_or_else(|| {
            ToolError::internal(
                "IDEMPOTENCY_KEY_UNAVAILABLE",
                "no idempotency key was resolved for this call",
            )
        })
    }
}

impl FromToolContext for CallMeta {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        ctx.call().cloned().ok_or_else(|| {
            ToolError::internal(
                "CALL_META_UNAVAILABLE",
                "the call was started without call metadata",
            )
        })
    }
}

/// A host-held value of type `T` (a client, a pool, a credential), stored with
/// [`ToolContextBuilder::state`](crate::context::ToolContextBuilder::state).
///
/// A missing value is a host configuration error and fails with `INTERNAL`, without naming the type.
#[derive(Clone, Debug)]
pub struct State<T>(pub T);

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Clone + Send + Sync + 'static> FromToolContext for State<T> {
    fn from_tool_context(ctx: &ToolContext) -> Result<Self, ToolError> {
        ctx.extensions()
            .get::<T>()
            .cloned()
            .map(State)
            .ok_or_else(|| {
                ToolError::internal(
                    "STATE_MISSING",
                    "the host did not provide a value this tool needs",
                )
            })
    }
}
