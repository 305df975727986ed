//! The in-memory backend. "Down" is a store that answers every call with an error, since
//! memory cannot become unreachable.

use async_trait::async_trait;
use tool_contract::store::{
    ApprovalStore, Claim, ClaimRequest, IdempotencyStore, MemoryStore, StoreError,
};

use crate::conformance::Backend;

pub struct Memory;

/// A store whose backend is gone.
pub struct Unreachable;

#[async_trait]
impl IdempotencyStore for Unreachable {
    async fn claim(&self, _: ClaimRequest<'_>) -> Result<Claim, StoreError> {
        Err(StoreError::new("unreachable"))
    }
    async fn complete(&self, _: &str, _: &str, _: &str, _: u64) -> Result<bool, StoreError> {
        Err(StoreError::new("unreachable"))
    }
    async fn release(&self, _: &str, _: &str) -> Result<(), StoreError> {
        Err(StoreError::new("unreachable"))
    }
    async fn purge_expired(&self, _: u64) -> Result<u64, StoreError> {
        Err(StoreError::new("unreachable"))
    }
}

#[async_trait]
impl ApprovalStore for Unreachable {
    async fn consume_grant(&self, _: &str, _: u64, _: u64) -> Result<bool, StoreError> {
        Err(StoreError::new("unreachable"))
    }
    async fn purge_consumed_grants(&self, _: u64) -> Result<u64, StoreError> {
        Err(StoreError::new("unreachable"))
    }
}

impl Backend for Memory {
    type Store = MemoryStore;
    type Down = Unreachable;
    const NAME: &'static str = "memory";
    async fn fresh(&self) -> Option<MemoryStore> {
        Some(MemoryStore::new())
    }
    async fn down(&self) -> Option<Unreachable> {
        Some(Unreachable)
    }
}

conformance_tests!(Memory);

mod deferred {
    use super::*;
    pending_tests!(Memory);
}

/// The default clock follows a paused Tokio clock: the lease of a timed-out write ends when
/// Tokio's time passes it, and the next call runs again with the same key.
#[tokio::test(start_paused = true)]
async fn a_lease_ends_on_a_paused_tokio_clock() {
    use std::time::Duration;
    use tool_contract::{Registry, ToolContext};

    use crate::conformance::{Mode, NotifyTeam, Pager};

    let registry = Registry::builder()
        .tool(NotifyTeam)
        .lease_grace(Duration::from_secs(5))
        .build()
        .unwrap();
    let pager = Pager::new();
    let ctx = ToolContext::builder()
        .tenant("acme")
        .capability("pager:send")
        .state(pager.clone())
        .build();
    let raw =
        r#"{"name": "notify_team", "arguments": {"request_id": "req-1", "team": "payments"}}"#;
    pager.set(Mode::Hang);
    assert_eq!(
        registry.handle(raw, &ctx).await.code(),
        Some("TOOL_TIMEOUT")
    );
    pager.set(Mode::Send);
    tokio::time::advance(Duration::from_secs(4)).await;
    assert_eq!(
        registry.handle(raw, &ctx).await.code(),
        Some("IDEMPOTENCY_IN_PROGRESS"),
        "within timeout + grace the key is held"
    );
    tokio::time::advance(Duration::from_secs(2)).await;
    let obs = registry.handle(raw, &ctx).await;
    assert!(obs.ok, "{}", obs.to_value());
    assert_eq!(pager.sent(), 2);
    assert_eq!(pager.keys(), ["req-1", "req-1"]);
}

