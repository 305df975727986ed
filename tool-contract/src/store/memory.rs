//! The in-memory backend: the default, for one process.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;

use super::{ApprovalStore, Claim, ClaimRequest, IdempotencyStore, StoreError};

#[derive(Debug, Clone)]
struct Record {
    args_hash: String,
    token: String,
    lease_until_ms: u64,
    expires_at_ms: u64,
    /// `Some` once completed.
    envelope: Option<String>,
}

/// Idempotency records and grant marks in this process's memory: zero set-up, gone with the
/// process. The registry uses one when no other store is configured.
///
/// Use `SqliteStore` (feature `sqlite`) to survive a restart, `PgStore` (feature `postgres`)
/// to share records between replicas.
///
/// ```
/// use tool_contract::store::{Claim, ClaimRequest, IdempotencyStore, MemoryStore};
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let store = MemoryStore::new();
/// let req = ClaimRequest { key: "k", args_hash: "a", token: "t1", now_ms: 0,
///                          lease_until_ms: 1_000, expires_at_ms: 86_400_000 };
/// assert_eq!(store.claim(req).await.unwrap(), Claim::Acquired);
/// let again = ClaimRequest { token: "t2", ..req };
/// assert_eq!(store.claim(again).await.unwrap(), Claim::InProgress { lease_until_ms: 1_000 });
/// assert!(store.complete("k", "t1", r#"{"ok":true}"#, 86_400_000).await.unwrap());
/// assert_eq!(store.claim(again).await.unwrap(), Claim::Replay(r#"{"ok":true}"#.into()));
/// # });
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    records: Mutex<HashMap<String, Record>>,
    grants: Mutex<HashMap<String, u64>>,
    /// Pending approval requests (see `store::pending`).
    pub(super) pending: super::pending::MemoryPending,
    /// Standing rules' use counts, by rule id.
    rule_uses: Mutex<HashMap<String, u64>>,
}

/// Every this many new entries, expired ones are swept, so a long-running process that never
/// calls `purge_*` keeps only live records (amortized: one sweep per this many inserts).
const SWEEP_EVERY: usize = 1024;

/// Consumed-grant marks are kept this long past their grant's expiry, so a replica whose clock
/// runs behind still finds the mark of a grant it would accept.
const GRANT_MARK_MARGIN_MS: u64 = 60 * 60 * 1000;

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }
}

// A panic while holding the lock cannot leave a record half-written (every update is one
// assignment), so a poisoned lock is still consistent.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn claim(&self, req: ClaimRequest<'_>) -> Result<Claim, StoreError> {
        let mut records = lock(&self.records);
        let fresh = Record {
            args_hash: req.args_hash.to_owned(),
            token: req.token.to_owned(),
            lease_until_ms: req.lease_until_ms,
            expires_at_ms: req.expires_at_ms,
            envelope: None,
        };
        let Some(rec) = records.get_mut(req.key) else {
            if records.len() % SWEEP_EVERY == SWEEP_EVERY - 1 {
                records.retain(|_, rec| rec.expires_at_ms > req.now_ms);
            }
            records.insert(req.key.to_owned(), fresh);
            return Ok(Claim::Acquired);
        };
        if rec.expires_at_ms <= req.now_ms {
            *rec = fresh;
            return Ok(Claim::Acquired);
        }
        if rec.args_hash != req.args_hash {
            return Ok(Claim::KeyReused);
        }
        if let Some(envelope) = &rec.envelope {
            return Ok(Claim::Replay(envelope.clone()));
        }
        if rec.lease_until_ms > req.now_ms {
            return Ok(Claim::InProgress {
                lease_until_ms: rec.lease_until_ms,
            });
        }
        *rec = fresh;
        Ok(Claim::Acquired)
    }

    async fn complete(
        &self,
        key: &str,
        token: &str,
        envelope: &str,
        expires_at_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut records = lock(&self.records);
        match records.get_mut(key) {
            Some(rec) if rec.token == token && rec.envelope.is_none() => {
                rec.envelope = Some(envelope.to_owned());
                rec.expires_at_ms = expires_at_ms;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn release(&self, key: &str, token: &str) -> Result<(), StoreError> {
        let mut records = lock(&self.records);
        if records
            .get(key)
            .is_some_and(|rec| rec.token == token && rec.envelope.is_none())
        {
            records.remove(key);
        }
        Ok(())
    }

    async fn peek(
        &self,
        key: &str,
        args_hash: &str,
        now_ms: u64,
    ) -> Result<Option<String>, StoreError> {
        let records = lock(&self.records);
        Ok(records
            .get(key)
            .filter(|rec| rec.expires_at_ms > now_ms && rec.args_hash == args_hash)
            .and_then(|rec| rec.envelope.clone()))
    }

    async fn purge_expired(&self, now_ms: u64) -> Result<u64, StoreError> {
        let mut records = lock(&self.records);
        let before = records.len();
        records.retain(|_, rec| rec.expires_at_ms > now_ms);
        Ok((before - records.len()) as u64)
    }
}

#[async_trait]
impl ApprovalStore for MemoryStore {
    async fn consume_grant(
        &self,
        grant_id: &str,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<bool, StoreError> {
        let mut grants = lock(&self.grants);
        if grants.contains_key(grant_id) {
            return Ok(false);
        }
        if grants.len() % SWEEP_EVERY == SWEEP_EVERY - 1 {
            grants.retain(|_, expires| expires.saturating_add(GRANT_MARK_MARGIN_MS) > now_ms);
        }
        grants.insert(grant_id.to_owned(), expires_at_ms);
        Ok(true)
    }

    async fn purge_consumed_grants(&self, now_ms: u64) -> Result<u64, StoreError> {
        let mut grants = lock(&self.grants);
        let before = grants.len();
        grants.retain(|_, expires| *expires > now_ms);
        Ok((before - grants.len()) as u64)
    }

    // ---- standing approvals ----
    async fn consume_rule_use(
        &self,
        rule_id: &str,
        max_uses: u64,
        expires_at_ms: u64,
        now_ms: u64,
    ) -> Result<Option<u64>, StoreError> {
        if now_ms >= expires_at_ms {
            return Ok(None);
        }
        let mut uses = lock(&self.rule_uses);
        let used = uses.entry(rule_id.to_owned()).or_insert(0);
        if *used >= max_uses {
            return Ok(None);
        }
        *used += 1;
        Ok(Some(*used))
    }
    // ---- end standing approvals ----
}
