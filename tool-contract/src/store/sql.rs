//! What the SQL backends share: the schema, the statements, the claim loop and the
//! conversions between the traits' `u64` milliseconds and SQL's `BIGINT`.
//!
//! SQLite and PostgreSQL both accept `$N` placeholders (sqlx binds them by number on SQLite
//! too), `INSERT ... AS alias ... ON CONFLICT ... DO UPDATE ... WHERE ... RETURNING` and
//! `BIGINT`, so one text of each statement serves both; only the table names differ (a
//! PostgreSQL store may live in its own schema).

use std::future::Future;

use super::{Claim, ClaimRequest, StoreError};

/// The schema, one entry per version, each a list of statements run in one transaction.
///
/// `{idem}`, `{grants}` and `{pending}` stand for the (possibly schema-qualified) table names. Append a
/// new version to change the schema; never edit a shipped one, because databases that
/// already ran it will not run it again.
pub(super) const MIGRATIONS: &[&[&str]] = &[
    // Version 1: idempotency records and grant consumption marks. A record is in progress
    // while `envelope` is NULL, completed once it holds the stored envelope.
    &[
        "CREATE TABLE {idem} (
            scoped_key     TEXT PRIMARY KEY,
            args_hash      TEXT NOT NULL,
            token          TEXT NOT NULL,
            lease_until_ms BIGINT NOT NULL,
            expires_at_ms  BIGINT NOT NULL,
            envelope       TEXT
        )",
        "CREATE INDEX tc_idempotency_expires ON {idem} (expires_at_ms)",
        "CREATE TABLE {grants} (
            grant_id      TEXT PRIMARY KEY,
            expires_at_ms BIGINT NOT NULL
        )",
        "CREATE INDEX tc_consumed_grants_expires ON {grants} (expires_at_ms)",
    ],
    // ---- standing approvals ----
    // Version 2: how many uses of each standing rule were counted.
    &["CREATE TABLE {rules} (
            rule_id       TEXT PRIMARY KEY,
            uses          BIGINT NOT NULL,
            expires_at_ms BIGINT NOT NULL
        )"],
    // ---- end standing approvals ----
    // Version 3: pending approval requests (see `store::pending`).
    super::pending::MIGRATION,
];

/// The schema version this build of the crate writes and understands.
pub(super) fn latest_version() -> i64 {
    // The list is a few entries long; it cannot reach i64::MAX.
    i64::try_from(MIGRATIONS.len()).unwrap_or(i64::MAX)
}

/// Why a migration failed.
#[derive(Debug)]
pub(super) enum MigrateError {
    Driver(sqlx::Error),
    /// The database was migrated by a newer version of this crate: refuse to misread it.
    TooNew(i64),
}

impl From<sqlx::Error> for MigrateError {
    fn from(e: sqlx::Error) -> Self {
        MigrateError::Driver(e)
    }
}

impl MigrateError {
    /// The error as a store error whose message starts with `context`.
    pub(super) fn into_store_error(self, context: String) -> StoreError {
        match self {
            MigrateError::Driver(e) => StoreError::with_source(context, e),
            MigrateError::TooNew(found) => StoreError::new(format!(
                "{context}: the database has schema version {found}, newer than the {} this \
                 version of tool-contract understands; upgrade tool-contract",
                latest_version()
            )),
        }
    }
}

/// The migrations a database at schema version `current` still needs, with their versions.
pub(super) fn pending(
    migrations: &[Vec<String>],
    current: i64,
) -> Result<impl Iterator<Item = (i64, &Vec<String>)>, MigrateError> {
    if current > latest_version() {
        return Err(MigrateError::TooNew(current));
    }
    Ok((1..).zip(migrations).filter(move |(v, _)| *v > current))
}

/// Runs, in the open transaction `$tx`, every migration the database still needs. The
/// caller has already made the transaction exclusive among migrators (SQLite's
/// `BEGIN IMMEDIATE`, PostgreSQL's advisory lock), so reading the version and applying what
/// follows it cannot interleave with another process doing the same. Evaluates to
/// `Result<(), MigrateError>`.
macro_rules! apply_migrations {
    ($tx:ident, $sql:expr) => {
        async {
            let sql: &$crate::store::sql::Statements = $sql;
            ::sqlx::query(&sql.version_table).execute(&mut *$tx).await?;
            let current: i64 = ::sqlx::query_scalar(&sql.current_version)
                .fetch_one(&mut *$tx)
                .await?;
            for (version, stmts) in $crate::store::sql::pending(&sql.migrations, current)? {
                for stmt in stmts {
                    ::sqlx::query(stmt).execute(&mut *$tx).await?;
                }
                ::sqlx::query(&sql.record_version)
                    .bind(version)
                    .execute(&mut *$tx)
                    .await?;
            }
            ::core::result::Result::<(), $crate::store::sql::MigrateError>::Ok(())
        }
    };
}
pub(super) use apply_migrations;

