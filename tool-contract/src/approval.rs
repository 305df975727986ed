//! Approval: what a human is asked to approve, and the grant that releases exactly that.
//!
//! [`Registry::prepare`](crate::Registry::prepare) of a call that needs approval (always for
//! `approval`, by the args' [`ApprovalCondition`](crate::ApprovalCondition) for
//! `approval = "conditional"`) returns an [`ApprovalRequest`] instead of a runnable call. It
//! shows the approver an [`ApprovalSubject`] (tool, version, contract fingerprint, canonical
//! arguments with defaults applied, effect, principal, tenant) and carries the digest of all
//! of it. The approver answers with [`Registry::grant`](crate::Registry::grant), which signs an
//! [`ApprovalGrant`] with the host's [`ApprovalKey`], or [`Registry::deny`](crate::Registry::deny).
//!
//! [`Registry::execute_approved`](crate::Registry::execute_approved) runs the call only if the
//! grant is genuine, was given for this tenant, tool, version and digest, has not expired and
//! was never used before; each failure is `POLICY_DENIED` with its own code and nothing runs:
//!
//! | code | why |
//! |---|---|
//! | `APPROVAL_GRANT_INVALID` | the MAC does not verify: forged, tampered with, or another key |
//! | `APPROVAL_TENANT_MISMATCH` | the grant is for another tenant |
//! | `APPROVAL_TOOL_MISMATCH` | the grant is for another tool or version |
//! | `APPROVAL_DIGEST_MISMATCH` | the grant approved other arguments, principal or contract |
//! | `APPROVAL_GRANT_EXPIRED` | past its expiry (default 10 minutes after it was given) |
//! | `APPROVAL_GRANT_CONSUMED` | already used: a grant releases one execution |
//! | `APPROVAL_DENIED` | the approver said no |
//!
//! The grant is consumed only when the call will really run: a call the deadline, the budget
//! or its idempotency key stops (a replay, a conflict, "in progress") leaves the grant unused.
//! The digest covers the arguments, not a host-supplied idempotency key: the host, not the
//! model, chooses that key.
//!
//! The digest leaves out the call id, so a model that proposes the same call again (with its
//! keys in another order, say) meets the same digest, and a grant given for the first proposal
//! releases the second one.
//!
//! # Edited approvals
//!
//! An approver may change the arguments before saying yes
//! ([`Registry::approve_edited`](crate::Registry::approve_edited), or
//! [`ApprovalDecision::ApproveEdited`] for `handle_with_approver`). The edited call is prepared
//! again, at the same tool version and under the same trusted context, through every check
//! (schema, semantic rules, capabilities, state gate, deadline, idempotency key, flow control);
//! it gets its own digest and the grant binds that digest only. It is always held for the
//! human's grant, even when its arguments would need no approval, and it keeps the model's call
//! id. An edit that fails a check is refused with that check's error, and nothing is granted;
//! under another tenant or principal it is `APPROVAL_EDIT_CONTEXT_MISMATCH`.
//!
//! # Standing approvals and audit
//!
//! A call a [standing rule](crate::standing) matches runs without asking; its use is counted in
//! the same [`ApprovalStore`] (`APPROVAL_RULE_EXHAUSTED` / `APPROVAL_RULE_EXPIRED` when none is
//! left). Every decision (pending, approved, approved with edits, denied, standing rule) is
//! recorded in the call's receipt ([`crate::receipt::ApprovalRecord`]) and on its
//! `execute_tool` span (`tool.approval`, `tool.approval.id`, `tool.approval.approver`).

use std::fmt;
use std::sync::Arc;

use hmac::{KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::PreparedCall;
use crate::canonical::{self, hex};
use crate::clock::millis;
use crate::effect::Effect;
use crate::envelope::{Meta, Observation, Provenance};
use crate::error::ToolError;
use crate::random::RandomUnavailable;
use crate::receipt::{ApprovalOutcome, ApprovalRecord};
use crate::refuse::refuse_at_approval;
use crate::services::Services;
use crate::stage::Gate;
use crate::store::ApprovalStore;

type HmacSha256 = hmac::Hmac<sha2::Sha256>;

/// What will run if a human approves, and so what the digest covers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ApprovalSubject {
    /// Tool name.
    pub tool: String,
    /// Tool version.
    pub tool_version: String,
    /// The contract's `contract_sha256`: a changed policy under the same version is another
    /// subject.
    pub contract_sha256: String,
    /// Effect class.
    pub effect: Effect,
    /// Validated arguments with defaults applied.
    pub arguments: Value,
    /// Who asked.
    pub principal: Option<String>,
    /// For which tenant.
    pub tenant: Option<String>,
    /// Where each string argument came from, when the call had a session (see
    /// [`crate::flow`]): a recipient the user typed and the same recipient copied from a
    /// document are different subjects.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provenance: Vec<crate::flow::ArgSource>,
    /// Why flow control sent the call for approval, if it did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_reasons: Vec<String>,
}

