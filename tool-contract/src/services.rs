//! What the stages share, built once with the registry and passed to each stage as one value:
//! the proposal limits, the state gate, the receipt sink, the idempotency store and its
//! settings, the clock, and the call-id counter. A stage reaches nothing else of the registry.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::clock::{now_ms, Clock};
use crate::policy::StateGate;
use crate::proposal::ProposalLimits;
use crate::random::UniqueIds;
use crate::receipt::ReceiptSink;
use crate::store::IdempotencyStore;

/// The registry's idempotency settings.
pub(crate) struct IdempotencyConfig {
    pub(crate) store: Arc<dyn IdempotencyStore>,
    pub(crate) retention_ms: u64,
    pub(crate) lease_grace_ms: u64,
}

impl IdempotencyConfig {
    pub(crate) const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);
    pub(crate) const DEFAULT_LEASE_GRACE: Duration = Duration::from_secs(30);
}

/// The services every stage may use.
pub(crate) struct Services {
    pub(crate) limits: ProposalLimits,
    /// Whether proposals are first tried on the fast path.
    pub(crate) fast_path: bool,
    pub(crate) gate: Option<Box<dyn StateGate>>,
    pub(crate) sink: Option<Box<dyn ReceiptSink>>,
    pub(crate) idempotency: IdempotencyConfig,
    pub(crate) clock: Arc<dyn Clock>,
    /// Claim tokens and grant ids.
    pub(crate) ids: UniqueIds,
    next_id: AtomicU64,
}

impl Services {
    pub(crate) fn new(
        limits: ProposalLimits,
        fast_path: bool,
        gate: Option<Box<dyn StateGate>>,
        sink: Option<Box<dyn ReceiptSink>>,
        idempotency: IdempotencyConfig,
        clock: Arc<dyn Clock>,
        ids: UniqueIds,
    ) -> Self {
        Services {
            ids,
            limits,
            fast_path,
            gate,
            sink,
            idempotency,
            clock,
            next_id: AtomicU64::new(1),
        }
    }

    /// A call id for a proposal that brought no usable one.
    pub(crate) fn next_call_id(&self) -> String {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        format!("call_{n:06}")
    }

    /// Whether receipts are kept: their timings and records are only gathered then.
    pub(crate) fn keeps_receipts(&self) -> bool {
        self.sink.is_some()
    }

    /// The wall-clock time of a proposal, for its receipt: read only when there is a sink to
    /// take one (a clock read costs more than most checks on the hot path).
    pub(crate) fn received_at_ms(&self) -> u64 {
        if self.keeps_receipts() {
            now_ms()
        } else {
            0
        }
    }
}
