//! Stage 2: the registry. Built once, immutable, `Send + Sync`, cheap to clone: lookup by name
//! and pinned version, schemas compiled once, and the `prepare` pipeline that turns a proposal
//! into a [`PreparedCall`] or a [`Rejection`].

use std::any::Any;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Deserialize;
use serde_json::Value;

use crate::approval::{ApprovalGrant, ApprovalKey, ApprovalRequest, ApprovalSubject, GrantClaims};
use crate::clock::Clock;
use crate::context::ToolContext;
use crate::contract::ToolContract;
use crate::effect::Access;
use crate::envelope::{Meta, Observation, Provenance};
use crate::error::{ErrorCategory, ToolError, ValidationIssue};
use crate::execute::PreparedCall;
use crate::export::{ExportError, Exporter};
use crate::extract::CallMeta;
use crate::fast::Args;
use crate::idempotency::IdempotencyConfig;
use crate::policy::{self, StateGate};
use crate::proposal::{Proposal, ProposalLimits};
use crate::receipt::{OutcomeRecord, ProposalRecord, Receipt, ReceiptSink};
use crate::store::{ApprovalStore, IdempotencyStore, MemoryStore};
use crate::tool::{ArgField, BoxFuture, DynTool, Tool};
use crate::toolset::Toolset;
use crate::validate::{self, ArgsPlan, RepairFeedback, RepairIssue};

/// Typed arguments, erased so one registry holds tools of different types.
pub(crate) struct Decoded(Box<dyn Any + Send>);

/// A handler's output, serialized once and checked against the output schema
/// (`crate::execute::check_output`).
pub(crate) enum Output {
    /// Met the output schema: the envelope's data, and the provenance read from it.
    Valid(Box<serde_json::value::RawValue>, Provenance),
    /// Broke it: what the schema says, for the receipt (never for the model).
    Invalid(Vec<String>),
}

/// The registry's view of a tool: [`DynTool`] plus the typed steps of the pipeline.
pub(crate) trait Runner: DynTool {
    fn fields(&self) -> &'static [ArgField];
    /// `Ok(Err(msg))`: the arguments do not decode; `Err`: host code panicked.
    fn decode(&self, args: &Value) -> Result<Result<Decoded, String>, ToolError>;
    /// The fast path's decoding (`crate::fast`): `None` sends the call to the full path.
    fn decode_lite(&self, args: &crate::lite::Lite<'_>) -> Option<Decoded>;
    fn semantic(
        &self,
        args: &Decoded,
        ctx: &ToolContext,
    ) -> Result<Vec<ValidationIssue>, ToolError>;
    fn needs_approval(&self, args: &Decoded, ctx: &ToolContext) -> Result<bool, ToolError>;
    /// Runs the handler, serializes its output once, to the text the envelope will carry, and
    /// checks it. `entry` is this runner's own entry: its output schema and text-size record.
    fn run<'a>(
        &'a self,
        args: Decoded,
        ctx: &'a ToolContext,
        entry: &'a Entry,
    ) -> BoxFuture<'a, Result<Output, ToolError>>;
}

impl<T: Tool> Runner for T {
    fn fields(&self) -> &'static [ArgField] {
        <T::Args as crate::ToolArgs>::FIELDS
    }

    fn decode(&self, args: &Value) -> Result<Result<Decoded, String>, ToolError> {
        guarded(|| {
            T::Args::deserialize(args)
                .map(|a| Decoded(Box::new(a)))
                .map_err(|e| e.to_string())
        })
    }

    fn decode_lite(&self, args: &crate::lite::Lite<'_>) -> Option<Decoded> {
        // A panicking `Deserialize` is the full path's to report.
        guarded(|| T::Args::deserialize(crate::fast::LiteDe(args)).ok())
            .ok()
            .flatten()
            .map(|a| Decoded(Box::new(a)))
    }

    fn semantic(
        &self,
        args: &Decoded,
        ctx: &ToolContext,
    ) -> Result<Vec<ValidationIssue>, ToolError> {
        guarded(|| match args.0.downcast_ref::<T::Args>() {
            Some(a) => crate::ToolArgs::semantic_issues(a, ctx),
            None => Vec::new(),
        })
    }

    fn needs_approval(&self, args: &Decoded, ctx: &ToolContext) -> Result<bool, ToolError> {
        // A type mix-up cannot happen (each entry decodes its own args); fail safe regardless.
        guarded(|| {
            args.0
                .downcast_ref::<T::Args>()
                .is_none_or(|a| T::requires_approval(a, ctx))
        })
    }

    fn run<'a>(
        &'a self,
        args: Decoded,
        ctx: &'a ToolContext,
        entry: &'a Entry,
    ) -> BoxFuture<'a, Result<Output, ToolError>> {
        Box::pin(async move {
            let args = *args.0.downcast::<T::Args>().map_err(|_| {
                ToolError::internal(
                    "ARGUMENTS_TYPE_MISMATCH",
                    "the registry handed a tool arguments of another type",
                )
            })?;
            let output = self.call(args, ctx).await?;
            // Serialized once: into a tree (in the thread's arena) that is checked
            // and from which the envelope's text is written; for what the tree cannot stand
            // for, straight to the text, which is then parsed to be checked. Like serializing,
            // the check is part of the attempt: its time counts as the attempt's, and a panic
            // in it is the attempt's `HANDLER_PANICKED`.
            let checked = crate::tree::with_bump(|bump| {
                let tree = crate::tree::tree_of(&output, bump)?;
                let text_len = &entry.text_len;
                // Sized from this tool's longest text so far: one allocation, no regrowth.
                let mut text = String::with_capacity(text_len.load(Ordering::Relaxed));
                crate::json_text::write_tree(&mut text, &tree);
                // Written only when the record grows, so the shared line stays read-mostly.
                if text.len() > text_len.load(Ordering::Relaxed) {
                    text_len.fetch_max(text.len().min(MAX_TEXT_HINT), Ordering::Relaxed);
                }
                let raw = crate::json_text::raw_value(text).ok()?;
                Some(crate::execute::check_output(entry, raw, Some(&tree)))
            });
            if let Some(checked) = checked {
                return Ok(checked);
            }
            serde_json::value::to_raw_value(&output)
                .map(|raw| crate::execute::check_output(entry, raw, None))
                .map_err(|_| {
                    ToolError::internal(
                        "OUTPUT_SERIALIZE_FAILED",
                        "the tool produced an output that cannot be serialized",
                    )
                })
        })
    }
}

