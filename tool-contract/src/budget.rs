//! The turn's budget: a number of tool calls and milliseconds of tool time shared by every call
//! of one agent turn, set by the host in the trusted context.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A shared budget for one agent turn: a number of tool calls and milliseconds of tool time.
///
/// Each call reserves its full timeout before it runs (so concurrent calls cannot together
/// overspend) and gives back what it did not use when it ends.
#[derive(Debug)]
pub struct Budget {
    calls: AtomicU64,
    tool_ms: AtomicU64,
}

impl Budget {
    /// A budget of `calls` tool calls and `tool_ms` milliseconds of tool time.
    pub fn new(calls: u64, tool_ms: u64) -> Arc<Budget> {
        Arc::new(Budget {
            calls: AtomicU64::new(calls),
            tool_ms: AtomicU64::new(tool_ms),
        })
    }

    /// Calls left.
    pub fn remaining_calls(&self) -> u64 {
        self.calls.load(Ordering::Acquire)
    }

    /// Milliseconds of tool time left (not counting current reservations' unused parts).
    pub fn remaining_ms(&self) -> u64 {
        self.tool_ms.load(Ordering::Acquire)
    }

    fn take(counter: &AtomicU64, n: u64) -> bool {
        counter
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                left.checked_sub(n)
            })
            .is_ok()
    }

    /// Reserves one call and `ms` of tool time, or nothing.
    pub(crate) fn reserve(self: &Arc<Self>, ms: u64, count_call: bool) -> Option<Reservation> {
        if count_call && !Self::take(&self.calls, 1) {
            return None;
        }
        if !Self::take(&self.tool_ms, ms) {
            if count_call {
                self.calls.fetch_add(1, Ordering::AcqRel);
            }
            return None;
        }
        Some(Reservation {
            budget: Arc::clone(self),
            ms,
            call: count_call,
        })
    }
}

/// Tool time held for an attempt; settling returns the unused part.
/// Dropping it unsettled (a prepared call that never ran) returns all of it.
#[derive(Debug)]
pub(crate) struct Reservation {
    budget: Arc<Budget>,
    ms: u64,
    /// Whether this reservation took a call; an unsettled drop gives it back.
    call: bool,
}

impl Reservation {
    pub(crate) fn settle(mut self, used: Duration) {
        let used = u64::try_from(used.as_millis()).unwrap_or(u64::MAX);
        self.ms = self.ms.saturating_sub(used);
        // The attempt ran, so the call is spent; drop refunds the unused time.
        self.call = false;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.ms > 0 {
            self.budget.tool_ms.fetch_add(self.ms, Ordering::AcqRel);
        }
        if self.call {
            self.budget.calls.fetch_add(1, Ordering::AcqRel);
        }
    }
}
