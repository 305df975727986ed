//! Pending approval requests kept until a human decides them: the store behind deferred
//! approvals (see [`Registry::defer`](crate::Registry::defer)).
//!
//! A record is written once, `Pending`, then moves at most twice, each move one atomic
//! conditional write:
//!
//! ```text
//! Pending ──decide (before expiry)──▶ Approved ──mark_used──▶ Used
//!    └──────decide (before expiry)──▶ Denied
//! ```
//!
//! A `Pending` record past its `expires_at_ms` is expired: it can no longer be decided, and
//! [`list_pending`](PendingApprovalStore::list_pending) leaves it out. Records are scoped by
//! tenant: every lookup but [`get`](PendingApprovalStore::get) names the tenant, and the
//! registry checks the tenant of what `get` returns.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::StoreError;

/// Where a pending approval stands.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PendingState {
    /// Nobody has decided yet.
    Pending,
    /// A human said yes; the call has not run under this approval yet.
    Approved {
        /// Who approved.
        approver: String,
        /// Why, as the approver wrote it.
        reason: String,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
    /// A human said no.
    Denied {
        /// Who declined.
        approver: String,
        /// Why; it reaches the model.
        reason: String,
        /// When, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
    /// Approved, and the approved call was released: it releases nothing more.
    Used {
        /// Who approved.
        approver: String,
        /// Why, as the approver wrote it.
        reason: String,
        /// When it was approved, in milliseconds since the Unix epoch.
        at_ms: u64,
    },
}

impl PendingState {
    /// The state's name as stored: `pending`, `approved`, `denied` or `used`.
    pub fn name(&self) -> &'static str {
        match self {
            PendingState::Pending => "pending",
            PendingState::Approved { .. } => "approved",
            PendingState::Denied { .. } => "denied",
            PendingState::Used { .. } => "used",
        }
    }
}

/// One stored approval request, as a store keeps it.
///
/// `subject` is the approval subject (what the human is shown) as JSON text, kept
/// verbatim: the registry reads it back, prepares it again and compares digests, so a store
/// never needs to understand it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PendingRecord {
    /// Unique id, from the registry's id source.
    pub id: String,
    /// The tenant the call was proposed for (`None` when the context named none).
    pub tenant: Option<String>,
    /// The principal who proposed it.
    pub principal: Option<String>,
    /// The approval digest of `subject`.
    pub digest: String,
    /// The tool, for listing.
    pub tool: String,
    /// The tool version, for listing.
    pub tool_version: String,
    /// The call id the model gave (or the registry assigned).
    pub call_id: String,
    /// The approval subject, as JSON text.
    pub subject: String,
    /// When it was stored.
    pub created_at_ms: u64,
    /// After this, an undecided request can no longer be decided, and an approved one no
    /// longer released.
    pub expires_at_ms: u64,
    /// Where it stands.
    pub state: PendingState,
}

impl PendingRecord {
    /// A new `Pending` record.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: impl Into<String>,
        tenant: Option<String>,
        principal: Option<String>,
        digest: impl Into<String>,
        tool: impl Into<String>,
        tool_version: impl Into<String>,
        call_id: impl Into<String>,
        subject: impl Into<String>,
        created_at_ms: u64,
        expires_at_ms: u64,
    ) -> Self {
        PendingRecord {
            id: id.into(),
            tenant,
            principal,
            digest: digest.into(),
            tool: tool.into(),
            tool_version: tool_version.into(),
            call_id: call_id.into(),
            subject: subject.into(),
            created_at_ms,
            expires_at_ms,
            state: PendingState::Pending,
        }
    }

    /// Whether the record is past its expiry at `now_ms`.
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms <= now_ms
    }
}

/// A decision for [`PendingApprovalStore::decide`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision<'a> {
    /// `true` to approve, `false` to deny.
    pub approve: bool,
    /// Who decided.
    pub approver: &'a str,
    /// Why.
    pub reason: &'a str,
    /// When (the pipeline's clock).
    pub now_ms: u64,
}

