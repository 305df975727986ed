//! Approval grants: bound to exactly what runs, signed, expiring, single-use.

use std::time::Duration;

use serde_json::Value;
use tool_contract::approval::{ApprovalGrant, ApprovalKey};
use tool_contract::clock::ManualClock;
use tool_contract::{ApprovalRequest, ErrorCategory, Prepared, Registry, ToolContext};
use tool_contract_examples::{CreateDraftTicket, DocumentStore, SendEmail};

const T0: u64 = 1_800_000_000_000;

fn registry(clock: &ManualClock) -> Registry {
    Registry::builder()
        .tool(SendEmail)
        .tool(CreateDraftTicket)
        .approval_key(ApprovalKey::new(b"a host secret of at least 32 bytes!").unwrap())
        .clock(clock.clone())
        .build()
        .unwrap()
}

fn ctx(tenant: &str, mail: &DocumentStore) -> ToolContext {
    ToolContext::builder()
        .principal("user:kim")
        .tenant(tenant)
        .capabilities(["mail:send", "tickets:create"])
        .state(mail.clone())
        .build()
}

fn email(subject: &str) -> String {
    format!(
        r#"{{"name": "send_email", "arguments": {{"to": "lee@example.com", "subject": "{subject}", "body": "See the attached policy."}}}}"#
    )
}

fn request(reg: &Registry, raw: &str, ctx: &ToolContext) -> ApprovalRequest {
    match reg.prepare_raw(raw, ctx) {
        Ok(Prepared::NeedsApproval(r)) => r,
        other => panic!("expected an approval request, got {other:?}"),
    }
}

fn denied(obs: &tool_contract::Observation, code: &str) {
    assert!(!obs.ok);
    assert_eq!(
        obs.category(),
        Some(ErrorCategory::PolicyDenied),
        "{}",
        obs.to_value()
    );
    assert_eq!(obs.code(), Some(code), "{}", obs.to_value());
    assert_eq!(obs.meta.attempts, 0, "nothing ran");
}

#[tokio::test]
async fn the_request_shows_exactly_what_will_run() {
    let clock = ManualClock::new(T0);
    let reg = registry(&clock);
    let mail = DocumentStore::new();
    let req = request(&reg, &email("Refund policy"), &ctx("acme", &mail));
    let s = req.subject();
    assert_eq!(
        (s.tool.as_str(), s.tool_version.as_str()),
        ("send_email", "1.2.0")
    );
    assert_eq!(s.tenant.as_deref(), Some("acme"));
    assert_eq!(s.principal.as_deref(), Some("user:kim"));
    assert_eq!(s.arguments["subject"], "Refund policy");
    assert_eq!(req.digest(), s.digest());
    assert!(req.digest().starts_with("sha256:"));
    // The call waits: nothing was sent.
    assert!(mail.sent_mail().is_empty());
}

#[tokio::test]
async fn a_grant_runs_the_call_once_and_reordered_keys_match() {
    let clock = ManualClock::new(T0);
    let reg = registry(&clock);
    let mail = DocumentStore::new();
    let c = ctx("acme", &mail);
    let first = request(&reg, &email("Refund policy"), &c);
    let grant = reg.grant(&first, "user:lee");
    assert_eq!(grant.approver(), "user:lee");
    assert_eq!(
        grant.expires_at_ms(),
        T0 + 600_000,
        "default TTL is 10 minutes"
    );
    // The same call proposed again with its keys in another order has the same digest.
    let reordered = r#"{"arguments": {"body": "See the attached policy.", "subject": "Refund policy", "to": "lee@example.com"}, "name": "send_email"}"#;
    let again = request(&reg, reordered, &c);
    assert_eq!(again.digest(), first.digest());
    let obs = reg.execute_approved(again, &grant).await;
    assert!(obs.ok, "{}", obs.to_value());
    assert_eq!(mail.sent_mail().len(), 1);
    // The used grant on the same call again: the stored result is replayed, nothing runs (a
    // grant is consumed only by a call that will run; the store conformance suite shows a
    // second run refused with APPROVAL_GRANT_CONSUMED).
    let replay = reg.execute_approved(first, &grant).await;
    assert_eq!(replay.meta.idempotency.as_deref(), Some("replayed"));
    assert_eq!(mail.sent_mail().len(), 1);
}

