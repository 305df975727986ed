//! Approval over MCP: ask the client by elicitation when it can, otherwise say how to approve
//! out of band.

use rmcp::service::{RequestContext, RoleServer};

use super::Inner;
use crate::approval::ApprovalRequest;
use crate::context::ToolContext;
use crate::envelope::Observation;

/// The observation for a call that needs approval.
///
/// Elicitation needs the lead's grant API (`Registry::grant` / `execute_approved` / `deny`);
/// until it lands every approval goes out of band: `POLICY_DENIED` / `APPROVAL_REQUIRED`, with
/// the digest and `how_to_approve` in `safe_details`.
pub(super) async fn resolve(
    inner: &Inner,
    request: ApprovalRequest,
    _rmcp: &RequestContext<RoleServer>,
    _ctx: &ToolContext,
) -> Observation {
    out_of_band(inner, &request)
}

fn out_of_band(inner: &Inner, request: &ApprovalRequest) -> Observation {
    let mut observation = request.pending_observation();
    observation.error = observation.error.map(|err| {
        err.with_detail("approval_channel", "out_of_band")
            .with_detail("how_to_approve", inner.how_to_approve.as_ref())
    });
    observation
}