/// Pending approval requests, shared by every process that decides or resumes them.
///
/// Every state change must be one atomic conditional write: two operators deciding the same
/// request, or two processes resuming it, race from different machines.
#[async_trait]
pub trait PendingApprovalStore: Send + Sync + 'static {
    /// Stores a new record. Ids are unique; storing an id twice is an error.
    async fn put(&self, record: &PendingRecord) -> Result<(), StoreError>;

    /// The record with `id`, whatever its tenant or state.
    async fn get(&self, id: &str) -> Result<Option<PendingRecord>, StoreError>;

    /// The `Pending` records of `tenant` not expired at `now_ms`, oldest first, at most
    /// `limit` of them.
    async fn list_pending(
        &self,
        tenant: Option<&str>,
        now_ms: u64,
        limit: u32,
    ) -> Result<Vec<PendingRecord>, StoreError>;

    /// Moves record `id` from `Pending` to `Approved` or `Denied`, only if it is `Pending`
    /// and not expired at `decision.now_ms`; `true` only for the caller whose write did it.
    async fn decide(&self, id: &str, decision: Decision<'_>) -> Result<bool, StoreError>;

    /// The newest record of `tenant` for `digest` that is not `Used` and not expired at
    /// `now_ms`: what a retry of the same call meets.
    async fn find(
        &self,
        tenant: Option<&str>,
        digest: &str,
        now_ms: u64,
    ) -> Result<Option<PendingRecord>, StoreError>;

    /// Moves record `id` from `Approved` to `Used`; `true` only for the one caller that did.
    async fn mark_used(&self, id: &str) -> Result<bool, StoreError>;

    /// Deletes records that expired at or before `now_ms`; returns how many.
    async fn purge_pending(&self, now_ms: u64) -> Result<u64, StoreError>;
}

#[async_trait]
impl<S: PendingApprovalStore + ?Sized> PendingApprovalStore for std::sync::Arc<S> {
    async fn put(&self, record: &PendingRecord) -> Result<(), StoreError> {
        (**self).put(record).await
    }
    async fn get(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        (**self).get(id).await
    }
    async fn list_pending(
        &self,
        tenant: Option<&str>,
        now_ms: u64,
        limit: u32,
    ) -> Result<Vec<PendingRecord>, StoreError> {
        (**self).list_pending(tenant, now_ms, limit).await
    }
    async fn decide(&self, id: &str, decision: Decision<'_>) -> Result<bool, StoreError> {
        (**self).decide(id, decision).await
    }
    async fn find(
        &self,
        tenant: Option<&str>,
        digest: &str,
        now_ms: u64,
    ) -> Result<Option<PendingRecord>, StoreError> {
        (**self).find(tenant, digest, now_ms).await
    }
    async fn mark_used(&self, id: &str) -> Result<bool, StoreError> {
        (**self).mark_used(id).await
    }
    async fn purge_pending(&self, now_ms: u64) -> Result<u64, StoreError> {
        (**self).purge_pending(now_ms).await
    }
}

/// Every this many new records, the memory backend sweeps expired ones.
const SWEEP_EVERY: usize = 1024;

/// Most records the memory backend keeps at once (each holds a call's arguments).
pub(super) const MAX_RECORDS: usize = 10_000;

/// The memory backend's table: records by id.
#[derive(Debug, Default)]
pub(super) struct MemoryPending {
    records: std::sync::Mutex<std::collections::HashMap<String, PendingRecord>>,
}

impl MemoryPending {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, PendingRecord>> {
        // Every update is one assignment, so a poisoned lock is still consistent.
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn put(&self, record: &PendingRecord) -> Result<(), StoreError> {
        let mut records = self.lock();
        if records.contains_key(&record.id) {
            return Err(StoreError::new("pending approval id already stored"));
        }
        // Expired records are swept now and then, so a process that never purges keeps
        // only live ones.
        if records.len() % SWEEP_EVERY == SWEEP_EVERY - 1 || records.len() >= MAX_RECORDS {
            records.retain(|_, r| !r.is_expired(record.created_at_ms));
        }
        // A client that proposes many different calls needing approval must not grow the
        // process without bound: past the cap, new requests are not kept (the caller is told
        // the request could not be stored) until older ones expire or are purged.
        if records.len() >= MAX_RECORDS {
            return Err(StoreError::new(
                "the in-memory pending approval store is full; decide or purge requests",
            ));
        }
        records.insert(record.id.clone(), record.clone());
        Ok(())
    }

    pub(super) fn get(&self, id: &str) -> Option<PendingRecord> {
        self.lock().get(id).cloned()
    }

