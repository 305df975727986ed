//! Building a registry: every tool's schemas compiled once, the set checked, the services set
//! up. A registry that would misbehave later refuses to build.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use super::{Registry, Shared};
use crate::approval::{ApprovalConfig, ApprovalKey};
use crate::catalog::Catalog;
use crate::clock::{millis, Clock};
use crate::contract::ToolContract;
use crate::effect::Access;
use crate::entry::{Entry, Runner};
use crate::export::{ExportError, Exporter};
use crate::policy::StateGate;
use crate::proposal::ProposalLimits;
use crate::random::{RandomUnavailable, UniqueIds};
use crate::receipt::ReceiptSink;
use crate::services::{IdempotencyConfig, Services};
use crate::store::{ApprovalStore, IdempotencyStore, MemoryStore};
use crate::tool::Tool;
use crate::toolset::Toolset;

/// A registry build failure: the registry refuses to start rather than misbehave later.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two tools share a name and version.
    DuplicateTool {
        /// Tool name.
        name: String,
        /// Tool version.
        version: String,
    },
    /// A tool's version is not semver (only possible for hand-written `Tool` impls).
    InvalidVersion {
        /// Tool name.
        name: String,
        /// The version string.
        version: String,
    },
    /// A schema does not compile (unknown `$ref`, remote reference, bad regex, ...).
    InvalidSchema {
        /// Tool name.
        tool: String,
        /// `input` or `output`.
        side: &'static str,
        /// The validator's message.
        message: String,
    },
    /// A `pattern` needs a backtracking regex engine; only linear-time patterns are accepted,
    /// so a model cannot make validation take exponential time.
    BacktrackingPattern {
        /// Tool name.
        tool: String,
        /// `input` or `output`.
        side: &'static str,
        /// The validator's message.
        message: String,
    },
    /// A tool cannot be exported in a dialect the host required
    /// ([`RegistryBuilder::check_export`]).
    Export(ExportError),
    /// A flow control declaration does not hold: a `flows_from` reference to an unknown tool,
    /// to a pointer its output schema does not have, or of a type that cannot flow into the
    /// field; or a confidential pointer the tool's own output does not have.
    FlowReference {
        /// The tool that declares it.
        tool: String,
        /// The field (or `(confidential)`).
        field: String,
        /// The reference as written.
        reference: String,
        /// What is wrong, and how to fix it.
        reason: String,
    },
    /// The operating system's random generator failed, so no approval key (when the host set
    /// none) or unique ids could be made; the registry does not start on weaker ones.
    RandomUnavailable(RandomUnavailable),
    /// A standing rule names a tool the registry does not have, or shares its id with
    /// another ([`RegistryBuilder::standing_rule`]).
    StandingRule(crate::standing::StandingRuleError),
    /// A pending approval store was set without an approval store: deferred approvals would
    /// be shared between processes while their single use is tracked in each process alone, so
    /// two processes could each run the same approved call.
    PendingStoreWithoutApprovalStore,
    /// A nested string or array in the input schema has no upper bound (compile-time rule 9,
    /// checked here for nested types the derive cannot see).
    Unbounded {
        /// Tool name.
        tool: String,
        /// JSON pointer into the input schema.
        pointer: String,
        /// `string` or `array`.
        kind: &'static str,
    },
    /// A property below the top level (in a nested or flattened struct, a collection or a
    /// map) is named like security context, e.g. `tenant_id` or `api_token` (compile-time
    /// rule 5, checked here where the derive cannot see the nested type's fields).
    SecurityContext {
        /// Tool name.
        tool: String,
        /// JSON pointer into the input schema.
        pointer: String,
    },
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::DuplicateTool { name, version } => {
                write!(f, "tool `{name}` version {version} is registered twice")
            }
            RegistryError::InvalidVersion { name, version } => {
                write!(f, "tool `{name}` has version `{version}`, which is not semver")
            }
            RegistryError::InvalidSchema { tool, side, message } => {
                write!(f, "the {side} schema of `{tool}` does not compile: {message}")
            }
            RegistryError::BacktrackingPattern { tool, side, message } => write!(
                f,
                "the {side} schema of `{tool}` has a pattern that needs backtracking ({message}); use a linear-time regex (no look-around or back-references)"
            ),
            RegistryError::Export(e) => write!(f, "{e}"),
            RegistryError::RandomUnavailable(e) => write!(f, "{e}"),
            RegistryError::StandingRule(e) => write!(f, "{e}"),
            RegistryError::PendingStoreWithoutApprovalStore => f.write_str(
                "a pending approval store needs an approval store too: set `.approval_store(..)` \
                 or `.store(..)` to a store every process resuming approvals shares, so each \
                 approval releases one execution",
            ),
            RegistryError::FlowReference {
                tool,
                field,
                reference,
                reason,
            } => write!(
                f,
                "`{tool}` field `{field}` declares flows_from(\"{reference}\"): {reason}"
            ),
            RegistryError::SecurityContext { tool, pointer } => write!(
                f,
                "the input schema of `{tool}` has a security-context property at `{pointer}`: a tenant, caller, privilege or secret must come from the trusted context (extractors such as `Tenant`, `Principal`, `State<T>`), not from model arguments; if the model really chooses it, mark the top-level field `#[tool(model_supplied = \"why\")]`"
            ),
            RegistryError::Unbounded { tool, pointer, kind } => write!(
                f,
                "the input schema of `{tool}` has an unbounded {kind} at `{pointer}`: add `#[schemars(length(max = N))]` (or `inner(length(max = N))` for items) to the Rust type, or mark the top-level field `#[tool(unbounded = \"why\")]`"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// Builds a [`Registry`].
pub struct RegistryBuilder {
    tools: Vec<Arc<dyn Runner>>,
    limits: ProposalLimits,
    fast_path: bool,
    gate: Option<Box<dyn StateGate>>,
    sink: Option<Box<dyn ReceiptSink>>,
    lint_bounds: bool,
    idempotency_store: Option<Arc<dyn IdempotencyStore>>,
    retention: Duration,
    lease_grace: Duration,
    approval_store: Option<Arc<dyn ApprovalStore>>,
    approval_key: Option<ApprovalKey>,
    approval_ttl: Duration,
    clock: Option<Arc<dyn Clock>>,
    exports: Vec<Exporter>,
    escalate_flows: Vec<String>,
    pending: Option<Arc<dyn crate::store::PendingApprovalStore>>,
    pending_ttl: Duration,
    standing_rules: Vec<crate::standing::StandingRule>,
}

impl Default for RegistryBuilder {
    fn default() -> Self {
        RegistryBuilder {
            tools: Vec::new(),
            limits: ProposalLimits::default(),
            fast_path: true,
            gate: None,
            sink: None,
            lint_bounds: true,
            idempotency_store: None,
            retention: IdempotencyConfig::DEFAULT_RETENTION,
            lease_grace: IdempotencyConfig::DEFAULT_LEASE_GRACE,
            approval_store: None,
            approval_key: None,
            approval_ttl: crate::approval::DEFAULT_TTL,
            clock: None,
            exports: Vec::new(),
            escalate_flows: Vec::new(),
            pending: None,
            pending_ttl: super::deferred::DEFAULT_PENDING_TTL,
            standing_rules: Vec::new(),
        }
    }
}

impl RegistryBuilder {
    /// Adds a tool.
    #[must_use]
    pub fn tool<T: Tool>(mut self, tool: T) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }

    /// Adds every tool of a toolset.
    #[must_use]
    pub fn toolset<A: Access>(mut self, set: Toolset<A>) -> Self {
        self.tools.extend(set.runners());
        self
    }

    /// Sets the proposal limits.
    #[must_use]
    pub fn limits(mut self, limits: ProposalLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Whether proposals are first tried on the fast path (on by default).
    ///
    /// The fast path reads the common proposal shape (`{"name", "id", "arguments": {...}}`)
    /// into a borrowed tree and admits it with the same rules, schema and decoding as the full
    /// path; whatever it does not accept, the full path decides. Both give the same verdict,
    /// the same validated arguments and the same envelope, so this only changes the cost of a
    /// call. Turning it off is for comparing the two, or for ruling the fast path out while
    /// investigating.
    #[must_use]
    pub fn fast_path(mut self, on: bool) -> Self {
        self.fast_path = on;
        self
    }

    /// Sets the state gate consulted for every call.
    #[must_use]
    pub fn state_gate(mut self, gate: impl StateGate) -> Self {
        self.gate = Some(Box::new(gate));
        self
    }

    /// Sends a receipt of every call to `sink`.
    #[must_use]
    pub fn receipts(mut self, sink: impl ReceiptSink) -> Self {
        self.sink = Some(Box::new(sink));
        self
    }

    /// Keeps idempotency records in `store` (default: in memory, for this process only).
    ///
    /// ```no_run
    /// # use tool_contract::{Registry, store::MemoryStore};
    /// let registry = Registry::builder().idempotency_store(MemoryStore::new()).build()?;
    /// # Ok::<(), tool_contract::RegistryError>(())
    /// ```
    #[must_use]
    pub fn idempotency_store(mut self, store: impl IdempotencyStore) -> Self {
        self.idempotency_store = Some(Arc::new(store));
        self
    }

    /// Tracks single-use approval grants in `store` (default: in memory).
    #[must_use]
    pub fn approval_store(mut self, store: impl ApprovalStore) -> Self {
        self.approval_store = Some(Arc::new(store));
        self
    }

    /// Keeps deferred approval requests in `store` (default: in memory, so only this
    /// registry can decide them, and at most 10,000 wait at once). Give every process that
    /// lists, decides or resumes them the same durable store, and the same approval store
    /// (`approval_store` or `store`; building fails without one), which is what lets each
    /// approval release one execution; see [`Registry::defer`](crate::Registry::defer).
    ///
    /// Whoever can write this store can approve calls: an approved record is released by
    /// any registry that shares it. Protect it like the approval key.
    #[must_use]
    pub fn pending_approval_store(
        mut self,
        store: impl crate::store::PendingApprovalStore,
    ) -> Self {
        self.pending = Some(Arc::new(store));
        self
    }

    /// How long a deferred approval request may wait for its decision, and an approved one
    /// for its release (1 hour by default).
    #[must_use]
    pub fn pending_approval_ttl(mut self, ttl: Duration) -> Self {
        self.pending_ttl = ttl;
        self
    }

    /// Uses one backend for both idempotency records and approval grants.
    #[must_use]
    pub fn store<S: IdempotencyStore + ApprovalStore>(self, store: S) -> Self {
        let store = Arc::new(store);
        self.idempotency_store(Arc::clone(&store))
            .approval_store(store)
    }

    /// How long a completed write's result is kept and replayed (default 24 hours). After
    /// that the record is forgotten and the same key runs the tool again, as a new request.
    #[must_use]
    pub fn idempotency_retention(mut self, retention: Duration) -> Self {
        self.retention = retention;
        self
    }

    /// Added to a call's longest possible run time to make its lease (default 30 seconds):
    /// the time an ambiguous write (timed out, crashed, caller gone) keeps its key held.
    #[must_use]
    pub fn lease_grace(mut self, grace: Duration) -> Self {
        self.lease_grace = grace;
        self
    }

    /// Signs and verifies approval grants with `key`. Every replica that executes approved
    /// calls needs the same key; without one the registry makes a random key, so its grants
    /// verify only in this process.
    #[must_use]
    pub fn approval_key(mut self, key: ApprovalKey) -> Self {
        self.approval_key = Some(key);
        self
    }

    /// Registers a standing approval: calls it matches run without asking a human, each
    /// counted against its maximum of uses (see [`crate::standing`]). Rules can also be added
    /// and revoked on a built registry ([`Registry::add_standing_rule`]).
    #[must_use]
    pub fn standing_rule(mut self, rule: crate::standing::StandingRule) -> Self {
        self.standing_rules.push(rule);
        self
    }

    /// How long a grant stays valid after it is given (default 10 minutes).
    #[must_use]
    pub fn approval_ttl(mut self, ttl: Duration) -> Self {
        self.approval_ttl = ttl;
        self
    }

    /// The clock for leases, retention and grant expiry (default
    /// [`SystemClock`](crate::clock::SystemClock), which follows a paused Tokio clock).
    #[must_use]
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Some(Arc::new(clock));
        self
    }

    /// Refuses to build unless every tool exports with `exporter` (e.g. OpenAI strict), so a
    /// schema a provider would reject fails at start-up, naming the tool, the field and the
    /// dialect, instead of failing every request. Call it once per dialect you serve.
    ///
    /// ```
    /// # use tool_contract::{tool, ToolArgs, ToolError, Registry, RegistryError};
    /// use tool_contract::export::{Dialect, Exporter};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct TagNoteArgs {
    /// #     /// Labels and their values.
    /// #     #[tool(unbounded = "a demo of a free-form map")]
    /// #     labels: std::collections::HashMap<String, String>,
    /// # }
    /// # /// Tags a note. Use it to label notes for later search.
    /// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    /// # async fn tag_note(args: TagNoteArgs) -> Result<bool, ToolError> { Ok(true) }
    /// let err = Registry::builder()
    ///     .tool(TagNote)
    ///     .lint_bounds(false)
    ///     .check_export(Exporter::new(Dialect::OpenAi))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(err, RegistryError::Export(_)));
    /// assert!(err.to_string().contains("cannot export `tag_note` to openai: /properties/labels"));
    /// ```
    #[must_use]
    pub fn check_export(mut self, exporter: Exporter) -> Self {
        self.exports.push(exporter);
        self
    }

    /// Flow control: for the tool named `tool`, a call that breaks its fields' flow policy is
    /// sent for approval (with each argument's source in the subject) instead of refused.
    /// Tools with an approval policy always escalate.
    #[must_use]
    pub fn escalate_flows(mut self, tool: impl Into<String>) -> Self {
        self.escalate_flows.push(tool.into());
        self
    }

    /// Turns the nested-bounds lint off (rule 9 for nested types: every string and array in the
    /// input schema has an upper bound). On by default.
    #[must_use]
    pub fn lint_bounds(mut self, on: bool) -> Self {
        self.lint_bounds = on;
        self
    }

    /// Compiles every schema once and checks the set; fails on the first problem.
    pub fn build(self) -> Result<Registry, RegistryError> {
        let mut by_name: BTreeMap<String, Vec<Arc<Entry>>> = BTreeMap::new();
        for runner in self.tools {
            let contract = runner.contract();
            let version = semver::Version::parse(&contract.version).map_err(|_| {
                RegistryError::InvalidVersion {
                    name: contract.name.clone(),
                    version: contract.version.clone(),
                }
            })?;
            let versions = by_name.entry(contract.name.clone()).or_default();
            if versions.iter().any(|e| e.version == version) {
                return Err(RegistryError::DuplicateTool {
                    name: contract.name.clone(),
                    version: contract.version.clone(),
                });
            }
            lint_security_context(contract, runner.fields())?;
            if self.lint_bounds {
                lint_bounds(contract, runner.fields())?;
            }
            let escalate = self.escalate_flows.contains(&contract.name);
            let entry = Entry::new(Arc::clone(&runner), version, escalate).map_err(|e| {
                if e.backtracking {
                    RegistryError::BacktrackingPattern {
                        tool: contract.name.clone(),
                        side: e.side,
                        message: e.message,
                    }
                } else {
                    RegistryError::InvalidSchema {
                        tool: contract.name.clone(),
                        side: e.side,
                        message: e.message,
                    }
                }
            })?;
            versions.push(Arc::new(entry));
            versions.sort_by(|a, b| b.version.cmp(&a.version));
        }
        let contracts: Vec<&ToolContract> =
            by_name.values().flatten().map(|e| e.contract).collect();
        crate::flow::references::check(&contracts).map_err(|b| RegistryError::FlowReference {
            tool: b.tool,
            field: b.field,
            reference: b.reference,
            reason: b.reason,
        })?;
        if self.pending.is_some() && self.approval_store.is_none() {
            return Err(RegistryError::PendingStoreWithoutApprovalStore);
        }
        // One in-memory store serves both concerns unless the host chose others.
        let memory = Arc::new(MemoryStore::new());
        let services = Services::new(
            self.limits,
            self.fast_path,
            self.gate,
            self.sink,
            IdempotencyConfig {
                store: self.idempotency_store.unwrap_or_else(|| memory.clone()),
                retention_ms: millis(self.retention),
                lease_grace_ms: millis(self.lease_grace),
            },
            self.clock
                .unwrap_or_else(|| Arc::new(crate::clock::SystemClock::new())),
            UniqueIds::new().map_err(RegistryError::RandomUnavailable)?,
        );
        let approval_store: Arc<dyn ApprovalStore> = self.approval_store.unwrap_or(memory);
        let standing = crate::standing::StandingRules::new(Arc::clone(&approval_store));
        for rule in self.standing_rules {
            if !by_name.contains_key(rule.tool()) {
                return Err(RegistryError::StandingRule(
                    crate::standing::StandingRuleError::new(format!(
                        "standing rule {:?} names tool {:?}, which is not registered",
                        rule.id(),
                        rule.tool()
                    )),
                ));
            }
            standing.add(rule).map_err(RegistryError::StandingRule)?;
        }
        let approvals = ApprovalConfig {
            store: approval_store,
            standing,
            key: match self.approval_key {
                Some(key) => key,
                None => ApprovalKey::generate().map_err(RegistryError::RandomUnavailable)?,
            },
            ttl_ms: millis(self.approval_ttl),
        };
        let registry = Registry {
            inner: Arc::new(Shared {
                catalog: Catalog::new(by_name),
                services,
                approvals,
                deferred: super::deferred::DeferredConfig {
                    store: self
                        .pending
                        .clone()
                        .unwrap_or_else(|| Arc::new(crate::store::MemoryStore::new())),
                    ttl_ms: crate::clock::millis(self.pending_ttl),
                },
            }),
        };
        for exporter in &self.exports {
            exporter
                .export_registry(&registry)
                .map_err(RegistryError::Export)?;
        }
        Ok(registry)
    }
}