#[tokio::test]
async fn grants_for_other_calls_are_refused_each_with_its_code() {
    let clock = ManualClock::new(T0);
    let reg = registry(&clock);
    let mail = DocumentStore::new();
    let acme = ctx("acme", &mail);
    let granted = request(&reg, &email("Refund policy"), &acme);
    let grant = reg.grant(&granted, "user:lee");

    // Other arguments.
    let other_args = request(&reg, &email("Salaries of everyone"), &acme);
    denied(
        &reg.execute_approved(other_args, &grant).await,
        "APPROVAL_DIGEST_MISMATCH",
    );
    // Same arguments, other principal: also another digest.
    let kim_alias = ToolContext::builder()
        .principal("user:mallory")
        .tenant("acme")
        .capabilities(["mail:send"])
        .state(mail.clone())
        .build();
    let other_principal = request(&reg, &email("Refund policy"), &kim_alias);
    denied(
        &reg.execute_approved(other_principal, &grant).await,
        "APPROVAL_DIGEST_MISMATCH",
    );
    // Other tenant.
    let globex = request(&reg, &email("Refund policy"), &ctx("globex", &mail));
    denied(
        &reg.execute_approved(globex, &grant).await,
        "APPROVAL_TENANT_MISMATCH",
    );
    // Other tool.
    let ticket = r#"{"name": "create_draft_ticket", "arguments": {"request_id": "req-00000001", "title": "Pager down", "body": "", "priority": "urgent"}}"#;
    let ticket = request(&reg, ticket, &acme);
    denied(
        &reg.execute_approved(ticket, &grant).await,
        "APPROVAL_TOOL_MISMATCH",
    );
    // Expired.
    clock.advance(Duration::from_secs(601));
    let late = request(&reg, &email("Refund policy"), &acme);
    let obs = reg.execute_approved(late, &grant).await;
    denied(&obs, "APPROVAL_GRANT_EXPIRED");
    // None of the refusals used the grant up: a fresh grant still works.
    let now = request(&reg, &email("Refund policy"), &acme);
    let fresh = reg.grant(&now, "user:lee");
    assert!(reg.execute_approved(now, &fresh).await.ok);
    assert_eq!(mail.sent_mail().len(), 1);
}

#[tokio::test]
async fn forged_and_tampered_grants_are_refused() {
    let clock = ManualClock::new(T0);
    let reg = registry(&clock);
    let mail = DocumentStore::new();
    let acme = ctx("acme", &mail);
    let req = request(&reg, &email("Refund policy"), &acme);
    let grant = reg.grant(&req, "user:lee");

    // Tampered: an attacker stretches the expiry.
    let mut json = serde_json::to_value(&grant).unwrap();
    json["expires_at_ms"] = Value::from(u64::MAX / 2);
    let tampered: ApprovalGrant = serde_json::from_value(json).unwrap();
    denied(
        &reg.execute_approved(req, &tampered).await,
        "APPROVAL_GRANT_INVALID",
    );

    // Forged: the same claims signed by another registry's key.
    let other = Registry::builder()
        .tool(SendEmail)
        .clock(clock.clone())
        .build()
        .unwrap();
    let req = request(&other, &email("Refund policy"), &acme);
    let forged = other.grant(&req, "user:lee");
    let req = request(&reg, &email("Refund policy"), &acme);
    denied(
        &reg.execute_approved(req, &forged).await,
        "APPROVAL_GRANT_INVALID",
    );
    assert!(mail.sent_mail().is_empty());
}

#[tokio::test]
async fn a_denial_is_an_observation_the_agent_can_act_on() {
    let clock = ManualClock::new(T0);
    let reg = registry(&clock);
    let mail = DocumentStore::new();
    let req = request(&reg, &email("Refund policy"), &ctx("acme", &mail));
    let obs = reg.deny(req, "user:lee", "not before the policy is published");
    denied(&obs, "APPROVAL_DENIED");
    let details = obs.error.as_ref().unwrap().safe_details();
    assert_eq!(details["reason"], "not before the policy is published");
    assert!(mail.sent_mail().is_empty());
}