impl ApprovalSubject {
    /// The [`canonical`] digest of the subject: a grant approves this digest only.
    pub fn digest(&self) -> String {
        canonical::sha256_of(self)
    }
}

/// What a human decided about an [`ApprovalRequest`], for
/// [`Registry::handle_with_approver`](crate::Registry::handle_with_approver).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalDecision {
    /// Run the call exactly as shown; `approver` is who said yes (it goes into the grant and
    /// the receipt).
    Approve {
        /// Who approved.
        approver: String,
    },
    /// Run the call with `arguments` instead of the model's: the edited call goes through
    /// every check again and the grant binds it (see
    /// [`Registry::approve_edited`](crate::Registry::approve_edited)).
    ApproveEdited {
        /// Who approved.
        approver: String,
        /// The arguments the approver chose, in full (not a patch).
        arguments: Value,
    },
    /// Do not run it; `reason` reaches the model, so keep it free of secrets.
    Deny {
        /// Who declined.
        approver: String,
        /// Why, for the model.
        reason: String,
    },
}

impl ApprovalDecision {
    /// `approver` said yes.
    pub fn approve(approver: impl Into<String>) -> Self {
        ApprovalDecision::Approve {
            approver: approver.into(),
        }
    }

    /// `approver` said yes to the call with `arguments` instead of the model's.
    pub fn approve_edited(approver: impl Into<String>, arguments: Value) -> Self {
        ApprovalDecision::ApproveEdited {
            approver: approver.into(),
            arguments,
        }
    }

    /// `approver` said no, for `reason`.
    pub fn deny(approver: impl Into<String>, reason: impl Into<String>) -> Self {
        ApprovalDecision::Deny {
            approver: approver.into(),
            reason: reason.into(),
        }
    }
}

/// A call that passed every check but needs a human's approval before it runs.
///
/// Show [`subject`](Self::subject) to the approver, then call
/// [`Registry::grant`](crate::Registry::grant) and
/// [`Registry::execute_approved`](crate::Registry::execute_approved), or
/// [`Registry::deny`](crate::Registry::deny); or let
/// [`Registry::handle_with_approver`](crate::Registry::handle_with_approver) do all of it.
#[derive(Debug)]
pub struct ApprovalRequest {
    // Both boxed: a request travels in `Prepared` beside a ready call, and every call that
    // needs no approval would otherwise move the request's size.
    subject: Box<ApprovalSubject>,
    digest: String,
    // Held, not exposed: only a valid grant releases it.
    pub(crate) call: Box<PreparedCall>,
    /// For a call an approver edited: what the model proposed.
    proposed: Option<Box<Proposed>>,
}

/// The model's call, kept beside an approver's edit of it for the receipt.
#[derive(Debug)]
struct Proposed {
    arguments: Value,
    digest: String,
}

impl ApprovalRequest {
    pub(crate) fn new(subject: ApprovalSubject, call: PreparedCall) -> Self {
        let digest = subject.digest();
        ApprovalRequest {
            subject: Box::new(subject),
            digest,
            call: Box::new(call),
            proposed: None,
        }
    }

    /// This request, marked as an approver's edit of the model's call with `arguments` and
    /// `digest`.
    pub(crate) fn edited_from(mut self, arguments: Value, digest: String) -> Self {
        self.proposed = Some(Box::new(Proposed { arguments, digest }));
        self
    }

    /// The model's own call behind this request: its arguments and digest (an edit of an
    /// edit still names the model's call).
    pub(crate) fn model_call(&self) -> (Value, String) {
        match &self.proposed {
            Some(p) => (p.arguments.clone(), p.digest.clone()),
            None => (self.subject.arguments.clone(), self.digest.clone()),
        }
    }

