//! Stage 6, idempotency: where a call's key comes from, and the lifecycle that makes a keyed
//! write run at most once per key: the same request run again must not repeat its side
//! effect.
//!
//! # Keys
//! A key comes from the contract's source: an args field marked `#[tool(idempotency_key)]`, a
//! canonical hash of named fields (`idempotency(from = [...])`), or the host
//! (`idempotency(host)`, [`ToolContextBuilder::idempotency_key`](crate::ToolContextBuilder::idempotency_key)).
//! A key is 1..=255 visible ASCII characters (no spaces), else `INVALID_INPUT` /
//! `IDEMPOTENCY_KEY_INVALID`. The store never sees the bare key: records are filed under a
//! digest of (tenant, principal, tool, version, key), so two tenants, two users or two
//! versions never share a record.
//!
//! # Lifecycle
//! Just before the handler runs (after approval and the budget), the call claims its key in
//! the registry's [`IdempotencyStore`](crate::store::IdempotencyStore) with a lease of the
//! tool's longest possible run (every attempt's timeout and the waits between them) plus a
//! grace period:
//!
//! | the store holds | the call gets |
//! |---|---|
//! | nothing, or a record past retention | runs the handler |
//! | a completed record, same arguments | the stored envelope, `meta.idempotency = "replayed"`; the handler does not run |
//! | any live record, other arguments | `CONFLICT` / `IDEMPOTENCY_KEY_REUSED`; nothing runs |
//! | a running claim, same arguments | `CONFLICT` / `IDEMPOTENCY_IN_PROGRESS`, retryable |
//! | a claim whose lease ended, same arguments | runs again (the downstream sees the same key) |
//! | no answer within 5 s (store down) | `TRANSIENT` / `STORE_UNAVAILABLE`; nothing runs (fail closed) |
//! | a completed record that no longer parses | `INTERNAL` / `IDEMPOTENCY_RECORD_UNREADABLE`; nothing runs |
//!
//! After the handler:
//!
//! * a success, or an output-contract violation (the effect happened), is recorded and
//!   replayed until the retention ends (default 24 hours; then the key is forgotten and the
//!   same request runs again, as a new one);
//! * an error the handler marked [`before_effect`](ToolError::before_effect), or a call that
//!   never reached its handler (deadline, budget), releases the key at once;
//! * a timeout, a panic, an unmarked `TRANSIENT` or `INTERNAL` error, or a caller that went
//!   away, in *any* attempt of the call (a later attempt's marked error does not undo an
//!   earlier ambiguous one), is **ambiguous**: the effect may have happened, so the key stays held until its
//!   lease ends. Later calls get `IDEMPOTENCY_IN_PROGRESS` until then, and the run after that
//!   passes the same key downstream (take the [`IdempotencyKey`] extractor and hand it to the
//!   downstream API: that closes the crash window between "executed" and "recorded");
//! * any other error (`NOT_FOUND`, `CONFLICT`, ...) is a definite answer and is recorded and
//!   replayed like a success.
//!
//! Records are scoped by tool version: a deploy of a new version while a retry is in flight
//! runs the write again under the new version (pass the key downstream to catch that too).
//! Leases and retention are compared across replicas, so replicas sharing a store need clocks
//! that agree to well within the lease grace (default 30 s; NTP does that). Expired records
//! are swept by the in-memory store as it grows; call
//! [`Registry::purge_expired`](crate::Registry::purge_expired) now and then with a durable one.
//!
//! If recording fails after a successful effect, the caller still gets the real result and the
//! claim stays held until its lease ends, so an immediate retry is `IDEMPOTENCY_IN_PROGRESS`,
//! never a second send.
//!
//! # Crashes
//! A process that dies mid-call (killed, power cut) leaves the store in one of the states
//! above; what a retry from a fresh process gets depends on where it died. The crash tests
//! kill a child process with `SIGKILL` at each step (failpoints compiled in by the
//! `failpoints` feature, for tests only) on SQLite and PostgreSQL, then retry:
//!
//! | killed | the effect | a retry from a new process gets |
//! |---|---|---|
//! | after the claim (`tc::claimed`) | has not run | `IDEMPOTENCY_IN_PROGRESS` until the lease ends, then the one run |
//! | as the handler starts (`tc::before_effect`) | has not run | `IDEMPOTENCY_IN_PROGRESS` until the lease ends, then the one run |
//! | after the effect, before the record (`tc::after_effect`) | ran once | `IDEMPOTENCY_IN_PROGRESS` until the lease ends, then **a second run with the same key**: pass the key downstream so it can drop the repeat |
//! | after the record (`tc::recorded`) | ran once | the recorded result, replayed |
//! | after an approval grant was consumed (`tc::grant_consumed`) | has not run | `IDEMPOTENCY_IN_PROGRESS` until the lease ends, then `APPROVAL_GRANT_CONSUMED`: nothing runs without a new approval |
//!
//! The record itself is one conditional statement, so a crash "during" it is one of the rows
//! either side: the statement committed or it did not.