/// Runs host code (a `Deserialize` impl, a semantic hook, an approval condition) on model
/// data without letting a panic escape the pipeline: it becomes an `INTERNAL` error, and the
/// panic message stays out of the envelope.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, ToolError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|_| {
        ToolError::internal(
            "HOOK_PANICKED",
            "the tool failed unexpectedly while checking the arguments",
        )
    })
}

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
    /// A nested string or array in the input schema has no upper bound (DESIGN rule 9).
    Unbounded {
        /// Tool name.
        tool: String,
        /// JSON pointer into the input schema.
        pointer: String,
        /// `string` or `array`.
        kind: &'static str,
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
            RegistryError::Unbounded { tool, pointer, kind } => write!(
                f,
                "the input schema of `{tool}` has an unbounded {kind} at `{pointer}`: add `#[schemars(length(max = N))]` (or `inner(length(max = N))` for items) to the Rust type, or mark the top-level field `#[tool(unbounded = \"why\")]`"
            ),
        }
    }
}

impl std::error::Error for RegistryError {}

/// One registered (name, version).
pub(crate) struct Entry {
    pub(crate) runner: Arc<dyn Runner>,
    pub(crate) contract: &'static ToolContract,
    pub(crate) version: semver::Version,
    pub(crate) input: jsonschema::Validator,
    /// The same input schema over the fast path's borrowed tree.
    pub(crate) input_lite: jsonschema::Validator<crate::lite::LiteJson>,
    pub(crate) output: jsonschema::Validator<crate::lite::LiteJson>,
    pub(crate) plan: ArgsPlan,
    pub(crate) default_source: &'static str,
    /// The longest output text this tool has written (capped at [`MAX_TEXT_HINT`]): the
    /// capacity the next output's text starts with.
    pub(crate) text_len: AtomicUsize,
}

/// Beyond this, an output's text grows as it is written rather than being reserved up front.
const MAX_TEXT_HINT: usize = 64 * 1024;

pub(crate) struct Inner {
    // A tree, not a hash map: built once, read per call, and for a few dozen names a few
    // string comparisons cost less than hashing the proposed name with SipHash.
    by_name: BTreeMap<String, Vec<Arc<Entry>>>,
    pub(crate) limits: ProposalLimits,
    gate: Option<Box<dyn StateGate>>,
    pub(crate) sink: Option<Box<dyn ReceiptSink>>,
    next_id: AtomicU64,
    pub(crate) idempotency: IdempotencyConfig,
    pub(crate) approvals: Arc<dyn ApprovalStore>,
    approval_key: ApprovalKey,
    approval_ttl_ms: u64,
    pub(crate) clock: Arc<dyn Clock>,
}