/// The statements of one store, with its table names filled in once at construction.
#[derive(Debug, Clone)]
pub(super) struct Statements {
    /// `CREATE TABLE IF NOT EXISTS` of the version table.
    pub(super) version_table: String,
    pub(super) current_version: String,
    pub(super) record_version: String,
    /// Every migration, its statements with table names filled in.
    pub(super) migrations: Vec<Vec<String>>,
    pub(super) take: String,
    /// A claim's first step in one statement, for backends that can run it
    /// ([`ClaimStart::InsertOrRead`]).
    pub(super) insert_or_read: Option<String>,
    pub(super) read: String,
    pub(super) complete: String,
    pub(super) release: String,
    pub(super) purge: String,
    pub(super) consume: String,
    pub(super) purge_grants: String,
    /// The statements on the pending approvals table.
    pub(super) pending: super::pending::PendingSql,
    /// Counts one use of a standing rule.
    pub(super) consume_rule_use: String,
}

/// How a backend starts a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ClaimStart {
    /// Read the record ([`Statements::read`]); for backends without a data-modifying `WITH`
    /// (SQLite).
    Read,
    /// One statement that inserts the record if the key is absent and otherwise reads it
    /// (PostgreSQL).
    ///
    /// Why it pays: a new key is then taken in one round trip and one commit instead of a
    /// read and then a write, and a key that exists still costs no commit, because
    /// `ON CONFLICT DO NOTHING` that meets a row neither writes nor locks it, so the statement
    /// gets no transaction id and its commit flushes nothing. (`DO UPDATE ... WHERE` that meets
    /// a row locks it whether or not the condition holds, which is a commit.) The read half
    /// uses the statement's snapshot, taken before the insert: it sees the record that made
    /// the insert do nothing, unless that record was committed after the snapshot, in which
    /// case it sees nothing and the claim goes on as if the key were free (see [`claim`]).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    InsertOrRead,
}