use serde_json::{Map, Value};

use crate::context::{IdempotencyKey, ToolContext};
use crate::contract::{IdempotencySource, ToolContract};
use crate::envelope::{Meta, Observation, Provenance};
use crate::error::{ErrorCategory, ToolError};
use crate::services::Services;
use crate::stage::Stage;
use crate::store::{Claim, ClaimRequest, StoreError};

/// Resolves the key of one call from its validated arguments (defaults applied) and context.
///
/// * `Field`: the field's string value (validated: 1..=255 visible ASCII);
/// * `Derived`: the [`canonical`](crate::canonical) digest of
///   `{tool, tenant, principal, args: {fields}}`,
///   so equal requests get equal keys and two tenants never share one;
/// * `Host`: the key the host put in the [`ToolContext`].
///
/// A write whose key is missing fails closed: `INVALID_INPUT` when the model must send it,
/// `POLICY_DENIED` when the host should have.
pub fn resolve_key(
    contract: &ToolContract,
    args: &Value,
    ctx: &ToolContext,
) -> Result<Option<IdempotencyKey>, ToolError> {
    let key = match &contract.idempotency.source {
        IdempotencySource::None => None,
        IdempotencySource::Field { field } => match args.get(field) {
            Some(Value::String(s)) => Some(
                IdempotencyKey::new(s.as_str())
                    .map_err(|e| e.with_detail("field", field.clone()))?,
            ),
            _ if contract.idempotency.required => {
                return Err(ToolError::invalid_input(
                    "IDEMPOTENCY_KEY_MISSING",
                    "this write needs its idempotency key field",
                )
                .with_detail("field", field.clone()));
            }
            _ => None,
        },
        IdempotencySource::Derived { fields } => {
            let mut picked = Map::new();
            for f in fields {
                picked.insert(f.clone(), args.get(f).cloned().unwrap_or(Value::Null));
            }
            let material = serde_json::json!({
                "tool": contract.name,
                "tenant": ctx.tenant().map(|t| t.as_str()),
                "principal": ctx.principal().map(|p| p.as_str()),
                "args": picked,
            });
            Some(IdempotencyKey::new(crate::canonical::sha256(&material))?)
        }
        IdempotencySource::Host => match ctx.idempotency_key() {
            Some(k) => Some(k.clone()),
            None if contract.idempotency.required => {
                return Err(ToolError::policy_denied(
                    "IDEMPOTENCY_KEY_MISSING",
                    "the host supplied no idempotency key for this write",
                ));
            }
            None => None,
        },
    };
    Ok(key)
}

/// The store did not answer: nothing runs.
pub(crate) fn store_unavailable() -> ToolError {
    ToolError::transient(
        "STORE_UNAVAILABLE",
        "the service cannot guarantee this call runs once right now; try again later",
    )
    .before_effect()
}

/// A claim this call holds.
#[derive(Debug)]
pub(crate) struct Held {
    key: String,
    token: String,
}

/// A claim that ends the call before its handler runs.
pub(crate) enum Early {
    /// Answer with a stored envelope (boxed: the refusal beside it is one pointer).
    Replay(Box<Observation>),
    /// Answer with this error; nothing runs.
    Refuse(ToolError),
}

impl Early {
    /// The observation for the model, with this call's `meta`, and the receipt's stage.
    pub(crate) fn into_observation(
        self,
        mut meta: Meta,
        provenance: Provenance,
    ) -> (Observation, Stage) {
        match self {
            Early::Replay(mut stored) => {
                meta.idempotency = Some("replayed".into());
                stored.meta = meta;
                (*stored, Stage::Replayed)
            }
            Early::Refuse(err) => (
                Observation::failure(err, meta, provenance),
                Stage::Idempotency,
            ),
        }
    }
}

