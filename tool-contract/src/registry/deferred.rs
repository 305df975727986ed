//! Deferred approvals: an [`ApprovalRequest`] stored until a human decides it, decided by id
//! from any process sharing the [`PendingApprovalStore`], then resumed.
//!
//! Nothing stored is trusted at resume. [`Registry::resume`] takes the resuming process's own
//! [`ToolContext`] (same tenant and principal as the request, else refused), prepares the
//! stored arguments again through every stage (schema, semantic rules, capabilities, state
//! gate, flow control when the context carries a session), and runs the call only when the
//! fresh digest equals the stored one; the deadline, the budget and the idempotency key are
//! checked again as the approved call is released. The release goes through
//! [`Registry::execute_approved`] with a grant whose id is derived from the request's id, so
//! the approval store's single-use mark makes two concurrent resumes of one approval run the
//! call once.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::approval::{ApprovalGrant, ApprovalRequest, ApprovalSubject, GrantClaims};
use crate::call::CallOrigin;
use crate::context::ToolContext;
use crate::envelope::Observation;
use crate::error::ToolError;
use crate::prepare::Prepared;
use crate::proposal::Proposal;
use crate::refuse::{refuse, refuse_at_approval};
use crate::stage::Stage;
use crate::store::{Decision, PendingApprovalStore, PendingRecord, PendingState, StoreError};

use super::Registry;

/// How long a deferred request waits for its decision by default.
pub(crate) const DEFAULT_PENDING_TTL: Duration = Duration::from_secs(60 * 60);

/// Most requests [`Registry::pending_approvals`] returns at once.
pub const MAX_LISTED: u32 = 1000;

/// The registry's deferred-approval settings.
pub(crate) struct DeferredConfig {
    pub(crate) store: Arc<dyn PendingApprovalStore>,
    pub(crate) ttl_ms: u64,
}

/// A deferred approval request, as a host shows it to an operator.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct PendingApproval {
    /// The id an operator approves or denies it by.
    pub id: String,
    /// The approval digest of `subject`.
    pub digest: String,
    /// Exactly what will run if it is approved.
    pub subject: ApprovalSubject,
    /// The call id the model gave.
    pub call_id: String,
    /// When it was stored, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// When it stops being decidable (undecided) or releasable (approved).
    pub expires_at_ms: u64,
    /// Where it stands.
    #[serde(flatten)]
    pub state: PendingState,
}

impl PendingApproval {
    /// The tenant it belongs to.
    pub fn tenant(&self) -> Option<&str> {
        self.subject.tenant.as_deref()
    }

    /// Who proposed it.
    pub fn principal(&self) -> Option<&str> {
        self.subject.principal.as_deref()
    }

    fn from_record(record: PendingRecord) -> Result<Self, ToolError> {
        let unreadable = || {
            ToolError::internal(
                "PENDING_APPROVAL_UNREADABLE",
                "the stored approval request cannot be read; it was not run",
            )
        };
        let subject: ApprovalSubject =
            serde_json::from_str(&record.subject).map_err(|_| unreadable())?;
        // The record's own columns must agree with the subject it carries: a row edited
        // behind the store's back is refused, never half-trusted.
        if subject.digest() != record.digest
            || subject.tenant != record.tenant
            || subject.principal != record.principal
        {
            return Err(unreadable());
        }
        Ok(PendingApproval {
            id: record.id,
            digest: record.digest,
            subject,
            call_id: record.call_id,
            created_at_ms: record.created_at_ms,
            expires_at_ms: record.expires_at_ms,
            state: record.state,
        })
    }
}

fn unavailable(e: &StoreError) -> ToolError {
    tracing::warn!(error = %e, "pending approval store unavailable");
    crate::idempotency::store_unavailable()
}

fn unknown() -> ToolError {
    ToolError::not_found(
        "PENDING_APPROVAL_UNKNOWN",
        "no approval request has this id",
    )
}