impl Statements {
    /// The statements for tables named `{prefix}tc_idempotency`, `{prefix}tc_consumed_grants`,
    /// `{prefix}tc_standing_rule_uses`, `{prefix}tc_pending_approvals` and
    /// `{prefix}tc_schema_version`; `prefix` is empty or a
    /// quoted schema and a dot.
    pub(super) fn new(prefix: &str, start: ClaimStart) -> Self {
        let idem = format!("{prefix}tc_idempotency");
        let grants = format!("{prefix}tc_consumed_grants");
        let rules = format!("{prefix}tc_standing_rule_uses");
        let version = format!("{prefix}tc_schema_version");
        let pending = format!("{prefix}tc_pending_approvals");
        let fill = |sql: &str| {
            sql.replace("{idem}", &idem)
                .replace("{grants}", &grants)
                .replace("{rules}", &rules)
                .replace("{pending}", &pending)
        };
        Statements {
            version_table: format!(
                "CREATE TABLE IF NOT EXISTS {version} (version BIGINT PRIMARY KEY)"
            ),
            current_version: format!("SELECT COALESCE(MAX(version), 0) FROM {version}"),
            record_version: format!("INSERT INTO {version} (version) VALUES ($1)"),
            migrations: MIGRATIONS
                .iter()
                .map(|stmts| stmts.iter().map(|s| fill(s)).collect())
                .collect(),
            // The whole claim decision for cases 1 and 5 of the lifecycle, in one statement:
            // insert, or take over a record that expired or whose lease ended (same
            // arguments, not completed). Any other existing record is left untouched and no
            // row comes back.
            take: fill(
                "INSERT INTO {idem} AS r
                    (scoped_key, args_hash, token, lease_until_ms, expires_at_ms, envelope)
                 VALUES ($1, $2, $3, $4, $5, NULL)
                 ON CONFLICT (scoped_key) DO UPDATE SET
                    args_hash = excluded.args_hash,
                    token = excluded.token,
                    lease_until_ms = excluded.lease_until_ms,
                    expires_at_ms = excluded.expires_at_ms,
                    envelope = NULL
                 WHERE r.expires_at_ms <= $6
                    OR (r.envelope IS NULL
                        AND r.lease_until_ms <= $6
                        AND r.args_hash = excluded.args_hash)
                 RETURNING token",
            ),
            insert_or_read: match start {
                ClaimStart::Read => None,
                ClaimStart::InsertOrRead => Some(fill(
                    "WITH ins AS (
                        INSERT INTO {idem}
                            (scoped_key, args_hash, token, lease_until_ms, expires_at_ms, envelope)
                        VALUES ($1, $2, $3, $4, $5, NULL)
                        ON CONFLICT (scoped_key) DO NOTHING
                        RETURNING 1
                     )
                     SELECT EXISTS (SELECT 1 FROM ins),
                            r.args_hash, r.lease_until_ms, r.expires_at_ms, r.envelope
                     FROM (VALUES (1)) AS one
                     LEFT JOIN {idem} AS r ON r.scoped_key = $1",
                )),
            },
            read: fill(
                "SELECT args_hash, lease_until_ms, expires_at_ms, envelope
                 FROM {idem} WHERE scoped_key = $1",
            ),
            complete: fill(
                "UPDATE {idem} SET envelope = $3, expires_at_ms = $4
                 WHERE scoped_key = $1 AND token = $2 AND envelope IS NULL",
            ),
            release: fill(
                "DELETE FROM {idem}
                 WHERE scoped_key = $1 AND token = $2 AND envelope IS NULL",
            ),
            purge: fill("DELETE FROM {idem} WHERE expires_at_ms <= $1"),
            consume: fill(
                "INSERT INTO {grants} (grant_id, expires_at_ms) VALUES ($1, $2)
                 ON CONFLICT (grant_id) DO NOTHING",
            ),
            purge_grants: fill("DELETE FROM {grants} WHERE expires_at_ms <= $1"),
            // One statement: the first use inserts the count, each later one adds one while
            // the count is below the maximum; a refused use writes nothing and returns no row.
            consume_rule_use: fill(
                "INSERT INTO {rules} AS r (rule_id, uses, expires_at_ms) VALUES ($1, 1, $2)
                 ON CONFLICT (rule_id) DO UPDATE SET
                    uses = r.uses + 1,
                    expires_at_ms = excluded.expires_at_ms
                 WHERE r.uses < $3
                 RETURNING uses",
            ),
            pending: super::pending::PendingSql::new(&pending),
        }
    }
}

/// A stored record as [`claim`] needs it to classify a refused claim.
#[derive(Debug)]
pub(super) struct Record {
    pub(super) args_hash: String,
    pub(super) lease_until_ms: u64,
    pub(super) expires_at_ms: u64,
    pub(super) envelope: Option<String>,
}

/// The raw columns of [`Statements::read`], as both drivers decode them.
pub(super) type RecordRow = (String, i64, i64, Option<String>);

/// The raw columns of [`ClaimStart::InsertOrRead`]: whether the insert took the key, then
/// the record the statement's snapshot saw, if any.
pub(super) type InsertOrReadRow = (
    bool,
    Option<String>,
    Option<i64>,
    Option<i64>,
    Option<String>,
);

impl Record {
    pub(super) fn from_row(
        (args_hash, lease, expires, envelope): RecordRow,
    ) -> Result<Self, StoreError> {
        Ok(Record {
            args_hash,
            lease_until_ms: from_db("lease_until_ms", lease)?,
            expires_at_ms: from_db("expires_at_ms", expires)?,
            envelope,
        })
    }
}

/// What one step of a claim saw.
#[derive(Debug)]
pub(super) enum Seen {
    /// The caller's insert took the key.
    Taken,
    /// The key's record as it stood.
    Record(Record),
    /// No record visible: the key looks free.
    Absent,
}

impl Seen {
    /// What a read of the record says.
    pub(super) fn read(record: Option<Record>) -> Seen {
        record.map_or(Seen::Absent, Seen::Record)
    }

