//! A call refused before it ran: its error envelope, its receipt and its span, whichever stage
//! refused it.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::call::CallOrigin;
use crate::clock::{micros, millis};
use crate::entry::Entry;
use crate::envelope::{Meta, Observation, Provenance};
use crate::error::ToolError;
use crate::receipt::{OutcomeRecord, ProposalRecord, Receipt};
use crate::repair::{RepairFeedback, RepairIssue};
use crate::services::Services;
use crate::stage::Stage;

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
    stage: Stage,
}

impl Rejection {
    /// The error envelope for the model.
    pub fn observation(&self) -> &Observation {
        &self.inner.observation
    }

    /// The envelope, by value.
    pub fn into_observation(self) -> Observation {
        self.inner.observation
    }

    /// Repair feedback, for repairable input errors only.
    pub fn feedback(&self) -> Option<&RepairFeedback> {
        self.inner.feedback.as_ref()
    }

    /// The stage that refused: [`Stage::Parse`], [`Stage::Lookup`], [`Stage::Validate`],
    /// [`Stage::Authorize`] or [`Stage::Approval`].
    pub fn stage(&self) -> Stage {
        self.inner.stage
    }
}

/// Refuses a call at `stage`: the envelope (naming the tool when `entry` is known, else what
/// was proposed), the receipt for the sink, and the span.
// Every refusal in `prepare` ends here. Out of line and marked cold, so each check's error
// arm is a call, and the code of a call that passes stays small enough for the instruction
// cache (BENCHMARKS.md, the per-call pipeline).
#[cold]
#[inline(never)]
pub(crate) fn refuse(
    services: &Services,
    err: ToolError,
    entry: Option<&Arc<Entry>>,
    proposed_name: &str,
    origin: CallOrigin,
    stage: Stage,
    feedback: Option<RepairFeedback>,
) -> Rejection {
    let latency_ms = millis(origin.started.elapsed());
    let (meta, source) = match entry {
        Some(e) => (
            Meta::of(e.contract, origin.call_id.clone(), latency_ms, 0),
            Cow::Borrowed(e.default_source()),
        ),
        None => {
            // An unknown tool has no contract: the envelope names what was proposed.
            let name: String = proposed_name.chars().take(128).collect();
            let source = Cow::Owned(format!("tool://{name}"));
            let meta = Meta {
                tool: Cow::Owned(name),
                tool_version: None,
                call_id: origin.call_id.clone(),
                latency_ms,
                attempts: 0,
                fingerprint: None,
                idempotency: None,
            };
            (meta, source)
        }
    };
    if let Some(sink) = &services.sink {
        let receipt = Receipt {
            call_id: origin.call_id,
            received_at_ms: origin.received_at_ms,
            proposal: origin.record.map_or_else(
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
                stage,
                code: Some(err.code().to_owned()),
                category: Some(err.category()),
            },
            prepare_us: micros(origin.started.elapsed()),
            execute_us: 0,
            // A context provider or a semantic rule may say more to operators than to the model.
            diagnostics: err.operator_report().into_iter().collect(),
            flow: origin.flow.map(|f| *f),
            approval: origin.approval.as_deref().cloned(),
            withheld_output_sha256: None,
        };
        sink.record(&receipt);
    }
    if let Some(report) = err.operator_report() {
        tracing::warn!(tool = %meta.tool, code = err.code(), stage = stage.as_str(), operator = %report, "call refused");
    }
    crate::receipt::trace_rejection(&meta, &err, stage, origin.approval.as_deref());
    Rejection {
        inner: Box::new(RejectionInner {
            observation: Observation::failure(err, meta, Provenance::untrusted(source, None)),
            feedback,
            stage,
        }),
    }
}

/// A refusal at the approval stage of a call whose tool is known.
#[cold]
#[inline(never)]
pub(crate) fn refuse_at_approval(
    services: &Services,
    err: ToolError,
    entry: &Arc<Entry>,
    origin: CallOrigin,
) -> Rejection {
    refuse(
        services,
        err,
        Some(entry),
        "",
        origin,
        Stage::Approval,
        None,
    )
}

/// An `INVALID_INPUT` refusal at the validate stage, with repair feedback.
#[cold]
#[inline(never)]
pub(crate) fn refuse_repairable(
    services: &Services,
    issues: Vec<RepairIssue>,
    entry: &Arc<Entry>,
    origin: CallOrigin,
) -> Rejection {
    let err = crate::repair::invalid_input_error(&issues);
    let feedback = RepairFeedback::new(&entry.contract.name, issues);
    refuse(
        services,
        err,
        Some(entry),
        "",
        origin,
        Stage::Validate,
        Some(feedback),
    )
}