/// Receipts tell an execution from a replay and a refusal: stage, attempts and what the
/// idempotency step decided.
#[tokio::test]
async fn receipts_record_what_the_idempotency_step_decided() {
    use std::sync::Arc;
    use tool_contract::receipt::MemorySink;
    use tool_contract::{Registry, ToolContext};

    use crate::conformance::{NotifyTeam, Pager};

    let sink = Arc::new(MemorySink::new());
    let registry = Registry::builder()
        .tool(NotifyTeam)
        .receipts(Arc::clone(&sink))
        .build()
        .unwrap();
    let ctx = ToolContext::builder()
        .tenant("acme")
        .capability("pager:send")
        .state(Pager::new())
        .build();
    let page = |team: &str| {
        format!(
            r#"{{"name": "notify_team", "arguments": {{"request_id": "req-1", "team": "{team}"}}}}"#
        )
    };
    registry.handle(&page("payments"), &ctx).await;
    registry.handle(&page("payments"), &ctx).await;
    registry.handle(&page("search"), &ctx).await;
    let receipts = sink.receipts();
    let summary: Vec<(&str, usize, Option<&str>)> = receipts
        .iter()
        .map(|r| {
            (
                r.outcome.stage.as_str(),
                r.executed.as_ref().map_or(0, |e| e.attempts.len()),
                r.outcome.code.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("done", 1, None),
            ("replayed", 0, None),
            ("idempotency", 0, Some("IDEMPOTENCY_KEY_REUSED")),
        ]
    );
    assert!(receipts[0]
        .diagnostics
        .iter()
        .any(|d| d == "idempotency: result recorded"));
}

/// Findings of the review, each pinned by a test.
mod hardening {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use async_trait::async_trait;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use tool_contract::approval::ApprovalKey;
    use tool_contract::clock::ManualClock;
    use tool_contract::extract::{CallMeta, State};
    use tool_contract::store::{
        ApprovalStore, Claim, ClaimRequest, IdempotencyStore, MemoryStore, StoreError,
    };
    use tool_contract::{tool, Prepared, Registry, ToolArgs, ToolContext, ToolError};
    use tool_contract_examples::{DocumentStore, SendEmail};

    use crate::conformance::CannotRecord;

    #[derive(Deserialize, JsonSchema, ToolArgs)]
    #[serde(deny_unknown_fields)]
    pub struct PageOncallArgs {
        /// Client-chosen request id.
        #[tool(idempotency_key)]
        #[schemars(length(min = 1, max = 64))]
        pub request_id: String,
    }

    #[derive(Serialize, JsonSchema)]
    pub struct Paged {
        /// Always true.
        pub paged: bool,
    }

    /// Pages the on-call engineer. Use it only when the user asked to page someone.
    #[tool(
        version = "1.0.0",
        effect = "reversible_write",
        timeout_ms = 50,
        retry(max_attempts = 2, backoff_ms = 1, max_backoff_ms = 1)
    )]
    pub async fn page_oncall(
        args: PageOncallArgs,
        meta: CallMeta,
        pages: State<Arc<AtomicUsize>>,
    ) -> Result<Paged, ToolError> {
        let _ = args.request_id;
        if meta.attempt == 1 {
            // The page goes out, then the answer is lost.
            pages.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        Err(ToolError::transient("PAGER_BUSY", "the pager refused the request").before_effect())
    }

    /// An earlier attempt's timeout keeps the key held even when the last attempt's error is
    /// marked as before any effect: the first page may have gone out.
    #[tokio::test(start_paused = true)]
    async fn a_later_attempt_does_not_release_an_ambiguous_key() {
        let registry = Registry::builder().tool(PageOncall).build().unwrap();
        let pages = Arc::new(AtomicUsize::new(0));
        let ctx = ToolContext::builder().state(Arc::clone(&pages)).build();
        let raw = r#"{"name": "page_oncall", "arguments": {"request_id": "req-1"}}"#;
        let first = registry.handle(raw, &ctx).await;
        assert_eq!(first.code(), Some("PAGER_BUSY"));
        assert_eq!(first.meta.attempts, 2);
        let again = registry.handle(raw, &ctx).await;
        assert_eq!(
            again.code(),
            Some("IDEMPOTENCY_IN_PROGRESS"),
            "{}",
            again.to_value()
        );
        assert_eq!(pages.load(Ordering::SeqCst), 1, "no second page");
    }

    /// A store that never answers.
    pub struct Silent;

    #[async_trait]
    impl IdempotencyStore for Silent {
        async fn claim(&self, _: ClaimRequest<'_>) -> Result<Claim, StoreError> {
            std::future::pending().await
        }
        async fn complete(&self, _: &str, _: &str, _: &str, _: u64) -> Result<bool, StoreError> {
            std::future::pending().await
        }
        async fn release(&self, _: &str, _: &str) -> Result<(), StoreError> {
            std::future::pending().await
        }
        async fn purge_expired(&self, _: u64) -> Result<u64, StoreError> {
            std::future::pending().await
        }
    }

    #[async_trait]
    impl ApprovalStore for Silent {
        async fn consume_grant(&self, _: &str, _: u64, _: u64) -> Result<bool, StoreError> {
            std::future::pending().await
        }
        async fn purge_consumed_grants(&self, _: u64) -> Result<u64, StoreError> {
            std::future::pending().await
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_store_that_never_answers_fails_closed_in_bounded_time() {
        let registry = Registry::builder()
            .tool(PageOncall)
            .store(Silent)
            .build()
            .unwrap();
        let pages = Arc::new(AtomicUsize::new(0));
        let ctx = ToolContext::builder().state(Arc::clone(&pages)).build();
        let started = tokio::time::Instant::now();
        let obs = registry
            .handle(
                r#"{"name": "page_oncall", "arguments": {"request_id": "req-1"}}"#,
                &ctx,
            )
            .await;
        assert_eq!(obs.code(), Some("STORE_UNAVAILABLE"));
        assert!(started.elapsed() <= Duration::from_secs(5));
        assert_eq!(pages.load(Ordering::SeqCst), 0);
    }

    fn mail_ctx(mail: &DocumentStore) -> ToolContext {
        ToolContext::builder()
            .principal("user:kim")
            .tenant("acme")
            .capability("mail:send")
            .state(mail.clone())
            .build()
    }

    const EMAIL: &str = r#"{"name": "send_email", "arguments": {"to": "lee@example.com", "subject": "Refund policy", "body": "Starts in July."}}"#;

    /// A call stopped by its idempotency key ("in progress") leaves its grant unused.
    #[tokio::test]
    async fn a_grant_is_not_burnt_by_a_call_that_will_not_run() {
        let clock = ManualClock::new(1_800_000_000_000);
        let store = Arc::new(MemoryStore::new());
        let registry = Registry::builder()
            .tool(SendEmail)
            .idempotency_store(CannotRecord(Arc::clone(&store)))
            .approval_store(store)
            .approval_key(ApprovalKey::new(&[9u8; 32]).unwrap())
            .clock(clock.clone())
            .build()
            .unwrap();
        let mail = DocumentStore::new();
        let request = |reg: &Registry| match reg.prepare_raw(EMAIL, &mail_ctx(&mail)) {
            Ok(Prepared::NeedsApproval(r)) => r,
            other => panic!("{other:?}"),
        };
        // Sent, but the result could not be recorded: the key stays held.
        let first = request(&registry);
        let grant = registry.grant(&first, "user:lee");
        assert!(registry.execute_approved(first, &grant).await.ok);
        // A second approval for the same e-mail meets the held key and runs nothing...
        let second = request(&registry);
        let grant2 = registry.grant(&second, "user:lee");
        let obs = registry.execute_approved(second, &grant2).await;
        assert_eq!(
            obs.code(),
            Some("IDEMPOTENCY_IN_PROGRESS"),
            "{}",
            obs.to_value()
        );
        // ...so its grant is still good once the lease has ended.
        clock.advance(Duration::from_secs(40));
        let third = request(&registry);
        let obs = registry.execute_approved(third, &grant2).await;
        assert!(obs.ok, "{}", obs.to_value());
        assert_eq!(
            mail.sent_mail().len(),
            2,
            "the documented re-run after an ambiguous lease"
        );
    }

    /// "Keep forever" settings are capped where the SQL stores' `BIGINT` ends.
    #[tokio::test]
    async fn forever_retention_and_ttl_work_with_a_sql_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = tool_contract::store::SqliteStore::open(dir.path().join("forever.db"))
            .await
            .unwrap();
        let registry = Registry::builder()
            .tool(SendEmail)
            .store(store)
            .idempotency_retention(Duration::MAX)
            .lease_grace(Duration::MAX)
            .approval_ttl(Duration::MAX)
            .build()
            .unwrap();
        let mail = DocumentStore::new();
        let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(EMAIL, &mail_ctx(&mail))
        else {
            panic!()
        };
        let grant = registry.grant(&request, "user:lee");
        assert_eq!(grant.expires_at_ms(), tool_contract::clock::FOREVER_MS);
        let obs = registry.execute_approved(request, &grant).await;
        assert!(obs.ok, "{}", obs.to_value());
        assert_eq!(mail.sent_mail().len(), 1);
    }

    #[tokio::test]
    async fn purge_deletes_what_expired() {
        let clock = ManualClock::new(1_800_000_000_000);
        let registry = Registry::builder()
            .tool(PageOncall)
            .clock(clock.clone())
            .build()
            .unwrap();
        let ctx = ToolContext::builder()
            .state(Arc::new(AtomicUsize::new(0)))
            .build();
        // The first attempt timed out: its claim is held, and its record expires with the
        // retention.
        let _ = registry
            .handle(
                r#"{"name": "page_oncall", "arguments": {"request_id": "req-9"}}"#,
                &ctx,
            )
            .await;
        assert_eq!(registry.purge_expired().await.unwrap(), 0);
        clock.advance(Duration::from_secs(25 * 3600));
        assert_eq!(registry.purge_expired().await.unwrap(), 1);
    }
}

/// The in-memory pending store is bounded: past its cap a new request is refused (the
/// caller is told it could not be stored) until older ones expire.
#[tokio::test]
async fn the_memory_pending_store_is_bounded() {
    use tool_contract::store::{PendingApprovalStore, PendingRecord};

    let store = MemoryStore::new();
    let record = |i: usize, now: u64| {
        PendingRecord::new(
            format!("r{i}"),
            Some("acme".into()),
            None,
            format!("sha256:{i}"),
            "send_email",
            "1.2.0",
            format!("call_{i}"),
            "{}",
            now,
            now + 1_000,
        )
    };
    for i in 0..10_000 {
        store.put(&record(i, 0)).await.unwrap();
    }
    assert!(store.put(&record(10_000, 10)).await.is_err());
    assert_eq!(
        store
            .list_pending(Some("acme"), 10, 20_000)
            .await
            .unwrap()
            .len(),
        10_000
    );
    // Once the old ones expired, there is room again.
    store.put(&record(10_001, 1_000)).await.unwrap();
    assert_eq!(
        store
            .list_pending(Some("acme"), 1_000, 20_000)
            .await
            .unwrap()
            .len(),
        1
    );
}