    /// What [`ClaimStart::InsertOrRead`] says.
    pub(super) fn from_insert_or_read(
        (taken, args_hash, lease, expires, envelope): InsertOrReadRow,
    ) -> Result<Seen, StoreError> {
        if taken {
            return Ok(Seen::Taken);
        }
        match (args_hash, lease, expires) {
            (Some(args_hash), Some(lease), Some(expires)) => {
                Record::from_row((args_hash, lease, expires, envelope)).map(Seen::Record)
            }
            _ => Ok(Seen::Absent),
        }
    }
}

/// The statements a claim is made of, run by a backend.
pub(super) trait ClaimOps: Sync {
    /// Runs [`Statements::take`]; `true` when the caller's token now holds the record.
    fn take(&self, req: &ClaimRequest<'_>)
        -> impl Future<Output = Result<bool, StoreError>> + Send;
    /// Runs [`Statements::read`].
    fn read(&self, key: &str) -> impl Future<Output = Result<Option<Record>, StoreError>> + Send;
    /// A claim's first step: [`ClaimStart::InsertOrRead`] where the backend has it, else a
    /// read.
    fn first(
        &self,
        req: &ClaimRequest<'_>,
    ) -> impl Future<Output = Result<Seen, StoreError>> + Send;
}

/// How often a claim retries when the record it was refused by changed before it could be
/// read. Each retry needs another caller's write in between, so a few are plenty.
const CLAIM_ATTEMPTS: usize = 8;

/// The lifecycle decision of [`IdempotencyStore::claim`](super::IdempotencyStore::claim).
///
/// The first step either takes a new key (PostgreSQL's insert-if-absent) or shows the record
/// as it stands; replays and refusals are decided from what it shows, and only a record that
/// looks free (expired, or its lease ended) or a key that looks absent goes on to the one
/// atomic conditional write that takes it ([`Statements::take`]).
///
/// Nothing but the insert and that conditional write ever takes a key, and each decides
/// atomically in the database. Deciding a refusal or a replay from a read is safe: a live
/// record only ever moves to completed, released or expired, so the answer is the one the
/// caller would have got a moment earlier. The conditional write runs only on a key that
/// looks free because, meeting a live row, it still locks it, which in PostgreSQL is a commit
/// (a WAL flush) per replay. When it is refused (another caller took or completed the key in
/// between), the claim reads again and decides again.
pub(super) async fn claim<B: ClaimOps>(
    backend: &B,
    req: ClaimRequest<'_>,
) -> Result<Claim, StoreError> {
    let mut seen = backend.first(&req).await?;
    for _ in 0..CLAIM_ATTEMPTS {
        match seen {
            Seen::Taken => return Ok(Claim::Acquired),
            Seen::Record(rec) if rec.expires_at_ms > req.now_ms => {
                if rec.args_hash != req.args_hash {
                    return Ok(Claim::KeyReused);
                }
                if let Some(envelope) = rec.envelope {
                    return Ok(Claim::Replay(envelope));
                }
                if rec.lease_until_ms > req.now_ms {
                    return Ok(Claim::InProgress {
                        lease_until_ms: rec.lease_until_ms,
                    });
                }
            }
            Seen::Record(_) | Seen::Absent => {}
        }
        if backend.take(&req).await? {
            return Ok(Claim::Acquired);
        }
        seen = Seen::read(backend.read(req.key).await?);
    }
    Err(StoreError::new(format!(
        "claim of an idempotency key did not settle after {CLAIM_ATTEMPTS} attempts: \
         its record kept changing under concurrent writers"
    )))
}

/// Milliseconds as a `BIGINT`. `u64` milliseconds fit until the year 292 million, so a
/// value that does not fit is a caller's bug, reported rather than truncated.
pub(super) fn to_db(what: &str, ms: u64) -> Result<i64, StoreError> {
    i64::try_from(ms)
        .map_err(|_| StoreError::new(format!("{what} = {ms} does not fit in a BIGINT column")))
}

/// A `BIGINT` read back as milliseconds; a negative one means the row was not written by
/// this crate.
pub(super) fn from_db(what: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value).map_err(|_| {
        StoreError::new(format!(
            "stored {what} = {value} is negative: corrupt record"
        ))
    })
}

