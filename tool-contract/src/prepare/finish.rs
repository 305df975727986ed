//! Stage 6, approval: whether the call needs a human's approval (always for `approval`, by
//! the arguments' condition for `approval = "conditional"`, and whenever flow control escalated
//! it), and for a call that can run now, the budget reservation. A call that needs approval
//! holds no budget: it reserves when a grant releases it.

use std::borrow::Cow;

use crate::approval::{ApprovalRequest, ApprovalSubject};
use crate::call::{AuthorizedCall, PreparedCall, ValidatedCall};
use crate::clock::micros;
use crate::context::{CallMeta, ToolContext};
use crate::flow::Verdict;
use crate::idempotency::ClaimState;
use crate::policy;
use crate::receipt::ApprovalOutcome;
use crate::refuse::{refuse, Rejection};
use crate::services::Services;
use crate::stage::{Gate, Stage};
use crate::standing::StandingRules;

use super::Prepared;

/// Who may approve a call that needs approval.
#[derive(Clone, Copy)]
pub(crate) enum Approvers<'r> {
    /// A human, unless one of these standing rules approves the call.
    Rules(&'r StandingRules),
    /// A human, always: the call is an approver's edit, and the human who wrote it approves
    /// it (even when the edit would need no approval, and never by a standing rule).
    Human,
}

pub(crate) fn finish(
    services: &Services,
    call: AuthorizedCall,
    ctx: &ToolContext,
    approvers: Approvers<'_>,
) -> Result<Prepared, Rejection> {
    let AuthorizedCall {
        validated:
            ValidatedCall {
                entry,
                args,
                decoded,
                origin,
            },
        key,
        flow,
    } = call;
    let contract = entry.contract;
    let escalated = match flow.as_ref().map(|f| &f.verdict) {
        Some(Verdict::Escalate(reasons)) => reasons.clone(),
        _ => Vec::new(),
    };
    let always_ask = matches!(approvers, Approvers::Human);
    let needs_approval = match entry.runner.needs_approval(&decoded, ctx) {
        Ok(n) => n || !escalated.is_empty() || always_ask,
        Err(err) => {
            return Err(refuse(
                services,
                err,
                Some(&entry),
                "",
                origin,
                Stage::Authorize,
                None,
            ))
        }
    };
    // A standing rule stands in for the human: consulted only for a call that needs one.
    let standing = match approvers {
        Approvers::Rules(rules) if needs_approval => rules.find(
            contract,
            args.get(&entry.plan),
            ctx,
            !escalated.is_empty(),
            services.clock.now_ms(),
        ),
        _ => None,
    };
    let needs_approval = needs_approval && standing.is_none();
    let reservation = if needs_approval {
        None
    } else {
        match policy::reserve(contract, ctx) {
            Ok(r) => r,
            Err(err) => {
                return Err(refuse(
                    services,
                    err,
                    Some(&entry),
                    "",
                    origin,
                    Stage::Authorize,
                    None,
                ))
            }
        }
    };
    let meta = CallMeta {
        tool: Cow::Borrowed(contract.name.as_str()),
        tool_version: Cow::Borrowed(contract.version.as_str()),
        call_id: origin.call_id.clone(),
        attempt: 1,
    };
    let call_ctx = ctx.for_call(meta, key);
    let traced = flow.is_some();
    let flow_verdict = flow.as_ref().map(|f| f.decision());
    let subject = (needs_approval || standing.is_some())
        .then(|| approval_subject(contract, args.get(&entry.plan), ctx, flow, escalated));
    let call = PreparedCall {
        entry,
        call_id: origin.call_id,
        args,
        decoded: Some(decoded),
        ctx: call_ctx,
        reservation,
        started: origin.started,
        prepare_us: if services.keeps_receipts() {
            micros(origin.started.elapsed())
        } else {
            0
        },
        gates: match (traced, standing.is_some()) {
            (false, false) => Gate::PREPARED,
            (true, false) => Gate::PREPARED_TRACED,
            (false, true) => Gate::APPROVED,
            (true, true) => Gate::APPROVED_TRACED,
        },
        record: origin.record,
        received_at_ms: origin.received_at_ms,
        flow: origin.flow,
        flow_verdict,
        claim: ClaimState::Pending,
        approval: None,
        standing: None,
    };
    Ok(match subject {
        None => Prepared::Ready(call),
        Some(subject) => held_for_approval(subject, call, standing),
    })
}

/// What an approver is shown: the call as it would run, who asks, and where its values came
/// from.
// Cold, as is `held_for_approval`: most calls need no approval, and their code stays small
// (see `crate::refuse::refuse`).
#[cold]
#[inline(never)]
fn approval_subject(
    contract: &crate::contract::ToolContract,
    args: &serde_json::Value,
    ctx: &ToolContext,
    flow: Option<crate::flow::FlowOutcome>,
    escalated: Vec<String>,
) -> ApprovalSubject {
    ApprovalSubject {
        tool: contract.name.clone(),
        tool_version: contract.version.clone(),
        contract_sha256: contract.fingerprint.contract_sha256.clone(),
        effect: contract.effect,
        arguments: args.clone(),
        principal: ctx.principal().map(|p| p.as_str().to_owned()),
        tenant: ctx.tenant().map(|t| t.as_str().to_owned()),
        provenance: flow.map(|f| f.sources).unwrap_or_default(),
        flow_reasons: escalated,
    }
}

/// A call that needs approval: held for a human, or released now by a standing rule.
#[cold]
#[inline(never)]
fn held_for_approval(
    subject: ApprovalSubject,
    call: PreparedCall,
    standing: Option<crate::standing::StandingUse>,
) -> Prepared {
    let request = ApprovalRequest::new(subject, call);
    let Some(standing) = standing else {
        return Prepared::NeedsApproval(request);
    };
    // The receipt shows the rule's decision as it would show a human's: the digest of what
    // runs, and who granted the rule.
    let mut record = request.record(ApprovalOutcome::StandingRule);
    record.rule_id = Some(standing.rule_id().to_owned());
    record.approver = Some(standing.granted_by().to_owned());
    let mut call = *request.call;
    call.approval = Some(Box::new(record));
    call.standing = Some(Box::new(standing));
    Prepared::Ready(call)
}
