//! The trusted runtime context: who is calling, for which tenant, with which capabilities.
//!
//! Everything here comes from the host, never from the model's arguments: identity, tenancy,
//! permissions and the turn's limits are exactly the values a model must not be able to
//! choose. Handlers read them through extractors (the `extract` module).

use std::any::{Any, TypeId};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use crate::budget::Budget;
use crate::error::ToolError;
use crate::flow::Session;

/// Host-held values a handler can extract with the `State<T>` extractor: database
/// pools, HTTP clients, credentials. Keyed by type.
#[derive(Clone, Default)]
pub struct Extensions {
    map: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl Extensions {
    /// Stores `value`, replacing any earlier value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.map.insert(TypeId::of::<T>(), Arc::new(value));
    }

    /// The stored value of type `T`, if any.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map
            .get(&TypeId::of::<T>())
            .and_then(|v| v.downcast_ref::<T>())
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Values may be credentials: never print them.
        f.debug_struct("Extensions")
            .field("len", &self.map.len())
            .finish_non_exhaustive()
    }
}

/// The trusted runtime context of one call.
///
/// ```
/// use tool_contract::ToolContext;
///
/// let ctx = ToolContext::builder()
///     .principal("user:42")
///     .tenant("acme")
///     .capability("documents:search")
///     .build();
/// assert!(ctx.has_capability("documents:search"));
/// assert_eq!(ctx.tenant().map(|t| t.as_str()), Some("acme"));
/// ```
// Everything but the per-call facts lives behind one `Arc`: a call's copy of the context costs
// one reference-count bump, which matters when many tasks share a context across cores.
#[derive(Clone, Debug, Default)]
pub struct ToolContext {
    shared: Arc<Shared>,
    call: Option<CallMeta>,
    idempotency_key: Option<IdempotencyKey>,
    /// A session record the serving layer supplies (one per MCP session) when the host's own
    /// context has none; kept outside `shared` so it attaches without rebuilding the context.
    served_session: Option<Session>,
    /// The builder's deadline, or the one [`with_deadline`](Self::with_deadline) set in its
    /// place: outside `shared` so a host can give each call its own without rebuilding the rest.
    deadline: Option<Instant>,
}

/// A built context's grants, by identity (see [`ToolContext::grants`]). What it points to is
/// never changed once built. A weak reference keeps the allocation but not its contents (the
/// extensions may hold credentials): the address cannot be reused while it is held, so a match
/// is never another context built later at the same address.
#[cfg(feature = "mcp")]
pub(crate) struct Grants(std::sync::Weak<Shared>);

#[cfg(feature = "mcp")]
impl Grants {
    /// Whether `ctx` shares these grants: then its capabilities and pins are these.
    pub(crate) fn of(&self, ctx: &ToolContext) -> bool {
        std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&ctx.shared))
    }
}

/// How a session pins a tool: which registered version its calls run.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolPin {
    /// The version whose `version` string is this.
    Version(String),
    /// The version whose contract digest (`fingerprint.contract_sha256`) is this.
    Digest(String),
}

#[derive(Debug, Default)]
struct Shared {
    principal: Option<Principal>,
    tenant: Option<Tenant>,
    capabilities: BTreeSet<String>,
    agent_state: Option<String>,
    budget: Option<Arc<Budget>>,
    pins: HashMap<String, ToolPin>,
    extensions: Extensions,
    session: Option<Session>,
}

impl ToolContext {
    /// Starts a context.
    pub fn builder() -> ToolContextBuilder {
        ToolContextBuilder::default()
    }

