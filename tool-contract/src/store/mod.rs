//! Stores behind exactly-once writes and single-use approvals: one small trait per concern,
//! [`IdempotencyStore`], [`ApprovalStore`] and [`PendingApprovalStore`] (approval requests
//! waiting for a decision by id), and three backends that pass the same conformance suite:
//!
//! | backend | for | feature |
//! |---|---|---|
//! | [`MemoryStore`] | one process; the default, zero set-up | always |
//! | `SqliteStore` | one node; survives a restart, shared by the node's processes | `sqlite` |
//! | `PgStore` | many replicas of a service sharing one database | `postgres` |
//!
//! A store only keeps records and decides atomically; the pipeline decides *what* to keep.
//! Every method takes the time from the pipeline's [`Clock`](crate::clock::Clock), so a
//! database never has to agree with the host about the time. Replicas sharing one store compare
//! each other's leases, so their clocks must agree to well within the lease grace (NTP does).
//!
//! # The record lifecycle
//!
//! An idempotency record is keyed by a scoped key (a digest of tenant, principal, tool, version
//! and the call's key, so two tenants never meet) and holds the digest of the canonical
//! arguments. [`IdempotencyStore::claim`] decides, atomically:
//!
//! 1. no record, or one past its retention (`expires_at_ms <= now`): a new `IN_PROGRESS`
//!    record is written with the caller's token and lease → [`Claim::Acquired`];
//! 2. a live record for *other* arguments → [`Claim::KeyReused`];
//! 3. a `COMPLETED` record → [`Claim::Replay`] with the stored envelope;
//! 4. an `IN_PROGRESS` record whose lease has not ended → [`Claim::InProgress`];
//! 5. an `IN_PROGRESS` record whose lease ended (the first caller timed out, crashed or went
//!    away: the outcome is ambiguous) → the lease passes to the new token → [`Claim::Acquired`].
//!
//! [`complete`](IdempotencyStore::complete) and [`release`](IdempotencyStore::release) act only
//! while the caller's token still holds the record, so a caller whose lease was taken over can
//! neither overwrite nor delete its successor's record.

mod memory;
mod pending;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

pub use memory::MemoryStore;
pub use pending::{Decision, PendingApprovalStore, PendingRecord, PendingState};
#[cfg(feature = "postgres")]
pub use postgres::PgStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteStore;

/// The sqlx version the SQL stores are built on, for building a pool to hand to
/// `PgStore::from_pool` without adding a second, possibly different, sqlx to your build.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sqlx;

/// A store could not answer: the pipeline fails closed (`TRANSIENT` / `STORE_UNAVAILABLE`).
///
/// Its text is for logs and receipts, never for the model.
#[derive(Debug)]
pub struct StoreError {
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl StoreError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        StoreError {
            message: message.into(),
            source: None,
        }
    }

    /// An error caused by `source` (a driver error, an I/O error).
    pub fn with_source(
        message: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        StoreError {
            message: message.into(),
            source: Some(Box::new(source)),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {source}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// One claim of an idempotency key (see the [module docs](self) for the decision).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimRequest<'a> {
    /// The scoped key: a digest of tenant, principal, tool, version and the call's key.
    pub key: &'a str,
    /// Digest of the canonical arguments, defaults applied.
    pub args_hash: &'a str,
    /// Unique per claim; only its holder may complete or release the record.
    pub token: &'a str,
    /// The pipeline's time.
    pub now_ms: u64,
    /// Until when the claim holds against other callers (the tool's run time plus grace).
    pub lease_until_ms: u64,
    /// When the record may be forgotten (the retention).
    pub expires_at_ms: u64,
}

/// What [`IdempotencyStore::claim`] decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The caller holds the key: run the handler.
    Acquired,
    /// The same request completed before: here is its stored envelope (JSON text).
    Replay(String),
    /// The same request is running elsewhere; its lease ends at `lease_until_ms`.
    InProgress {
        /// When the running claim's lease ends.
        lease_until_ms: u64,
    },
    /// The key was used for other arguments.
    KeyReused,
}