    /// For a request an approver edited
    /// ([`Registry::approve_edited`](crate::Registry::approve_edited)): the arguments the
    /// model proposed; [`subject`](Self::subject) shows the edited call that will run.
    pub fn proposed_arguments(&self) -> Option<&Value> {
        self.proposed.as_ref().map(|p| &p.arguments)
    }

    /// The receipt's record of `decision` about this request.
    pub(crate) fn record(&self, decision: ApprovalOutcome) -> ApprovalRecord {
        let s = &self.subject;
        let decision = match (decision, &self.proposed) {
            (ApprovalOutcome::Approved, Some(_)) => ApprovalOutcome::ApprovedEdited,
            (d, _) => d,
        };
        ApprovalRecord {
            decision,
            digest: Some(self.digest.clone()),
            principal: s.principal.clone(),
            tenant: s.tenant.clone(),
            approver: None,
            grant_id: None,
            rule_id: None,
            rule_use: None,
            reason: None,
            proposed_arguments: self.proposed.as_ref().map(|p| p.arguments.clone()),
            proposed_digest: self.proposed.as_ref().map(|p| p.digest.clone()),
            approved_arguments: self.proposed.as_ref().map(|_| s.arguments.clone()),
            flow_reasons: s.flow_reasons.clone(),
        }
    }

    fn pending_error(&self) -> ToolError {
        ToolError::policy_denied(
            "APPROVAL_REQUIRED",
            "a human must approve this call before it runs",
        )
        .with_detail("digest", self.digest().to_owned())
    }

    /// What the approver is shown.
    pub fn subject(&self) -> &ApprovalSubject {
        &self.subject
    }

    /// The digest a grant must name.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The id of the waiting call.
    pub fn call_id(&self) -> &str {
        self.call.call_id()
    }

    /// The observation for a call left waiting for approval: `POLICY_DENIED`,
    /// `APPROVAL_REQUIRED`, with the digest to approve in `safe_details`. It records no
    /// receipt; [`Registry::leave_pending`](crate::Registry::leave_pending) returns the same
    /// observation and records the pending decision.
    pub fn pending_observation(&self) -> Observation {
        let entry = &self.call.entry;
        let err = self.pending_error();
        let meta = Meta::of(
            entry.contract,
            self.call.call_id.clone(),
            millis(self.call.started.elapsed()),
            0,
        );
        Observation::failure(
            err,
            meta,
            Provenance::untrusted(entry.default_source(), None),
        )
    }
}

/// The host's secret for signing approval grants (HMAC-SHA256).
///
/// Every replica that executes approved calls must hold the same key; a registry without one
/// makes a random key, so its grants verify only in that process. The key never appears in
/// `Debug` output.
#[derive(Clone)]
pub struct ApprovalKey {
    mac: HmacSha256,
}

impl ApprovalKey {
    /// Shortest accepted key, in bytes.
    pub const MIN_LEN: usize = 32;

    /// A key from secret bytes (at least [`MIN_LEN`](Self::MIN_LEN) of them, e.g. from a
    /// secret manager).
    pub fn new(secret: &[u8]) -> Result<Self, ApprovalKeyError> {
        if secret.len() < Self::MIN_LEN {
            return Err(ApprovalKeyError { len: secret.len() });
        }
        // HMAC takes keys of any length; the length check above is the only failure we allow.
        let mac = <HmacSha256 as KeyInit>::new_from_slice(secret)
            .map_err(|_| ApprovalKeyError { len: secret.len() })?;
        Ok(ApprovalKey { mac })
    }

    /// A random key from the operating system's generator; an error, never a weaker key,
    /// when the generator fails.
    pub fn generate() -> Result<Self, RandomUnavailable> {
        let secret = crate::random::bytes::<32>()?;
        // 32 bytes is the minimum length, so `new` cannot refuse them.
        ApprovalKey::new(&secret).map_err(|e| RandomUnavailable::new(e.to_string()))
    }

    fn tag(&self, claims: &GrantClaims) -> Vec<u8> {
        let mut mac = self.mac.clone();
        mac.update(&canonical::mac_input(claims));
        mac.finalize().into_bytes().to_vec()
    }