/// The set of tools an agent may use, ready to turn proposals into observations.
///
/// ```
/// # use tool_contract::{tool, ToolArgs, ToolError, ToolContext, Registry};
/// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
/// # #[serde(deny_unknown_fields)]
/// # struct PingArgs {}
/// # /// Checks that the service answers. Use it before other calls; it returns nothing else.
/// # #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
/// # async fn ping_service(args: PingArgs) -> Result<bool, ToolError> { Ok(true) }
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let registry = Registry::builder().tool(PingService).build().unwrap();
/// let obs = registry.handle(r#"{"name": "ping_service", "arguments": {}}"#, &ToolContext::default()).await;
/// assert!(obs.ok);
/// assert_eq!(obs.data_value().unwrap(), true);
/// assert_eq!(obs.provenance.trust, "untrusted");
/// # });
/// ```
#[derive(Clone)]
pub struct Registry {
    pub(crate) inner: Arc<Inner>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut tools: Vec<String> = self
            .inner
            .by_name
            .values()
            .flatten()
            .map(|e| format!("{}@{}", e.contract.name, e.contract.version))
            .collect();
        tools.sort();
        f.debug_struct("Registry")
            .field("tools", &tools)
            .field("limits", &self.inner.limits)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Registry`].
pub struct RegistryBuilder {
    tools: Vec<Arc<dyn Runner>>,
    limits: ProposalLimits,
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
}

impl Registry {
    /// Starts a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder {
            tools: Vec::new(),
            limits: ProposalLimits::default(),
            gate: None,
            sink: None,
            lint_bounds: true,
            idempotency_store: None,
            retention: IdempotencyConfig::DEFAULT_RETENTION,
            lease_grace: IdempotencyConfig::DEFAULT_LEASE_GRACE,
            approval_store: None,
            approval_key: None,
            approval_ttl: DEFAULT_APPROVAL_TTL,
            clock: None,
            exports: Vec::new(),
        }
    }

    /// Every registered contract, by name then newest version first.
    pub fn contracts(&self) -> Vec<&'static ToolContract> {
        let mut names: Vec<&String> = self.inner.by_name.keys().collect();
        names.sort();
        names
            .into_iter()
            .flat_map(|n| self.inner.by_name[n].iter().map(|e| e.contract))
            .collect()
    }

    /// The proposal limits in force.
    pub fn limits(&self) -> &ProposalLimits {
        &self.inner.limits
    }

    /// The wall-clock time of a proposal, for its receipt: read only when there is a sink to
    /// take one (each clock read costs more than most checks on the hot path).
    fn received_at_ms(&self) -> u64 {
        if self.inner.sink.is_some() {
            now_ms()
        } else {
            0
        }
    }

    fn next_call_id(&self) -> String {
        let n = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        format!("call_{n:06}")
    }

    /// The entry for `name`: the version the context pins, else the newest.
    fn lookup(&self, name: &str, ctx: &ToolContext) -> Result<&Arc<Entry>, ToolError> {
        let Some(versions) = self.inner.by_name.get(name) else {
            // Only tools this caller could use: the list must not map the host's whole surface.
            let mut known: Vec<&str> = self
                .inner
                .by_name
                .iter()
                .filter(|(_, versions)| {
                    versions.first().is_some_and(|e| {
                        e.contract
                            .authorization
                            .capabilities
                            .iter()
                            .all(|c| ctx.has_capability(c))
                    })
                })
                .map(|(name, _)| name.as_str())
                .collect();
            known.sort_unstable();
            return Err(ToolError::invalid_input(
                "UNKNOWN_TOOL",
                "no tool of this name is available",
            )
            .with_detail("tool", name.chars().take(128).collect::<String>())
            .with_detail("available", known));
        };
        match ctx.pinned_version(name) {
            None => versions
                .first()
                .ok_or_else(|| ToolError::internal("NO_VERSIONS", "the tool has no version")),
            Some(pin) => versions
                .iter()
                .find(|e| e.contract.version == pin)
                .ok_or_else(|| {
                    ToolError::not_found(
                        "TOOL_VERSION_NOT_FOUND",
                        "the pinned version of this tool is not registered",
                    )
                    .with_detail("tool", name.to_owned())
                    .with_detail("pinned_version", pin.to_owned())
                }),
        }
    }

    /// Parses raw proposal text under the registry's limits, then [`prepare`](Self::prepare)s it.
    pub fn prepare_raw(&self, raw: &str, ctx: &ToolContext) -> Result<Prepared, Rejection> {
        if let Some(validated) = self.validate_fast(raw, ctx) {
            let validated = validated?;
            let authorized = self.authorize(validated, ctx)?;
            return self.finish(authorized, ctx);
        }
        match Proposal::parse(raw, &self.inner.limits) {
            Ok(p) => self.prepare(p, ctx),
            Err(err) => Err(self.reject_unparsed(err, ctx)),
        }
    }

    fn reject_unparsed(&self, err: ToolError, _ctx: &ToolContext) -> Rejection {
        let call_id = self.next_call_id();
        let record = ProposalRecord {
            name: String::new(),
            arguments: Value::Null,
            call_id: None,
        };
        let draft = Draft {
            call_id,
            started: Instant::now(),
            record: Some(Box::new(record)),
            received_at_ms: self.received_at_ms(),
        };
        let issue = RepairIssue {
            path: String::new(),
            keyword: err.code().to_owned(),
            expected: Value::String("a well-formed proposal".into()),
            actual: Value::String(err.message().to_owned()),
        };
        let feedback = RepairFeedback::new("", vec![issue]);
        self.reject(err, None, "", draft, "parse", Some(feedback))
    }

    /// Runs every check of the seed, in order, on `proposal`: known tool and pinned version →
    /// null-dropping and defaults → JSON Schema (every error) → semantic rules → capabilities →
    /// state gate → deadline → idempotency key → budget reservation → approval.
    ///
    /// Returns a [`PreparedCall`] (the only thing [`execute`](Self::execute) accepts), an
    /// [`ApprovalRequest`], or a [`Rejection`] holding the error observation and, when the
    /// model can fix its arguments, the seed's repair feedback.
    pub fn prepare(&self, proposal: Proposal, ctx: &ToolContext) -> Result<Prepared, Rejection> {
        let validated = self.validate(proposal, ctx)?;
        let authorized = self.authorize(validated, ctx)?;
        self.finish(authorized, ctx)
    }

    /// Stage 1 of [`prepare`](Self::prepare): lookup (pinned version or the newest),
    /// null-dropping and defaults, the input schema (every error), decoding and the semantic
    /// rules. The result has passed every check that looks only at the arguments.
    pub fn validate(
        &self,
        mut proposal: Proposal,
        ctx: &ToolContext,
    ) -> Result<ValidatedCall, Rejection> {
        let started = Instant::now();
        let record = self.inner.sink.as_ref().map(|_| {
            Box::new(ProposalRecord {
                name: proposal.name.clone(),
                arguments: proposal.arguments.clone(),
                call_id: proposal.call_id.clone(),
            })
        });
        let call_id = proposal
            .call_id
            .take()
            .unwrap_or_else(|| self.next_call_id());
        let draft = Draft {
            call_id,
            started,
            record,
            received_at_ms: self.received_at_ms(),
        };

        let entry = match self.lookup(&proposal.name, ctx) {
            Ok(e) => Arc::clone(e),
            Err(err) => {
                let feedback = (err.code() == "UNKNOWN_TOOL").then(|| {
                    RepairFeedback::new(
                        &proposal.name,
                        vec![RepairIssue {
                            path: String::new(),
                            keyword: "UNKNOWN_TOOL".into(),
                            expected: err
                                .safe_details()
                                .get("available")
                                .cloned()
                                .unwrap_or(Value::Null),
                            actual: Value::String(proposal.name.chars().take(64).collect()),
                        }],
                    )
                });
                return Err(self.reject(err, None, &proposal.name, draft, "lookup", feedback));
            }
        };
        let mut args = proposal.arguments;
        entry.plan.apply(&mut args);

        if !entry.input.is_valid(&args) {
            // Capped: feedback goes back into the model's context, and an array of 60 000 wrong
            // items must not become 60 000 issues.
            let issues: Vec<RepairIssue> = entry
                .input
                .iter_errors(&args)
                .take(validate::MAX_ISSUES)
                .map(|e| validate::issue_from_error(&e))
                .collect();
            return Err(self.reject_repairable(issues, &entry, draft));
        }
        let decoded = match entry.runner.decode(&args) {
            Err(err) => return Err(self.reject(err, Some(&entry), "", draft, "validate", None)),
            Ok(Ok(d)) => d,
            Ok(Err(msg)) => {
                let issues = vec![RepairIssue {
                    path: String::new(),
                    keyword: "deserialize".into(),
                    expected: Value::String("arguments matching the input schema".into()),
                    actual: Value::String(msg.chars().take(200).collect()),
                }];
                return Err(self.reject_repairable(issues, &entry, draft));
            }
        };
        self.check_semantic(entry, Args::ready(args), decoded, draft, ctx)
    }

    /// The fast path's stage 1 (`crate::fast`): `None` leaves the proposal to
    /// [`Proposal::parse`] and [`validate`](Self::validate), which then decide everything,
    /// including every error; nothing here has a side effect before it is sure.
    fn validate_fast(
        &self,
        raw: &str,
        ctx: &ToolContext,
    ) -> Option<Result<ValidatedCall, Rejection>> {
        // A receipt keeps the raw proposal as parsed: that is the full path's job.
        if self.inner.sink.is_some() {
            return None;
        }
        let started = Instant::now();
        let limits = &self.inner.limits;
        // The proposal's tree lives in the thread's arena until its arguments are decoded.
        let (entry, decoded, call_id) = crate::tree::with_bump(|bump| {
            let (name, id, mut args) = crate::fast::proposal(raw, bump, limits)?;
            let crate::lite::Lite::Str(name) = name else {
                return None;
            };
            let entry = Arc::clone(self.lookup(name, ctx).ok()?);
            if !entry.plan.apply_lite(&mut args, bump) || !entry.input_lite.is_valid(&args) {
                return None;
            }
            let decoded = entry.runner.decode_lite(&args)?;
            Some((entry, decoded, crate::fast::call_id(id.as_ref())))
        })?;
        let draft = Draft {
            call_id: call_id.unwrap_or_else(|| self.next_call_id()),
            started,
            record: None,
            received_at_ms: self.received_at_ms(),
        };
        let args = Args::deferred(raw, *limits);
        Some(self.check_semantic(entry, args, decoded, draft, ctx))
    }

    /// The end of stage 1, on either path: the semantic rules.
    fn check_semantic(
        &self,
        entry: Arc<Entry>,
        args: Args,
        decoded: Decoded,
        draft: Draft,
        ctx: &ToolContext,
    ) -> Result<ValidatedCall, Rejection> {
        let semantic = match entry.runner.semantic(&decoded, ctx) {
            Ok(issues) => issues,
            Err(err) => return Err(self.reject(err, Some(&entry), "", draft, "validate", None)),
        };
        if !semantic.is_empty() {
            let issues: Vec<RepairIssue> = semantic
                .iter()
                .map(|i| validate::issue_from_semantic(i, args.get(&entry.plan)))
                .collect();
            let rejection = if semantic.iter().all(|i| i.repairable) {
                self.reject_repairable(issues, &entry, draft)
            } else {
                // A rule no regeneration can satisfy is a policy decision, not a repair prompt.
                let err = ToolError::policy_denied(
                    "SEMANTIC_RULE_DENIED",
                    "a business rule forbids this call",
                )
                .with_detail(
                    "issues",
                    serde_json::to_value(&issues).unwrap_or(Value::Null),
                );
                self.reject(err, Some(&entry), "", draft, "validate", None)
            };
            return Err(rejection);
        }
        Ok(ValidatedCall {
            entry,
            args,
            decoded,
            draft,
        })
    }

    /// Stage 2 of [`prepare`](Self::prepare): capabilities, the state gate, the deadline and
    /// the idempotency key, all from the trusted context.
    pub fn authorize(
        &self,
        call: ValidatedCall,
        ctx: &ToolContext,
    ) -> Result<AuthorizedCall, Rejection> {
        let ValidatedCall {
            entry,
            args,
            decoded,
            draft,
        } = call;
        let contract = entry.contract;
        let authorized = policy::check_capabilities(contract, ctx)
            .and_then(|()| {
                self.inner
                    .gate
                    .as_ref()
                    .map_or(Ok(()), |g| g.check(contract, ctx))
            })
            .and_then(|()| policy::check_deadline(contract, ctx));
        if let Err(err) = authorized {
            return Err(self.reject(err, Some(&entry), "", draft, "authorize", None));
        }
        // Only keys taken from the arguments need them as a `Value` (built now on the fast
        // path); the others never look.
        let from_args = matches!(
            contract.idempotency.source,
            crate::contract::IdempotencySource::Field { .. }
                | crate::contract::IdempotencySource::Derived { .. }
        );
        let no_args = Value::Null;
        let key_args = if from_args {
            args.get(&entry.plan)
        } else {
            &no_args
        };
        let key = match crate::idempotency::resolve_key(contract, key_args, ctx) {
            Ok(k) => k,
            Err(err) => {
                let feedback = (err.category() == ErrorCategory::InvalidInput).then(|| {
                    let field = err
                        .safe_details()
                        .get("field")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    RepairFeedback::new(
                        &contract.name,
                        vec![RepairIssue {
                            path: format!("/{field}"),
                            keyword: err.code().to_owned(),
                            expected: Value::String(err.message().to_owned()),
                            actual: Value::Null,
                        }],
                    )
                });
                return Err(self.reject(err, Some(&entry), "", draft, "authorize", feedback));
            }
        };
        Ok(AuthorizedCall {
            validated: ValidatedCall {
                entry,
                args,
                decoded,
                draft,
            },
            key,
        })
    }

    /// Stage 3 of [`prepare`](Self::prepare): the approval decision and, for a call that can
    /// run now, the budget reservation.
    pub fn finish(&self, call: AuthorizedCall, ctx: &ToolContext) -> Result<Prepared, Rejection> {
        let AuthorizedCall {
            validated:
                ValidatedCall {
                    entry,
                    args,
                    decoded,
                    draft,
                },
            key,
        } = call;
        let contract = entry.contract;
        let needs_approval = match entry.runner.needs_approval(&decoded, ctx) {
            Ok(n) => n,
            Err(err) => return Err(self.reject(err, Some(&entry), "", draft, "authorize", None)),
        };
        // A call waiting for a human holds no budget; it reserves when it is released.
        let reservation = if needs_approval {
            None
        } else {
            match policy::reserve(contract, ctx) {
                Ok(r) => r,
                Err(err) => {
                    return Err(self.reject(err, Some(&entry), "", draft, "authorize", None))
                }
            }
        };
        let Draft {
            call_id,
            started,
            record,
            received_at_ms,
        } = draft;
        let meta = CallMeta {
            tool: Cow::Borrowed(contract.name.as_str()),
            tool_version: Cow::Borrowed(contract.version.as_str()),
            call_id: call_id.clone(),
            attempt: 1,
        };
        let call_ctx = ctx.for_call(meta, key);
        let subject = needs_approval.then(|| ApprovalSubject {
            tool: contract.name.clone(),
            tool_version: contract.version.clone(),
            contract_sha256: contract.fingerprint.contract_sha256.clone(),
            effect: contract.effect,
            arguments: args.get(&entry.plan).clone(),
            principal: ctx.principal().map(|p| p.as_str().to_owned()),
            tenant: ctx.tenant().map(|t| t.as_str().to_owned()),
        });
        let call = PreparedCall {
            entry,
            call_id,
            args,
            decoded: Some(decoded),
            ctx: call_ctx,
            reservation,
            started,
            prepare_us: if self.inner.sink.is_some() {
                micros(started.elapsed())
            } else {
                0
            },
            gates: GATES,
            record,
            received_at_ms,
            claim: crate::idempotency::ClaimState::Pending,
        };
        Ok(match subject {
            Some(subject) => Prepared::NeedsApproval(ApprovalRequest::new(subject, call)),
            None => Prepared::Ready(call),
        })
    }

    /// Runs a prepared call: per-attempt timeout, retries of retryable errors with backoff,
    /// panic isolation, the output contract, then the envelope and the receipt.
    ///
    /// Needs a Tokio runtime with the time driver enabled (`#[tokio::main]` has it).
    pub async fn execute(&self, call: PreparedCall) -> Observation {
        crate::execute::run(&self.inner, call).await
    }

