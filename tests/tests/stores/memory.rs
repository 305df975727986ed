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