/// The digest records are filed under: the key within its tenant, principal, tool and version.
fn scoped_key(contract: &ToolContract, ctx: &ToolContext, key: &IdempotencyKey) -> String {
    crate::canonical::sha256_parts(&[
        ctx.tenant().map(|t| t.as_str()),
        ctx.principal().map(|p| p.as_str()),
        Some(contract.name.as_str()),
        Some(contract.version.as_str()),
        Some(key.as_str()),
    ])
}

/// The longest a call can run: every attempt's timeout and the longest waits between them.
fn longest_run_ms(contract: &ToolContract) -> u64 {
    let retry = &contract.retry;
    let attempts = retry.max_attempts.max(1);
    // The executor's longest wait between attempts: the backoff before the last retry, or the
    // longest `retry_after_ms` it honours, whichever is longer.
    let wait = retry
        .backoff_ceiling_ms(attempts.saturating_sub(1))
        .max(retry.longest_wait_ms());
    let attempts = u64::from(attempts);
    contract
        .timeout_ms
        .saturating_mul(attempts)
        .saturating_add(wait.saturating_mul(attempts - 1))
}

/// How long one store call may take before the pipeline treats the store as unavailable.
const STORE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs one store call under the store timeout (and never past the call's deadline): a
/// store that stops answering fails closed instead of holding the call open.
pub(crate) async fn bounded<T>(
    deadline: Option<tokio::time::Instant>,
    call: impl std::future::Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    let limit = match deadline {
        Some(d) => STORE_TIMEOUT.min(d.saturating_duration_since(tokio::time::Instant::now())),
        None => STORE_TIMEOUT,
    };
    match tokio::time::timeout(limit, call).await {
        Ok(result) => result,
        Err(_) => Err(StoreError::new("the store did not answer in time")),
    }
}

/// Whether the executor still has to claim the call's key.
#[derive(Default)]
pub(crate) enum ClaimState {
    /// The executor claims it.
    #[default]
    Pending,
    /// Already claimed (before an approval grant was consumed). Boxed, as is `Early`: only
    /// approved calls carry either, and every call's future holds this state.
    Claimed(Box<Option<Held>>),
    /// Already decided that the call ends before its handler.
    Early(Box<Early>),
}

/// Releases a claim that will not be used (an approval refused after the claim).
pub(crate) async fn release(services: &Services, ctx: &ToolContext, held: Held) {
    let store = &services.idempotency.store;
    if let Err(e) = bounded(ctx.deadline(), store.release(&held.key, &held.token)).await {
        tracing::warn!(error = %e, "idempotency claim not released; it ends with its lease");
    }
}

/// Claims the call's key, if it has one.
// Takes the call's parts, not the call: the future must stay `Send` while it borrows them, and
// the call's decoded arguments are `Send` but not `Sync`.
/// `Ok(None)`: the call has no key and runs; `Ok(Some)`: it runs holding the claim.
pub(crate) async fn begin(
    services: &Services,
    contract: &ToolContract,
    ctx: &ToolContext,
    args: &Value,
) -> Result<Option<Held>, Early> {
    let Some(key) = ctx.idempotency_key() else {
        return Ok(None);
    };
    let cfg = &services.idempotency;
    let scoped = scoped_key(contract, ctx, key);
    let args_hash = crate::canonical::sha256(args);
    let token = services.ids.next();
    let now = services.clock.now_ms();
    let lease_until_ms = crate::clock::later(
        now,
        longest_run_ms(contract).saturating_add(cfg.lease_grace_ms),
    );
    let req = ClaimRequest {
        key: &scoped,
        args_hash: &args_hash,
        token: &token,
        now_ms: now,
        lease_until_ms,
        expires_at_ms: crate::clock::later(now, cfg.retention_ms).max(lease_until_ms),
    };
    match bounded(ctx.deadline(), cfg.store.claim(req)).await {
        Ok(Claim::Acquired) => {
            fail::fail_point!("tc::claimed");
            Ok(Some(Held { key: scoped, token }))
        }
        Ok(Claim::Replay(envelope)) => match serde_json::from_str::<Observation>(&envelope) {
            Ok(obs) => Err(Early::Replay(Box::new(obs))),
            Err(_) => Err(Early::Refuse(ToolError::internal(
                "IDEMPOTENCY_RECORD_UNREADABLE",
                "the stored result of this request cannot be read; it was not run again",
            ))),
        },
        Ok(Claim::InProgress { lease_until_ms }) => {
            let remaining = lease_until_ms.saturating_sub(now);
            Err(Early::Refuse(
                ToolError::conflict(
                    "IDEMPOTENCY_IN_PROGRESS",
                    "the same request is already running; retry later to get its result",
                )
                .with_retryable(true)
                // The running call usually ends within its timeout; its result then replays.
                .with_retry_after_ms(remaining.min(contract.timeout_ms).max(1))
                .with_detail("lease_remaining_ms", remaining),
            ))
        }
        Ok(Claim::KeyReused) => Err(Early::Refuse(ToolError::conflict(
            "IDEMPOTENCY_KEY_REUSED",
            "this idempotency key was already used for different arguments; use a new key for a new request",
        ))),
        Err(e) => {
            tracing::warn!(error = %e, tool = %contract.name, "idempotency store unavailable");
            Err(Early::Refuse(store_unavailable()))
        }
    }
}

/// What a claim of the call's key would answer if it is a replay: the completed, unexpired
/// record for the same arguments, read without claiming. `None` when the call has no key,
/// the store holds no such record, or the store cannot answer (then a human is asked, as
/// without the check).
pub(crate) async fn peek(
    services: &Services,
    contract: &ToolContract,
    ctx: &ToolContext,
    args: &Value,
) -> Option<Early> {
    let key = ctx.idempotency_key()?;
    let scoped = scoped_key(contract, ctx, key);
    let args_hash = crate::canonical::sha256(args);
    let now = services.clock.now_ms();
    let store = &services.idempotency.store;
    match bounded(ctx.deadline(), store.peek(&scoped, &args_hash, now)).await {
        Ok(Some(envelope)) => match serde_json::from_str::<Observation>(&envelope) {
            Ok(obs) => Some(Early::Replay(Box::new(obs))),
            Err(_) => None,
        },
        Ok(None) => None,
        Err(e) => {
            tracing::warn!(error = %e, tool = %contract.name, "idempotency store unavailable for a replay check");
            None
        }
    }
}

/// What to do with a held claim once the call has its outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Disposition {
    /// Record the envelope; replay it from now on.
    Complete,
    /// Forget the claim: nothing happened.
    Release,
    /// Keep the claim until its lease ends: the effect may have happened.
    Hold,
}

