//! The registry: the set of tools an agent may use, built once, immutable, `Send + Sync` and
//! cheap to clone. It is a façade over the stages: [`prepare`](Registry::prepare) runs stages 1
//! to 5 (`crate::prepare`), [`execute`](Registry::execute) stages 6 to 8 (`crate::execute`),
//! and [`execute_approved`](Registry::execute_approved) releases a call a human approved.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::approval::{ApprovalConfig, ApprovalDecision, ApprovalGrant, ApprovalRequest};
use crate::call::{AuthorizedCall, PreparedCall, ValidatedCall};
use crate::catalog::Catalog;
use crate::context::ToolContext;
use crate::contract::{ContractSource, ToolContract};
use crate::envelope::Observation;
use crate::prepare::{Pipeline, Prepared};
use crate::proposal::{Proposal, ProposalLimits};
use crate::refuse::Rejection;
use crate::services::Services;

mod approvals;
mod build;
mod deferred;

pub use build::{RegistryBuilder, RegistryError};
#[cfg(feature = "mcp")]
pub(crate) use deferred::Settled;
pub use deferred::{PendingApproval, MAX_LISTED};

pub(crate) struct Shared {
    catalog: Catalog,
    services: Services,
    approvals: ApprovalConfig,
    deferred: deferred::DeferredConfig,
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
    pub(crate) inner: Arc<Shared>,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut tools: Vec<String> = self
            .inner
            .catalog
            .contracts()
            .into_iter()
            .map(|c| format!("{}@{}", c.name, c.version))
            .collect();
        tools.sort();
        f.debug_struct("Registry")
            .field("tools", &tools)
            .field("limits", &self.inner.services.limits)
            .finish_non_exhaustive()
    }
}

impl ContractSource for Registry {
    fn contracts(&self) -> Vec<&'static ToolContract> {
        self.inner.catalog.contracts()
    }
}

