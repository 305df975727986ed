//! Time as the pipeline and its stores see it: milliseconds since the Unix epoch, from one
//! injectable source, so leases, retention and grant expiry can be tested without waiting.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The latest time any store keeps: `i64::MAX` milliseconds (SQL `BIGINT`), some 292 million
/// years away. A "forever" retention or TTL is capped here instead of failing in the database.
pub const FOREVER_MS: u64 = i64::MAX as u64;

/// `now + after`, capped at [`FOREVER_MS`].
pub(crate) fn later(now_ms: u64, after_ms: u64) -> u64 {
    now_ms.saturating_add(after_ms).min(FOREVER_MS)
}

/// A source of wall-clock time in milliseconds since the Unix epoch.
///
/// Stores never read a clock themselves: the pipeline passes `now_ms` into every store call, so
/// one clock decides every lease, retention and expiry, and a database never needs to agree
/// with the host about the time.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

impl<F> Clock for F
where
    F: Fn() -> u64 + Send + Sync + 'static,
{
    fn now_ms(&self) -> u64 {
        self()
    }
}

/// The default clock: the system's wall time when it was made, advanced by Tokio's monotonic
/// clock since.
///
/// Because it advances with [`tokio::time::Instant`], a test on a paused Tokio clock
/// (`#[tokio::test(start_paused = true)]` with `tokio::time::advance`) moves it too.
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    anchor_ms: u64,
    anchor: tokio::time::Instant,
}

impl SystemClock {
    /// A clock anchored at the current wall time.
    pub fn new() -> Self {
        SystemClock {
            anchor_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            anchor: tokio::time::Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock::new()
    }
}

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        let elapsed = self.anchor.elapsed().as_millis();
        self.anchor_ms
            .saturating_add(u64::try_from(elapsed).unwrap_or(u64::MAX))
    }
}

/// A clock that moves only when told to: for tests of leases, retention and expiry.
///
/// Clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use tool_contract::clock::{Clock, ManualClock};
///
/// let clock = ManualClock::new(1_000);
/// let same = clock.clone();
/// clock.advance(Duration::from_secs(2));
/// assert_eq!(same.now_ms(), 3_000);
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock showing `now_ms`.
    pub fn new(now_ms: u64) -> Self {
        ManualClock {
            now: Arc::new(AtomicU64::new(now_ms)),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: std::time::Duration) {
        let ms = u64::try_from(by.as_millis()).unwrap_or(u64::MAX);
        self.now.fetch_add(ms, Ordering::AcqRel);
    }

    /// Sets the time.
    pub fn set(&self, now_ms: u64) {
        self.now.store(now_ms, Ordering::Release);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::Acquire)
    }
}

/// Milliseconds since the Unix epoch, by the system clock.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, millis)
}

/// A duration in whole milliseconds, saturating.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A duration in whole microseconds, saturating.
pub(crate) fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn system_clock_follows_a_paused_tokio_clock() {
        let clock = SystemClock::new();
        let t0 = clock.now_ms();
        tokio::time::advance(Duration::from_secs(60)).await;
        let t1 = clock.now_ms();
        assert!((60_000..60_050).contains(&(t1 - t0)), "{}", t1 - t0);
    }
}