/// Decides the claim's fate from the call's error (`None` on success) and whether the handler
/// ran at all.
pub(crate) fn disposition(err: Option<&ToolError>, handler_ran: bool) -> Disposition {
    match err {
        None => Disposition::Complete,
        Some(_) if !handler_ran => Disposition::Release,
        Some(e) if e.is_before_effect() => Disposition::Release,
        Some(e) if e.code() == "OUTPUT_CONTRACT_VIOLATION" => Disposition::Complete,
        Some(e)
            if matches!(
                e.category(),
                ErrorCategory::Transient | ErrorCategory::Internal
            ) =>
        {
            Disposition::Hold
        }
        Some(_) => Disposition::Complete,
    }
}

/// Settles a held claim; failures to record are noted, never turned into a second run.
pub(crate) async fn end(
    services: &Services,
    held: Held,
    disposition: Disposition,
    observation: &Observation,
    diagnostics: &mut Vec<String>,
) {
    let store = &services.idempotency.store;
    match disposition {
        Disposition::Hold => {
            diagnostics
                .push("idempotency: outcome ambiguous, key held until its lease ends".into());
        }
        // Settling runs even past the call's deadline: the effect is done, and recording it
        // is what keeps a retry from repeating it.
        Disposition::Release => {
            if let Err(e) = bounded(None, store.release(&held.key, &held.token)).await {
                tracing::warn!(error = %e, "idempotency claim not released");
                diagnostics
                    .push("idempotency: release failed, key held until its lease ends".into());
            }
        }
        Disposition::Complete => {
            let Ok(envelope) = serde_json::to_string(observation) else {
                diagnostics.push(
                    "idempotency: the envelope could not be recorded, key held until its lease ends"
                        .into(),
                );
                return;
            };
            let expires =
                crate::clock::later(services.clock.now_ms(), services.idempotency.retention_ms);
            match bounded(
                None,
                store.complete(&held.key, &held.token, &envelope, expires),
            )
            .await
            {
                Ok(true) => {
                    fail::fail_point!("tc::recorded");
                    diagnostics.push("idempotency: result recorded".into());
                }
                Ok(false) => diagnostics
                    .push("idempotency: the lease was lost before the result was recorded".into()),
                Err(e) => {
                    tracing::warn!(error = %e, "idempotent result not recorded");
                    diagnostics.push(
                        "idempotency: recording failed, key held until its lease ends".into(),
                    );
                }
            }
        }
    }
}
