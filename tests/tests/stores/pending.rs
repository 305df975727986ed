//! The deferred-approval conformance suite, run on every backend like `conformance.rs`: the
//! pending store's state machine and tenant scoping, `IdempotencyStore::peek`, and, through
//! the real pipeline, a call deferred by one registry, decided and resumed by another that
//! shares the store.

use std::sync::Arc;
use std::time::Duration;

use tool_contract::approval::{ApprovalDecision, ApprovalKey};
use tool_contract::clock::ManualClock;
use tool_contract::store::{
    ApprovalStore, Claim, ClaimRequest, Decision, IdempotencyStore, PendingApprovalStore,
    PendingRecord, PendingState,
};
use tool_contract::{Observation, Prepared, Registry, ToolContext};
use tool_contract_examples::{DocumentStore, SendEmail};

use crate::conformance::Backend;

/// One `#[tokio::test]` per deferred-approval case for `$backend`.
macro_rules! pending_tests {
    ($backend:expr) => {
        pending_tests!(@cases $backend;
            pending_records_move_once_and_stay_in_their_tenant,
            one_of_fifty_racing_decisions_wins,
            peek_sees_only_completed_records_for_the_same_arguments,
            a_call_deferred_in_one_registry_is_decided_and_resumed_in_another,
            fifty_racing_resumes_send_once,
            denied_and_expired_requests_release_nothing,
            a_retry_after_the_decision_runs_once_then_replays,
            a_recorded_result_is_replayed_without_asking,
        );
    };
    (@cases $backend:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                crate::pending::$case(&$backend).await
            }
        )*
    };
}

const T0: u64 = 1_800_000_000_000;
const HOUR_MS: u64 = 3_600_000;

macro_rules! fresh_or_skip {
    ($backend:expr) => {
        match $backend.fresh().await {
            Some(s) => Arc::new(s),
            None => {
                eprintln!("SKIPPED: {} is not available here", B::NAME);
                return;
            }
        }
    };
}

fn record(id: &str, tenant: Option<&str>, digest: &str, created: u64) -> PendingRecord {
    PendingRecord::new(
        id,
        tenant.map(str::to_owned),
        Some("user:kim".to_owned()),
        digest,
        "send_email",
        "1.2.0",
        format!("call_{id}"),
        "{}",
        created,
        created + HOUR_MS,
    )
}

fn decision(approve: bool, now_ms: u64) -> Decision<'static> {
    Decision {
        approve,
        approver: "user:lee",
        reason: "checked",
        now_ms,
    }
}