#[tokio::test]
async fn a_conditional_approval_asks_only_when_its_hook_says_so() {
    let clock = ManualClock::new(T0);
    let reg = registry(&clock);
    let mail = DocumentStore::new();
    let acme = ctx("acme", &mail);
    let normal = r#"{"name": "create_draft_ticket", "arguments": {"request_id": "req-00000002", "title": "Typo on page", "body": "", "priority": "normal"}}"#;
    assert!(matches!(
        reg.prepare_raw(normal, &acme),
        Ok(Prepared::Ready(_))
    ));
    let urgent = normal
        .replace("normal", "urgent")
        .replace("req-00000002", "req-00000003");
    assert!(matches!(
        reg.prepare_raw(&urgent, &acme),
        Ok(Prepared::NeedsApproval(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn a_grant_is_not_burnt_by_a_call_the_deadline_or_budget_refuses() {
    let clock = ManualClock::new(T0);
    let reg = registry(&clock);
    let mail = DocumentStore::new();
    // The human took longer than the turn: the deadline passed while the call waited.
    let late = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["mail:send"])
        .state(mail.clone())
        .deadline(tokio::time::Instant::now() + Duration::from_secs(3))
        .build();
    let req = request(&reg, &email("Refund policy"), &late);
    let grant = reg.grant(&req, "user:lee");
    tokio::time::advance(Duration::from_secs(2)).await;
    denied(
        &reg.execute_approved(req, &grant).await,
        "DEADLINE_TOO_SHORT",
    );
    // A spent budget refuses too.
    let broke = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capabilities(["mail:send"])
        .state(mail.clone())
        .budget(tool_contract::policy::Budget::new(0, 60_000))
        .build();
    let req = request(&reg, &email("Refund policy"), &broke);
    denied(&reg.execute_approved(req, &grant).await, "BUDGET_EXHAUSTED");
    // The grant is still good for the same call in a new turn.
    let req = request(&reg, &email("Refund policy"), &ctx("acme", &mail));
    assert!(reg.execute_approved(req, &grant).await.ok);
    assert_eq!(mail.sent_mail().len(), 1);
}

/// The one-call helper: the approver is asked only when a human must decide, sees what will
/// run, and its answer grants and runs the call once, or denies it.
#[tokio::test]
async fn handle_with_approver_asks_grants_runs_or_denies() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tool_contract::approval::ApprovalDecision;

    let clock = ManualClock::new(T0);
    let reg = registry(&clock);
    let mail = DocumentStore::new();
    let ctx = ctx("acme", &mail);
    let asked = AtomicUsize::new(0);
    let approve_refunds = |request: &ApprovalRequest| {
        asked.fetch_add(1, Ordering::Relaxed);
        let subject = request.subject().arguments["subject"].clone();
        async move {
            if subject == "Refund policy" {
                ApprovalDecision::approve("user:lee")
            } else {
                ApprovalDecision::deny("user:lee", "only the refund policy goes out today")
            }
        }
    };

    let sent = reg
        .handle_with_approver(&email("Refund policy"), &ctx, approve_refunds)
        .await;
    assert!(sent.ok, "{}", sent.to_value());
    assert_eq!(mail.sent_mail().len(), 1);

    let refused = reg
        .handle_with_approver(&email("Salaries"), &ctx, approve_refunds)
        .await;
    denied(&refused, "APPROVAL_DENIED");
    assert_eq!(mail.sent_mail().len(), 1, "a denied call sends nothing");
    assert_eq!(asked.load(Ordering::Relaxed), 2);

    // A call that needs no approval never reaches the approver.
    let ticket = r#"{"name": "create_draft_ticket", "arguments": {"request_id": "req-00009", "title": "Printer on floor 3", "body": "b", "priority": "normal"}}"#;
    let drafted = reg
        .handle_with_approver(ticket, &ctx, approve_refunds)
        .await;
    assert!(drafted.ok, "{}", drafted.to_value());
    assert_eq!(asked.load(Ordering::Relaxed), 2);
}
