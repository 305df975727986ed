//! Stage 5, flow: with a session in the context, trace where each string argument came from
//! and apply the fields' flow policies (see [`crate::flow`]). A call that breaks its policy is
//! refused here, or marked for approval, which stage 6 then asks for.

use crate::call::AuthorizedCall;
use crate::context::ToolContext;
use crate::flow::Verdict;
use crate::receipt::FlowRecord;
use crate::refuse::{refuse, Rejection};
use crate::services::Services;
use crate::stage::Stage;

pub(crate) fn flow(
    services: &Services,
    call: AuthorizedCall,
    ctx: &ToolContext,
) -> Result<AuthorizedCall, Rejection> {
    match ctx.session() {
        Some(session) => trace(services, call, session),
        None => Ok(call),
    }
}

/// The stage with a session.
// Out of line: a host without sessions should not carry the tracing code in every call's
// code (see `crate::refuse::refuse`).
#[inline(never)]
fn trace(
    services: &Services,
    mut call: AuthorizedCall,
    session: &crate::flow::Session,
) -> Result<AuthorizedCall, Rejection> {
    let entry = &call.validated.entry;
    // Tracing only matters where a decision depends on it, or for what a human or an auditor
    // is shown (approval subjects, receipts).
    let shown = services.keeps_receipts()
        || entry.contract.approval != crate::contract::ApprovalPolicy::Never;
    if !entry.flow.decides() && !shown {
        return Ok(call);
    }
    let args = call.validated.args.get(&entry.plan);
    let outcome = crate::flow::decide(&entry.flow, session, args);
    if services.keeps_receipts() {
        call.validated.origin.flow = Some(Box::new(FlowRecord {
            decision: outcome.decision().to_owned(),
            arguments: outcome.sources.clone(),
        }));
    }
    if let Verdict::Refuse(err) = &outcome.verdict {
        let err = err.clone();
        let AuthorizedCall { validated, .. } = call;
        return Err(refuse(
            services,
            err,
            Some(&validated.entry),
            "",
            validated.origin,
            Stage::Flow,
            None,
        ));
    }
    call.flow = Some(outcome);
    Ok(call)
}