pub async fn pending_records_move_once_and_stay_in_their_tenant<B: Backend>(backend: &B)
where
    B::Store: PendingApprovalStore,
{
    let store = fresh_or_skip!(backend);
    let a1 = record("a1", Some("acme"), "sha256:d1", T0);
    let a2 = record("a2", Some("acme"), "sha256:d2", T0 + 1);
    let b1 = record("b1", Some("globex"), "sha256:d1", T0);
    let none = record("n1", None, "sha256:d1", T0);
    for r in [&a1, &a2, &b1, &none] {
        store.put(r).await.unwrap();
    }
    assert!(store.put(&a1).await.is_err(), "an id is stored once");
    assert_eq!(store.get("a1").await.unwrap(), Some(a1.clone()));
    assert_eq!(store.get("zz").await.unwrap(), None);

    let ids = |rs: Vec<PendingRecord>| rs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_pending(Some("acme"), T0 + 5, 100).await.unwrap()),
        ["a1", "a2"]
    );
    assert_eq!(
        ids(store.list_pending(Some("acme"), T0 + 5, 1).await.unwrap()),
        ["a1"]
    );
    assert_eq!(
        ids(store
            .list_pending(Some("globex"), T0 + 5, 100)
            .await
            .unwrap()),
        ["b1"]
    );
    assert_eq!(
        ids(store.list_pending(None, T0 + 5, 100).await.unwrap()),
        ["n1"]
    );
    // "No tenant" is not the empty tenant.
    assert!(store
        .list_pending(Some(""), T0 + 5, 100)
        .await
        .unwrap()
        .is_empty());

    // Found by tenant and digest only.
    let found = store
        .find(Some("globex"), "sha256:d1", T0 + 5)
        .await
        .unwrap();
    assert_eq!(found.map(|r| r.id).as_deref(), Some("b1"));
    assert_eq!(
        store
            .find(Some("globex"), "sha256:d2", T0 + 5)
            .await
            .unwrap(),
        None
    );

    // Decided once; the state carries who, why and when.
    assert!(store.decide("a1", decision(true, T0 + 10)).await.unwrap());
    assert!(!store.decide("a1", decision(false, T0 + 11)).await.unwrap());
    assert!(!store.decide("zz", decision(true, T0 + 11)).await.unwrap());
    let a1 = store.get("a1").await.unwrap().unwrap();
    assert_eq!(
        a1.state,
        PendingState::Approved {
            approver: "user:lee".into(),
            reason: "checked".into(),
            at_ms: T0 + 10
        }
    );
    assert_eq!(
        ids(store
            .list_pending(Some("acme"), T0 + 12, 100)
            .await
            .unwrap()),
        ["a2"]
    );
    // A decided record is still what a retry finds, until it is used.
    let found = store
        .find(Some("acme"), "sha256:d1", T0 + 12)
        .await
        .unwrap();
    assert_eq!(found.map(|r| r.state.name()), Some("approved"));

    // Used once, and only from approved.
    assert!(
        !store.mark_used("a2").await.unwrap(),
        "a pending record is not used"
    );
    assert!(store.mark_used("a1").await.unwrap());
    assert!(!store.mark_used("a1").await.unwrap());
    assert_eq!(store.get("a1").await.unwrap().unwrap().state.name(), "used");
    assert_eq!(
        store
            .find(Some("acme"), "sha256:d1", T0 + 12)
            .await
            .unwrap(),
        None
    );

    // Denied records keep their reason.
    assert!(store.decide("b1", decision(false, T0 + 13)).await.unwrap());
    assert!(matches!(
        store.get("b1").await.unwrap().unwrap().state,
        PendingState::Denied { ref reason, .. } if reason == "checked"
    ));

    // Past expiry: not listed, not found, not decidable, then purged.
    let late = T0 + 1 + HOUR_MS;
    assert!(store
        .list_pending(Some("acme"), late, 100)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        store.find(Some("acme"), "sha256:d2", late).await.unwrap(),
        None
    );
    assert!(!store.decide("a2", decision(true, late)).await.unwrap());
    assert!(
        store.get("a2").await.unwrap().is_some(),
        "kept until purged"
    );
    assert_eq!(
        store.purge_pending(T0 + HOUR_MS).await.unwrap(),
        3,
        "a1, b1, n1"
    );
    assert_eq!(store.purge_pending(late).await.unwrap(), 1, "a2");
    assert_eq!(store.get("a2").await.unwrap(), None);
}

pub async fn one_of_fifty_racing_decisions_wins<B: Backend>(backend: &B)
where
    B::Store: PendingApprovalStore,
{
    let store = fresh_or_skip!(backend);
    store
        .put(&record("r1", Some("acme"), "sha256:d", T0))
        .await
        .unwrap();
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.decide("r1", decision(i % 2 == 0, T0 + 1)).await })
        })
        .collect();
    let mut won = 0;
    for t in tasks {
        won += usize::from(t.await.unwrap().unwrap());
    }
    assert_eq!(won, 1);
}

