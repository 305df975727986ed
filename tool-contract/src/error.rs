//! The error model: seven categories, one envelope-ready error type, and validation issues.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Defines [`ErrorCategory`] from one table, so every category gets the same wire name, default
/// retryability, agent action and docs without hand-written drift (axum-core `__define_rejection!`).
macro_rules! define_categories {
    ($( $(#[$doc:meta])* $variant:ident => $wire:literal, retryable: $retry:literal, action: $action:literal; )*) => {
        /// What kind of failure an observation reports, and so what the agent should do next.
        ///
        /// Serialized in SCREAMING_SNAKE_CASE, as the error envelope spells it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum ErrorCategory {
            $( $(#[$doc])* #[serde(rename = $wire)] $variant, )*
        }

        impl ErrorCategory {
            /// Every category, in the documented order.
            pub const ALL: &'static [ErrorCategory] = &[$(ErrorCategory::$variant),*];

            /// The wire name, e.g. `"INVALID_INPUT"`.
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCategory::$variant => $wire,)* }
            }

            /// Whether an error of this category may be retried automatically by default.
            ///
            /// Only [`ErrorCategory::Transient`] is: retrying a permission denial or an invalid
            /// input only multiplies cost and attack surface.
            pub const fn default_retryable(self) -> bool {
                match self { $(ErrorCategory::$variant => $retry,)* }
            }

            /// What the agent loop should do when it observes this category.
            pub const fn agent_action(self) -> &'static str {
                match self { $(ErrorCategory::$variant => $action,)* }
            }
        }
    };
}

define_categories! {
    /// Schema or semantic error in the model's arguments: bounded repair.
    InvalidInput => "INVALID_INPUT", retryable: false, action: "repair the arguments (bounded attempts)";
    /// A capability or identity is missing: stop, or ask for approval.
    Unauthorized => "UNAUTHORIZED", retryable: false, action: "stop immediately or request approval";
    /// The referenced resource does not exist: the query may be changed.
    NotFound => "NOT_FOUND", retryable: false, action: "change the query";
    /// Timeout or rate limit: retry with backoff.
    Transient => "TRANSIENT", retryable: true, action: "retry with backoff";
    /// Revision conflict: re-read the latest state.
    Conflict => "CONFLICT", retryable: false, action: "re-read the latest state";
    /// A business rule forbids this action: choose another action or end safely.
    PolicyDenied => "POLICY_DENIED", retryable: false, action: "take another action or end safely";
    /// Contract violation or bug: fail without exposing internals.
    Internal => "INTERNAL", retryable: false, action: "fail without internal details";
}

impl fmt::Display for ErrorCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failure a tool reports, shaped exactly like the error envelope's body.
///
/// `message` and `safe_details` reach the model, so they must never carry secrets, stack traces
/// or backend internals; build them from facts the model may know.
///
/// ```
/// use tool_contract::{ErrorCategory, ToolError};
///
/// let err = ToolError::transient("UPSTREAM_RATE_LIMITED", "the search backend throttled the request")
///     .with_retry_after_ms(1200)
///     .with_detail("backend", "internal_search");
/// assert_eq!(err.category(), ErrorCategory::Transient);
/// assert!(err.retryable());
/// let json = serde_json::to_value(&err).unwrap();
/// assert_eq!(json["retry_after_ms"], 1200);
/// ```
// Boxed so `Result<T, ToolError>` stays one pointer wide on the happy path of every handler.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolError {
    inner: Box<ErrorBody>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct ErrorBody {
    code: Cow<'static, str>,
    category: ErrorCategory,
    message: Cow<'static, str>,
    retryable: bool,
    retry_after_ms: Option<u64>,
    safe_details: Map<String, Value>,
    /// Host-side only: the handler failed before any side effect (see
    /// [`ToolError::before_effect`]). Never on the wire.
    #[serde(skip)]
    before_effect: bool,
}

impl ToolError {
    /// A new error with the category's default retryability.
    pub fn new(
        category: ErrorCategory,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        ToolError {
            inner: Box::new(ErrorBody {
                code: code.into(),
                category,
                message: message.into(),
                retryable: category.default_retryable(),
                retry_after_ms: None,
                safe_details: Map::new(),
                before_effect: false,
            }),
        }
    }