    pub(super) fn list_pending(
        &self,
        tenant: Option<&str>,
        now_ms: u64,
        limit: u32,
    ) -> Vec<PendingRecord> {
        let records = self.lock();
        let mut found: Vec<PendingRecord> = records
            .values()
            .filter(|r| {
                r.tenant.as_deref() == tenant
                    && r.state == PendingState::Pending
                    && !r.is_expired(now_ms)
            })
            .cloned()
            .collect();
        found.sort_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)));
        found.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        found
    }

    pub(super) fn decide(&self, id: &str, d: Decision<'_>) -> bool {
        let mut records = self.lock();
        match records.get_mut(id) {
            Some(r) if r.state == PendingState::Pending && !r.is_expired(d.now_ms) => {
                let (approver, reason, at_ms) =
                    (d.approver.to_owned(), d.reason.to_owned(), d.now_ms);
                r.state = if d.approve {
                    PendingState::Approved {
                        approver,
                        reason,
                        at_ms,
                    }
                } else {
                    PendingState::Denied {
                        approver,
                        reason,
                        at_ms,
                    }
                };
                true
            }
            _ => false,
        }
    }

    pub(super) fn find(
        &self,
        tenant: Option<&str>,
        digest: &str,
        now_ms: u64,
    ) -> Option<PendingRecord> {
        self.lock()
            .values()
            .filter(|r| {
                r.tenant.as_deref() == tenant
                    && r.digest == digest
                    && !matches!(r.state, PendingState::Used { .. })
                    && !r.is_expired(now_ms)
            })
            .max_by(|a, b| (a.created_at_ms, &a.id).cmp(&(b.created_at_ms, &b.id)))
            .cloned()
    }

    pub(super) fn mark_used(&self, id: &str) -> bool {
        let mut records = self.lock();
        match records.get_mut(id) {
            Some(r) => match &r.state {
                PendingState::Approved {
                    approver,
                    reason,
                    at_ms,
                } => {
                    r.state = PendingState::Used {
                        approver: approver.clone(),
                        reason: reason.clone(),
                        at_ms: *at_ms,
                    };
                    true
                }
                _ => false,
            },
            None => false,
        }
    }

    pub(super) fn purge(&self, now_ms: u64) -> u64 {
        let mut records = self.lock();
        let before = records.len();
        records.retain(|_, r| !r.is_expired(now_ms));
        (before - records.len()) as u64
    }
}

#[async_trait]
impl PendingApprovalStore for super::MemoryStore {
    async fn put(&self, record: &PendingRecord) -> Result<(), StoreError> {
        self.pending.put(record)
    }
    async fn get(&self, id: &str) -> Result<Option<PendingRecord>, StoreError> {
        Ok(self.pending.get(id))
    }
    async fn list_pending(
        &self,
        tenant: Option<&str>,
        now_ms: u64,
        limit: u32,
    ) -> Result<Vec<PendingRecord>, StoreError> {
        Ok(self.pending.list_pending(tenant, now_ms, limit))
    }
    async fn decide(&self, id: &str, decision: Decision<'_>) -> Result<bool, StoreError> {
        Ok(self.pending.decide(id, decision))
    }
    async fn find(
        &self,
        tenant: Option<&str>,
        digest: &str,
        now_ms: u64,
    ) -> Result<Option<PendingRecord>, StoreError> {
        Ok(self.pending.find(tenant, digest, now_ms))
    }
    async fn mark_used(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self.pending.mark_used(id))
    }
    async fn purge_pending(&self, now_ms: u64) -> Result<u64, StoreError> {
        Ok(self.pending.purge(now_ms))
    }
}

// ---- the SQL backends ----

/// The table of pending approvals, created by schema version 3. The tenant is stored as a
/// key (`-` for none, `+` and the tenant otherwise) so that "no tenant" compares equal in
/// plain SQL on both databases, and never equal to any named tenant.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) const MIGRATION: &[&str] = &[
    "CREATE TABLE {pending} (
        id            TEXT PRIMARY KEY,
        tenant_key    TEXT NOT NULL,
        principal     TEXT,
        digest        TEXT NOT NULL,
        tool          TEXT NOT NULL,
        tool_version  TEXT NOT NULL,
        call_id       TEXT NOT NULL,
        subject       TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        expires_at_ms BIGINT NOT NULL,
        state         TEXT NOT NULL,
        approver      TEXT,
        reason        TEXT,
        decided_at_ms BIGINT
    )",
    "CREATE INDEX tc_pending_tenant ON {pending} (tenant_key, state, created_at_ms)",
    "CREATE INDEX tc_pending_digest ON {pending} (tenant_key, digest)",
    "CREATE INDEX tc_pending_expires ON {pending} (expires_at_ms)",
];