    pub(crate) fn sign(&self, claims: GrantClaims) -> ApprovalGrant {
        let mac = format!("hmac-sha256:{}", hex(&self.tag(&claims)));
        ApprovalGrant { claims, mac }
    }

    /// Whether `grant` was signed with this key and not changed since (constant-time).
    pub fn verify(&self, grant: &ApprovalGrant) -> bool {
        let Some(tag) = grant.mac.strip_prefix("hmac-sha256:").and_then(unhex) else {
            return false;
        };
        let mut mac = self.mac.clone();
        mac.update(&canonical::mac_input(&grant.claims));
        mac.verify_slice(&tag).is_ok()
    }
}

impl fmt::Debug for ApprovalKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApprovalKey(..)")
    }
}

/// An [`ApprovalKey`] shorter than [`ApprovalKey::MIN_LEN`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalKeyError {
    len: usize,
}

impl fmt::Display for ApprovalKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "an approval key needs at least {} secret bytes, got {}",
            ApprovalKey::MIN_LEN,
            self.len
        )
    }
}

impl std::error::Error for ApprovalKeyError {}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct GrantClaims {
    pub(crate) grant_id: String,
    pub(crate) digest: String,
    pub(crate) tool: String,
    pub(crate) tool_version: String,
    pub(crate) tenant: Option<String>,
    pub(crate) approver: String,
    pub(crate) issued_at_ms: u64,
    pub(crate) expires_at_ms: u64,
}

/// A human's approval of one [`ApprovalRequest`] digest: signed, expiring, single-use.
///
/// It serializes to JSON so it can travel through an approval UI and back; any change to it
/// breaks its MAC.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalGrant {
    #[serde(flatten)]
    claims: GrantClaims,
    mac: String,
}

impl ApprovalGrant {
    /// The grant's unique id (single use is tracked by it).
    pub fn grant_id(&self) -> &str {
        &self.claims.grant_id
    }
    /// The approved digest.
    pub fn digest(&self) -> &str {
        &self.claims.digest
    }
    /// The approved tool.
    pub fn tool(&self) -> &str {
        &self.claims.tool
    }
    /// The approved tool version.
    pub fn tool_version(&self) -> &str {
        &self.claims.tool_version
    }
    /// The tenant the approval is for.
    pub fn tenant(&self) -> Option<&str> {
        self.claims.tenant.as_deref()
    }
    /// Who approved.
    pub fn approver(&self) -> &str {
        &self.claims.approver
    }
    /// When it was given, in milliseconds since the Unix epoch.
    pub fn issued_at_ms(&self) -> u64 {
        self.claims.issued_at_ms
    }
    /// When it stops releasing anything, in milliseconds since the Unix epoch.
    pub fn expires_at_ms(&self) -> u64 {
        self.claims.expires_at_ms
    }
}

/// The checks a grant passes before the store is asked to consume it, in order.
pub(crate) fn check_grant(
    key: &ApprovalKey,
    grant: &ApprovalGrant,
    request: &ApprovalRequest,
    now_ms: u64,
) -> Result<(), ToolError> {
    let subject = &request.subject;
    if !key.verify(grant) {
        return Err(ToolError::policy_denied(
            "APPROVAL_GRANT_INVALID",
            "the approval grant is not genuine: it was forged, altered or signed with another key",
        ));
    }
    let c = &grant.claims;
    if c.tenant != subject.tenant {
        return Err(ToolError::policy_denied(
            "APPROVAL_TENANT_MISMATCH",
            "the approval grant was given for another tenant",
        ));
    }
    if c.tool != subject.tool || c.tool_version != subject.tool_version {
        return Err(ToolError::policy_denied(
            "APPROVAL_TOOL_MISMATCH",
            "the approval grant was given for another tool or version",
        )
        .with_detail("granted_tool", c.tool.clone())
        .with_detail("granted_version", c.tool_version.clone()));
    }
    if c.digest != request.digest {
        return Err(ToolError::policy_denied(
            "APPROVAL_DIGEST_MISMATCH",
            "the approval grant approved a different call; ask for approval of this one",
        )
        .with_detail("digest", request.digest.clone()));
    }
    if c.expires_at_ms <= now_ms {
        return Err(ToolError::policy_denied(
            "APPROVAL_GRANT_EXPIRED",
            "the approval grant has expired; ask for approval again",
        )
        .with_detail("digest", request.digest.clone()));
    }
    Ok(())
}