    /// An [`ErrorCategory::InvalidInput`] error.
    pub fn invalid_input(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(ErrorCategory::InvalidInput, code, message)
    }
    /// An [`ErrorCategory::Unauthorized`] error.
    pub fn unauthorized(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(ErrorCategory::Unauthorized, code, message)
    }
    /// An [`ErrorCategory::NotFound`] error.
    pub fn not_found(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(ErrorCategory::NotFound, code, message)
    }
    /// An [`ErrorCategory::Transient`] error (retryable).
    pub fn transient(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(ErrorCategory::Transient, code, message)
    }
    /// An [`ErrorCategory::Conflict`] error.
    pub fn conflict(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(ErrorCategory::Conflict, code, message)
    }
    /// An [`ErrorCategory::PolicyDenied`] error.
    pub fn policy_denied(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(ErrorCategory::PolicyDenied, code, message)
    }
    /// An [`ErrorCategory::Internal`] error.
    pub fn internal(
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self::new(ErrorCategory::Internal, code, message)
    }

    /// Overrides whether this error may be retried automatically.
    #[must_use]
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.inner.retryable = retryable;
        self
    }

    /// Marks the failure as known to precede any side effect (the request was refused, or
    /// never sent): the call's idempotency key is released at once, so the same request may
    /// run again without waiting for its lease to end.
    ///
    /// Leave it unmarked when the effect may have happened (a timeout after sending, a lost
    /// response): the key then stays held until the lease ends, and a retry with the same key
    /// is answered `IDEMPOTENCY_IN_PROGRESS` instead of risking a second effect.
    ///
    /// ```
    /// use tool_contract::ToolError;
    ///
    /// let err = ToolError::transient("MAIL_RELAY_DOWN", "the mail relay refused the connection")
    ///     .before_effect();
    /// assert!(err.is_before_effect());
    /// // The marker never reaches the model.
    /// assert!(serde_json::to_value(&err).unwrap().get("before_effect").is_none());
    /// ```
    #[must_use]
    pub fn before_effect(mut self) -> Self {
        self.inner.before_effect = true;
        self
    }

    /// Whether [`before_effect`](Self::before_effect) marked this error.
    pub fn is_before_effect(&self) -> bool {
        self.inner.before_effect
    }

    /// Tells the caller how long to wait before a retry.
    #[must_use]
    pub fn with_retry_after_ms(mut self, ms: u64) -> Self {
        self.inner.retry_after_ms = Some(ms);
        self
    }

    /// Adds a detail that is safe to show the model.
    #[must_use]
    pub fn with_detail(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.inner.safe_details.insert(key.into(), value.into());
        self
    }

    /// The stable machine-readable code, e.g. `"DOCUMENT_NOT_FOUND"`.
    pub fn code(&self) -> &str {
        &self.inner.code
    }
    /// The category.
    pub fn category(&self) -> ErrorCategory {
        self.inner.category
    }
    /// The model-safe message.
    pub fn message(&self) -> &str {
        &self.inner.message
    }
    /// Whether an automatic retry is allowed.
    pub fn retryable(&self) -> bool {
        self.inner.retryable
    }
    /// The suggested wait before a retry, if any.
    pub fn retry_after_ms(&self) -> Option<u64> {
        self.inner.retry_after_ms
    }
    /// Details safe to show the model.
    pub fn safe_details(&self) -> &Map<String, Value> {
        &self.inner.safe_details
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.inner.category, self.inner.code, self.inner.message
        )
    }
}

impl std::error::Error for ToolError {}

/// One semantic or contextual problem with a call's arguments, reported by the args' semantic
/// hook.
///
/// `repairable` separates what the model can fix by regenerating (a date in the future) from
/// what no regeneration fixes (a missing capability), so the repair loop never spins on the latter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidationIssue {
    /// Stable code, e.g. `"DATE_FROM_IN_FUTURE"`.
    pub code: Cow<'static, str>,
    /// The argument it concerns, e.g. `"date_from"`, or `"tool"` for the call as a whole.
    pub field: Cow<'static, str>,
    /// A model-safe explanation.
    pub message: Cow<'static, str>,
    /// Whether regenerating the arguments can fix it.
    pub repairable: bool,
}

impl ValidationIssue {
    /// An issue the model can repair.
    pub fn repairable(
        code: impl Into<Cow<'static, str>>,
        field: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        ValidationIssue {
            code: code.into(),
            field: field.into(),
            message: message.into(),
            repairable: true,
        }
    }

    /// An issue no regeneration of the arguments can fix.
    pub fn fatal(
        code: impl Into<Cow<'static, str>>,
        field: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        ValidationIssue {
            code: code.into(),
            field: field.into(),
            message: message.into(),
            repairable: false,
        }
    }
}
