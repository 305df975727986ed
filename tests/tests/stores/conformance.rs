//! The conformance suite every store backend passes, through the real pipeline: exactly-once
//! sends under 1,000 concurrent callers, conflicts, tenant isolation, lease expiry, failing
//! closed, a failed record never sending twice, retention, and single-use grants.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_contract::approval::ApprovalKey;
use tool_contract::clock::ManualClock;
use tool_contract::extract::{IdempotencyKey, State};
use tool_contract::store::{ApprovalStore, Claim, ClaimRequest, IdempotencyStore, StoreError};
use tool_contract::{tool, Observation, Prepared, Registry, ToolArgs, ToolContext, ToolError};
use tool_contract_examples::{DocumentStore, SendEmail};

/// One backend under test.
pub trait Backend: Sync {
    /// The store.
    type Store: IdempotencyStore + ApprovalStore;
    /// A store whose database cannot be reached.
    type Down: IdempotencyStore + ApprovalStore;
    /// For messages.
    const NAME: &'static str;
    /// A fresh, empty store; `None` when the backend is not available on this machine (the
    /// backend prints why, and the case is skipped loudly).
    async fn fresh(&self) -> Option<Self::Store>;
    /// A store whose backend is unreachable; `None` as for `fresh`.
    async fn down(&self) -> Option<Self::Down>;
}

/// One `#[tokio::test]` per case for `$backend`.
macro_rules! conformance_tests {
    ($backend:expr) => {
        conformance_tests!(@cases $backend;
            thousand_identical_sends_run_once,
            same_key_other_arguments_conflict,
            two_tenants_with_one_key_run_twice,
            an_expired_lease_runs_again_with_the_same_key,
            an_unreachable_store_fails_closed,
            a_failed_record_never_sends_twice,
            errors_before_the_effect_release_the_key,
            definite_errors_are_replayed,
            retention_end_forgets_the_result,
            one_grant_releases_one_of_a_hundred_executions,
            a_grant_for_one_wide_integer_never_releases_the_next,
            a_key_reused_for_another_wide_integer_conflicts,
            records_and_grants_from_before_exact_integers_are_not_misread,
            // standing approvals
            rule_uses_are_counted_once_under_a_race,
            a_standing_rule_approves_at_most_its_uses_through_the_pipeline,
        );
    };
    (@cases $backend:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                crate::conformance::$case(&$backend).await
            }
        )*
    };
}

const T0: u64 = 1_800_000_000_000;

macro_rules! fresh_or_skip {
    ($backend:expr, $how:ident) => {
        match $backend.$how().await {
            Some(s) => s,
            None => {
                eprintln!("SKIPPED: {} is not available here", B::NAME);
                return;
            }
        }
    };
}

// ---- a keyed write tool whose side effect the tests can count and steer ----

/// What `notify_team` does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Send,
    Hang,
    RefuseBeforeEffect,
    NoSuchTeam,
}

/// The downstream system: every call of the handler is one notification.
#[derive(Clone)]
pub struct Pager {
    sent: Arc<AtomicUsize>,
    keys: Arc<Mutex<Vec<String>>>,
    mode: Arc<Mutex<Mode>>,
}