/// The claim's times as `BIGINT`s: lease end, expiry, now.
pub(super) fn claim_times(req: &ClaimRequest<'_>) -> Result<(i64, i64, i64), StoreError> {
    Ok((
        to_db("lease_until_ms", req.lease_until_ms)?,
        to_db("expires_at_ms", req.expires_at_ms)?,
        to_db("now_ms", req.now_ms)?,
    ))
}

/// Implements [`ClaimOps`], [`IdempotencyStore`](super::IdempotencyStore) and
/// [`ApprovalStore`](super::ApprovalStore) for a store type with fields `pool` (an sqlx pool)
/// and `sql` ([`Statements`]). The bodies are the same text for both drivers; a macro
/// rather than generic code over `sqlx::Database`, whose bounds would outweigh the bodies.
macro_rules! impl_stores {
    ($store:ty, $backend:literal) => {
        impl $crate::store::sql::ClaimOps for $store {
            async fn take(
                &self,
                req: &$crate::store::ClaimRequest<'_>,
            ) -> ::core::result::Result<bool, $crate::store::StoreError> {
                let (lease, expires, now) = $crate::store::sql::claim_times(req)?;
                let token: ::core::option::Option<String> = ::sqlx::query_scalar(&self.sql.take)
                    .bind(req.key)
                    .bind(req.args_hash)
                    .bind(req.token)
                    .bind(lease)
                    .bind(expires)
                    .bind(now)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error($backend, "claim"))?;
                Ok(token.as_deref() == Some(req.token))
            }

            async fn read(
                &self,
                key: &str,
            ) -> ::core::result::Result<
                ::core::option::Option<$crate::store::sql::Record>,
                $crate::store::StoreError,
            > {
                let row: ::core::option::Option<$crate::store::sql::RecordRow> =
                    ::sqlx::query_as(&self.sql.read)
                        .bind(key)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::store::sql::db_error(
                            $backend,
                            "claim (reading the record)",
                        ))?;
                row.map($crate::store::sql::Record::from_row).transpose()
            }

            async fn first(
                &self,
                req: &$crate::store::ClaimRequest<'_>,
            ) -> ::core::result::Result<$crate::store::sql::Seen, $crate::store::StoreError> {
                let ::core::option::Option::Some(sql) = &self.sql.insert_or_read else {
                    let record = <Self as $crate::store::sql::ClaimOps>::read(self, req.key);
                    return Ok($crate::store::sql::Seen::read(record.await?));
                };
                let (lease, expires, _) = $crate::store::sql::claim_times(req)?;
                let row: $crate::store::sql::InsertOrReadRow = ::sqlx::query_as(sql)
                    .bind(req.key)
                    .bind(req.args_hash)
                    .bind(req.token)
                    .bind(lease)
                    .bind(expires)
                    .fetch_one(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error($backend, "claim"))?;
                $crate::store::sql::Seen::from_insert_or_read(row)
            }
        }

        #[::async_trait::async_trait]
        impl $crate::store::IdempotencyStore for $store {
            async fn claim(
                &self,
                req: $crate::store::ClaimRequest<'_>,
            ) -> ::core::result::Result<$crate::store::Claim, $crate::store::StoreError> {
                $crate::store::sql::claim(self, req).await
            }

            async fn complete(
                &self,
                key: &str,
                token: &str,
                envelope: &str,
                expires_at_ms: u64,
            ) -> ::core::result::Result<bool, $crate::store::StoreError> {
                let expires = $crate::store::sql::to_db("expires_at_ms", expires_at_ms)?;
                let done = ::sqlx::query(&self.sql.complete)
                    .bind(key)
                    .bind(token)
                    .bind(envelope)
                    .bind(expires)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error($backend, "complete"))?;
                Ok(done.rows_affected() == 1)
            }

            async fn release(
                &self,
                key: &str,
                token: &str,
            ) -> ::core::result::Result<(), $crate::store::StoreError> {
                ::sqlx::query(&self.sql.release)
                    .bind(key)
                    .bind(token)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error($backend, "release"))?;
                Ok(())
            }

            async fn purge_expired(
                &self,
                now_ms: u64,
            ) -> ::core::result::Result<u64, $crate::store::StoreError> {
                let now = $crate::store::sql::to_db("now_ms", now_ms)?;
                let done = ::sqlx::query(&self.sql.purge)
                    .bind(now)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error($backend, "purge"))?;
                Ok(done.rows_affected())
            }

            async fn peek(
                &self,
                key: &str,
                args_hash: &str,
                now_ms: u64,
            ) -> ::core::result::Result<::core::option::Option<String>, $crate::store::StoreError>
            {
                let rec = <Self as $crate::store::sql::ClaimOps>::read(self, key).await?;
                Ok(rec
                    .filter(|r| r.expires_at_ms > now_ms && r.args_hash == args_hash)
                    .and_then(|r| r.envelope))
            }
        }

        #[::async_trait::async_trait]
        impl $crate::store::ApprovalStore for $store {
            async fn consume_grant(
                &self,
                grant_id: &str,
                expires_at_ms: u64,
                _now_ms: u64,
            ) -> ::core::result::Result<bool, $crate::store::StoreError> {
                let expires = $crate::store::sql::to_db("expires_at_ms", expires_at_ms)?;
                // Single use in one statement: only the insert that wrote the row counts.
                let done = ::sqlx::query(&self.sql.consume)
                    .bind(grant_id)
                    .bind(expires)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error($backend, "consume grant"))?;
                Ok(done.rows_affected() == 1)
            }

            async fn purge_consumed_grants(
                &self,
                now_ms: u64,
            ) -> ::core::result::Result<u64, $crate::store::StoreError> {
                let now = $crate::store::sql::to_db("now_ms", now_ms)?;
                let done = ::sqlx::query(&self.sql.purge_grants)
                    .bind(now)
                    .execute(&self.pool)
                    .await
                    .map_err($crate::store::sql::db_error(
                        $backend,
                        "purge consumed grants",
                    ))?;
                Ok(done.rows_affected())
            }

            // ---- standing approvals ----
            async fn consume_rule_use(
                &self,
                rule_id: &str,
                max_uses: u64,
                expires_at_ms: u64,
                now_ms: u64,
            ) -> ::core::result::Result<::core::option::Option<u64>, $crate::store::StoreError>
            {
                if max_uses == 0 || now_ms >= expires_at_ms {
                    return Ok(None);
                }
                let expires = $crate::store::sql::to_db("expires_at_ms", expires_at_ms)?;
                let max = $crate::store::sql::to_db("max_uses", max_uses)?;
                let counted: ::core::option::Option<i64> =
                    ::sqlx::query_scalar(&self.sql.consume_rule_use)
                        .bind(rule_id)
                        .bind(expires)
                        .bind(max)
                        .fetch_optional(&self.pool)
                        .await
                        .map_err($crate::store::sql::db_error($backend, "count a rule use"))?;
                counted
                    .map(|n| $crate::store::sql::from_db("uses", n))
                    .transpose()
            }
            // ---- end standing approvals ----
        }
    };
}
pub(super) use impl_stores;

