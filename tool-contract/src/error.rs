//! The error model: seven categories, one envelope-ready error type, and validation issues.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The code of every repairable input error, whether the schema, a semantic rule or the
/// handler found it.
pub(crate) const INPUT_VALIDATION_FAILED: &str = "INPUT_VALIDATION_FAILED";

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
/// What only an operator should read goes on the **operator side**: a
/// [`source`](Self::with_source) error (a driver error, an upstream response) and
/// [`operator details`](Self::with_operator_detail). Both reach the host's tracing and the
/// call's receipt (its `diagnostics`), and never the envelope, the prompt block or an MCP
/// message: they are not serialized, and `Debug` prints only how many there are.
///
/// ```
/// use tool_contract::ToolError;
///
/// let io = std::io::Error::other("connect to 10.0.0.7:5432 as svc_ro password=hunter2 failed");
/// let err = ToolError::transient("SEARCH_BACKEND_DOWN", "the search backend is unavailable")
///     .with_source(io)
///     .with_operator_detail("shard", "eu-3");
/// // The host can read it...
/// assert!(std::error::Error::source(&err).unwrap().to_string().contains("hunter2"));
/// assert_eq!(err.operator_details()["shard"], "eu-3");
/// // ...the model never sees it.
/// let wire = serde_json::to_string(&err).unwrap();
/// assert!(!wire.contains("hunter2") && !wire.contains("eu-3"));
/// assert!(!format!("{err:?}").contains("hunter2"));
/// ```
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
    /// Host-side only: never on the wire.
    #[serde(skip)]
    operator: OperatorSide,
}

/// What an error carries for operators only: a source error and details.
#[derive(Clone, Default)]
struct OperatorSide {
    // `Arc`, not `Box`: errors are cloned into receipts and stored replays.
    source: Option<Arc<dyn std::error::Error + Send + Sync + 'static>>,
    details: Map<String, Value>,
}

impl PartialEq for OperatorSide {
    // Errors have no equality of their own; two sources are compared by what they say.
    fn eq(&self, other: &Self) -> bool {
        self.details == other.details
            && self.source.as_ref().map(ToString::to_string)
                == other.source.as_ref().map(ToString::to_string)
    }
}

impl fmt::Debug for OperatorSide {
    // `Debug` output ends up in places nobody audits (panic messages, `{:?}` in a log line
    // shown to a model): it says what exists, never what it says.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OperatorSide")
            .field("source", &self.source.as_ref().map(|_| ".."))
            .field("details", &self.details.len())
            .finish()
    }
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
                operator: OperatorSide::default(),
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

    /// The handler found an argument wrong in a way the model can fix (a recipient that has no
    /// mailbox, a date outside the account's history): `INVALID_INPUT` /
    /// `INPUT_VALIDATION_FAILED` with one issue, shaped exactly like the input schema's
    /// feedback, so the model and [`RepairLoop`](crate::RepairLoop) treat both alike.
    ///
    /// `pointer` is a JSON pointer into the arguments (`/to/0`); a plain field name
    /// (`recipient`) is taken as `/recipient`, and `""` means the arguments as a whole. `rule`
    /// is a stable code, and `expected` a model-safe sentence of what would be accepted. The
    /// pipeline fills in what was sent at that pointer, summarized. The error is marked
    /// [`before_effect`](Self::before_effect): a handler refuses arguments before acting on them.
    ///
    /// ```
    /// use tool_contract::ToolError;
    ///
    /// let err = ToolError::invalid_argument("/to/0", "RECIPIENT_UNKNOWN", "an address with a mailbox in this tenant")
    ///     .with_invalid_argument("subject", "SUBJECT_EMPTY", "a non-empty subject");
    /// assert_eq!(err.code(), "INPUT_VALIDATION_FAILED");
    /// let issues = &err.safe_details()["issues"];
    /// assert_eq!(issues[0]["path"], "/to/0");
    /// assert_eq!(issues[1]["path"], "/subject");
    /// assert_eq!(issues[1]["keyword"], "SUBJECT_EMPTY");
    /// ```
    pub fn invalid_argument(
        pointer: &str,
        rule: impl Into<Cow<'static, str>>,
        expected: impl Into<Cow<'static, str>>,
    ) -> Self {
        ToolError::invalid_input(
            INPUT_VALIDATION_FAILED,
            "the arguments do not satisfy the tool's input contract",
        )
        .before_effect()
        .with_invalid_argument(pointer, rule, expected)
    }

    /// Adds one more issue to an [`invalid_argument`](Self::invalid_argument) error (on any
    /// other error it adds the issue to its `issues` detail all the same).
    #[must_use]
    pub fn with_invalid_argument(
        mut self,
        pointer: &str,
        rule: impl Into<Cow<'static, str>>,
        expected: impl Into<Cow<'static, str>>,
    ) -> Self {
        let path = if pointer.is_empty() || pointer.starts_with('/') {
            pointer.to_owned()
        } else {
            // RFC 6901: `~` and `/` inside a member name are escaped.
            format!("/{}", pointer.replace('~', "~0").replace('/', "~1"))
        };
        let issue = serde_json::json!({
            "path": path,
            "keyword": rule.into(),
            "expected": expected.into(),
            "actual": Value::Null,
        });
        match self.inner.safe_details.get_mut("issues") {
            Some(Value::Array(issues)) => issues.push(issue),
            _ => {
                self.inner
                    .safe_details
                    .insert("issues".to_owned(), Value::Array(vec![issue]));
            }
        }
        self
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

    /// Attaches the error that caused this one, for operators only: it is returned by
    /// [`std::error::Error::source`], written to tracing and to the receipt, and never sent to
    /// the model. Takes any error, or a message (`&str`, `String`).
    #[must_use]
    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        self.inner.operator.source = Some(Arc::from(source.into()));
        self
    }

    /// Adds a detail for operators only (a backend host, a query plan, an upstream status): it
    /// reaches tracing and the receipt, never the model.
    #[must_use]
    pub fn with_operator_detail(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.inner.operator.details.insert(key.into(), value.into());
        self
    }

    /// Details for operators only (see [`with_operator_detail`](Self::with_operator_detail)).
    pub fn operator_details(&self) -> &Map<String, Value> {
        &self.inner.operator.details
    }

    /// Whether the error carries anything for operators only.
    pub fn has_operator_side(&self) -> bool {
        self.inner.operator.source.is_some() || !self.inner.operator.details.is_empty()
    }

    /// The operator side as one line for logs and receipts: the details, then the source
    /// error's chain, outermost first. `None` when there is nothing.
    pub fn operator_report(&self) -> Option<String> {
        if !self.has_operator_side() {
            return None;
        }
        let mut out = String::new();
        if !self.inner.operator.details.is_empty() {
            out.push_str("operator details ");
            out.push_str(&Value::Object(self.inner.operator.details.clone()).to_string());
        }
        let mut next: Option<&(dyn std::error::Error + 'static)> = self
            .inner
            .operator
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static));
        let mut first = true;
        while let Some(err) = next {
            if !out.is_empty() {
                out.push_str(if first { "; caused by: " } else { ": " });
            }
            first = false;
            out.push_str(&err.to_string());
            next = err.source();
        }
        Some(out)
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

impl std::error::Error for ToolError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.inner
            .operator
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

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