/// The registry's approval settings: where single use is tracked, the signing key, and how
/// long a grant lives.
pub(crate) struct ApprovalConfig {
    pub(crate) store: Arc<dyn ApprovalStore>,
    /// Standing approvals, consulted before a human is asked.
    pub(crate) standing: crate::standing::StandingRules,
    pub(crate) key: ApprovalKey,
    pub(crate) ttl_ms: u64,
}

/// How long a grant is valid by default.
pub(crate) const DEFAULT_TTL: std::time::Duration = std::time::Duration::from_secs(600);

impl ApprovalConfig {
    /// Signs a grant for exactly `request`, in the name of `approver`.
    pub(crate) fn grant(
        &self,
        services: &Services,
        request: &ApprovalRequest,
        approver: &str,
    ) -> ApprovalGrant {
        let now = services.clock.now_ms();
        let subject = request.subject();
        self.key.sign(GrantClaims {
            grant_id: services.ids.next(),
            digest: request.digest().to_owned(),
            tool: subject.tool.clone(),
            tool_version: subject.tool_version.clone(),
            tenant: subject.tenant.clone(),
            approver: approver.chars().take(256).collect(),
            issued_at_ms: now,
            expires_at_ms: crate::clock::later(now, self.ttl_ms),
        })
    }

    /// Runs the call `request` holds if `grant` releases it; see
    /// [`Registry::execute_approved`](crate::Registry::execute_approved).
    pub(crate) async fn release(
        &self,
        services: &Services,
        request: ApprovalRequest,
        grant: &ApprovalGrant,
    ) -> Observation {
        let now = services.clock.now_ms();
        if let Err(err) = check_grant(&self.key, grant, &request, now) {
            // Not approved: the call still waits for a grant that releases it.
            let mut record = request.record(ApprovalOutcome::Pending);
            record.reason = Some(format!("grant refused: {}", err.code()));
            let mut call = *request.call;
            call.approval = Some(Box::new(record));
            return refuse_prepared(services, call, err);
        }
        let mut record = request.record(ApprovalOutcome::Approved);
        record.approver = Some(grant.approver().to_owned());
        record.grant_id = Some(grant.grant_id().to_owned());
        let mut call = *request.call;
        call.approval = Some(Box::new(record));
        // Time and budget before consumption: a call refused for either must not burn its
        // grant (a human may have approved it minutes after it was proposed).
        if let Err(err) = crate::policy::check_deadline(call.entry.contract, &call.ctx) {
            return refuse_prepared(services, call, err);
        }
        match crate::policy::reserve(call.entry.contract, &call.ctx) {
            Ok(r) => call.reservation = r,
            Err(err) => return refuse_prepared(services, call, err),
        }
        // The idempotency key too: a call that will be a replay, a conflict or "in progress"
        // runs nothing, so it leaves the grant for the call that will.
        let claimed = if call.ctx.idempotency_key().is_some() {
            let args = call.args.get(&call.entry.plan);
            crate::idempotency::begin(services, call.entry.contract, &call.ctx, args).await
        } else {
            Ok(None)
        };
        let held = match claimed {
            Ok(held) => held,
            Err(early) => {
                call.claim = crate::idempotency::ClaimState::Early(Box::new(early));
                return crate::execute::run(services, call).await;
            }
        };
        let consumed = crate::idempotency::bounded(
            call.ctx.deadline(),
            self.store
                .consume_grant(grant.grant_id(), grant.expires_at_ms(), now),
        )
        .await;
        let refused = match consumed {
            Ok(true) => {
                fail::fail_point!("tc::grant_consumed");
                None
            }
            Ok(false) => Some(ToolError::policy_denied(
                "APPROVAL_GRANT_CONSUMED",
                "the approval grant was already used; each grant releases one execution",
            )),
            Err(e) => {
                tracing::warn!(error = %e, "approval store unavailable");
                Some(crate::idempotency::store_unavailable())
            }
        };
        if let Some(err) = refused {
            if let Some(held) = held {
                crate::idempotency::release(services, &call.ctx, held).await;
            }
            // A used grant approves nothing more: the call still waits for one that does.
            if err.code() == "APPROVAL_GRANT_CONSUMED" {
                if let Some(record) = call.approval.as_mut() {
                    record.decision = ApprovalOutcome::Pending;
                    record.reason = Some(format!("grant refused: {}", err.code()));
                }
            }
            return refuse_prepared(services, call, err);
        }
        call.claim = crate::idempotency::ClaimState::Claimed(Box::new(held));
        call.gates = if call.gates.contains(&Gate::Flow) {
            Gate::APPROVED_TRACED
        } else {
            Gate::APPROVED
        };
        crate::execute::run(services, call).await
    }
}