/// The statements on the pending table, its name filled in.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Debug, Clone)]
pub(super) struct PendingSql {
    pub(super) put: String,
    pub(super) get: String,
    pub(super) list: String,
    pub(super) decide: String,
    pub(super) find: String,
    pub(super) mark_used: String,
    pub(super) purge: String,
}

#[cfg(any(feature = "sqlite", feature = "postgres"))]
const COLUMNS: &str = "id, tenant_key, principal, digest, tool, tool_version, call_id, subject, \
     created_at_ms, expires_at_ms, state, approver, reason, decided_at_ms";

#[cfg(any(feature = "sqlite", feature = "postgres"))]
impl PendingSql {
    pub(super) fn new(table: &str) -> Self {
        PendingSql {
            put: format!(
                "INSERT INTO {table} ({COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', NULL, NULL, NULL)"
            ),
            get: format!("SELECT {COLUMNS} FROM {table} WHERE id = $1"),
            list: format!(
                "SELECT {COLUMNS} FROM {table}
                 WHERE tenant_key = $1 AND state = 'pending' AND expires_at_ms > $2
                 ORDER BY created_at_ms, id LIMIT $3"
            ),
            // The whole decision in one conditional write: only a pending, unexpired record
            // moves, so two deciders cannot both win.
            decide: format!(
                "UPDATE {table} SET state = $2, approver = $3, reason = $4, decided_at_ms = $5
                 WHERE id = $1 AND state = 'pending' AND expires_at_ms > $5"
            ),
            find: format!(
                "SELECT {COLUMNS} FROM {table}
                 WHERE tenant_key = $1 AND digest = $2 AND state <> 'used' AND expires_at_ms > $3
                 ORDER BY created_at_ms DESC, id DESC LIMIT 1"
            ),
            mark_used: format!(
                "UPDATE {table} SET state = 'used' WHERE id = $1 AND state = 'approved'"
            ),
            purge: format!("DELETE FROM {table} WHERE expires_at_ms <= $1"),
        }
    }
}

/// The stored form of a tenant.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) fn tenant_key(tenant: Option<&str>) -> String {
    match tenant {
        None => "-".to_owned(),
        Some(t) => format!("+{t}"),
    }
}

/// The raw columns of a pending row, as both drivers decode them.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) type PendingRow = (
    String,
    String,
    Option<String>,
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    String,
    Option<String>,
    Option<String>,
    Option<i64>,
);

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) fn from_row(row: PendingRow) -> Result<PendingRecord, StoreError> {
    use super::sql::from_db;
    let (id, tenant_key, principal, digest, tool, tool_version, call_id, subject) =
        (row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7);
    let (created, expires, state, approver, reason, decided) =
        (row.8, row.9, row.10, row.11, row.12, row.13);
    let tenant = match tenant_key.split_at_checked(1) {
        Some(("-", "")) => None,
        Some(("+", t)) => Some(t.to_owned()),
        _ => {
            return Err(StoreError::new(
                "stored tenant key is malformed: corrupt record",
            ))
        }
    };
    let decided = || -> Result<(String, String, u64), StoreError> {
        match (approver.clone(), reason.clone(), decided) {
            (Some(a), Some(r), Some(at)) => Ok((a, r, from_db("decided_at_ms", at)?)),
            _ => Err(StoreError::new(
                "decided pending approval without its decision: corrupt record",
            )),
        }
    };
    let state = match state.as_str() {
        "pending" => PendingState::Pending,
        "approved" => {
            let (approver, reason, at_ms) = decided()?;
            PendingState::Approved {
                approver,
                reason,
                at_ms,
            }
        }
        "denied" => {
            let (approver, reason, at_ms) = decided()?;
            PendingState::Denied {
                approver,
                reason,
                at_ms,
            }
        }
        "used" => {
            let (approver, reason, at_ms) = decided()?;
            PendingState::Used {
                approver,
                reason,
                at_ms,
            }
        }
        _ => {
            return Err(StoreError::new(
                "stored pending approval state is unknown: corrupt record",
            ))
        }
    };
    Ok(PendingRecord {
        id,
        tenant,
        principal,
        digest,
        tool,
        tool_version,
        call_id,
        subject,
        created_at_ms: from_db("created_at_ms", created)?,
        expires_at_ms: from_db("expires_at_ms", expires)?,
        state,
    })
}

