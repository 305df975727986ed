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

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::context::ToolContext;
use crate::error::ToolError;

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

macro_rules! id_newtype {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(Arc<str>);

        impl $name {
            /// Wraps an identifier.
            pub fn new(id: impl Into<Arc<str>>) -> Self {
                $name(id.into())
            }
            /// The identifier.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_tuple(stringify!($name)).field(&&*self.0).finish()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.into())
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                $name(id.into())
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }
    };
}

id_newtype!(
    /// The tenant a call runs for, from the trusted context. Fails with `UNAUTHORIZED` when the
    /// host set none.
    Tenant
);
id_newtype!(
    /// The authenticated principal (user or service), from the trusted context. Fails with
    /// `UNAUTHORIZED` when the host set none.
    Principal
);

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

/// The idempotency key of this call, to pass to the downstream system.
///
/// Passing it on closes the crash window between "executed" and "recorded", which is why an
/// `irreversible_write` tool with automatic retries must take it (compile-time rule 4).
#[derive(Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct IdempotencyKey(Arc<str>);

impl TryFrom<String> for IdempotencyKey {
    type Error = ToolError;
    fn try_from(key: String) -> Result<Self, ToolError> {
        IdempotencyKey::new(key)
    }
}

impl From<IdempotencyKey> for String {
    fn from(key: IdempotencyKey) -> String {
        key.0.to_string()
    }
}

impl IdempotencyKey {
    /// Longest accepted key, in bytes.
    pub const MAX_LEN: usize = 255;

    /// Validates a key: 1..=255 visible ASCII characters (letters, digits, punctuation; no
    /// spaces or control characters).
    pub fn new(key: impl Into<Arc<str>>) -> Result<Self, ToolError> {
        let key = key.into();
        let ok = !key.is_empty()
            && key.len() <= Self::MAX_LEN
            && key.bytes().all(|b| b.is_ascii_graphic());
        if ok {
            Ok(IdempotencyKey(key))
        } else {
            Err(ToolError::invalid_input(
                "IDEMPOTENCY_KEY_INVALID",
                "an idempotency key must be 1 to 255 visible ASCII characters (no spaces)",
            ))
        }
    }

    /// The key.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("IdempotencyKey").field(&&*self.0).finish()
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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

/// Facts about the running call: which tool and version, the call id, the attempt number.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallMeta {
    /// The tool's stable name.
    pub tool: Cow<'static, str>,
    /// The tool's version.
    pub tool_version: Cow<'static, str>,
    /// The call id, as echoed in the observation's `meta.call_id`.
    pub call_id: String,
    /// The 1-based attempt number.
    pub attempt: u32,
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