impl Pager {
    pub fn new() -> Self {
        Pager {
            sent: Arc::default(),
            keys: Arc::default(),
            mode: Arc::new(Mutex::new(Mode::Send)),
        }
    }
    pub fn set(&self, mode: Mode) {
        *self.mode.lock().unwrap() = mode;
    }
    pub fn sent(&self) -> usize {
        self.sent.load(Ordering::SeqCst)
    }
    pub fn keys(&self) -> Vec<String> {
        self.keys.lock().unwrap().clone()
    }
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct NotifyTeamArgs {
    /// Client-chosen request id; repeating it never notifies twice.
    #[tool(idempotency_key)]
    #[schemars(length(min = 1, max = 64))]
    pub request_id: String,
    /// The team to page.
    #[schemars(length(min = 1, max = 64))]
    pub team: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Paged {
    /// Which notification this was, counting from 1.
    pub sequence: usize,
    /// The request it answers.
    pub request_id: String,
}

/// Pages a team about an incident. Use it only when the user asked to page someone.
#[tool(
    version = "1.0.0",
    effect = "reversible_write",
    timeout_ms = 100,
    capabilities("pager:send")
)]
pub async fn notify_team(
    args: NotifyTeamArgs,
    key: IdempotencyKey,
    pager: State<Pager>,
) -> Result<Paged, ToolError> {
    let mode = *pager.mode.lock().unwrap();
    match mode {
        Mode::RefuseBeforeEffect => {
            return Err(
                ToolError::transient("PAGER_BUSY", "the pager refused the request").before_effect(),
            )
        }
        Mode::NoSuchTeam => {
            return Err(ToolError::not_found("TEAM_NOT_FOUND", "no such team")
                .with_detail("team", args.team))
        }
        Mode::Hang | Mode::Send => {}
    }
    // The effect happens, then (in Hang mode) the answer never comes back.
    pager.keys.lock().unwrap().push(key.to_string());
    let sequence = pager.sent.fetch_add(1, Ordering::SeqCst) + 1;
    if mode == Mode::Hang {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    Ok(Paged {
        sequence,
        request_id: args.request_id,
    })
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct TransferCreditArgs {
    /// The receiving account.
    #[schemars(length(min = 1, max = 64))]
    pub to: String,
    /// Credit to move, in cents.
    #[schemars(range(min = 1, max = 100000))]
    pub cents: u32,
}

/// Moves store credit to another account. It cannot be undone; every call needs approval.
#[tool(
    version = "1.0.0",
    effect = "irreversible_write",
    timeout_ms = 100,
    approval,
    idempotency(host)
)]
pub async fn transfer_credit(
    args: TransferCreditArgs,
    key: IdempotencyKey,
    pager: State<Pager>,
) -> Result<Paged, ToolError> {
    pager.keys.lock().unwrap().push(key.to_string());
    let sequence = pager.sent.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(Paged {
        sequence,
        request_id: format!("{}:{}", args.to, args.cents),
    })
}

/// The downstream ledger of the account tools: every handler run is one settlement.
#[derive(Clone, Default)]
pub struct Ledger(Arc<Mutex<Vec<(u64, u64)>>>);