    /// Parse, prepare and execute in one step. A call that needs approval is not run: it
    /// returns `POLICY_DENIED` / `APPROVAL_REQUIRED` with the digest to approve.
    pub async fn handle(&self, raw: &str, ctx: &ToolContext) -> Observation {
        match self.prepare_raw(raw, ctx) {
            // Straight to the executor's future, not through `execute`: one less layer
            // holding a copy of the call in the future the caller moves around.
            Ok(Prepared::Ready(call)) => crate::execute::run(&self.inner, call).await,
            Ok(Prepared::NeedsApproval(request)) => request.pending_observation(),
            Err(rejection) => rejection.into_observation(),
        }
    }

    /// Signs a grant that approves exactly `request` (its digest, tool, version and tenant),
    /// in the name of `approver`, valid for the registry's approval TTL and for one execution.
    ///
    /// Call it only after a human said yes to [`ApprovalRequest::subject`].
    pub fn grant(&self, request: &ApprovalRequest, approver: &str) -> ApprovalGrant {
        let now = self.inner.clock.now_ms();
        let subject = request.subject();
        self.inner.approval_key.sign(GrantClaims {
            grant_id: crate::approval::random_id(),
            digest: request.digest().to_owned(),
            tool: subject.tool.clone(),
            tool_version: subject.tool_version.clone(),
            tenant: subject.tenant.clone(),
            approver: approver.chars().take(256).collect(),
            issued_at_ms: now,
            expires_at_ms: crate::clock::later(now, self.inner.approval_ttl_ms),
        })
    }

