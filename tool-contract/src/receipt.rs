//! Receipts: what the model asked for and what the system really did, kept as separate objects
//! so the two can always be compared, and where they go.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorCategory;
use crate::stage::Stage;

/// What the model proposed, as received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProposalRecord {
    /// The proposed tool name.
    pub name: String,
    /// The arguments exactly as parsed, before nulls were dropped or defaults applied.
    pub arguments: Value,
    /// The provider's call id, if any.
    pub call_id: Option<String>,
}

/// One handler attempt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AttemptRecord {
    /// 1-based attempt number.
    pub attempt: u32,
    /// How long it ran.
    pub latency_ms: u64,
    /// `"ok"` or the error code.
    pub outcome: String,
}

/// What really ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ExecutionRecord {
    /// Tool name.
    pub tool: String,
    /// Tool version.
    pub tool_version: String,
    /// The contract fingerprint (`contract_sha256`).
    pub contract_sha256: String,
    /// The implementation id (`crate@version+git.rev`).
    pub implementation: String,
    /// The validated arguments, with nulls dropped and defaults applied.
    pub arguments: Value,
    /// The gates the call passed, in order.
    pub gates: Vec<String>,
    /// Every attempt.
    pub attempts: Vec<AttemptRecord>,
}

/// How the call ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct OutcomeRecord {
    /// Whether the model got data.
    pub ok: bool,
    /// The stage that ended the call ([`Stage::Done`] when it ran and delivered its output,
    /// [`Stage::Replayed`] when a stored result answered it).
    pub stage: Stage,
    /// The error code, on failure.
    pub code: Option<String>,
    /// The error category, on failure.
    pub category: Option<ErrorCategory>,
}

/// What flow control decided for a call, and where each string argument came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FlowRecord {
    /// `allowed`, `escalated` (sent for approval) or `refused`.
    pub decision: String,
    /// Each string value's source.
    pub arguments: Vec<crate::flow::ArgSource>,
}

/// What was decided about a call that needed approval: who asked, who decided, under which
/// grant or standing rule, and why. With it, every approval decision of a session can be
/// rebuilt from the receipts alone.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalRecord {
    /// The decision.
    pub decision: ApprovalOutcome,
    /// The digest of the call the decision is about (the edited call for
    /// [`ApprovalOutcome::ApprovedEdited`]); `None` only for an edit that failed its checks,
    /// which never had a digest.
    pub digest: Option<String>,
    /// Who asked (the trusted context's principal).
    pub principal: Option<String>,
    /// For which tenant.
    pub tenant: Option<String>,
    /// Who decided: the human for a grant or a denial, the human who granted the standing
    /// rule for [`ApprovalOutcome::StandingRule`]; `None` while pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
    /// The grant that released the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    /// The standing rule that approved the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_id: Option<String>,
    /// Which use of the standing rule this call was (1 for the first), once it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_use: Option<u64>,
    /// Why: a denial's reason, or why a call is still pending (e.g. the code of a grant that
    /// was refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// For an edited approval: the arguments the model proposed (validated, defaults applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_arguments: Option<Value>,
    /// For an edited approval: the digest of the call the model proposed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposed_digest: Option<String>,
    /// For an edited approval: the arguments the human approved instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_arguments: Option<Value>,
    /// Why flow control sent the call for approval, if it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_reasons: Vec<String>,
}

/// An [`ApprovalRecord`]'s decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ApprovalOutcome {
    /// The call waits for a human (or a grant offered for it was refused).
    Pending,
    /// A human approved the call as proposed.
    Approved,
    /// A human approved the call with arguments of their own.
    ApprovedEdited,
    /// A human declined the call.
    Denied,
    /// A standing rule approved the call without asking.
    StandingRule,
}

impl ApprovalOutcome {
    /// The decision as receipts and spans write it (`pending`, `approved`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalOutcome::Pending => "pending",
            ApprovalOutcome::Approved => "approved",
            ApprovalOutcome::ApprovedEdited => "approved_edited",
            ApprovalOutcome::Denied => "denied",
            ApprovalOutcome::StandingRule => "standing_rule",
        }
    }
}

