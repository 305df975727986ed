//! The registry's approval methods beyond grant and deny: an approver's edit of a call, and
//! standing approvals.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::approval::{ApprovalGrant, ApprovalRequest};
use crate::call::CallOrigin;
use crate::context::ToolContext;
use crate::envelope::Observation;
use crate::error::ToolError;
use crate::prepare::finish::{self, Approvers};
use crate::prepare::{authorize, flow, validate, Prepared};
use crate::receipt::ApprovalOutcome;
use crate::refuse::{refuse_at_approval, Rejection};
use crate::standing::{StandingRule, StandingRuleError};

use super::Registry;

impl Registry {
    /// The approver said yes, but to other arguments: prepares the call with `arguments` (in
    /// full, not a patch) at the version `request` was prepared for, under `ctx`, through
    /// every check again (input schema, semantic rules, capabilities, state gate, deadline,
    /// idempotency key, flow control when `ctx` has a session), and signs a grant, in the
    /// name of `approver`, for the edited call's digest. Run it with
    /// [`execute_approved`](Self::execute_approved).
    ///
    /// The grant binds the edited call only: it never releases the model's call (unless the
    /// edit changed nothing), and a grant for the model's call never releases the edit. The
    /// edited call is always held for this grant, even when its arguments would need no
    /// approval (the human who wrote it approved it) and never by a
    /// [standing rule](crate::standing). It keeps the model's call id, so the observation
    /// answers the model's call; the receipt shows both sets of arguments
    /// ([`ApprovalRecord`](crate::receipt::ApprovalRecord)).
    ///
    /// `ctx` must be the trusted context of the model's call (same tenant and principal,
    /// else `POLICY_DENIED` / `APPROVAL_EDIT_CONTEXT_MISMATCH`). An edit that fails a check
    /// is refused with that check's error (e.g. `INVALID_INPUT` with repair feedback for the
    /// approver), and nothing is granted. With a session, the edited values are traced like
    /// any other: a value the approver typed is not something the user said, so a field whose
    /// policy requires the user's words refuses it unless the host records the approver's
    /// words in the session first. An edit that flow control escalates for a reason the
    /// approver was not shown (a value copied out of a tool result) is refused with
    /// `POLICY_DENIED` / `APPROVAL_EDIT_FLOW_ESCALATED` and the reasons: the approver must see
    /// them first.
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
    /// // The approver means doc-2, not doc-1.
    /// let edit = serde_json::json!({"id": "doc-2"});
    /// let (edited, grant) = registry.approve_edited(request, edit, "user:lee", &ctx).unwrap();
    /// assert_eq!(edited.subject().arguments["id"], "doc-2");
    /// assert_eq!(edited.proposed_arguments().unwrap()["id"], "doc-1");
    /// assert!(registry.execute_approved(edited, &grant).await.ok);
    /// # });
    /// ```
    pub fn approve_edited(
        &self,
        request: ApprovalRequest,
        arguments: Value,
        approver: &str,
        ctx: &ToolContext,
    ) -> Result<(ApprovalRequest, ApprovalGrant), Rejection> {
        let services = &self.inner.services;
        let approver: String = approver.chars().take(256).collect();
        let subject = request.subject();
        let same_caller = subject.tenant.as_deref() == ctx.tenant().map(|t| t.as_str())
            && subject.principal.as_deref() == ctx.principal().map(|p| p.as_str());
        // Flow reasons the approver was shown with the call they edit: an edit may keep them,
        // but a new one is something nobody has seen yet.
        let shown_reasons = subject.flow_reasons.clone();
        let (proposed_arguments, proposed_digest) = request.model_call();
        // What a refusal of the edit records: who approved what, beside what the model asked.
        let mut record = request.record(ApprovalOutcome::ApprovedEdited);
        record.digest = None;
        record.approver = Some(approver.clone());
        record.proposed_arguments = Some(proposed_arguments.clone());
        record.proposed_digest = Some(proposed_digest.clone());
        record.approved_arguments = Some(arguments.clone());
        record.flow_reasons = Vec::new();
        let (entry, mut origin) = request.call.into_origin();
        origin.approval = Some(Box::new(record));
        if !same_caller {
            let err = ToolError::policy_denied(
                "APPROVAL_EDIT_CONTEXT_MISMATCH",
                "an edited call must be prepared for the tenant and principal of the call it \
                 replaces",
            );
            return Err(refuse_at_approval(services, err, &entry, origin));
        }
        // The model's call id and proposal stay: the observation answers the model's call,
        // and the receipt keeps what the model asked for.
        let origin = CallOrigin {
            started: Instant::now(),
            ..origin
        };
        let admitted = validate::admit_value(services, Arc::clone(&entry), arguments, origin)?;
        let validated = validate::checks(services, admitted, ctx)?;
        let authorized = authorize::authorize(services, validated, ctx)?;
        let traced = flow::flow(services, authorized, ctx)?;
        let edited = match finish::finish(services, traced, ctx, Approvers::Human)? {
            Prepared::NeedsApproval(edited) => edited,
            // `Approvers::Human` always holds the call; should it ever not, the edit is refused
            // rather than run without its grant.
            Prepared::Ready(call) => {
                let (entry, origin) = call.into_origin();
                let err = ToolError::internal(
                    "APPROVAL_EDIT_NOT_HELD",
                    "the edited call could not be held for its approval",
                );
                return Err(refuse_at_approval(services, err, &entry, origin));
            }
        };
        // An edit that flow control escalates for a reason the approver was not shown (the
        // edited value was copied out of a tool result) is not granted on the spot: the
        // approver must see where it came from first.
        let unseen: Vec<String> = edited
            .subject()
            .flow_reasons
            .iter()
            .filter(|r| !shown_reasons.contains(r))
            .cloned()
            .collect();
        if !unseen.is_empty() {
            let err = ToolError::policy_denied(
                "APPROVAL_EDIT_FLOW_ESCALATED",
                "the edited arguments carry a value copied from a tool result; show the approver \
                 where it came from and approve the edited call as a call of its own",
            )
            .with_detail("flow_reasons", unseen);
            let (entry, origin) = edited.call.into_origin();
            return Err(refuse_at_approval(services, err, &entry, origin));
        }
        let edited = edited.edited_from(proposed_arguments, proposed_digest);
        let grant = self.grant(&edited, &approver);
        Ok((edited, grant))
    }