/// Implements [`PendingApprovalStore`] for a SQL store type with fields `pool` and `sql`
/// (whose `pending` holds the [`PendingSql`]), for both drivers, like `impl_stores!`.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
macro_rules! impl_pending_store {
    ($store:ty, $backend:literal) => {
        #[::async_trait::async_trait]
        impl $crate::store::PendingApprovalStore for $store {
            async fn put(
                &self,
                r: &$crate::store::PendingRecord,
            ) -> ::core::result::Result<(), $crate::store::StoreError> {
                use $crate::store::sql::to_db;
                ::sqlx::query(&self.sql.pending.put)
                    .bind(&r.id)
                    .bind($crate::store::pending::tenant_key(r.tenant.as_deref()))
                    .bind(r.principal.as_deref())
                    .bind(&r.digest)
                    .bind(&r.tool)
                    .bind(&r.tool_version)
                    .bind(&r.call_id)
                    .bind(&r.subject)
                    .bind(to_db("created_at_ms", r.created_at_ms)?)
                    .bind(to_db("expires_at_ms", r.expires_at_ms)?)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error(
                        $backend,
                        "store pending approval",
                    ))?;
                Ok(())
            }

            async fn get(
                &self,
                id: &str,
            ) -> ::core::result::Result<
                ::core::option::Option<$crate::store::PendingRecord>,
                $crate::store::StoreError,
            > {
                let row: ::core::option::Option<$crate::store::pending::PendingRow> =
                    ::sqlx::query_as(&self.sql.pending.get)
                        .bind(id)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::store::sql::db_error(
                            $backend,
                            "read pending approval",
                        ))?;
                row.map($crate::store::pending::from_row).transpose()
            }

            async fn list_pending(
                &self,
                tenant: ::core::option::Option<&str>,
                now_ms: u64,
                limit: u32,
            ) -> ::core::result::Result<
                ::std::vec::Vec<$crate::store::PendingRecord>,
                $crate::store::StoreError,
            > {
                let rows: ::std::vec::Vec<$crate::store::pending::PendingRow> =
                    ::sqlx::query_as(&self.sql.pending.list)
                        .bind($crate::store::pending::tenant_key(tenant))
                        .bind($crate::store::sql::to_db("now_ms", now_ms)?)
                        .bind(i64::from(limit))
                        .fetch_all(&self.pool)
                        .await
                        .map_err($crate::store::sql::db_error(
                            $backend,
                            "list pending approvals",
                        ))?;
                rows.into_iter()
                    .map($crate::store::pending::from_row)
                    .collect()
            }

            async fn decide(
                &self,
                id: &str,
                d: $crate::store::Decision<'_>,
            ) -> ::core::result::Result<bool, $crate::store::StoreError> {
                let done = ::sqlx::query(&self.sql.pending.decide)
                    .bind(id)
                    .bind(if d.approve { "approved" } else { "denied" })
                    .bind(d.approver)
                    .bind(d.reason)
                    .bind($crate::store::sql::to_db("now_ms", d.now_ms)?)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error(
                        $backend,
                        "decide pending approval",
                    ))?;
                Ok(done.rows_affected() == 1)
            }

            async fn find(
                &self,
                tenant: ::core::option::Option<&str>,
                digest: &str,
                now_ms: u64,
            ) -> ::core::result::Result<
                ::core::option::Option<$crate::store::PendingRecord>,
                $crate::store::StoreError,
            > {
                let row: ::core::option::Option<$crate::store::pending::PendingRow> =
                    ::sqlx::query_as(&self.sql.pending.find)
                        .bind($crate::store::pending::tenant_key(tenant))
                        .bind(digest)
                        .bind($crate::store::sql::to_db("now_ms", now_ms)?)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::store::sql::db_error(
                            $backend,
                            "find pending approval",
                        ))?;
                row.map($crate::store::pending::from_row).transpose()
            }

            async fn mark_used(
                &self,
                id: &str,
            ) -> ::core::result::Result<bool, $crate::store::StoreError> {
                let done = ::sqlx::query(&self.sql.pending.mark_used)
                    .bind(id)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error(
                        $backend,
                        "mark pending approval used",
                    ))?;
                Ok(done.rows_affected() == 1)
            }

            async fn purge_pending(
                &self,
                now_ms: u64,
            ) -> ::core::result::Result<u64, $crate::store::StoreError> {
                let done = ::sqlx::query(&self.sql.pending.purge)
                    .bind($crate::store::sql::to_db("now_ms", now_ms)?)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error(
                        $backend,
                        "purge pending approvals",
                    ))?;
                Ok(done.rows_affected())
            }
        }
    };
}
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) use impl_pending_store;
