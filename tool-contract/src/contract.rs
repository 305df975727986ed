//! The twelve contract fields, as serializable data.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::effect::Effect;
use crate::error::ErrorCategory;

/// Everything a host needs to know about a tool before letting a model use it.
///
/// Built once per tool by `#[tool]` (see [`Tool::contract`](crate::Tool::contract)); serializes
/// to JSON for prompts, audits, lock files and replays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolContract {
    /// 1. Stable `verb_object` name.
    pub name: String,
    /// 12. Semantic version of the schema and meaning.
    pub version: String,
    /// 2. Decision-oriented description: when to use, when not, how it differs.
    pub description: String,
    /// 3. Draft 2020-12 input schema (`additionalProperties: false`).
    pub input_schema: Value,
    /// 4. Draft 2020-12 schema of the handler's output: every object closed (see
    ///    [`schema::close_output`](crate::schema::close_output)) unless
    ///    [`Self::open_output`] says why not.
    pub output_schema: Value,
    /// 5. The error categories an observation can carry, and what each means to the agent.
    pub error_model: ErrorModel,
    /// 6. Effect class.
    pub effect: Effect,
    /// 7. What the trusted context must grant.
    pub authorization: Authorization,
    /// 8. Whether a human approves before execution.
    pub approval: ApprovalPolicy,
    /// 9. Per-attempt timeout in milliseconds.
    pub timeout_ms: u64,
    /// 10. Automatic retry policy.
    pub retry: RetryPolicy,
    /// 11. Where the idempotency key comes from.
    pub idempotency: IdempotencyPolicy,
    /// The host's policy version this contract was reviewed under.
    pub policy_version: Option<String>,
    /// Where in the output the data's source and revision are, for the observation's provenance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<ProvenanceSpec>,
    /// Flow control: where each argument may take its value from, and which output values are
    /// confidential (see the `flow` module). Empty when the tool declares nothing.
    #[serde(default, skip_serializing_if = "FlowContract::is_empty")]
    pub flow: FlowContract,
    /// The largest output, in bytes of its JSON text, the tool may return
    /// (`#[tool(max_output_bytes = N)]`, default [`DEFAULT_MAX_OUTPUT_BYTES`]). A larger output
    /// is withheld as `OUTPUT_CONTRACT_VIOLATION`.
    #[serde(default = "default_max_output_bytes")]
    pub max_output_bytes: u64,
    /// Why the output schema accepts properties it does not declare
    /// (`#[tool(open_output = "why")]`); `None` (the default) when every object in it is closed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_output: Option<String>,
    /// The schema of what the model sees instead of the full output, for a tool that declares
    /// a model view (`#[tool(model_view = f)]`): the host gets the full output, checked
    /// against [`Self::output_schema`], and the model this view of it, checked against this
    /// schema. Closed like the output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_view_schema: Option<Value>,
    /// Named versions of what the tool depends on beyond its code, e.g. the index it searches
    /// (`#[tool(depends_on(index = "retrieval-v5"))]`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub depends_on: BTreeMap<String, Dependency>,
    /// Hashes and ids that tell versions apart in traces and replays.
    pub fingerprint: Fingerprint,
}

impl ToolContract {
    /// The schema of the data the model sees: the model view's when the tool declares one,
    /// else the output schema. Exporters and flow declarations (pointers into a tool's result)
    /// use this one, since it is what an observation carries.
    pub fn model_output_schema(&self) -> &Value {
        self.model_view_schema
            .as_ref()
            .unwrap_or(&self.output_schema)
    }
}

/// The output size cap of a tool that declares none: 1 MiB of JSON text.
///
/// Large enough for any answer a model should read in one observation; an output past it is
/// more likely a runaway query than data, and would crowd everything else out of the prompt.
pub const DEFAULT_MAX_OUTPUT_BYTES: u64 = 1024 * 1024;

fn default_max_output_bytes() -> u64 {
    DEFAULT_MAX_OUTPUT_BYTES
}