    /// The approver said no: a `POLICY_DENIED` / `APPROVAL_DENIED` observation the agent can
    /// act on (choose another action, or end safely). `reason` reaches the model; keep it free
    /// of secrets.
    pub fn deny(&self, request: ApprovalRequest, approver: &str, reason: &str) -> Observation {
        let err = ToolError::policy_denied("APPROVAL_DENIED", "a human declined this call")
            .with_detail("approver", approver.chars().take(256).collect::<String>())
            .with_detail("reason", reason.chars().take(500).collect::<String>());
        self.refuse_prepared(*request.call, err)
    }

    /// Runs the call `request` holds, if `grant` releases it: genuine (MAC), for this tenant,
    /// tool, version and digest, not expired, and never used before (consumed atomically in
    /// the approval store). Otherwise nothing runs and the observation is `POLICY_DENIED`
    /// with the reason's code (see [`approval`](crate::approval)).
    ///
    /// ```
    /// # use tool_contract::{tool, ToolArgs, ToolError, ToolContext, Registry, Prepared};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct DeleteDocumentArgs {
    /// #     /// The document to delete.
    /// #     #[schemars(length(max = 64))]
    /// #     id: String,
    /// # }
    /// # /// Deletes a document for good. Use only when the user asked for the deletion.
    /// # #[tool(version = "1.0.0", effect = "irreversible_write", timeout_ms = 100, approval, idempotency(from = [id]))]
    /// # async fn delete_document(args: DeleteDocumentArgs) -> Result<bool, ToolError> { Ok(true) }
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let registry = Registry::builder().tool(DeleteDocument).build().unwrap();
    /// let ctx = ToolContext::builder().tenant("acme").principal("user:kim").build();
    /// let raw = r#"{"name": "delete_document", "arguments": {"id": "doc-1"}}"#;
    /// let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(raw, &ctx) else { panic!() };
    /// // ... show request.subject() to a human, who approves ...
    /// let grant = registry.grant(&request, "user:lee");
    /// assert!(registry.execute_approved(request, &grant).await.ok);
    ///
    /// // The same call again runs nothing: its idempotency key replays the result, and the
    /// // grant, which releases one execution, is not consumed by a replay.
    /// let Ok(Prepared::NeedsApproval(again)) = registry.prepare_raw(raw, &ctx) else { panic!() };
    /// let obs = registry.execute_approved(again, &grant).await;
    /// assert_eq!(obs.meta.idempotency.as_deref(), Some("replayed"));
    /// # });
    /// ```
    pub async fn execute_approved(
        &self,
        request: ApprovalRequest,
        grant: &ApprovalGrant,
    ) -> Observation {
        let now = self.inner.clock.now_ms();
        if let Err(err) =
            crate::approval::check_grant(&self.inner.approval_key, grant, &request, now)
        {
            return self.refuse_prepared(*request.call, err);
        }
        let mut call = *request.call;
        // Time and budget before consumption: a call refused for either must not burn its
        // grant (a human may have approved it minutes after it was proposed).
        if let Err(err) = policy::check_deadline(call.entry.contract, &call.ctx) {
            return self.refuse_prepared(call, err);
        }
        match policy::reserve(call.entry.contract, &call.ctx) {
            Ok(r) => call.reservation = r,
            Err(err) => return self.refuse_prepared(call, err),
        }
        // The idempotency key too: a call that will be a replay, a conflict or "in progress"
        // runs nothing, so it leaves the grant for the call that will.
        let claimed = if call.ctx.idempotency_key().is_some() {
            let args = call.args.get(&call.entry.plan);
            crate::idempotency::begin(&self.inner, call.entry.contract, &call.ctx, args).await
        } else {
            Ok(None)
        };
        let held = match claimed {
            Ok(held) => held,
            Err(early) => {
                call.claim = crate::idempotency::ClaimState::Early(Box::new(early));
                return self.execute(call).await;
            }
        };
        let consumed = crate::idempotency::bounded(
            call.ctx.deadline(),
            self.inner
                .approvals
                .consume_grant(grant.grant_id(), grant.expires_at_ms(), now),
        )
        .await;
        let refused = match consumed {
            Ok(true) => None,
            Ok(false) => Some(ToolError::policy_denied(
                "APPROVAL_GRANT_CONSUMED",
                "the approval grant was already used; each grant releases one execution",
            )),
            Err(e) => {
                tracing::warn!(error = %e, "approval store unavailable");
                Some(crate::idempotency::store_unavailable())
            }
        };
        if let Some(err) = refused {
            if let Some(held) = held {
                crate::idempotency::release(&self.inner, &call.ctx, held).await;
            }
            return self.refuse_prepared(call, err);
        }
        call.claim = crate::idempotency::ClaimState::Claimed(Box::new(held));
        call.gates = GATES_APPROVED;
        self.execute(call).await
    }