fn expired() -> ToolError {
    ToolError::policy_denied(
        "PENDING_APPROVAL_EXPIRED",
        "the approval request expired before it was decided and released; propose the call again",
    )
}

/// The refusal for a request in `state` that cannot be released.
fn not_releasable(state: &PendingState) -> ToolError {
    match state {
        PendingState::Pending => ToolError::conflict(
            "PENDING_APPROVAL_STILL_PENDING",
            "nobody has decided this approval request yet",
        )
        .with_retryable(true),
        PendingState::Denied {
            approver, reason, ..
        } => denied(approver, reason),
        PendingState::Used { .. } => ToolError::policy_denied(
            "PENDING_APPROVAL_USED",
            "this approval already released its call; each approval releases one execution",
        ),
        PendingState::Approved { .. } => ToolError::internal(
            "PENDING_APPROVAL_STATE",
            "the approval request changed while it was being released",
        ),
    }
}

fn denied(approver: &str, reason: &str) -> ToolError {
    ToolError::policy_denied("APPROVAL_DENIED", "a human declined this call")
        .with_detail("approver", approver.chars().take(256).collect::<String>())
        .with_detail("reason", reason.chars().take(500).collect::<String>())
}

/// What a call needing approval meets in the pending store.
pub(crate) enum Settled {
    /// Decided: the call ran (or was refused at release), or the denial.
    Done(Observation),
    /// Nobody decided yet; the live pending record for the same call, if one exists.
    // Boxed: the record is rarely there, and the enum travels by value.
    Waiting(ApprovalRequest, Option<Box<PendingApproval>>),
}

impl Registry {
    fn store(&self) -> &dyn PendingApprovalStore {
        &*self.inner.deferred.store
    }