/// Idempotency records: atomic claim, completion and release.
///
/// Every decision must be atomic in the backend (one conditional write, not a read then a
/// write), because callers race on a key from many tasks, processes and machines.
#[async_trait]
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Claims `req.key` for `req.token`, or says why not.
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Claim, StoreError>;

    /// Marks the record completed with `envelope` (JSON text), kept until `expires_at_ms`.
    /// Returns `false`, writing nothing, when `token` no longer holds the record.
    async fn complete(
        &self,
        key: &str,
        token: &str,
        envelope: &str,
        expires_at_ms: u64,
    ) -> Result<bool, StoreError>;

    /// Deletes the in-progress record held by `token`: the call failed before any side
    /// effect, so the key may run again at once. Does nothing when `token` no longer holds it.
    async fn release(&self, key: &str, token: &str) -> Result<(), StoreError>;

    /// Deletes records whose retention ended; returns how many.
    async fn purge_expired(&self, now_ms: u64) -> Result<u64, StoreError>;

    /// The stored envelope of `key`'s record if it is completed, for the same `args_hash`
    /// and not past its retention at `now_ms`: what a claim would answer with
    /// [`Claim::Replay`], read without claiming or changing anything.
    ///
    /// The approval paths ask it before asking a human, because a call that would be a
    /// replay runs nothing and needs no approval. The default knows no record (`None`), so a
    /// store that does not implement it only costs a needless question.
    async fn peek(
        &self,
        key: &str,
        args_hash: &str,
        now_ms: u64,
    ) -> Result<Option<String>, StoreError> {
        let _ = (key, args_hash, now_ms);
        Ok(None)
    }
}

/// Single-use approval grants.
#[async_trait]
pub trait ApprovalStore: Send + Sync + 'static {
    /// Marks grant `grant_id` consumed; `true` only for the one caller that consumed it.
    /// The mark is kept at least until `expires_at_ms`, after which the grant is refused as
    /// expired anyway.
    async fn consume_grant(
        &self,
        grant_id: &str,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<bool, StoreError>;

    /// Deletes consumption marks of grants that expired; returns how many.
    async fn purge_consumed_grants(&self, now_ms: u64) -> Result<u64, StoreError>;

    // ---- standing approvals ----

    /// Counts one use of standing rule `rule_id`, atomically: `Some(n)` when this caller got
    /// use `n` (1 for the first), `None`, counting nothing, when the rule's `max_uses` are
    /// all taken or `now_ms` is not before `expires_at_ms`. Concurrent callers, in any
    /// process sharing the store, never get the same use number, and never more than
    /// `max_uses` of them get one.
    ///
    /// The default fails: a store that does not count uses makes every rule-approved call
    /// fail closed (`STORE_UNAVAILABLE`) rather than run uncounted.
    async fn consume_rule_use(
        &self,
        rule_id: &str,
        max_uses: u64,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<Option<u64>, StoreError> {
        let _ = (rule_id, max_uses, expires_at_ms, now_ms);
        Err(StoreError::new(
            "this approval store does not count standing-rule uses",
        ))
    }
    // ---- end standing approvals ----
}

// Shared handles are stores too, so one backend can serve as both stores of a registry.
#[async_trait]
impl<S: IdempotencyStore + ?Sized> IdempotencyStore for Arc<S> {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Claim, StoreError> {
        (**self).claim(req).await
    }
    async fn complete(
        &self,
        key: &str,
        token: &str,
        envelope: &str,
        expires_at_ms: u64,
    ) -> Result<bool, StoreError> {
        (**self).complete(key, token, envelope, expires_at_ms).await
    }
    async fn release(&self, key: &str, token: &str) -> Result<(), StoreError> {
        (**self).release(key, token).await
    }
    async fn purge_expired(&self, now_ms: u64) -> Result<u64, StoreError> {
        (**self).purge_expired(now_ms).await
    }
    async fn peek(
        &self,
        key: &str,
        args_hash: &str,
        now_ms: u64,
    ) -> Result<Option<String>, StoreError> {
        (**self).peek(key, args_hash, now_ms).await
    }
}

#[async_trait]
impl<S: ApprovalStore + ?Sized> ApprovalStore for Arc<S> {
    async fn consume_grant(
        &self,
        grant_id: &str,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        (**self)
            .consume_grant(grant_id, expires_at_ms, now_ms)
            .await
    }
    async fn purge_consumed_grants(&self, now_ms: u64) -> Result<u64, StoreError> {
        (**self).purge_consumed_grants(now_ms).await
    }
    async fn consume_rule_use(
        &self,
        rule_id: &str,
        max_uses: u64,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<Option<u64>, StoreError> {
        (**self)
            .consume_rule_use(rule_id, max_uses, expires_at_ms, now_ms)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn _obj_safe(_: &dyn IdempotencyStore, _: &dyn ApprovalStore, _: &dyn PendingApprovalStore) {}
}