    /// Deletes idempotency records past their retention and the marks of grants that expired
    /// more than an hour ago (the hour covers replicas whose clocks run behind); returns how
    /// many. Run it now and then (e.g. hourly) with a durable store; the in-memory store also
    /// sweeps by itself as it grows.
    pub async fn purge_expired(&self) -> Result<u64, crate::store::StoreError> {
        const GRANT_MARK_MARGIN_MS: u64 = 60 * 60 * 1000;
        let now = self.inner.clock.now_ms();
        let records = self.inner.idempotency.store.purge_expired(now).await?;
        let marks = self
            .inner
            .approvals
            .purge_consumed_grants(now.saturating_sub(GRANT_MARK_MARGIN_MS))
            .await?;
        Ok(records + marks)
    }

    /// A prepared call refused at the approval stage: envelope and receipt, nothing run.
    fn refuse_prepared(&self, call: PreparedCall, err: ToolError) -> Observation {
        let entry = Arc::clone(&call.entry);
        let draft = Draft {
            call_id: call.call_id,
            started: call.started,
            record: call.record,
            received_at_ms: call.received_at_ms,
        };
        self.reject(err, Some(&entry), "", draft, "approval", None)
            .into_observation()
    }

    /// An `INVALID_INPUT` rejection at the validate stage, with the seed's repair feedback.
    fn reject_repairable(
        &self,
        issues: Vec<RepairIssue>,
        entry: &Arc<Entry>,
        draft: Draft,
    ) -> Rejection {
        let err = validate::invalid_input_error(&issues);
        let feedback = RepairFeedback::new(&entry.contract.name, issues);
        self.reject(err, Some(entry), "", draft, "validate", Some(feedback))
    }