pub async fn peek_sees_only_completed_records_for_the_same_arguments<B: Backend>(backend: &B) {
    let store = fresh_or_skip!(backend);
    let req = ClaimRequest {
        key: "k",
        args_hash: "a",
        token: "t1",
        now_ms: T0,
        lease_until_ms: T0 + 1_000,
        expires_at_ms: T0 + 10_000,
    };
    assert_eq!(store.peek("k", "a", T0).await.unwrap(), None, "no record");
    assert_eq!(store.claim(req).await.unwrap(), Claim::Acquired);
    assert_eq!(store.peek("k", "a", T0).await.unwrap(), None, "in progress");
    assert!(store
        .complete("k", "t1", r#"{"ok":true}"#, T0 + 10_000)
        .await
        .unwrap());
    assert_eq!(
        store.peek("k", "a", T0 + 1).await.unwrap().as_deref(),
        Some(r#"{"ok":true}"#)
    );
    assert_eq!(
        store.peek("k", "b", T0 + 1).await.unwrap(),
        None,
        "other arguments"
    );
    assert_eq!(
        store.peek("k", "a", T0 + 10_000).await.unwrap(),
        None,
        "past retention"
    );
    // Peeking changed nothing: the claim still replays.
    let again = ClaimRequest {
        token: "t2",
        now_ms: T0 + 2,
        ..req
    };
    assert_eq!(
        store.claim(again).await.unwrap(),
        Claim::Replay(r#"{"ok":true}"#.into())
    );
}

// ---- through the pipeline ----

const EMAIL: &str = r#"{"name": "send_email", "id": "call_7", "arguments":
    {"to": "lee@example.com", "subject": "Refund policy", "body": "The new policy starts on 1 July."}}"#;

/// One process's view: a registry on the shared store, with its own approval key (a
/// deferred approval needs no key shared between processes).
fn registry<S>(store: &Arc<S>, clock: &ManualClock) -> Registry
where
    S: IdempotencyStore + ApprovalStore + PendingApprovalStore,
{
    Registry::builder()
        .tool(SendEmail)
        .idempotency_store(Arc::clone(store))
        .approval_store(Arc::clone(store))
        .pending_approval_store(Arc::clone(store))
        .approval_key(ApprovalKey::generate().unwrap())
        .clock(clock.clone())
        .build()
        .unwrap()
}

fn ctx(mail: &DocumentStore, tenant: &str, principal: &str) -> ToolContext {
    ToolContext::builder()
        .tenant(tenant)
        .principal(principal)
        .capability("mail:send")
        .state(mail.clone())
        .build()
}

fn code(obs: &Observation) -> &str {
    obs.code().unwrap_or("ok")
}

fn approval_id(obs: &Observation) -> String {
    assert_eq!(code(obs), "APPROVAL_REQUIRED", "{obs:?}");
    let details = obs.error.as_ref().unwrap().safe_details();
    details["approval_id"].as_str().unwrap().to_owned()
}

async fn deferred(registry: &Registry, ctx: &ToolContext) -> String {
    let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(EMAIL, ctx) else {
        panic!("send_email asks for approval")
    };
    let pending = registry.defer(&request).await.unwrap();
    assert_eq!(pending.digest, request.digest());
    assert_eq!(pending.subject, *request.subject());
    assert_eq!(pending.call_id, "call_7");
    pending.id
}

pub async fn a_call_deferred_in_one_registry_is_decided_and_resumed_in_another<B: Backend>(
    backend: &B,
) where
    B::Store: PendingApprovalStore,
{
    let store = fresh_or_skip!(backend);
    let clock = ManualClock::new(T0);
    let (agent, operator) = (registry(&store, &clock), registry(&store, &clock));
    let mail = DocumentStore::new();
    let kim = ctx(&mail, "acme", "user:kim");
    let id = deferred(&agent, &kim).await;
    assert!(mail.sent_mail().is_empty(), "nothing runs while it waits");

    // The operator's registry sees it, in its tenant only.
    let listed = operator.pending_approvals(Some("acme")).await.unwrap();
    assert_eq!(
        listed.iter().map(|p| p.id.as_str()).collect::<Vec<_>>(),
        [id.as_str()]
    );
    assert_eq!(listed[0].subject.arguments["to"], "lee@example.com");
    assert!(operator
        .pending_approvals(Some("globex"))
        .await
        .unwrap()
        .is_empty());
    let other = operator
        .approve_pending(Some("globex"), &id, "user:eve", "")
        .await;
    assert_eq!(other.unwrap_err().code(), "PENDING_APPROVAL_OTHER_TENANT");
    let unknown = operator
        .approve_pending(Some("acme"), "nope", "user:lee", "")
        .await;
    assert_eq!(unknown.unwrap_err().code(), "PENDING_APPROVAL_UNKNOWN");

    // Resumed before the decision: nothing runs.
    assert_eq!(
        code(&operator.resume(&id, &kim).await),
        "PENDING_APPROVAL_STILL_PENDING"
    );

    let approved = operator
        .approve_pending(Some("acme"), &id, "user:lee", "expected mail")
        .await
        .unwrap();
    assert_eq!(approved.state.name(), "approved");
    let again = operator
        .deny_pending(Some("acme"), &id, "user:lee", "")
        .await;
    assert_eq!(again.unwrap_err().code(), "PENDING_APPROVAL_DECIDED");

    // Another tenant or principal cannot resume it.
    let globex = ctx(&mail, "globex", "user:kim");
    assert_eq!(
        code(&agent.resume(&id, &globex).await),
        "PENDING_APPROVAL_OTHER_TENANT"
    );
    let eve = ctx(&mail, "acme", "user:eve");
    assert_eq!(
        code(&agent.resume(&id, &eve).await),
        "PENDING_APPROVAL_OTHER_PRINCIPAL"
    );
    // Fresh checks at resume: without the capability the call is refused, and the
    // approval is kept.
    let no_cap = ToolContext::builder()
        .tenant("acme")
        .principal("user:kim")
        .state(mail.clone())
        .build();
    assert_eq!(code(&agent.resume(&id, &no_cap).await), "CAPABILITY_DENIED");
    assert!(mail.sent_mail().is_empty());

    let ran = agent.resume(&id, &kim).await;
    assert!(ran.ok, "{ran:?}");
    assert_eq!(ran.meta.call_id, "call_7");
    assert_eq!(mail.sent_mail().len(), 1);
    assert_eq!(
        operator
            .pending_approval(Some("acme"), &id)
            .await
            .unwrap()
            .state
            .name(),
        "used"
    );
    assert_eq!(
        code(&agent.resume(&id, &kim).await),
        "PENDING_APPROVAL_USED"
    );
    assert_eq!(mail.sent_mail().len(), 1);
}

pub async fn fifty_racing_resumes_send_once<B: Backend>(backend: &B)
where
    B::Store: PendingApprovalStore,
{
    let store = fresh_or_skip!(backend);
    let clock = ManualClock::new(T0);
    let mail = DocumentStore::new();
    let kim = ctx(&mail, "acme", "user:kim");
    let first = registry(&store, &clock);
    let id = deferred(&first, &kim).await;
    first
        .approve_pending(Some("acme"), &id, "user:lee", "ok")
        .await
        .unwrap();
    // Fifty processes (each its own registry and key) resume the same approval at once.
    let tasks: Vec<_> = (0..50)
        .map(|_| {
            let (registry, kim, id) = (registry(&store, &clock), kim.clone(), id.clone());
            tokio::spawn(async move { registry.resume(&id, &kim).await })
        })
        .collect();
    let mut executed = 0;
    for t in tasks {
        let obs = t.await.unwrap();
        match (obs.ok, obs.meta.idempotency.as_deref(), code(&obs)) {
            (true, None, _) => executed += 1,
            (true, Some("replayed"), _)
            | (false, _, "PENDING_APPROVAL_USED")
            | (false, _, "APPROVAL_GRANT_CONSUMED")
            | (false, _, "IDEMPOTENCY_IN_PROGRESS") => {}
            other => panic!("unexpected outcome {other:?}"),
        }
    }
    assert_eq!(executed, 1);
    assert_eq!(mail.sent_mail().len(), 1);
}

pub async fn denied_and_expired_requests_release_nothing<B: Backend>(backend: &B)
where
    B::Store: PendingApprovalStore,
{
    let store = fresh_or_skip!(backend);
    let clock = ManualClock::new(T0);
    let registry = registry(&store, &clock);
    let mail = DocumentStore::new();
    let kim = ctx(&mail, "acme", "user:kim");

    let id = deferred(&registry, &kim).await;
    registry
        .deny_pending(Some("acme"), &id, "user:lee", "not this week")
        .await
        .unwrap();
    let denied = registry.resume(&id, &kim).await;
    assert_eq!(code(&denied), "APPROVAL_DENIED");
    assert_eq!(
        denied.error.as_ref().unwrap().safe_details()["reason"],
        "not this week"
    );
    // The model's retry of the same call meets the denial, not a new question.
    assert_eq!(
        code(&registry.handle_deferred(EMAIL, &kim).await),
        "APPROVAL_DENIED"
    );

    // Undecided past its expiry: neither decidable nor resumable, and no longer listed.
    let acme2 = ctx(&mail, "acme2", "user:kim");
    let id = deferred(&registry, &acme2).await;
    clock.advance(Duration::from_millis(HOUR_MS));
    let late = registry
        .approve_pending(Some("acme2"), &id, "user:lee", "")
        .await;
    assert_eq!(late.unwrap_err().code(), "PENDING_APPROVAL_EXPIRED");
    assert_eq!(
        code(&registry.resume(&id, &acme2).await),
        "PENDING_APPROVAL_EXPIRED"
    );
    assert!(registry
        .pending_approvals(Some("acme2"))
        .await
        .unwrap()
        .is_empty());

    // Approved, then resumed only after its expiry: refused.
    let acme3 = ctx(&mail, "acme3", "user:kim");
    let id = deferred(&registry, &acme3).await;
    registry
        .approve_pending(Some("acme3"), &id, "user:lee", "")
        .await
        .unwrap();
    clock.advance(Duration::from_millis(HOUR_MS));
    assert_eq!(
        code(&registry.resume(&id, &acme3).await),
        "PENDING_APPROVAL_EXPIRED"
    );
    assert!(mail.sent_mail().is_empty());
    assert!(registry.purge_expired().await.unwrap() >= 3);
    assert_eq!(
        registry
            .pending_approval(Some("acme3"), &id)
            .await
            .unwrap_err()
            .code(),
        "PENDING_APPROVAL_UNKNOWN"
    );
}

pub async fn a_retry_after_the_decision_runs_once_then_replays<B: Backend>(backend: &B)
where
    B::Store: PendingApprovalStore,
{
    let store = fresh_or_skip!(backend);
    let clock = ManualClock::new(T0);
    let (agent, operator) = (registry(&store, &clock), registry(&store, &clock));
    let mail = DocumentStore::new();
    let kim = ctx(&mail, "acme", "user:kim");

    let first = agent.handle_deferred(EMAIL, &kim).await;
    let id = approval_id(&first);
    // Proposed again while it waits: the same request, not a second one.
    assert_eq!(approval_id(&agent.handle_deferred(EMAIL, &kim).await), id);
    assert_eq!(
        operator
            .pending_approvals(Some("acme"))
            .await
            .unwrap()
            .len(),
        1
    );

    operator
        .approve_pending(Some("acme"), &id, "user:lee", "ok")
        .await
        .unwrap();
    let ran = agent.handle_deferred(EMAIL, &kim).await;
    assert!(ran.ok && ran.meta.idempotency.is_none(), "{ran:?}");
    assert_eq!(mail.sent_mail().len(), 1);
    // Again: the key's recorded result, and nothing sent.
    let replay = agent.handle_deferred(EMAIL, &kim).await;
    assert_eq!(replay.meta.idempotency.as_deref(), Some("replayed"));
    assert_eq!(mail.sent_mail().len(), 1);
    assert_eq!(
        operator
            .pending_approval(Some("acme"), &id)
            .await
            .unwrap()
            .state
            .name(),
        "used"
    );
}

pub async fn a_recorded_result_is_replayed_without_asking<B: Backend>(backend: &B)
where
    B::Store: PendingApprovalStore,
{
    let store = fresh_or_skip!(backend);
    let clock = ManualClock::new(T0);
    let registry = registry(&store, &clock);
    let mail = DocumentStore::new();
    let kim = ctx(&mail, "acme", "user:kim");
    let ran = registry
        .handle_with_approver(EMAIL, &kim, |_| async {
            ApprovalDecision::approve("user:lee")
        })
        .await;
    assert!(ran.ok, "{ran:?}");

    // The same call again is a replay: nobody is asked, nothing is stored for a decision.
    let asked = std::sync::atomic::AtomicBool::new(false);
    let replay = registry
        .handle_with_approver(EMAIL, &kim, |_| {
            asked.store(true, std::sync::atomic::Ordering::SeqCst);
            async { ApprovalDecision::deny("user:lee", "no") }
        })
        .await;
    assert_eq!(replay.meta.idempotency.as_deref(), Some("replayed"));
    assert!(!asked.load(std::sync::atomic::Ordering::SeqCst));
    let plain = registry.handle(EMAIL, &kim).await;
    assert_eq!(
        plain.meta.idempotency.as_deref(),
        Some("replayed"),
        "{plain:?}"
    );
    let deferred = registry.handle_deferred(EMAIL, &kim).await;
    assert_eq!(deferred.meta.idempotency.as_deref(), Some("replayed"));
    assert!(registry
        .pending_approvals(Some("acme"))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(mail.sent_mail().len(), 1);

    // Other arguments under no recorded key still ask.
    let other = EMAIL.replace("1 July", "2 July");
    assert_eq!(
        code(&registry.handle(&other, &kim).await),
        "APPROVAL_REQUIRED"
    );
}