    /// Stores `request` to be decided later, by id, from any process sharing the registry's
    /// [`PendingApprovalStore`] ([`RegistryBuilder::pending_approval_store`](crate::RegistryBuilder::pending_approval_store)).
    /// It expires undecided after the pending TTL (1 hour by default).
    ///
    /// Errors: `TRANSIENT` / `STORE_UNAVAILABLE` when the store cannot be written.
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
    /// let pending = registry.defer(&request).await.unwrap();
    ///
    /// // Later, maybe in another process: an operator lists and approves it ...
    /// let listed = registry.pending_approvals(Some("acme")).await.unwrap();
    /// assert_eq!(listed[0].id, pending.id);
    /// registry.approve_pending(Some("acme"), &pending.id, "user:lee", "checked").await.unwrap();
    /// // ... and the host resumes it with the caller's own context.
    /// assert!(registry.resume(&pending.id, &ctx).await.ok);
    /// # });
    /// ```
    // Not an `async fn`: the request is read before the returned future starts, so the
    // future holds no reference to it (a request is `Send` but not `Sync`) and stays `Send`.
    pub fn defer<'a>(
        &'a self,
        request: &ApprovalRequest,
    ) -> impl std::future::Future<Output = Result<PendingApproval, ToolError>> + Send + use<'a>
    {
        let record = self.pending_record(request);
        async move {
            let record = record?;
            crate::idempotency::bounded(None, self.store().put(&record))
                .await
                .map_err(|e| unavailable(&e))?;
            PendingApproval::from_record(record)
        }
    }

    fn pending_record(&self, request: &ApprovalRequest) -> Result<PendingRecord, ToolError> {
        let services = &self.inner.services;
        let now = services.clock.now_ms();
        let subject = request.subject();
        let json = serde_json::to_string(subject).map_err(|_| {
            ToolError::internal(
                "PENDING_APPROVAL_UNREADABLE",
                "the approval request could not be stored",
            )
        })?;
        Ok(PendingRecord::new(
            services.ids.next(),
            subject.tenant.clone(),
            subject.principal.clone(),
            request.digest(),
            subject.tool.clone(),
            subject.tool_version.clone(),
            request.call_id(),
            json,
            now,
            crate::clock::later(now, self.inner.deferred.ttl_ms),
        ))
    }

    /// The undecided, unexpired requests of `tenant`, oldest first (at most [`MAX_LISTED`]).
    pub async fn pending_approvals(
        &self,
        tenant: Option<&str>,
    ) -> Result<Vec<PendingApproval>, ToolError> {
        let now = self.inner.services.clock.now_ms();
        let records =
            crate::idempotency::bounded(None, self.store().list_pending(tenant, now, MAX_LISTED))
                .await
                .map_err(|e| unavailable(&e))?;
        records
            .into_iter()
            .map(PendingApproval::from_record)
            .collect()
    }

    /// The request `id` of `tenant`, in whatever state.
    ///
    /// Errors: `NOT_FOUND` / `PENDING_APPROVAL_UNKNOWN`; `POLICY_DENIED` /
    /// `PENDING_APPROVAL_OTHER_TENANT` when it belongs to another tenant.
    pub async fn pending_approval(
        &self,
        tenant: Option<&str>,
        id: &str,
    ) -> Result<PendingApproval, ToolError> {
        let record = crate::idempotency::bounded(None, self.store().get(id))
            .await
            .map_err(|e| unavailable(&e))?
            .ok_or_else(unknown)?;
        if record.tenant.as_deref() != tenant {
            return Err(ToolError::policy_denied(
                "PENDING_APPROVAL_OTHER_TENANT",
                "the approval request belongs to another tenant",
            ));
        }
        PendingApproval::from_record(record)
    }

    /// An operator approves request `id` of `tenant`: only a pending, unexpired request
    /// moves, once, whoever races. The call runs when it is resumed
    /// ([`resume`](Self::resume)) or proposed again (through
    /// [`handle_deferred`](Self::handle_deferred) or the MCP server).
    ///
    /// Errors: those of [`pending_approval`](Self::pending_approval), `POLICY_DENIED` /
    /// `PENDING_APPROVAL_EXPIRED`, `CONFLICT` / `PENDING_APPROVAL_DECIDED` when it was already
    /// decided.
    pub async fn approve_pending(
        &self,
        tenant: Option<&str>,
        id: &str,
        approver: &str,
        reason: &str,
    ) -> Result<PendingApproval, ToolError> {
        self.decide_pending(tenant, id, true, approver, reason)
            .await
    }

    /// An operator denies request `id` of `tenant`; `reason` reaches the model, so keep it
    /// free of secrets. Errors as [`approve_pending`](Self::approve_pending).
    pub async fn deny_pending(
        &self,
        tenant: Option<&str>,
        id: &str,
        approver: &str,
        reason: &str,
    ) -> Result<PendingApproval, ToolError> {
        self.decide_pending(tenant, id, false, approver, reason)
            .await
    }

    async fn decide_pending(
        &self,
        tenant: Option<&str>,
        id: &str,
        approve: bool,
        approver: &str,
        reason: &str,
    ) -> Result<PendingApproval, ToolError> {
        let approver: String = approver.chars().take(256).collect();
        let reason: String = reason.chars().take(500).collect();
        let current = self.pending_approval(tenant, id).await?;
        let now = self.inner.services.clock.now_ms();
        let decision = Decision {
            approve,
            approver: &approver,
            reason: &reason,
            now_ms: now,
        };
        let moved = current.state == PendingState::Pending
            && crate::idempotency::bounded(None, self.store().decide(id, decision))
                .await
                .map_err(|e| unavailable(&e))?;
        let after = self.pending_approval(tenant, id).await?;
        if moved {
            return Ok(after);
        }
        if after.state == PendingState::Pending && after.expires_at_ms <= now {
            return Err(expired());
        }
        Err(ToolError::conflict(
            "PENDING_APPROVAL_DECIDED",
            "the approval request was already decided",
        )
        .with_detail("state", after.state.name()))
    }

    /// Runs approved request `id` under `ctx`, the resuming process's own trusted context,
    /// which must name the request's tenant and principal.
    ///
    /// The stored arguments are prepared again through every stage under `ctx` (the version
    /// it selects, its capabilities, state gate, deadline, budget, and flow control when it
    /// carries a session), and the call runs only if the fresh approval digest equals the
    /// approved one: a call that was shown with the provenance of a session resumes only
    /// under that session, and a contract or version that changed since is refused. The
    /// approval releases one execution.
    ///
    /// Refusals (`POLICY_DENIED` unless noted), nothing run: `PENDING_APPROVAL_UNKNOWN`
    /// (`NOT_FOUND`), `PENDING_APPROVAL_OTHER_TENANT`, `PENDING_APPROVAL_OTHER_PRINCIPAL`,
    /// `PENDING_APPROVAL_EXPIRED`, `PENDING_APPROVAL_STILL_PENDING` (`CONFLICT`, retryable),
    /// `APPROVAL_DENIED`, `PENDING_APPROVAL_USED`, `PENDING_APPROVAL_CHANGED`, and every
    /// refusal of the pipeline itself.
    pub async fn resume(&self, id: &str, ctx: &ToolContext) -> Observation {
        let services = &self.inner.services;
        let tenant = ctx.tenant().map(|t| t.as_str());
        let pending = match self.pending_approval(tenant, id).await {
            Ok(p) => p,
            Err(err) => return self.refuse_unprepared(err, None, id),
        };
        let principal = ctx.principal().map(|p| p.as_str());
        if pending.principal() != principal {
            let err = ToolError::policy_denied(
                "PENDING_APPROVAL_OTHER_PRINCIPAL",
                "the approval request was made for another principal",
            );
            return self.refuse_unprepared(err, Some(&pending), id);
        }
        let now = services.clock.now_ms();
        if pending.expires_at_ms <= now {
            return self.refuse_unprepared(expired(), Some(&pending), id);
        }
        if !matches!(pending.state, PendingState::Approved { .. }) {
            let err = not_releasable(&pending.state);
            return self.refuse_unprepared(err, Some(&pending), id);
        }
        let proposal = Proposal::new(
            pending.subject.tool.clone(),
            pending.subject.arguments.clone(),
        )
        .with_call_id(pending.call_id.clone());
        match self.prepare(proposal, ctx) {
            Ok(Prepared::NeedsApproval(request)) if request.digest() == pending.digest => {
                self.release_pending(request, &pending).await
            }
            Ok(Prepared::NeedsApproval(request)) => {
                let err = changed().with_detail("digest", request.digest().to_owned());
                let (entry, origin) = request.call.into_origin();
                refuse_at_approval(services, err, &entry, origin).into_observation()
            }
            // The same arguments no longer ask for approval (the contract changed): what was
            // approved is not what would run.
            Ok(Prepared::Ready(call)) => {
                let (entry, origin) = call.into_origin();
                refuse(
                    services,
                    changed(),
                    Some(&entry),
                    "",
                    origin,
                    Stage::Approval,
                    None,
                )
                .into_observation()
            }
            Err(rejection) => rejection.into_observation(),
        }
    }

    /// Like [`handle`](Self::handle), but a call that needs approval is deferred: stored in
    /// the pending store (or, if the same call of the same tenant is already waiting, found
    /// there), and answered with `POLICY_DENIED` / `APPROVAL_REQUIRED` whose `safe_details`
    /// carry its `approval_id`. Once an operator decided it
    /// ([`approve_pending`](Self::approve_pending), [`deny_pending`](Self::deny_pending)),
    /// the same proposal again gets the result of the one approved execution, or the
    /// denial. A keyed call whose result the idempotency store already holds is replayed
    /// without asking anyone. When the store cannot keep the request, the envelope carries no
    /// `approval_id` and nothing runs.
    pub async fn handle_deferred(&self, raw: &str, ctx: &ToolContext) -> Observation {
        match self.prepare_raw(raw, ctx) {
            Ok(Prepared::Ready(call)) => self.execute(call).await,
            Ok(Prepared::NeedsApproval(request)) => {
                let request = match self.replay_instead(request).await {
                    Ok(replayed) => return replayed,
                    Err(request) => request,
                };
                match self.settle(request).await {
                    Settled::Done(observation) => observation,
                    Settled::Waiting(request, existing) => {
                        self.wait_for_decision(request, existing).await.0
                    }
                }
            }
            Err(rejection) => rejection.into_observation(),
        }
    }

    /// The decision already taken on `request`'s digest in its tenant, if any.
    pub(crate) async fn settle(&self, request: ApprovalRequest) -> Settled {
        let now = self.inner.services.clock.now_ms();
        let tenant = request.subject().tenant.clone();
        let found = crate::idempotency::bounded(
            request.call.ctx.deadline(),
            self.store().find(tenant.as_deref(), request.digest(), now),
        )
        .await;
        let record = match found {
            Ok(Some(record)) => record,
            Ok(None) => return Settled::Waiting(request, None),
            Err(e) => {
                tracing::warn!(error = %e, "pending approval store unavailable; asking again");
                return Settled::Waiting(request, None);
            }
        };
        let pending = match PendingApproval::from_record(record) {
            Ok(p) => p,
            Err(err) => {
                let (entry, origin) = request.call.into_origin();
                let services = &self.inner.services;
                return Settled::Done(
                    refuse_at_approval(services, err, &entry, origin).into_observation(),
                );
            }
        };
        match &pending.state {
            PendingState::Approved { .. } => {
                Settled::Done(self.release_pending(request, &pending).await)
            }
            PendingState::Denied {
                approver, reason, ..
            } => Settled::Done(self.deny(request, approver, reason)),
            _ => Settled::Waiting(request, Some(Box::new(pending))),
        }
    }

    /// `APPROVAL_REQUIRED` for `request`, naming the pending record it waits in: `existing`,
    /// or a new one. The second value is `false` when the record could not be stored.
    pub(crate) async fn wait_for_decision(
        &self,
        request: ApprovalRequest,
        existing: Option<Box<PendingApproval>>,
    ) -> (Observation, bool) {
        let pending = match existing {
            Some(p) => Ok(*p),
            None => self.defer(&request).await,
        };
        // With a receipt recording the pending decision, as `handle` leaves a call.
        let mut observation = self.leave_pending(request);
        let stored = pending.is_ok();
        if let Ok(pending) = pending {
            observation.error = observation.error.map(|err| {
                err.with_detail("approval_id", pending.id)
                    .with_detail("approval_expires_at_ms", pending.expires_at_ms)
            });
        }
        (observation, stored)
    }

    /// Records on the waiting request `pending` a decision taken another way (the MCP client's
    /// user answered), so no operator decides it again: denied, or approved and used at once,
    /// since the call it stands for runs now under a grant of its own.
    #[cfg(feature = "mcp")]
    pub(crate) async fn close_pending(
        &self,
        pending: &PendingApproval,
        approve: bool,
        approver: &str,
        reason: &str,
    ) {
        let decision = Decision {
            approve,
            approver,
            reason,
            now_ms: self.inner.services.clock.now_ms(),
        };
        let store = self.store();
        // After an approval, the record is marked used even when deciding it failed: an
        // operator may have approved it meanwhile, and that approval must not release the call
        // a second time (`mark_used` moves only an approved record).
        let closed =
            match crate::idempotency::bounded(None, store.decide(&pending.id, decision)).await {
                Ok(_) if approve => {
                    crate::idempotency::bounded(None, store.mark_used(&pending.id)).await
                }
                other => other,
            };
        if let Err(e) = closed {
            tracing::warn!(error = %e, "pending approval not closed; it expires undecided");
        }
    }

    /// A keyed call whose completed result the idempotency store holds is a replay: it runs
    /// nothing, so nobody is asked to approve it.
    pub(crate) async fn replay_instead(
        &self,
        request: ApprovalRequest,
    ) -> Result<Observation, ApprovalRequest> {
        let services = &self.inner.services;
        let stored = {
            // Borrowed, not moved: most requests are no replay and go on to be asked.
            let call = &*request.call;
            let args = call.args.get(&call.entry.plan);
            crate::idempotency::peek(services, call.entry.contract, &call.ctx, args).await
        };
        match stored {
            Some(replay) => {
                let mut call = *request.call;
                call.claim = crate::idempotency::ClaimState::Early(Box::new(replay));
                Ok(crate::execute::run(services, call).await)
            }
            None => Err(request),
        }
    }

    /// Releases `request` under the approval recorded in `pending` (state `Approved`).
    async fn release_pending(
        &self,
        request: ApprovalRequest,
        pending: &PendingApproval,
    ) -> Observation {
        let PendingState::Approved {
            approver, at_ms, ..
        } = &pending.state
        else {
            let err = not_releasable(&pending.state);
            let (entry, origin) = request.call.into_origin();
            return refuse(
                &self.inner.services,
                err,
                Some(&entry),
                "",
                origin,
                Stage::Approval,
                None,
            )
            .into_observation();
        };
        let grant = self.pending_grant(&request, pending, approver, *at_ms);
        let observation = self.execute_approved(request, &grant).await;
        // The grant was consumed (here or by a concurrent resume) exactly when the handler
        // ran or the store said it was used; only then is the record used up. A call the
        // deadline, the budget or its key stopped keeps its approval.
        let consumed =
            observation.meta.attempts > 0 || observation.code() == Some("APPROVAL_GRANT_CONSUMED");
        if consumed {
            if let Err(e) =
                crate::idempotency::bounded(None, self.store().mark_used(&pending.id)).await
            {
                // The grant mark still refuses a second release; only the listing lags.
                tracing::warn!(error = %e, "pending approval not marked used");
            }
        }
        observation
    }

    /// The grant an approved pending record stands for. Every field is derived from the
    /// record, so every process resuming it signs the same grant id, and the approval store
    /// lets exactly one of them consume it.
    fn pending_grant(
        &self,
        request: &ApprovalRequest,
        pending: &PendingApproval,
        approver: &str,
        at_ms: u64,
    ) -> ApprovalGrant {
        let subject = request.subject();
        self.inner.approvals.key.sign(GrantClaims {
            grant_id: format!("pending:{}", pending.id),
            digest: pending.digest.clone(),
            tool: subject.tool.clone(),
            tool_version: subject.tool_version.clone(),
            tenant: subject.tenant.clone(),
            approver: approver.to_owned(),
            issued_at_ms: at_ms,
            expires_at_ms: pending.expires_at_ms,
        })
    }

    /// A refusal before any call was prepared: envelope and receipt naming the stored tool.
    fn refuse_unprepared(
        &self,
        err: ToolError,
        pending: Option<&PendingApproval>,
        id: &str,
    ) -> Observation {
        let services = &self.inner.services;
        let (name, call_id) = match pending {
            Some(p) => (p.subject.tool.as_str(), p.call_id.clone()),
            None => (
                "",
                format!("pending:{}", id.chars().take(128).collect::<String>()),
            ),
        };
        let entry = pending.and_then(|p| {
            self.inner
                .catalog
                .entries()
                .find(|e| {
                    e.contract.name == p.subject.tool
                        && e.contract.version == p.subject.tool_version
                })
                .cloned()
        });
        let origin = CallOrigin {
            call_id,
            started: std::time::Instant::now(),
            record: None,
            received_at_ms: services.received_at_ms(),
            flow: None,
            approval: None,
        };
        refuse(
            services,
            err,
            entry.as_ref(),
            name,
            origin,
            Stage::Approval,
            None,
        )
        .into_observation()
    }
}

fn changed() -> ToolError {
    ToolError::policy_denied(
        "PENDING_APPROVAL_CHANGED",
        "the call prepared again is not the one that was approved (its contract, version, \
         principal or provenance changed); propose it again for a new approval",
    )
}