    fn reject(
        &self,
        err: ToolError,
        entry: Option<&Arc<Entry>>,
        proposed_name: &str,
        draft: Draft,
        stage: &'static str,
        feedback: Option<RepairFeedback>,
    ) -> Rejection {
        let latency_ms = millis(draft.started.elapsed());
        let (meta, source) = match entry {
            Some(e) => (
                Meta::of(e.contract, draft.call_id.clone(), latency_ms, 0),
                Cow::Borrowed(e.default_source),
            ),
            None => {
                // An unknown tool has no contract: the envelope names what was proposed.
                let name: String = proposed_name.chars().take(128).collect();
                let source = Cow::Owned(format!("tool://{name}"));
                let meta = Meta {
                    tool: Cow::Owned(name),
                    tool_version: None,
                    call_id: draft.call_id.clone(),
                    latency_ms,
                    attempts: 0,
                    fingerprint: None,
                    idempotency: None,
                };
                (meta, source)
            }
        };
        if let Some(sink) = &self.inner.sink {
            let receipt = Receipt {
                call_id: draft.call_id,
                received_at_ms: draft.received_at_ms,
                proposal: draft.record.map_or_else(
                    || ProposalRecord {
                        name: proposed_name.to_owned(),
                        arguments: Value::Null,
                        call_id: None,
                    },
                    |r| *r,
                ),
                executed: None,
                outcome: OutcomeRecord {
                    ok: false,
                    stage: stage.into(),
                    code: Some(err.code().to_owned()),
                    category: Some(err.category()),
                },
                prepare_us: micros(draft.started.elapsed()),
                execute_us: 0,
                diagnostics: Vec::new(),
            };
            sink.record(&receipt);
        }
        crate::receipt::trace_rejection(&meta, &err, stage);
        Rejection::new(
            Observation::failure(err, meta, Provenance::untrusted(source, None)),
            feedback,
            stage,
        )
    }
}

/// What every stage carries for the rejection envelope and the receipt.
struct Draft {
    call_id: String,
    started: Instant,
    record: Option<Box<ProposalRecord>>,
    received_at_ms: u64,
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

pub(crate) fn millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub(crate) fn micros(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A call whose arguments passed every check that looks only at them (stage 1).
///
/// Made only by [`Registry::validate`]; [`Registry::authorize`] takes it further.
pub struct ValidatedCall {
    entry: Arc<Entry>,
    args: Args,
    decoded: Decoded,
    draft: Draft,
}

impl ValidatedCall {
    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.entry.contract.name
    }
    /// The version that will run.
    pub fn tool_version(&self) -> &str {
        &self.entry.contract.version
    }
    /// The validated arguments, nulls dropped and defaults applied.
    pub fn arguments(&self) -> &Value {
        self.args.get(&self.entry.plan)
    }
    /// The call id.
    pub fn call_id(&self) -> &str {
        &self.draft.call_id
    }
}

impl fmt::Debug for ValidatedCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidatedCall")
            .field("tool", &self.tool())
            .field("arguments", self.arguments())
            .finish_non_exhaustive()
    }
}

/// A validated call the trusted context authorized (stage 2).
///
/// Made only by [`Registry::authorize`]; [`Registry::finish`] turns it into a [`Prepared`].
pub struct AuthorizedCall {
    validated: ValidatedCall,
    key: Option<crate::extract::IdempotencyKey>,
}

impl AuthorizedCall {
    /// The validated call.
    pub fn validated(&self) -> &ValidatedCall {
        &self.validated
    }
    /// The resolved idempotency key, if any.
    pub fn idempotency_key(&self) -> Option<&crate::extract::IdempotencyKey> {
        self.key.as_ref()
    }
}

impl fmt::Debug for AuthorizedCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthorizedCall")
            .field("validated", &self.validated)
            .finish_non_exhaustive()
    }
}

/// A proposal that passed every check.
// Both variants carry a whole prepared call; boxing one would only add an allocation per call.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Prepared {
    /// Ready to [`execute`](Registry::execute).
    Ready(PreparedCall),
    /// Needs a human's approval first.
    NeedsApproval(ApprovalRequest),
}

/// A refused proposal: the error observation, and repair feedback when the model can fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    // Boxed: rejections travel in `Result`s whose happy path should stay small.
    inner: Box<RejectionInner>,
}

#[derive(Clone, Debug, PartialEq)]
struct RejectionInner {
    observation: Observation,
    feedback: Option<RepairFeedback>,
    stage: &'static str,
}