/// One named dependency version (`depends_on(index = "retrieval-v5")`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Dependency {
    /// The version, e.g. `retrieval-v5` or `2026-11`.
    pub version: String,
    /// How a change of it is classed (`on_change = "minor"`); major unless declared.
    #[serde(default, skip_serializing_if = "DependencyChange::is_major")]
    pub on_change: DependencyChange,
}

impl Dependency {
    /// A dependency whose change is classed as `on_change`.
    pub fn new(version: impl Into<String>, on_change: DependencyChange) -> Self {
        Dependency {
            version: version.into(),
            on_change,
        }
    }
}

/// How a change of a dependency's version is classed when the tool is versioned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DependencyChange {
    /// Results may mean something else: the tool's major version must change (the default).
    #[default]
    Major,
    /// Compatible: a minor bump is enough (`on_change = "minor"`).
    Minor,
    /// Invisible to callers: a patch bump is enough (`on_change = "patch"`).
    Patch,
}

impl DependencyChange {
    /// Whether this is the default, [`DependencyChange::Major`].
    pub fn is_major(&self) -> bool {
        *self == DependencyChange::Major
    }
}

/// The error side of the contract (field 5).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ErrorModel {
    /// Every category an error observation can carry.
    pub categories: Vec<CategoryInfo>,
    /// Categories the executor retries automatically for this tool (empty when `max_attempts == 1`).
    pub auto_retried: Vec<ErrorCategory>,
}

/// One error category, with its default retryability and the agent's expected reaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CategoryInfo {
    /// The category.
    pub category: ErrorCategory,
    /// Whether errors of this category are retryable by default.
    pub retryable: bool,
    /// What the agent should do.
    pub agent_action: String,
}

impl ErrorModel {
    /// The error model of a tool with the given retry policy.
    pub fn for_retry(retry: &RetryPolicy) -> Self {
        let categories = ErrorCategory::ALL
            .iter()
            .map(|&category| CategoryInfo {
                category,
                retryable: category.default_retryable(),
                agent_action: category.agent_action().to_owned(),
            })
            .collect();
        let auto_retried = if retry.max_attempts > 1 {
            ErrorCategory::ALL
                .iter()
                .copied()
                .filter(|c| c.default_retryable())
                .collect()
        } else {
            Vec::new()
        };
        ErrorModel {
            categories,
            auto_retried,
        }
    }
}

/// What the trusted context must provide (field 7).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Authorization {
    /// Capabilities the principal must hold, all of them.
    pub capabilities: Vec<String>,
    /// The trusted extractors the handler takes, e.g. `["Tenant", "IdempotencyKey"]`.
    pub extractors: Vec<String>,
}

/// Whether a human approves a call before it runs (field 8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Runs without approval.
    Never,
    /// Needs approval when the args type's [`ApprovalCondition`](crate::ApprovalCondition) says so.
    Conditional,
    /// Always needs approval.
    Always,
}

/// Automatic retry policy (field 10). Only retryable categories are retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RetryPolicy {
    /// Attempts in total, including the first; 1 means no automatic retry.
    pub max_attempts: u32,
    /// Backoff before the second attempt; doubles each time.
    pub backoff_ms: u64,
    /// Upper bound of the backoff.
    pub max_backoff_ms: u64,
}

impl RetryPolicy {
    /// No automatic retry.
    pub const NONE: RetryPolicy = RetryPolicy {
        max_attempts: 1,
        backoff_ms: 0,
        max_backoff_ms: 0,
    };

    /// A policy; `#[tool(retry(...))]` checks the bounds at compile time.
    pub const fn new(max_attempts: u32, backoff_ms: u64, max_backoff_ms: u64) -> Self {
        RetryPolicy {
            max_attempts,
            backoff_ms,
            max_backoff_ms,
        }
    }

    /// The backoff before the retry that follows attempt `attempt` (1-based), before jitter:
    /// `backoff_ms` doubled per attempt, capped at `max_backoff_ms` when that is set. The
    /// executor waits between half of it and all of it.
    pub fn backoff_ceiling_ms(&self, attempt: u32) -> u64 {
        let exp = self
            .backoff_ms
            .saturating_mul(1u64 << attempt.saturating_sub(1).min(20));
        if self.max_backoff_ms > 0 {
            exp.min(self.max_backoff_ms)
        } else {
            exp
        }
    }