impl ApprovalRecord {
    /// The grant or standing rule id, for the span.
    pub(crate) fn approval_id(&self) -> Option<&str> {
        self.grant_id.as_deref().or(self.rule_id.as_deref())
    }
}

/// One call's receipt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Receipt {
    /// The call id shared with the observation.
    pub call_id: String,
    /// Unix time in milliseconds when the proposal arrived.
    pub received_at_ms: u64,
    /// What the model asked for.
    pub proposal: ProposalRecord,
    /// What ran, if anything passed validation.
    pub executed: Option<ExecutionRecord>,
    /// How it ended.
    pub outcome: OutcomeRecord,
    /// Microseconds spent preparing (parse to prepared call).
    pub prepare_us: u64,
    /// Microseconds spent executing (attempts, backoff, output check).
    pub execute_us: u64,
    /// Host-only details that never reach the model (e.g. which output fields broke the contract).
    pub diagnostics: Vec<String>,
    /// Flow control's decision, when the call had a session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowRecord>,
    /// The approval decision, for a call that needed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalRecord>,
    /// For a tool with a model view: the canonical digest of the full output the model was not
    /// shown (the data itself stays with the host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld_output_sha256: Option<String>,
}

/// Where receipts go. Called once per call, on the calling task: keep it quick.
pub trait ReceiptSink: Send + Sync + 'static {
    /// Stores one receipt. Failures are the sink's to report; they never fail the call.
    fn record(&self, receipt: &Receipt);
}

/// Keeps receipts in memory, for tests and short-lived agents.
#[derive(Debug, Default)]
pub struct MemorySink {
    receipts: Mutex<Vec<Receipt>>,
}

impl MemorySink {
    /// An empty sink.
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of every receipt so far.
    pub fn receipts(&self) -> Vec<Receipt> {
        self.receipts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl ReceiptSink for MemorySink {
    fn record(&self, receipt: &Receipt) {
        self.receipts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(receipt.clone());
    }
}

impl<S: ReceiptSink> ReceiptSink for std::sync::Arc<S> {
    fn record(&self, receipt: &Receipt) {
        (**self).record(receipt);
    }
}

/// Appends one JSON object per line to a file, flushed per receipt.
#[derive(Debug)]
pub struct JsonLinesSink {
    out: Mutex<BufWriter<File>>,
}

impl JsonLinesSink {
    /// Opens (or creates) `path` for appending.
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(JsonLinesSink {
            out: Mutex::new(BufWriter::new(file)),
        })
    }
}

impl ReceiptSink for JsonLinesSink {
    fn record(&self, receipt: &Receipt) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let written = serde_json::to_writer(&mut *out, receipt)
            .map_err(std::io::Error::from)
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush());
        if let Err(err) = written {
            tracing::warn!(error = %err, "tool-contract: could not write a receipt");
        }
    }
}

/// Emits the `execute_tool` span for a call refused before it ran, with the same GenAI
/// attribute names as executed calls.
pub(crate) fn trace_rejection(
    meta: &crate::envelope::Meta,
    err: &crate::ToolError,
    stage: Stage,
    approval: Option<&ApprovalRecord>,
) {
    let span = tracing::info_span!(
        "execute_tool",
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = %meta.tool,
        "gen_ai.tool.call.id" = %meta.call_id,
        "gen_ai.tool.type" = "function",
        "tool.version" = meta.tool_version.as_deref().unwrap_or(""),
        "tool.attempts" = 0u32,
        "tool.outcome" = "rejected",
        "tool.stage" = stage.as_str(),
        "tool.flow" = (stage == Stage::Flow).then_some("refused"),
        "tool.approval" = approval.map(|a| a.decision.as_str()),
        "tool.approval.id" = approval.and_then(ApprovalRecord::approval_id),
        "tool.approval.approver" = approval.and_then(|a| a.approver.as_deref()),
        "error.type" = err.code(),
    );
    drop(span);
}