/// What [`find_in_schema`] asks of each subschema: its keywords, pointer and property name.
type Visit<'v, T> = dyn FnMut(&Map<String, Value>, &str, Option<&str>) -> Option<T> + 'v;

/// Visits every subschema of `schema` (itself first, then properties, items, map values and
/// union branches, depth-first) with its JSON pointer, until `visit` returns `Some`.
/// `property` is the property name a subschema is the value of, if any.
fn find_in_schema<T>(
    schema: &Value,
    pointer: &str,
    property: Option<&str>,
    depth: usize,
    visit: &mut Visit<'_, T>,
) -> Option<T> {
    let Value::Object(m) = schema else {
        return None;
    };
    if depth > 32 {
        return None;
    }
    if let Some(found) = visit(m, pointer, property) {
        return Some(found);
    }
    if let Some(Value::Object(props)) = m.get("properties") {
        for (k, v) in props {
            let here = format!(
                "{pointer}/properties/{}",
                k.replace('~', "~0").replace('/', "~1")
            );
            if let Some(found) = find_in_schema(v, &here, Some(k), depth + 1, visit) {
                return Some(found);
            }
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(v) = m.get(key) {
            let here = format!("{pointer}/{key}");
            if let Some(found) = find_in_schema(v, &here, None, depth + 1, visit) {
                return Some(found);
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(alts)) = m.get(key) {
            for (i, v) in alts.iter().enumerate() {
                let here = format!("{pointer}/{key}/{i}");
                if let Some(found) = find_in_schema(v, &here, None, depth + 1, visit) {
                    return Some(found);
                }
            }
        }
    }
    None
}

/// Rule 9 for nested types: every string and array a model can write has an upper bound.
/// Top-level fields marked `#[tool(unbounded = "...")]` are skipped with their subtree;
/// strings constrained by `enum`, `const` or a fixed-size `format` are bounded already.
fn lint_bounds(
    contract: &crate::ToolContract,
    fields: &[crate::ArgField],
) -> Result<(), RegistryError> {
    let mut unbounded = |m: &Map<String, Value>, pointer: &str, _: Option<&str>| {
        let types: Vec<&str> = match m.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let fixed = m.contains_key("enum")
            || m.contains_key("const")
            || matches!(
                m.get("format").and_then(Value::as_str),
                Some("date" | "date-time" | "time" | "uuid" | "ipv4" | "ipv6")
            );
        if types.contains(&"string") && !fixed && !m.contains_key("maxLength") {
            return Some((pointer.to_owned(), "string"));
        }
        if types.contains(&"array") && !m.contains_key("maxItems") {
            return Some((pointer.to_owned(), "array"));
        }
        None
    };
    for (name, schema, pointer) in top_level(contract) {
        if fields
            .iter()
            .any(|f| f.wire_name == name && f.unbounded.is_some())
        {
            continue;
        }
        if let Some((pointer, kind)) = find_in_schema(schema, &pointer, None, 0, &mut unbounded) {
            return Err(RegistryError::Unbounded {
                tool: contract.name.clone(),
                pointer,
                kind,
            });
        }
    }
    Ok(())
}

/// Rule 5 below the top level: no property a model writes, at any depth, is named like
/// security context. Top-level fields are the derive's to check (at compile time, with their
/// `model_supplied` opt-out); a top-level field marked `model_supplied` is skipped with its
/// subtree. Properties a flattened struct brings to the top level are checked here.
fn lint_security_context(
    contract: &crate::ToolContract,
    fields: &[crate::ArgField],
) -> Result<(), RegistryError> {
    let mut named = |_: &Map<String, Value>, pointer: &str, property: Option<&str>| {
        property
            .and_then(crate::security_names::security_name)
            .map(|_| pointer.to_owned())
    };
    for (name, schema, pointer) in top_level(contract) {
        let field = fields.iter().find(|f| f.wire_name == name);
        if field.is_some_and(|f| f.model_supplied.is_some()) {
            continue;
        }
        // A declared field's own name was checked by the derive; one a flattened struct
        // brought is checked here, with everything below.
        let found = if field.is_none() {
            find_in_schema(schema, &pointer, Some(name), 0, &mut named)
        } else {
            find_in_schema(schema, &pointer, None, 0, &mut named)
        };
        if let Some(pointer) = found {
            return Err(RegistryError::SecurityContext {
                tool: contract.name.clone(),
                pointer,
            });
        }
    }
    Ok(())
}

/// The top-level properties of a tool's input schema: name, schema, JSON pointer.
fn top_level(contract: &crate::ToolContract) -> impl Iterator<Item = (&str, &Value, String)> {
    contract
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, schema)| {
            let pointer = format!("/properties/{}", name.replace('~', "~0").replace('/', "~1"));
            (name.as_str(), schema, pointer)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_random_generator_stops_the_build() {
        let err = crate::random::tests::failing(|| Registry::builder().build()).unwrap_err();
        assert!(matches!(err, RegistryError::RandomUnavailable(_)), "{err}");
        // A host key does not help: claim tokens and grant ids need the generator too.
        let key = ApprovalKey::new(&[7u8; 32]).unwrap();
        let err = crate::random::tests::failing(|| Registry::builder().approval_key(key).build())
            .unwrap_err();
        assert!(
            err.to_string().contains("random generator is unavailable"),
            "{err}"
        );
        assert!(Registry::builder().build().is_ok());
    }
}