    /// The longest wait the executor accepts from an error's `retry_after_ms` before a retry:
    /// the backoff cap, and at least a minute. A longer wait is the caller's to schedule.
    pub fn longest_wait_ms(&self) -> u64 {
        self.max_backoff_ms.max(60_000)
    }
}

/// Where a call's idempotency key comes from (field 11).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum IdempotencySource {
    /// No key: the tool is a read, or repeats are harmless.
    None,
    /// An args field marked `#[tool(idempotency_key)]` carries the key.
    Field {
        /// The field's wire name.
        field: String,
    },
    /// The key is a canonical hash of the named args fields (`idempotency(from = [...])`).
    Derived {
        /// The fields' wire names, in declaration order of the attribute.
        fields: Vec<String>,
    },
    /// The host supplies the key in the trusted context (`idempotency(host)`).
    Host,
}

/// The idempotency side of the contract.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct IdempotencyPolicy {
    /// Where the key comes from.
    pub source: IdempotencySource,
    /// Whether the pipeline refuses to run the tool without a key (every write tool).
    pub required: bool,
}

/// JSON pointers into a tool's output naming the data's source and revision
/// (`provenance(source = "/source_id", revision = "/revision")`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProvenanceSpec {
    /// Pointer to the source id, e.g. `/source_id`.
    pub source: String,
    /// Pointer to the revision, e.g. `/revision`.
    pub revision: Option<String>,
}

/// Identifies exactly which contract and code ran, so traces and replays can tell versions
/// apart.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Fingerprint {
    /// [`canonical`](crate::canonical) digest of the input schema (without `$id`).
    pub input_schema_sha256: String,
    /// [`canonical`](crate::canonical) digest of the output schema (without `$id`).
    pub output_schema_sha256: String,
    /// `sha256:` of the canonical contract without its fingerprint: changes when any policy
    /// field (effect, timeout, retry, approval, capabilities, ...) changes.
    pub contract_sha256: String,
    /// `crate@version`, plus `+git.<rev>` when the revision was known at build time.
    pub implementation: String,
    /// The host's policy version, if declared.
    pub policy_version: Option<String>,
    /// The declared dependency versions, by name (`depends_on`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub dependencies: BTreeMap<String, String>,
}

/// Anything that holds a set of tool contracts, as exports read them: sorted by name, each
/// name's versions newest first. A [`Registry`](crate::Registry) is one.
pub trait ContractSource {
    /// Every contract, by name then newest version first.
    fn contracts(&self) -> Vec<&'static ToolContract>;
}

/// A tool's flow control declarations (see the `flow` module). A tool that declares nothing
/// follows the defaults for its effect.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FlowContract {
    /// The fields that declare something, by wire name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, FieldFlow>,
    /// JSON pointers (a `*` segment matches any key or index) of the output values that are
    /// confidential; `""` marks the whole output.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confidential: Vec<String>,
}

impl FlowContract {
    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.confidential.is_empty()
    }
}

/// Where one field may take its value from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FieldFlow {
    /// The field's policy.
    #[serde(default)]
    pub policy: FieldPolicy,
    /// Output values it may take from, as `tool:/pointer` (`*` matches any key or index):
    /// `#[tool(flows_from("read_inbox:/emails/*/sender"))]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flows_from: Vec<String>,
    /// Marked as a URL or a command (`#[tool(url)]`, `#[tool(command)]`): trusted only outside
    /// pure reads, like a string with `format: uri`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub url_or_command: bool,
}

/// A field's flow policy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum FieldPolicy {
    /// The default for the tool's effect: anything for a `pure_read`; for a write or an
    /// `external_read`, no value traced only to untrusted output unless allowlisted.
    #[default]
    Default,
    /// Only values from the trusted intent, or from an allowlisted output
    /// (`#[tool(trusted_only)]`).
    TrustedOnly,
    /// Free text that may quote untrusted output (`#[tool(accepts_untrusted = "why")]`).
    AcceptsUntrusted {
        /// Why the field may carry untrusted text.
        reason: String,
    },
}