/// The approver said no: a `POLICY_DENIED` / `APPROVAL_DENIED` observation.
pub(crate) fn deny(
    services: &Services,
    request: ApprovalRequest,
    approver: &str,
    reason: &str,
) -> Observation {
    let approver: String = approver.chars().take(256).collect();
    let reason: String = reason.chars().take(500).collect();
    let mut record = request.record(ApprovalOutcome::Denied);
    record.approver = Some(approver.clone());
    record.reason = Some(reason.clone());
    let err = ToolError::policy_denied("APPROVAL_DENIED", "a human declined this call")
        .with_detail("approver", approver)
        .with_detail("reason", reason);
    let mut call = *request.call;
    call.approval = Some(Box::new(record));
    refuse_prepared(services, call, err)
}

/// The call waits for a human: the `APPROVAL_REQUIRED` observation of
/// [`ApprovalRequest::pending_observation`], with a receipt recording the pending decision.
pub(crate) fn hold(services: &Services, request: ApprovalRequest) -> Observation {
    let mut record = request.record(ApprovalOutcome::Pending);
    record.reason = Some("a human must approve this call before it runs".into());
    let err = request.pending_error();
    let mut call = *request.call;
    call.approval = Some(Box::new(record));
    refuse_prepared(services, call, err)
}

/// A prepared call refused at the approval stage: envelope and receipt, nothing run.
fn refuse_prepared(services: &Services, call: PreparedCall, err: ToolError) -> Observation {
    let (entry, origin) = call.into_origin();
    refuse_at_approval(services, err, &entry, origin).into_observation()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    // Only lower-case hex, as `hex` writes it: one spelling per MAC.
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|b| u8::from_str_radix(b, 16).ok()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims() -> GrantClaims {
        GrantClaims {
            grant_id: "g1".into(),
            digest: "sha256:00".into(),
            tool: "send_email".into(),
            tool_version: "1.2.0".into(),
            tenant: Some("acme".into()),
            approver: "user:lee".into(),
            issued_at_ms: 1,
            expires_at_ms: 2,
        }
    }

    #[test]
    fn grants_verify_only_unchanged_and_under_their_key() {
        let key = ApprovalKey::generate().unwrap();
        let grant = key.sign(claims());
        assert!(key.verify(&grant));
        assert!(
            !ApprovalKey::generate().unwrap().verify(&grant),
            "another key"
        );
        let mut json = serde_json::to_value(&grant).unwrap();
        json["expires_at_ms"] = 99.into();
        let tampered: ApprovalGrant = serde_json::from_value(json).unwrap();
        assert!(!key.verify(&tampered));
        let mut bad = grant.clone();
        bad.mac = "hmac-sha256:zz".into();
        assert!(!key.verify(&bad));
        bad.mac = "nonsense".into();
        assert!(!key.verify(&bad));
        // One spelling only: `from_str_radix` alone would take "+f" for "0f".
        let hex_tag = grant.mac.strip_prefix("hmac-sha256:").unwrap();
        for respelled in [hex_tag.to_uppercase(), format!("+{}", &hex_tag[1..])] {
            bad.mac = format!("hmac-sha256:{respelled}");
            assert!(!key.verify(&bad), "{respelled}");
        }
    }

    #[test]
    fn a_failing_generator_gives_an_error_never_a_key() {
        let err = crate::random::tests::failing(ApprovalKey::generate).unwrap_err();
        assert!(err.to_string().contains("unavailable"), "{err}");
    }

    #[test]
    fn short_keys_are_refused_and_keys_never_print() {
        let err = ApprovalKey::new(b"short").unwrap_err();
        assert_eq!(
            err.to_string(),
            "an approval key needs at least 32 secret bytes, got 5"
        );
        let key = ApprovalKey::new(&[7u8; 32]).unwrap();
        assert_eq!(format!("{key:?}"), "ApprovalKey(..)");
    }
}