impl Rejection {
    pub(crate) fn new(
        observation: Observation,
        feedback: Option<RepairFeedback>,
        stage: &'static str,
    ) -> Self {
        Rejection {
            inner: Box::new(RejectionInner {
                observation,
                feedback,
                stage,
            }),
        }
    }

    /// The error envelope for the model.
    pub fn observation(&self) -> &Observation {
        &self.inner.observation
    }

    /// The envelope, by value.
    pub fn into_observation(self) -> Observation {
        self.inner.observation
    }

    /// The seed's repair feedback, for repairable input errors only.
    pub fn feedback(&self) -> Option<&RepairFeedback> {
        self.inner.feedback.as_ref()
    }

    /// The stage that refused: `parse`, `lookup`, `validate` or `authorize`.
    pub fn stage(&self) -> &'static str {
        self.inner.stage
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

    /// Turns the nested-bounds lint off (DESIGN rule 9 for nested types). On by default.
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
            if self.lint_bounds {
                crate::schema::lint_bounds(contract, runner.fields())?;
            }
            let input = compile(
                jsonschema::options(),
                &contract.input_schema,
                &contract.name,
                "input",
            )?;
            let input_lite = compile(
                jsonschema::options_for::<crate::lite::LiteJson>(),
                &contract.input_schema,
                &contract.name,
                "input",
            )?;
            let output = compile(
                jsonschema::options_for::<crate::lite::LiteJson>(),
                &contract.output_schema,
                &contract.name,
                "output",
            )?;
            let entry = Entry {
                plan: ArgsPlan::from_schema(&contract.input_schema),
                default_source: intern_source(&contract.name, &contract.version),
                runner,
                contract,
                version,
                input,
                input_lite,
                output,
                text_len: AtomicUsize::new(256),
            };
            versions.push(Arc::new(entry));
            versions.sort_by(|a, b| b.version.cmp(&a.version));
        }
        // One in-memory store serves both concerns unless the host chose others.
        let memory = Arc::new(MemoryStore::new());
        let registry = Registry {
            inner: Arc::new(Inner {
                by_name,
                limits: self.limits,
                gate: self.gate,
                sink: self.sink,
                next_id: AtomicU64::new(1),
                idempotency: IdempotencyConfig {
                    store: self.idempotency_store.unwrap_or_else(|| memory.clone()),
                    retention_ms: millis(self.retention),
                    lease_grace_ms: millis(self.lease_grace),
                },
                approvals: self.approval_store.unwrap_or(memory),
                approval_key: self.approval_key.unwrap_or_else(ApprovalKey::generate),
                approval_ttl_ms: millis(self.approval_ttl),
                clock: self
                    .clock
                    .unwrap_or_else(|| Arc::new(crate::clock::SystemClock::new())),
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

/// How long a grant is valid by default.
const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(600);

/// The gates every prepared call has passed, in order.
const GATES: &[&str] = &[
    "lookup",
    "schema",
    "semantic",
    "capabilities",
    "state",
    "deadline",
    "idempotency",
    "budget",
];

/// The gates of a call released by a valid approval grant.
const GATES_APPROVED: &[&str] = &[
    "lookup",
    "schema",
    "semantic",
    "capabilities",
    "state",
    "deadline",
    "idempotency",
    "approval",
    "budget",
];

/// `tool://name@version`, made once per tool for the life of the process, so every envelope
/// can borrow it. The set is bounded by the tools the program defines.
fn intern_source(name: &str, version: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static SOURCES: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let key = format!("tool://{name}@{version}");
    let mut map = SOURCES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(s) = map.get(&key) {
        return s;
    }
    let leaked: &'static str = Box::leak(key.clone().into_boxed_str());
    map.insert(key, leaked);
    leaked
}

/// Compiles a schema once: Draft 2020-12, formats asserted, linear-time regexes only, and (with
/// the crate's `default-features = false` on jsonschema) no remote or file `$ref` resolution.
fn compile<F: jsonschema::json::Json>(
    options: jsonschema::ValidationOptions<'_, std::sync::Arc<dyn jsonschema::Retrieve>, F>,
    schema: &Value,
    tool: &str,
    side: &'static str,
) -> Result<jsonschema::Validator<F>, RegistryError> {
    options
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(schema)
        .map_err(|e| {
            let message = e.to_string();
            let is_pattern = matches!(
                e.kind(),
                jsonschema::error::ValidationErrorKind::Pattern { .. }
            ) || e.kind().keyword() == "pattern"
                || message.contains("regex");
            if is_pattern {
                RegistryError::BacktrackingPattern {
                    tool: tool.to_owned(),
                    side,
                    message,
                }
            } else {
                RegistryError::InvalidSchema {
                    tool: tool.to_owned(),
                    side,
                    message,
                }
            }
        })
}

impl ApprovalRequest {
    /// The observation for a call left waiting for approval: `POLICY_DENIED`,
    /// `APPROVAL_REQUIRED`, with the digest to approve in `safe_details`.
    pub fn pending_observation(&self) -> Observation {
        let c = self.call.entry.contract;
        let err = ToolError::policy_denied(
            "APPROVAL_REQUIRED",
            "a human must approve this call before it runs",
        )
        .with_detail("digest", self.digest().to_owned());
        let meta = Meta::of(
            c,
            self.call.call_id.clone(),
            millis(self.call.started.elapsed()),
            0,
        );
        Observation::failure(
            err,
            meta,
            Provenance::untrusted(self.call.entry.default_source, None),
        )
    }
}