    /// The authenticated principal, if any.
    pub fn principal(&self) -> Option<&Principal> {
        self.shared.principal.as_ref()
    }
    /// The tenant the call runs for, if any.
    pub fn tenant(&self) -> Option<&Tenant> {
        self.shared.tenant.as_ref()
    }
    /// The capabilities granted to the principal.
    pub fn capabilities(&self) -> &BTreeSet<String> {
        &self.shared.capabilities
    }
    /// Whether `capability` was granted.
    pub fn has_capability(&self, capability: &str) -> bool {
        self.shared.capabilities.contains(capability)
    }
    /// The agent's current state label, for state gates.
    pub fn agent_state(&self) -> Option<&str> {
        self.shared.agent_state.as_deref()
    }
    /// When the whole agent turn must end: the one [`with_deadline`](Self::with_deadline)
    /// set, else the builder's.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// This context with `deadline` as its deadline, replacing any the builder set; identity,
    /// capabilities, state and session are shared, not copied (one reference-count bump).
    ///
    /// For a host that builds who is calling once and gives each call, or each turn, its own
    /// time limit:
    ///
    /// ```
    /// use std::time::{Duration, Instant};
    /// use tool_contract::ToolContext;
    ///
    /// let user = ToolContext::builder().principal("user:42").tenant("acme").build();
    /// let deadline = Instant::now() + Duration::from_secs(5);
    /// let ctx = user.with_deadline(deadline);
    /// assert_eq!(ctx.deadline(), Some(deadline.into()));
    /// assert_eq!(ctx.principal(), user.principal());
    /// assert_eq!(user.deadline(), None);
    /// ```
    #[must_use]
    pub fn with_deadline(&self, deadline: impl Into<Instant>) -> ToolContext {
        ToolContext {
            deadline: Some(deadline.into()),
            ..self.clone()
        }
    }
    /// What decides which tools this context may see (its capabilities and pins), by
    /// identity: every context cloned from one built context, or derived from it with
    /// [`with_deadline`](Self::with_deadline), has the same grants.
    #[cfg(feature = "mcp")]
    pub(crate) fn grants(&self) -> Grants {
        Grants(Arc::downgrade(&self.shared))
    }
    /// The turn's shared tool budget, if any.
    pub fn budget(&self) -> Option<&Arc<Budget>> {
        self.shared.budget.as_ref()
    }
    /// The conversation's session record, for flow control, if the host attached one.
    pub fn session(&self) -> Option<&Session> {
        self.shared
            .session
            .as_ref()
            .or(self.served_session.as_ref())
    }

    /// This context with `session` as its session record unless the host attached its own:
    /// what a server does for each of its sessions.
    #[cfg(feature = "mcp")]
    pub(crate) fn with_served_session(mut self, session: &Session) -> Self {
        if self.shared.session.is_none() {
            self.served_session = Some(session.clone());
        }
        self
    }
    /// The version pinned for `tool` by [`ToolContextBuilder::pin_version`], if any.
    pub fn pinned_version(&self, tool: &str) -> Option<&str> {
        match self.pin(tool)? {
            ToolPin::Version(v) => Some(v),
            ToolPin::Digest(_) => None,
        }
    }
    /// How `tool` is pinned, by version or by contract digest, if it is.
    pub fn pin(&self, tool: &str) -> Option<&ToolPin> {
        if self.shared.pins.is_empty() {
            return None;
        }
        self.shared.pins.get(tool)
    }
    /// Facts about the call being executed, set by the pipeline.
    pub fn call(&self) -> Option<&CallMeta> {
        self.call.as_ref()
    }
    /// The idempotency key resolved for this call, if any.
    pub fn idempotency_key(&self) -> Option<&IdempotencyKey> {
        self.idempotency_key.as_ref()
    }
    /// Host-held values.
    pub fn extensions(&self) -> &Extensions {
        &self.shared.extensions
    }

    /// A copy of this context for one call: same identity, with call facts and key set.
    pub fn for_call(&self, call: CallMeta, idempotency_key: Option<IdempotencyKey>) -> ToolContext {
        ToolContext {
            shared: Arc::clone(&self.shared),
            call: Some(call),
            idempotency_key,
            served_session: self.served_session.clone(),
            deadline: self.deadline,
        }
    }

    pub(crate) fn set_attempt(&mut self, attempt: u32) {
        if let Some(call) = &mut self.call {
            call.attempt = attempt;
        }
    }
}

/// Builds a [`ToolContext`].
#[derive(Debug, Default)]
pub struct ToolContextBuilder {
    shared: Shared,
    call: Option<CallMeta>,
    idempotency_key: Option<IdempotencyKey>,
    deadline: Option<Instant>,
}