    /// Nobody decides now: the `POLICY_DENIED` / `APPROVAL_REQUIRED` observation of
    /// [`ApprovalRequest::pending_observation`] for the model, and a receipt recording the
    /// pending decision (what [`handle`](Self::handle) does with a call that needs approval).
    pub fn leave_pending(&self, request: ApprovalRequest) -> Observation {
        crate::approval::hold(&self.inner.services, request)
    }

    /// Registers a standing approval on this registry (see [`crate::standing`]); refused when
    /// the rule's tool is not registered or a rule with its id already is. Every replica
    /// sharing the approval store should register the same rules: uses are counted in the
    /// store, the rules themselves live in each registry.
    pub fn add_standing_rule(&self, rule: StandingRule) -> Result<(), StandingRuleError> {
        if !self.contracts().iter().any(|c| c.name == rule.tool()) {
            return Err(StandingRuleError::new(format!(
                "standing rule {:?} names tool {:?}, which is not registered",
                rule.id(),
                rule.tool()
            )));
        }
        self.inner.approvals.standing.add(rule)
    }

    /// Removes the standing rule with id `id`: later calls it would have approved ask a human.
    /// Returns whether such a rule was registered. A call already prepared under the rule
    /// still counts its use and runs.
    pub fn revoke_standing_rule(&self, id: &str) -> bool {
        self.inner.approvals.standing.revoke(id)
    }
}