impl Registry {
    /// Starts a registry.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder::default()
    }

    /// Every registered contract, by name then newest version first.
    pub fn contracts(&self) -> Vec<&'static ToolContract> {
        self.inner.catalog.contracts()
    }

    /// The proposal limits in force.
    pub fn limits(&self) -> &ProposalLimits {
        &self.inner.services.limits
    }

    fn pipeline(&self) -> Pipeline<'_> {
        Pipeline {
            catalog: &self.inner.catalog,
            services: &self.inner.services,
            standing: &self.inner.approvals.standing,
        }
    }

    /// Parses raw proposal text under the registry's limits, then runs every check of
    /// [`prepare`](Self::prepare).
    pub fn prepare_raw(&self, raw: &str, ctx: &ToolContext) -> Result<Prepared, Rejection> {
        self.pipeline().prepare_raw(raw, ctx)
    }

    /// Runs every check, in order, on `proposal`: known tool and pinned version → null-dropping
    /// and defaults → JSON Schema (every error) → semantic rules → capabilities → state gate →
    /// deadline → idempotency key → approval decision → budget reservation.
    ///
    /// Returns a [`PreparedCall`] (the only thing [`execute`](Self::execute) accepts), an
    /// [`ApprovalRequest`], or a [`Rejection`] holding the error observation and, when the
    /// model can fix its arguments, repair feedback.
    pub fn prepare(&self, proposal: Proposal, ctx: &ToolContext) -> Result<Prepared, Rejection> {
        self.pipeline().prepare(proposal, ctx)
    }

    /// Stages 2 and 3 of [`prepare`](Self::prepare): lookup (pinned version or the newest),
    /// null-dropping and defaults, the input schema (every error), decoding and the semantic
    /// rules. The result has passed every check that looks only at the arguments.
    pub fn validate(
        &self,
        proposal: Proposal,
        ctx: &ToolContext,
    ) -> Result<ValidatedCall, Rejection> {
        self.pipeline().validate(proposal, ctx)
    }

    /// Stage 4 of [`prepare`](Self::prepare): capabilities, the state gate, the deadline and
    /// the idempotency key, all from the trusted context.
    pub fn authorize(
        &self,
        call: ValidatedCall,
        ctx: &ToolContext,
    ) -> Result<AuthorizedCall, Rejection> {
        self.pipeline().authorize(call, ctx)
    }

    /// Stage 5 of [`prepare`](Self::prepare): the approval decision and, for a call that can
    /// run now, the budget reservation.
    pub fn finish(&self, call: AuthorizedCall, ctx: &ToolContext) -> Result<Prepared, Rejection> {
        self.pipeline().finish(call, ctx)
    }

    /// Runs a prepared call: the idempotency claim, per-attempt timeout, retries of retryable
    /// errors with backoff, panic isolation, the output contract, then the envelope and the
    /// receipt.
    ///
    /// Needs a Tokio runtime with the time driver enabled (`#[tokio::main]` has it).
    // Not an `async fn`: it would hold the call a second time beside the executor's future,
    // and a server moves that future (into a task, into a span) on every call.
    pub fn execute(&self, call: PreparedCall) -> impl Future<Output = Observation> + Send + '_ {
        crate::execute::run(&self.inner.services, call)
    }

    /// Parse, prepare and execute in one step. A call that needs approval is not run (unless
    /// a [standing rule](crate::standing) approves it): it returns `POLICY_DENIED` /
    /// `APPROVAL_REQUIRED` with the digest to approve, and its receipt records the pending
    /// decision; unless its idempotency key already holds a completed result for the same
    /// arguments, which is replayed (a replay runs nothing, so there is nothing to approve).
    /// [`handle_deferred`](Self::handle_deferred) also stores the request for a decision by id.
    pub async fn handle(&self, raw: &str, ctx: &ToolContext) -> Observation {
        match self.prepare_raw(raw, ctx) {
            // Straight to the executor's future, not through `execute`: one less layer
            // holding a copy of the call in the future the caller moves around.
            Ok(Prepared::Ready(call)) => crate::execute::run(&self.inner.services, call).await,
            // A keyed call whose result is already recorded runs nothing: replay it rather
            // than ask for an approval that would release nothing. Boxed: inline, the store
            // lookup's state would make every call's future larger by most of a KiB.
            Ok(Prepared::NeedsApproval(request)) => {
                match Box::pin(self.replay_instead(request)).await {
                    Ok(replayed) => replayed,
                    Err(request) => self.leave_pending(request),
                }
            }
            Err(rejection) => rejection.into_observation(),
        }
    }

    /// Like [`handle`](Self::handle), but a call that needs approval is put to `approver`
    /// (a UI prompt, a chat message to an operator, a policy service) and then granted and
    /// run, or denied, in the same step: what every host otherwise writes around
    /// [`prepare_raw`](Self::prepare_raw), [`grant`](Self::grant),
    /// [`execute_approved`](Self::execute_approved) and [`deny`](Self::deny). `approver` is
    /// called only for a call that needs a human; it sees [`ApprovalRequest::subject`], which
    /// is exactly what will run.
    ///
    /// ```
    /// # use tool_contract::{tool, ToolArgs, ToolError, ToolContext, Registry};
    /// use tool_contract::approval::ApprovalDecision;
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
    /// let obs = registry
    ///     .handle_with_approver(raw, &ctx, |request| {
    ///         let yes = request.subject().arguments["id"] == "doc-1";
    ///         async move {
    ///             if yes {
    ///                 ApprovalDecision::approve("user:lee")
    ///             } else {
    ///                 ApprovalDecision::deny("user:lee", "not that one")
    ///             }
    ///         }
    ///     })
    ///     .await;
    /// assert!(obs.ok);
    /// # });
    /// ```
    pub async fn handle_with_approver<F, Fut>(
        &self,
        raw: &str,
        ctx: &ToolContext,
        approver: F,
    ) -> Observation
    where
        F: FnOnce(&ApprovalRequest) -> Fut,
        Fut: std::future::Future<Output = ApprovalDecision>,
    {
        match self.prepare_raw(raw, ctx) {
            Ok(Prepared::Ready(call)) => crate::execute::run(&self.inner.services, call).await,
            Ok(Prepared::NeedsApproval(request)) => {
                // A replay runs nothing: nobody is asked.
                let request = match self.replay_instead(request).await {
                    Ok(replayed) => return replayed,
                    Err(request) => request,
                };
                match approver(&request).await {
                    ApprovalDecision::Approve { approver } => {
                        let grant = self.grant(&request, &approver);
                        self.execute_approved(request, &grant).await
                    }
                    ApprovalDecision::ApproveEdited {
                        approver,
                        arguments,
                    } => match self.approve_edited(request, arguments, &approver, ctx) {
                        Ok((edited, grant)) => self.execute_approved(edited, &grant).await,
                        Err(rejection) => rejection.into_observation(),
                    },
                    ApprovalDecision::Deny { approver, reason } => {
                        self.deny(request, &approver, &reason)
                    }
                }
            }
            Err(rejection) => rejection.into_observation(),
        }
    }

    /// Signs a grant that approves exactly `request` (its digest, tool, version and tenant),
    /// in the name of `approver`, valid for the registry's approval TTL and for one execution.
    ///
    /// Call it only after a human said yes to [`ApprovalRequest::subject`].
    pub fn grant(&self, request: &ApprovalRequest, approver: &str) -> ApprovalGrant {
        self.inner
            .approvals
            .grant(&self.inner.services, request, approver)
    }

    /// The approver said no: a `POLICY_DENIED` / `APPROVAL_DENIED` observation the agent can
    /// act on (choose another action, or end safely). `reason` reaches the model; keep it free
    /// of secrets.
    pub fn deny(&self, request: ApprovalRequest, approver: &str, reason: &str) -> Observation {
        crate::approval::deny(&self.inner.services, request, approver, reason)
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
        self.inner
            .approvals
            .release(&self.inner.services, request, grant)
            .await
    }

    /// Deletes idempotency records past their retention, deferred approval requests past
    /// their expiry, and the marks of grants that expired more than an hour ago (the hour covers replicas whose clocks run behind); returns how
    /// many. Run it now and then (e.g. hourly) with a durable store; the in-memory store also
    /// sweeps by itself as it grows.
    pub async fn purge_expired(&self) -> Result<u64, crate::store::StoreError> {
        const GRANT_MARK_MARGIN_MS: u64 = 60 * 60 * 1000;
        let services = &self.inner.services;
        let now = services.clock.now_ms();
        let records = services.idempotency.store.purge_expired(now).await?;
        let pending = self.inner.deferred.store.purge_pending(now).await?;
        let marks = self
            .inner
            .approvals
            .store
            .purge_consumed_grants(now.saturating_sub(GRANT_MARK_MARGIN_MS))
            .await?;
        Ok(records + marks + pending)
    }
}