impl ToolContextBuilder {
    /// Sets the authenticated principal.
    pub fn principal(mut self, principal: impl Into<Principal>) -> Self {
        self.shared.principal = Some(principal.into());
        self
    }
    /// Sets the tenant.
    pub fn tenant(mut self, tenant: impl Into<Tenant>) -> Self {
        self.shared.tenant = Some(tenant.into());
        self
    }
    /// Grants one capability.
    pub fn capability(mut self, capability: impl Into<String>) -> Self {
        self.shared.capabilities.insert(capability.into());
        self
    }
    /// Grants several capabilities.
    pub fn capabilities<I, S>(mut self, capabilities: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.shared
            .capabilities
            .extend(capabilities.into_iter().map(Into::into));
        self
    }
    /// Sets the agent's current state label.
    pub fn agent_state(mut self, state: impl Into<String>) -> Self {
        self.shared.agent_state = Some(state.into());
        self
    }
    /// Sets the deadline of the whole agent turn (a `std::time::Instant` or Tokio's, which
    /// follows a paused test clock).
    pub fn deadline(mut self, deadline: impl Into<Instant>) -> Self {
        self.deadline = Some(deadline.into());
        self
    }
    /// Shares a tool budget (calls and tool time) across the turn's calls.
    pub fn budget(mut self, budget: Arc<Budget>) -> Self {
        self.shared.budget = Some(budget);
        self
    }
    /// Attaches the conversation's session record: the registry traces where each argument
    /// came from before a call runs, and records every result the model is given (see
    /// [`crate::flow`]).
    pub fn session(mut self, session: Session) -> Self {
        self.shared.session = Some(session);
        self
    }
    /// Pins `tool` to `version`; replaces an earlier pin of the same tool.
    pub fn pin_version(mut self, tool: impl Into<String>, version: impl Into<String>) -> Self {
        self.shared
            .pins
            .insert(tool.into(), ToolPin::Version(version.into()));
        self
    }
    /// Pins `tool` to the version whose contract digest is `digest`, the
    /// [`Fingerprint::contract_sha256`](crate::contract::Fingerprint::contract_sha256) a lock
    /// or a trace recorded (`sha256:<hex>`); replaces an earlier pin of the same tool. Unlike a
    /// version string, a digest cannot name a contract that changed without a version bump.
    pub fn pin_digest(mut self, tool: impl Into<String>, digest: impl Into<String>) -> Self {
        self.shared
            .pins
            .insert(tool.into(), ToolPin::Digest(digest.into()));
        self
    }
    /// Sets the call facts (normally done by the pipeline).
    pub fn call(mut self, call: CallMeta) -> Self {
        self.call = Some(call);
        self
    }
    /// Sets a host-supplied idempotency key.
    pub fn idempotency_key(mut self, key: IdempotencyKey) -> Self {
        self.idempotency_key = Some(key);
        self
    }
    /// Stores a host-held value for the `State<T>` extractor.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.shared.extensions.insert(value);
        self
    }
    /// Finishes the context.
    pub fn build(self) -> ToolContext {
        ToolContext {
            shared: Arc::new(self.shared),
            call: self.call,
            idempotency_key: self.idempotency_key,
            served_session: None,
            deadline: self.deadline,
        }
    }
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

#[cfg(all(test, feature = "mcp"))]
mod tests {
    use super::*;

    #[test]
    fn grants_match_the_contexts_built_together_and_no_other() {
        let ctx = ToolContext::builder().capability("orders:read").build();
        let grants = ctx.grants();
        assert!(grants.of(&ctx));
        assert!(grants.of(&ctx.clone()));
        assert!(grants.of(&ctx.with_deadline(Instant::now())));
        // Equal grants built apart are not matched: identity, never a comparison of contents.
        let twin = ToolContext::builder().capability("orders:read").build();
        assert!(!grants.of(&twin));
        // Once every context is gone, a context built next is never taken for it, though the
        // allocator would hand out the freed address first.
        drop(ctx);
        for _ in 0..64 {
            let next = ToolContext::builder().capability("orders:write").build();
            assert!(!grants.of(&next));
        }
    }
}
