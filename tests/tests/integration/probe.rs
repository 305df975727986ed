//! A test tool whose behaviour the arguments choose, counting its invocations.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_contract::extract::{CallMeta, State};
use tool_contract::{tool, ToolArgs, ToolError};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Ok,
    RateLimited,
    FlakyOnce,
    Conflict,
    NotFound,
    Panic,
    Hang,
    BadOutput,
    RetryableNotFound,
    RateLimitedForAnHour,
    /// A transient failure whose source error and operator detail hold a secret.
    LeakySource,
    /// The handler refuses the label as a repairable issue.
    ReservedLabel,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct RunProbeArgs {
    /// What the probe does.
    pub mode: Mode,
    /// A bounded label echoed back.
    #[serde(default = "default_label")]
    #[schemars(length(min = 1, max = 16))]
    pub label: String,
}

fn default_label() -> String {
    "probe".into()
}

/// Counts invocations across a test.
#[derive(Clone, Default)]
pub struct Calls(pub Arc<AtomicU32>);

impl Calls {
    pub fn get(&self) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProbeOutput {
    /// Between 0 and 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub score: f64,
    /// The label.
    pub label: String,
    /// Which attempt produced it.
    pub attempt: u32,
}

/// Runs a probe that behaves as its `mode` says. Use it only in tests; it has no effect.
#[tool(
    version = "1.0.0",
    effect = "pure_read",
    timeout_ms = 1000,
    capabilities("probe:run"),
    retry(max_attempts = 3, backoff_ms = 100, max_backoff_ms = 1000)
)]
pub async fn run_probe(
    args: RunProbeArgs,
    calls: State<Calls>,
    meta: CallMeta,
) -> Result<ProbeOutput, ToolError> {
    let n = calls.0 .0.fetch_add(1, Ordering::SeqCst) + 1;
    let out = ProbeOutput {
        score: 0.5,
        label: args.label.clone(),
        attempt: meta.attempt,
    };
    match args.mode {
        Mode::Ok => Ok(out),
        Mode::RateLimited => Err(ToolError::transient(
            "UPSTREAM_RATE_LIMITED",
            "the backend throttled the request",
        )
        .with_retry_after_ms(1200)
        .with_detail("backend", "internal_search")),
        Mode::FlakyOnce if n == 1 => Err(ToolError::transient(
            "UPSTREAM_UNAVAILABLE",
            "the backend is restarting",
        )),
        Mode::FlakyOnce => Ok(out),
        Mode::Conflict => Err(ToolError::conflict(
            "REVISION_CONFLICT",
            "the policy changed since it was read",
        )),
        Mode::NotFound => Err(ToolError::not_found("SOURCE_NOT_FOUND", "no such source")),
        Mode::RetryableNotFound => {
            Err(ToolError::not_found("SOURCE_NOT_FOUND", "no such source").with_retryable(true))
        }
        Mode::RateLimitedForAnHour => Err(ToolError::transient(
            "UPSTREAM_RATE_LIMITED",
            "come back later",
        )
        .with_retry_after_ms(3_600_000)),
        Mode::LeakySource => Err(ToolError::transient(
            "UPSTREAM_UNAVAILABLE",
            "the backend is unavailable",
        )
        .with_source(std::io::Error::other(
            "connect to db.internal:5432 with password=hunter2 refused",
        ))
        .with_operator_detail("dsn", "postgres://svc:hunter2@db.internal/probe")),
        Mode::ReservedLabel => Err(ToolError::invalid_argument(
            "label",
            "LABEL_RESERVED",
            "a label other than the reserved word 'probe'",
        )),
        Mode::Panic => panic!("secret-db-password=hunter2 in a panic message"),
        Mode::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(out)
        }
        Mode::BadOutput => Ok(ProbeOutput { score: 91.0, ..out }),
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct ArchiveNoteArgs {
    /// Client-chosen request id.
    #[tool(idempotency_key)]
    #[schemars(length(min = 1, max = 64))]
    pub request_id: String,
}

/// Archives a note. Use it when asked to archive; it can be undone from the archive.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 500)]
pub async fn archive_note(
    args: ArchiveNoteArgs,
    key: tool_contract::extract::IdempotencyKey,
) -> Result<String, ToolError> {
    Ok(format!("{}:{}", args.request_id, key))
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
#[tool(semantic = slicing_rule)]
pub struct CheckPrefixArgs {
    /// A word whose first two bytes the (buggy) rule slices.
    #[schemars(length(min = 1, max = 16))]
    pub word: String,
}

/// A host rule with a bug: it slices bytes, which panics inside a multi-byte character.
fn slicing_rule(
    args: &CheckPrefixArgs,
    _ctx: &tool_contract::ToolContext,
) -> Vec<tool_contract::ValidationIssue> {
    let _prefix = &args.word[..2];
    Vec::new()
}

/// Checks a word's prefix. Use it only in tests; it has no effect.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
pub async fn check_prefix(args: CheckPrefixArgs) -> Result<String, ToolError> {
    Ok(args.word)
}