impl Ledger {
    pub fn entries(&self) -> Vec<(u64, u64)> {
        self.0.lock().unwrap().clone()
    }
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct SettleAccountArgs {
    /// The account to settle: a 64-bit id, often above 2^53.
    #[tool(unbounded = "account ids use the whole u64 range")]
    pub account: u64,
    /// The amount, in micro-units.
    #[schemars(range(min = 1, max = 1_000_000_000))]
    pub micros: u64,
}

#[derive(Serialize, JsonSchema)]
pub struct Settled {
    /// The account settled.
    pub account: u64,
    /// The caller's reference for it.
    pub reference: String,
    /// Which settlement this was, counting from 1.
    pub sequence: usize,
}

fn settle(ledger: &Ledger, account: u64, micros: u64, reference: String) -> Settled {
    let mut entries = ledger.0.lock().unwrap();
    entries.push((account, micros));
    Settled {
        account,
        reference,
        sequence: entries.len(),
    }
}

/// Settles an account for good. It cannot be undone; every call needs approval.
#[tool(
    version = "1.0.0",
    effect = "irreversible_write",
    timeout_ms = 100,
    approval,
    idempotency(from = [account, micros])
)]
pub async fn settle_account(
    args: SettleAccountArgs,
    key: IdempotencyKey,
    ledger: State<Ledger>,
) -> Result<Settled, ToolError> {
    Ok(settle(&ledger, args.account, args.micros, key.to_string()))
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct RefundAccountArgs {
    /// Client-chosen request id; repeating it never refunds twice.
    #[tool(idempotency_key)]
    #[schemars(length(min = 1, max = 64))]
    pub request_id: String,
    /// The account to refund: a 64-bit id, often above 2^53.
    #[tool(unbounded = "account ids use the whole u64 range")]
    pub account: u64,
    /// The amount, in micro-units.
    #[schemars(range(min = 1, max = 1_000_000_000))]
    pub micros: u64,
}

/// Refunds an account. Use it only when the user asked for a refund.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 100)]
pub async fn refund_account(
    args: RefundAccountArgs,
    ledger: State<Ledger>,
) -> Result<Settled, ToolError> {
    Ok(settle(&ledger, args.account, args.micros, args.request_id))
}

/// A store as version 0.1 of the crate wrote to it: the arguments' digest it files is the one
/// 0.1 computed (plain RFC 8785, every number through `f64`), set before each call.
pub struct WrittenBy01<S> {
    store: S,
    args_hash: Mutex<String>,
}

#[async_trait]
impl<S: IdempotencyStore> IdempotencyStore for WrittenBy01<S> {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Claim, StoreError> {
        let args_hash = self.args_hash.lock().unwrap().clone();
        self.store
            .claim(ClaimRequest {
                args_hash: &args_hash,
                ..req
            })
            .await
    }
    async fn complete(&self, k: &str, t: &str, e: &str, x: u64) -> Result<bool, StoreError> {
        self.store.complete(k, t, e, x).await
    }
    async fn release(&self, key: &str, token: &str) -> Result<(), StoreError> {
        self.store.release(key, token).await
    }
    async fn purge_expired(&self, now_ms: u64) -> Result<u64, StoreError> {
        self.store.purge_expired(now_ms).await
    }
}

/// `sha256:<hex>` of plain RFC 8785, as 0.1 of the crate hashed.
fn digest_01(value: &impl Serialize) -> String {
    use sha2::Digest;
    let bytes = serde_json_canonicalizer::to_vec(value).unwrap();
    format!("sha256:{}", hex(&sha2::Sha256::digest(bytes)))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A grant as 0.1 signed it: HMAC-SHA256 over plain RFC 8785 of its claims.
fn grant_01(key: &[u8], digest: &str, tool: &str) -> tool_contract::ApprovalGrant {
    use hmac::{KeyInit, Mac};
    let claims = serde_json::json!({
        "grant_id": format!("old-{digest}"),
        "digest": digest,
        "tool": tool,
        "tool_version": "1.0.0",
        "tenant": "acme",
        "approver": "user:lee",
        "issued_at_ms": T0,
        "expires_at_ms": T0 + 600_000,
    });
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(key).unwrap();
    mac.update(&serde_json_canonicalizer::to_vec(&claims).unwrap());
    let mut grant = claims;
    grant["mac"] = format!("hmac-sha256:{}", hex(&mac.finalize().into_bytes())).into();
    serde_json::from_value(grant).unwrap()
}

/// 2^53: from here on an `f64` no longer holds every integer.
const TWO_53: u64 = 1 << 53;

fn settle_call(account: u64) -> String {
    format!(r#"{{"name": "settle_account", "arguments": {{"account": {account}, "micros": 5}}}}"#)
}

fn refund_call(request_id: &str, account: u64) -> String {
    format!(
        r#"{{"name": "refund_account", "arguments": {{"request_id": "{request_id}", "account": {account}, "micros": 5}}}}"#
    )
}

/// A store that keeps its claims but cannot record results: the crash window between
/// "executed" and "recorded".
pub struct CannotRecord<S>(pub S);

#[async_trait]
impl<S: IdempotencyStore> IdempotencyStore for CannotRecord<S> {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Claim, StoreError> {
        self.0.claim(req).await
    }
    async fn complete(&self, _: &str, _: &str, _: &str, _: u64) -> Result<bool, StoreError> {
        Err(StoreError::new("disk full"))
    }
    async fn release(&self, key: &str, token: &str) -> Result<(), StoreError> {
        self.0.release(key, token).await
    }
    async fn purge_expired(&self, now_ms: u64) -> Result<u64, StoreError> {
        self.0.purge_expired(now_ms).await
    }
}

struct Fixture {
    registry: Registry,
    clock: ManualClock,
    mail: DocumentStore,
    pager: Pager,
    ledger: Ledger,
}

impl Fixture {
    fn ctx(&self, tenant: &str) -> ToolContext {
        ToolContext::builder()
            .tenant(tenant)
            .principal("user:kim")
            .capabilities(["mail:send", "pager:send"])
            .state(self.mail.clone())
            .state(self.pager.clone())
            .state(self.ledger.clone())
            .build()
    }

    async fn call(&self, tenant: &str, raw: &str) -> Observation {
        self.registry.handle(raw, &self.ctx(tenant)).await
    }
}

fn fixture(idempotency: impl IdempotencyStore, approvals: impl ApprovalStore) -> Fixture {
    let clock = ManualClock::new(T0);
    let registry = Registry::builder()
        .tool(SendEmail)
        .tool(NotifyTeam)
        .tool(TransferCredit)
        .tool(SettleAccount)
        .tool(RefundAccount)
        .idempotency_store(idempotency)
        .approval_store(approvals)
        .approval_key(ApprovalKey::new(&[42u8; 32]).unwrap())
        .clock(clock.clone())
        .lease_grace(Duration::from_secs(1))
        .build()
        .unwrap();
    Fixture {
        registry,
        clock,
        mail: DocumentStore::new(),
        pager: Pager::new(),
        ledger: Ledger::default(),
    }
}

fn shared<S: IdempotencyStore + ApprovalStore>(store: S) -> Fixture {
    let store = Arc::new(store);
    fixture(Arc::clone(&store), store)
}

const EMAIL: &str = r#"{"name": "send_email", "arguments":
    {"to": "lee@example.com", "subject": "Refund policy", "body": "The new policy starts on 1 July."}}"#;

fn page(request_id: &str, team: &str) -> String {
    format!(
        r#"{{"name": "notify_team", "arguments": {{"request_id": "{request_id}", "team": "{team}"}}}}"#
    )
}

fn code(obs: &Observation) -> &str {
    obs.code().unwrap_or("ok")
}

// ---- the cases ----

pub async fn thousand_identical_sends_run_once<B: Backend>(backend: &B) {
    let fx = Arc::new(shared(fresh_or_skip!(backend, fresh)));
    let mut tasks = Vec::new();
    for _ in 0..1000 {
        let fx = Arc::clone(&fx);
        tasks.push(tokio::spawn(async move {
            let ctx = fx.ctx("acme");
            let Ok(Prepared::NeedsApproval(request)) = fx.registry.prepare_raw(EMAIL, &ctx) else {
                panic!("send_email must ask for approval")
            };
            let grant = fx.registry.grant(&request, "user:lee");
            fx.registry.execute_approved(request, &grant).await
        }));
    }
    let mut executed = Vec::new();
    let (mut replayed, mut in_progress) = (0, 0);
    for t in tasks {
        let obs = t.await.unwrap();
        match (obs.ok, obs.meta.idempotency.as_deref(), code(&obs)) {
            (true, None, _) => executed.push(obs),
            (true, Some("replayed"), _) => replayed += 1,
            (false, _, "IDEMPOTENCY_IN_PROGRESS") => {
                assert!(obs.error.as_ref().unwrap().retryable());
                in_progress += 1
            }
            other => panic!(
                "{}: unexpected observation {other:?}: {}",
                B::NAME,
                obs.to_value()
            ),
        }
    }
    assert_eq!(executed.len(), 1, "{}: exactly one execution", B::NAME);
    assert_eq!(
        fx.mail.sent_mail().len(),
        1,
        "{}: exactly one send",
        B::NAME
    );
    assert_eq!(executed.len() + replayed + in_progress, 1000);
    // Every replay is the first execution's result.
    // handle() never runs an approval tool, but a replay runs nothing: it answers with the
    // recorded result instead of asking for an approval that would release nothing.
    let replay = fx.call("acme", EMAIL).await;
    assert_eq!(replay.meta.idempotency.as_deref(), Some("replayed"));
    assert_eq!(replay.meta.attempts, 0);
    assert_eq!(replay.data_value(), executed[0].data_value());
    let Ok(Prepared::NeedsApproval(request)) = fx.registry.prepare_raw(EMAIL, &fx.ctx("acme"))
    else {
        panic!()
    };
    let grant = fx.registry.grant(&request, "user:lee");
    let replay = fx.registry.execute_approved(request, &grant).await;
    assert_eq!(replay.meta.idempotency.as_deref(), Some("replayed"));
    assert_eq!(replay.meta.attempts, 0);
    assert_eq!(replay.data_value(), executed[0].data_value());
    assert_eq!(fx.mail.sent_mail().len(), 1);
}

pub async fn same_key_other_arguments_conflict<B: Backend>(backend: &B) {
    let fx = shared(fresh_or_skip!(backend, fresh));
    assert!(fx.call("acme", &page("req-1", "payments")).await.ok);
    let other = fx.call("acme", &page("req-1", "search")).await;
    assert_eq!(
        code(&other),
        "IDEMPOTENCY_KEY_REUSED",
        "{}",
        other.to_value()
    );
    assert_eq!(
        other.category(),
        Some(tool_contract::ErrorCategory::Conflict)
    );
    assert!(!other.error.as_ref().unwrap().retryable());
    assert_eq!(
        fx.pager.sent(),
        1,
        "{}: the conflicting call never ran",
        B::NAME
    );
}

pub async fn two_tenants_with_one_key_run_twice<B: Backend>(backend: &B) {
    let fx = shared(fresh_or_skip!(backend, fresh));
    let a = fx.call("acme", &page("req-1", "payments")).await;
    let b = fx.call("globex", &page("req-1", "payments")).await;
    assert!(a.ok && b.ok);
    assert_eq!(
        b.meta.idempotency,
        None,
        "{}: globex must not see acme's result",
        B::NAME
    );
    assert_eq!(fx.pager.sent(), 2);
    // Each tenant replays its own.
    let again = fx.call("globex", &page("req-1", "payments")).await;
    assert_eq!(again.meta.idempotency.as_deref(), Some("replayed"));
    assert_eq!(again.data_value(), b.data_value());
    assert_eq!(fx.pager.sent(), 2);
}

pub async fn an_expired_lease_runs_again_with_the_same_key<B: Backend>(backend: &B) {
    let fx = shared(fresh_or_skip!(backend, fresh));
    fx.pager.set(Mode::Hang);
    let first = fx.call("acme", &page("req-7", "payments")).await;
    assert_eq!(code(&first), "TOOL_TIMEOUT");
    // Ambiguous: the page may have gone out, so the key stays held.
    let soon = fx.call("acme", &page("req-7", "payments")).await;
    assert_eq!(
        code(&soon),
        "IDEMPOTENCY_IN_PROGRESS",
        "{}",
        soon.to_value()
    );
    assert_eq!(fx.pager.sent(), 1);
    // Lease = timeout (100 ms) + grace (1 s); past it, the call runs again.
    fx.clock.advance(Duration::from_millis(1_200));
    fx.pager.set(Mode::Send);
    let later = fx.call("acme", &page("req-7", "payments")).await;
    assert!(later.ok, "{}: {}", B::NAME, later.to_value());
    assert_eq!(fx.pager.sent(), 2);
    let keys = fx.pager.keys();
    assert_eq!(
        keys[0], keys[1],
        "the downstream sees the same key both times"
    );
    assert_eq!(keys[0], "req-7");
}

pub async fn an_unreachable_store_fails_closed<B: Backend>(backend: &B) {
    let down = fresh_or_skip!(backend, down);
    let fx = shared(down);
    let obs = fx.call("acme", &page("req-1", "payments")).await;
    assert_eq!(code(&obs), "STORE_UNAVAILABLE", "{}", obs.to_value());
    assert_eq!(
        obs.category(),
        Some(tool_contract::ErrorCategory::Transient)
    );
    assert_eq!(
        fx.pager.sent(),
        0,
        "{}: nothing runs without the store",
        B::NAME
    );
    // Approvals fail closed too.
    let Ok(Prepared::NeedsApproval(request)) = fx.registry.prepare_raw(EMAIL, &fx.ctx("acme"))
    else {
        panic!()
    };
    let grant = fx.registry.grant(&request, "user:lee");
    let obs = fx.registry.execute_approved(request, &grant).await;
    assert_eq!(code(&obs), "STORE_UNAVAILABLE");
    assert!(fx.mail.sent_mail().is_empty());
}

pub async fn a_failed_record_never_sends_twice<B: Backend>(backend: &B) {
    let store = Arc::new(fresh_or_skip!(backend, fresh));
    let fx = fixture(CannotRecord(Arc::clone(&store)), store);
    let first = fx.call("acme", &page("req-1", "payments")).await;
    assert!(
        first.ok,
        "the caller still gets the real result: {}",
        first.to_value()
    );
    let retry = fx.call("acme", &page("req-1", "payments")).await;
    assert_eq!(
        code(&retry),
        "IDEMPOTENCY_IN_PROGRESS",
        "{}",
        retry.to_value()
    );
    assert_eq!(fx.pager.sent(), 1, "{}: no second send", B::NAME);
}

pub async fn errors_before_the_effect_release_the_key<B: Backend>(backend: &B) {
    let fx = shared(fresh_or_skip!(backend, fresh));
    fx.pager.set(Mode::RefuseBeforeEffect);
    let refused = fx.call("acme", &page("req-1", "payments")).await;
    assert_eq!(code(&refused), "PAGER_BUSY");
    fx.pager.set(Mode::Send);
    let retry = fx.call("acme", &page("req-1", "payments")).await;
    assert!(
        retry.ok,
        "{}: a released key runs at once: {}",
        B::NAME,
        retry.to_value()
    );
    assert_eq!(retry.meta.idempotency, None);
    assert_eq!(fx.pager.sent(), 1);
}

pub async fn definite_errors_are_replayed<B: Backend>(backend: &B) {
    let fx = shared(fresh_or_skip!(backend, fresh));
    fx.pager.set(Mode::NoSuchTeam);
    let first = fx.call("acme", &page("req-1", "nobody")).await;
    assert_eq!(code(&first), "TEAM_NOT_FOUND");
    fx.pager.set(Mode::Send);
    let again = fx.call("acme", &page("req-1", "nobody")).await;
    assert_eq!(code(&again), "TEAM_NOT_FOUND", "{}", again.to_value());
    assert_eq!(again.meta.idempotency.as_deref(), Some("replayed"));
    assert_eq!(again.error, first.error);
    assert_eq!(fx.pager.sent(), 0);
}

pub async fn retention_end_forgets_the_result<B: Backend>(backend: &B) {
    let fx = shared(fresh_or_skip!(backend, fresh));
    assert!(fx.call("acme", &page("req-1", "payments")).await.ok);
    fx.clock.advance(Duration::from_secs(23 * 3600));
    let within = fx.call("acme", &page("req-1", "payments")).await;
    assert_eq!(within.meta.idempotency.as_deref(), Some("replayed"));
    fx.clock.advance(Duration::from_secs(3600));
    let after = fx.call("acme", &page("req-1", "payments")).await;
    assert!(after.ok);
    assert_eq!(
        after.meta.idempotency,
        None,
        "{}: forgotten after 24 h",
        B::NAME
    );
    assert_eq!(fx.pager.sent(), 2);
}

pub async fn one_grant_releases_one_of_a_hundred_executions<B: Backend>(backend: &B) {
    // The host chooses a new key for each execution, so the idempotency store lets every one
    // through and only the grant's single use stands between them.
    const TRANSFER: &str =
        r#"{"name": "transfer_credit", "arguments": {"to": "acct-7", "cents": 500}}"#;
    let fx = Arc::new(shared(fresh_or_skip!(backend, fresh)));
    let keyed = |i: usize| {
        ToolContext::builder()
            .tenant("acme")
            .principal("user:kim")
            .state(fx.pager.clone())
            .idempotency_key(IdempotencyKey::new(format!("transfer-{i}")).unwrap())
            .build()
    };
    let Ok(Prepared::NeedsApproval(first)) = fx.registry.prepare_raw(TRANSFER, &keyed(0)) else {
        panic!()
    };
    let grant = Arc::new(fx.registry.grant(&first, "user:lee"));
    drop(first);
    let mut tasks = Vec::new();
    for i in 0..100 {
        let (fx, grant) = (Arc::clone(&fx), Arc::clone(&grant));
        let ctx = keyed(i);
        tasks.push(tokio::spawn(async move {
            // Each proposal is a new request, half with keys in another order: same digest.
            let raw = if i % 2 == 0 {
                TRANSFER
            } else {
                r#"{"arguments": {"cents": 500, "to": "acct-7"}, "name": "transfer_credit"}"#
            };
            let Ok(Prepared::NeedsApproval(request)) = fx.registry.prepare_raw(raw, &ctx) else {
                panic!()
            };
            fx.registry.execute_approved(request, &grant).await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let obs = t.await.unwrap();
        if obs.ok {
            ok += 1;
        } else {
            assert_eq!(code(&obs), "APPROVAL_GRANT_CONSUMED", "{}", obs.to_value());
        }
    }
    assert_eq!(ok, 1, "{}: one grant, one execution", B::NAME);
    assert_eq!(fx.pager.sent(), 1);
    // The refused calls released their keys: each may run later under a grant of its own.
    let winner = fx.pager.keys()[0].clone();
    let refused = (0..100)
        .find(|i| format!("transfer-{i}") != winner)
        .unwrap();
    let ctx = keyed(refused);
    let Ok(Prepared::NeedsApproval(request)) = fx.registry.prepare_raw(TRANSFER, &ctx) else {
        panic!()
    };
    let fresh = fx.registry.grant(&request, "user:lee");
    let obs = fx.registry.execute_approved(request, &fresh).await;
    assert!(
        obs.ok && obs.meta.idempotency.is_none(),
        "{}",
        obs.to_value()
    );
}

pub async fn a_grant_for_one_wide_integer_never_releases_the_next<B: Backend>(backend: &B) {
    let fx = shared(fresh_or_skip!(backend, fresh));
    let ctx = fx.ctx("acme");
    let prepare = |account| match fx.registry.prepare_raw(&settle_call(account), &ctx) {
        Ok(Prepared::NeedsApproval(request)) => request,
        _ => panic!("settle_account must ask for approval"),
    };
    let (first, second) = (prepare(TWO_53), prepare(TWO_53 + 1));
    assert_ne!(first.digest(), second.digest());
    assert_eq!(second.subject().arguments["account"], TWO_53 + 1);
    let grant = fx.registry.grant(&first, "user:lee");
    // The approver saw 2^53; the grant does not release 2^53 + 1.
    let refused = fx.registry.execute_approved(second, &grant).await;
    assert_eq!(
        code(&refused),
        "APPROVAL_DIGEST_MISMATCH",
        "{}",
        refused.to_value()
    );
    assert!(fx.ledger.entries().is_empty(), "{}: nothing ran", B::NAME);
    let ran = fx.registry.execute_approved(first, &grant).await;
    assert!(ran.ok, "{}", ran.to_value());
    // The second request, approved on its own, runs its own write: its derived key is its own.
    let second = prepare(TWO_53 + 1);
    let grant = fx.registry.grant(&second, "user:lee");
    let obs = fx.registry.execute_approved(second, &grant).await;
    assert!(obs.ok, "{}: {}", B::NAME, obs.to_value());
    assert_eq!(obs.meta.idempotency, None, "{}: not a replay", B::NAME);
    assert_eq!(obs.data_value().unwrap()["account"], TWO_53 + 1);
    assert_eq!(fx.ledger.entries(), [(TWO_53, 5), (TWO_53 + 1, 5)]);
}

pub async fn a_key_reused_for_another_wide_integer_conflicts<B: Backend>(backend: &B) {
    let fx = shared(fresh_or_skip!(backend, fresh));
    let first = fx.call("acme", &refund_call("req-1", TWO_53)).await;
    assert!(first.ok, "{}", first.to_value());
    let other = fx.call("acme", &refund_call("req-1", TWO_53 + 1)).await;
    assert_eq!(
        code(&other),
        "IDEMPOTENCY_KEY_REUSED",
        "{}: {}",
        B::NAME,
        other.to_value()
    );
    let again = fx.call("acme", &refund_call("req-1", TWO_53)).await;
    assert_eq!(again.meta.idempotency.as_deref(), Some("replayed"));
    assert_eq!(fx.ledger.entries(), [(TWO_53, 5)]);
}

pub async fn records_and_grants_from_before_exact_integers_are_not_misread<B: Backend>(
    backend: &B,
) {
    let store = Arc::new(fresh_or_skip!(backend, fresh));
    // 0.1 of the crate records two refunds: one above 2^53, one far below it.
    let legacy = Arc::new(WrittenBy01 {
        store: Arc::clone(&store),
        args_hash: Mutex::default(),
    });
    let old = fixture(Arc::clone(&legacy), Arc::clone(&store));
    let mut recorded = Vec::new();
    for (request_id, account) in [("req-wide", TWO_53 + 1), ("req-narrow", 42)] {
        let args = serde_json::json!({"request_id": request_id, "account": account, "micros": 5});
        *legacy.args_hash.lock().unwrap() = digest_01(&args);
        let obs = old.call("acme", &refund_call(request_id, account)).await;
        assert!(obs.ok, "{}", obs.to_value());
        recorded.push(obs);
    }
    // After the upgrade, on the same store and ledger.
    let new = Fixture {
        ledger: old.ledger.clone(),
        ..fixture(Arc::clone(&store), store)
    };
    // 0.1 would have replayed 2^53 + 1's result for 2^53 (its digests were equal); the record
    // cannot be told apart from one of this call, so the key is refused, not replayed or rerun.
    for account in [TWO_53, TWO_53 + 1] {
        let obs = new.call("acme", &refund_call("req-wide", account)).await;
        assert_eq!(
            code(&obs),
            "IDEMPOTENCY_KEY_REUSED",
            "{}: {}",
            B::NAME,
            obs.to_value()
        );
    }
    // A narrow record means what it meant: it still replays.
    let obs = new.call("acme", &refund_call("req-narrow", 42)).await;
    assert_eq!(
        obs.meta.idempotency.as_deref(),
        Some("replayed"),
        "{}",
        obs.to_value()
    );
    assert_eq!(obs.data_value(), recorded[1].data_value());
    assert_eq!(new.ledger.entries(), [(TWO_53 + 1, 5), (42, 5)]);

    // Grants 0.1 signed: one for 2^53 + 1 (its digest also covered 2^53), one for 42.
    let ctx = new.ctx("acme");
    let prepare = |account| match new.registry.prepare_raw(&settle_call(account), &ctx) {
        Ok(Prepared::NeedsApproval(request)) => request,
        _ => panic!("settle_account must ask for approval"),
    };
    let wide = grant_01(
        &[42u8; 32],
        &digest_01(prepare(TWO_53 + 1).subject()),
        "settle_account",
    );
    for account in [TWO_53, TWO_53 + 1] {
        let obs = new.registry.execute_approved(prepare(account), &wide).await;
        assert_eq!(
            code(&obs),
            "APPROVAL_DIGEST_MISMATCH",
            "{}: {}",
            B::NAME,
            obs.to_value()
        );
    }
    let narrow = grant_01(
        &[42u8; 32],
        &digest_01(prepare(42).subject()),
        "settle_account",
    );
    let obs = new.registry.execute_approved(prepare(42), &narrow).await;
    assert!(
        obs.ok,
        "{}: a narrow grant still releases its call: {}",
        B::NAME,
        obs.to_value()
    );
    assert_eq!(new.ledger.entries().last(), Some(&(42, 5)));
}

// ---- standing approvals: rule uses counted once, across tasks and processes ----

pub async fn rule_uses_are_counted_once_under_a_race<B: Backend>(backend: &B) {
    const K: u64 = 7;
    let store = Arc::new(fresh_or_skip!(backend, fresh));
    let until = T0 + 60_000;
    let mut tasks = Vec::new();
    for _ in 0..40 {
        let store = Arc::clone(&store);
        tasks.push(tokio::spawn(async move {
            store
                .consume_rule_use("rule-a", K, until, T0)
                .await
                .unwrap()
        }));
    }
    let mut won: Vec<u64> = Vec::new();
    for t in tasks {
        won.extend(t.await.unwrap());
    }
    won.sort_unstable();
    assert_eq!(
        won,
        (1..=K).collect::<Vec<_>>(),
        "{}: exactly {K} callers win, each with its own use number",
        B::NAME
    );
    // Used up stays used up; another rule has its own count.
    assert_eq!(
        store
            .consume_rule_use("rule-a", K, until, T0)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .consume_rule_use("rule-b", 1, until, T0)
            .await
            .unwrap(),
        Some(1)
    );
    assert_eq!(
        store
            .consume_rule_use("rule-b", 1, until, T0)
            .await
            .unwrap(),
        None
    );
    // A rule registered again with more uses continues its count.
    assert_eq!(
        store
            .consume_rule_use("rule-a", K + 1, until, T0)
            .await
            .unwrap(),
        Some(K + 1)
    );
    // Expired: nothing is counted.
    assert_eq!(
        store
            .consume_rule_use("rule-c", 5, until, until)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .consume_rule_use("rule-c", 5, until, T0)
            .await
            .unwrap(),
        Some(1)
    );
    // An unreachable store answers with an error, never a use.
    let down = fresh_or_skip!(backend, down);
    assert!(down.consume_rule_use("rule-d", 5, until, T0).await.is_err());
}

pub async fn a_standing_rule_approves_at_most_its_uses_through_the_pipeline<B: Backend>(
    backend: &B,
) {
    let fx = Arc::new(shared(fresh_or_skip!(backend, fresh)));
    fx.registry
        .add_standing_rule(
            tool_contract::standing::StandingRule::builder("small-transfers", "transfer_credit")
                .versions("^1")
                .tenant("acme")
                .constraints(serde_json::json!({"properties": {"cents": {"maximum": 1000}}}))
                .expires_at_ms(T0 + 60_000)
                .max_uses(3)
                .granted_by("user:lee")
                .build()
                .unwrap(),
        )
        .unwrap();
    let mut tasks = Vec::new();
    for i in 0..20 {
        let fx = Arc::clone(&fx);
        tasks.push(tokio::spawn(async move {
            let ctx = ToolContext::builder()
                .tenant("acme")
                .principal("user:kim")
                .state(fx.pager.clone())
                .idempotency_key(IdempotencyKey::new(format!("small-{i}")).unwrap())
                .build();
            let raw = format!(
                r#"{{"name": "transfer_credit", "arguments": {{"to": "acct-{i}", "cents": 500}}}}"#
            );
            fx.registry.handle(&raw, &ctx).await
        }));
    }
    let mut ok = 0;
    for t in tasks {
        let obs = t.await.unwrap();
        if obs.ok {
            ok += 1;
        } else {
            assert!(
                matches!(code(&obs), "APPROVAL_RULE_EXHAUSTED" | "APPROVAL_REQUIRED"),
                "{}: {}",
                B::NAME,
                obs.to_value()
            );
        }
    }
    assert_eq!(ok, 3, "{}: a rule of 3 uses approves 3 calls", B::NAME);
    assert_eq!(fx.pager.sent(), 3);
    // A transfer above the rule's constraint always asks.
    let ctx = ToolContext::builder()
        .tenant("acme")
        .principal("user:kim")
        .state(fx.pager.clone())
        .idempotency_key(IdempotencyKey::new("big").unwrap())
        .build();
    let big = r#"{"name": "transfer_credit", "arguments": {"to": "acct-1", "cents": 5000}}"#;
    assert_eq!(
        code(&fx.registry.handle(big, &ctx).await),
        "APPROVAL_REQUIRED"
    );
}
