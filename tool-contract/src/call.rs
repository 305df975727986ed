//! The call as it moves through `prepare`: each stage takes one of these and returns the next,
//! more-checked one, so a later stage can only ever see a call the earlier ones passed.
//!
//! [`ValidatedCall`] (its arguments passed every check that looks only at them) →
//! [`AuthorizedCall`] (the trusted context allows it) → [`PreparedCall`] (ready to execute, or
//! held in an [`ApprovalRequest`](crate::ApprovalRequest) until a human approves it).

use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::args::Arguments;
use crate::budget::Reservation;
use crate::context::{IdempotencyKey, ToolContext};
use crate::entry::{Decoded, Entry};
use crate::flow::FlowOutcome;
use crate::idempotency::ClaimState;
use crate::receipt::{ApprovalRecord, FlowRecord, ProposalRecord};
use crate::stage::Gate;

/// Where a call started: its id, when, and (for a receipt) the proposal as received. Every
/// stage carries it, so a refusal at any stage can report the call.
pub(crate) struct CallOrigin {
    pub(crate) call_id: String,
    pub(crate) started: Instant,
    /// The proposal as received: only with a receipt sink; boxed so calls without one move
    /// less.
    pub(crate) record: Option<Box<ProposalRecord>>,
    pub(crate) received_at_ms: u64,
    /// Flow control's decision, for the receipt (only with a sink and a session).
    pub(crate) flow: Option<Box<FlowRecord>>,
    /// The approval decision so far, for the receipt and the span.
    pub(crate) approval: Option<Box<ApprovalRecord>>,
}

/// A call whose arguments passed every check that looks only at them (stage 3).
///
/// Made only by [`Registry::validate`](crate::Registry::validate);
/// [`Registry::authorize`](crate::Registry::authorize) takes it further.
pub struct ValidatedCall {
    pub(crate) entry: Arc<Entry>,
    pub(crate) args: Arguments,
    pub(crate) decoded: Decoded,
    pub(crate) origin: CallOrigin,
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
        &self.origin.call_id
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

/// A validated call the trusted context authorized (stage 4).
///
/// Made only by [`Registry::authorize`](crate::Registry::authorize);
/// [`Registry::finish`](crate::Registry::finish) turns it into a
/// [`Prepared`](crate::Prepared).
pub struct AuthorizedCall {
    pub(crate) validated: ValidatedCall,
    pub(crate) key: Option<IdempotencyKey>,
    /// What flow control decided (stage 5), when the context has a session.
    pub(crate) flow: Option<FlowOutcome>,
}

impl AuthorizedCall {
    /// The validated call.
    pub fn validated(&self) -> &ValidatedCall {
        &self.validated
    }
    /// The resolved idempotency key, if any.
    pub fn idempotency_key(&self) -> Option<&IdempotencyKey> {
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

/// A call that passed every check. Only [`Registry::prepare`](crate::Registry::prepare) makes
/// one, and it is the only thing [`Registry::execute`](crate::Registry::execute) accepts, so
/// an unvalidated call cannot run.
pub struct PreparedCall {
    pub(crate) entry: Arc<Entry>,
    pub(crate) call_id: String,
    pub(crate) args: Arguments,
    pub(crate) decoded: Option<Decoded>,
    pub(crate) ctx: ToolContext,
    pub(crate) reservation: Option<Reservation>,
    pub(crate) started: Instant,
    pub(crate) prepare_us: u64,
    pub(crate) gates: &'static [Gate],
    /// Only with a receipt sink; boxed so that calls without one move less.
    pub(crate) record: Option<Box<ProposalRecord>>,
    pub(crate) received_at_ms: u64,
    /// Flow control's decision, for the receipt.
    pub(crate) flow: Option<Box<FlowRecord>>,
    /// Flow control's verdict (`allowed` or `escalated`) when it traced the call, for the
    /// tracing span.
    pub(crate) flow_verdict: Option<&'static str>,
    /// Whether the idempotency key was already claimed (by an approval, before it consumed
    /// its grant) or is still to be claimed by the executor.
    pub(crate) claim: ClaimState,
    /// The approval decision (a grant, a standing rule), for the receipt and the span.
    pub(crate) approval: Option<Box<ApprovalRecord>>,
    /// The standing rule that approved the call: the executor counts one use of it, atomically,
    /// before the handler runs, and refuses the call when none is left.
    pub(crate) standing: Option<Box<crate::standing::StandingUse>>,
}

impl PreparedCall {
    /// The tool's name.
    pub fn tool(&self) -> &str {
        &self.entry.contract.name
    }
    /// The version that will run.
    pub fn tool_version(&self) -> &str {
        &self.entry.contract.version
    }
    /// The call id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }
    /// The validated arguments, nulls dropped and defaults applied: what will run.
    pub fn arguments(&self) -> &Value {
        self.args.get(&self.entry.plan)
    }
    /// The resolved idempotency key, if any.
    pub fn idempotency_key(&self) -> Option<&IdempotencyKey> {
        self.ctx.idempotency_key()
    }
    /// The id of the standing rule that approved this call without asking, if one did (see
    /// [`crate::standing`]); the rule's use is counted when the call is executed.
    pub fn standing_rule(&self) -> Option<&str> {
        self.standing.as_ref().map(|s| s.rule_id())
    }

    /// The origin a refusal of this prepared call reports with.
    pub(crate) fn into_origin(self) -> (Arc<Entry>, CallOrigin) {
        (
            self.entry,
            CallOrigin {
                call_id: self.call_id,
                started: self.started,
                record: self.record,
                received_at_ms: self.received_at_ms,
                flow: self.flow,
                approval: self.approval,
            },
        )
    }
}

impl fmt::Debug for PreparedCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreparedCall")
            .field("tool", &self.tool())
            .field("tool_version", &self.tool_version())
            .field("call_id", &self.call_id)
            .field("arguments", self.arguments())
            .finish_non_exhaustive()
    }
}