/// A driver error as a store error naming what failed.
pub(super) fn db_error(
    backend: &'static str,
    op: &'static str,
) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |e| StoreError::with_source(format!("{backend} store: {op} failed"), e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn millis_convert_checked() {
        assert_eq!(to_db("x", 5).unwrap(), 5);
        assert!(to_db("x", u64::MAX).is_err());
        assert_eq!(from_db("x", 7).unwrap(), 7);
        let err = from_db("lease_until_ms", -1).unwrap_err().to_string();
        assert!(err.contains("lease_until_ms = -1"), "{err}");
    }

    #[test]
    fn statements_name_their_tables() {
        let s = Statements::new("\"t1\".", ClaimStart::InsertOrRead);
        assert!(s.take.contains("INSERT INTO \"t1\".tc_idempotency AS r"));
        let first = s.insert_or_read.as_deref().unwrap();
        assert!(first.contains("INSERT INTO \"t1\".tc_idempotency"));
        assert!(first.contains("LEFT JOIN \"t1\".tc_idempotency AS r"));
        assert!(!first.contains('{'));
        assert!(Statements::new("", ClaimStart::Read)
            .insert_or_read
            .is_none());
        assert!(s.migrations[0][0].contains("CREATE TABLE \"t1\".tc_idempotency"));
        assert!(s.version_table.contains("\"t1\".tc_schema_version"));
        assert!(!s.migrations.concat().iter().any(|m| m.contains('{')));
        assert!(s.migrations[2][0].contains("CREATE TABLE \"t1\".tc_pending_approvals"));
        assert!(s
            .pending
            .decide
            .contains("UPDATE \"t1\".tc_pending_approvals"));
    }
}
