//! The PostgreSQL backend (feature `postgres`): one set of records shared by every replica
//! of a service.
//!
//! # Why sqlx
//!
//! The same driver as the SQLite store ([sqlx](https://docs.rs/sqlx) 0.8, features
//! `runtime-tokio` and `postgres` only): one async API and pool for both SQL backends, pure
//! Rust, no macros, so building needs no database. tokio-postgres is as solid, but would
//! bring a second API (and `deadpool` or `bb8` for pooling) beside the SQLite one.
//!
//! TLS is not enabled by this crate: to reach a server that requires it, add sqlx 0.8 with
//! one of its TLS features (for example `tls-rustls`) to your own `Cargo.toml`; Cargo
//! merges the features and this store's connections use it (`sslmode` in the URL).
//!
//! # Atomicity across replicas
//!
//! Every decision that takes a key is one statement. A claim starts with `INSERT ... ON
//! CONFLICT DO NOTHING` joined to a read of the key's record: a new key is taken by that one
//! statement (one round trip, one commit), and an existing record comes back without being
//! written or locked, so a replay or a refusal costs no write and no WAL flush. Only a record
//! that has expired or whose lease ended is then taken over, by `INSERT ... ON CONFLICT ... DO
//! UPDATE ... WHERE ... RETURNING`, under which PostgreSQL locks the conflicting row and
//! evaluates the condition on its latest version, so two replicas racing on a key cannot both
//! win. A grant is consumed by `INSERT ... ON CONFLICT DO NOTHING`, which writes for exactly one
//! of them. Times come from the caller (the pipeline's clock), never from the server's.
//!
//! # Schema
//!
//! Tables `tc_idempotency`, `tc_consumed_grants`, `tc_standing_rule_uses`,
//! `tc_pending_approvals` and `tc_schema_version` are created and migrated when the store is
//! made, in one transaction holding a transaction-level advisory lock (`pg_advisory_xact_lock`),
//! so replicas starting together migrate one at a time. By
//! default the tables go where the connection's `search_path` puts them (usually `public`);
//! [`PgStore::from_pool_in_schema`] keeps them in a schema of their own. A database migrated
//! by a newer version of this crate is refused rather than misread.

use std::time::Duration;

use sqlx::postgres::{PgPool, PgPoolOptions};

use super::sql::{self, ClaimStart, MigrateError, Statements};
use super::StoreError;

/// How long a call waits for a pooled connection, including connecting to a server that
/// does not answer, before it fails: an unreachable database must fail closed, not hang.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// Pooled connections of a store made by [`PgStore::connect`].
const MAX_CONNECTIONS: u32 = 10;

/// Idempotency records and grant marks in PostgreSQL, shared by every process and machine
/// that uses the same database (and schema).
///
/// ```no_run
/// use tool_contract::store::{ApprovalStore, Claim, ClaimRequest, IdempotencyStore, PgStore};
/// # async fn demo() -> Result<(), tool_contract::store::StoreError> {
/// let store = PgStore::connect("postgres://app@db.internal/app").await?;
/// let req = ClaimRequest { key: "k", args_hash: "a", token: "t1", now_ms: 0,
///                          lease_until_ms: 1_000, expires_at_ms: 86_400_000 };
/// assert_eq!(store.claim(req).await?, Claim::Acquired);
/// // Another replica, same key and arguments, while the first still runs:
/// let other = ClaimRequest { token: "t2", ..req };
/// assert_eq!(store.claim(other).await?, Claim::InProgress { lease_until_ms: 1_000 });
/// // A grant is consumed once, whichever replica asks first.
/// assert!(store.consume_grant("grant-1", 600_000, 0).await?);
/// assert!(!store.consume_grant("grant-1", 600_000, 0).await?);
/// # Ok(()) }
/// ```
///
/// With a pool of your own, and the tables in their own schema:
///
/// ```no_run
/// use tool_contract::store::{sqlx::postgres::PgPoolOptions, PgStore};
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let pool = PgPoolOptions::new()
///     .max_connections(32)
///     .acquire_timeout(std::time::Duration::from_secs(3))
///     .connect("postgres://app@db.internal/app")
///     .await?;
/// let store = PgStore::from_pool_in_schema(pool, "tool_contract").await?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct PgStore {
    pool: PgPool,
    sql: Statements,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user@host:port/db?...`) with a pool of
    /// up to 10 connections, and migrates the schema.
    ///
    /// Fails after about 5 seconds when the server cannot be reached; every later call that
    /// cannot get a connection in that time fails the same way.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(MAX_CONNECTIONS)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            // sqlx pings every connection it hands out by default: one more round trip per
            // call. A dead connection fails its query instead, which fails closed
            // (`STORE_UNAVAILABLE`), and sqlx drops the broken connection.
            .test_before_acquire(false)
            .connect(url)
            .await
            .map_err(|e| StoreError::with_source("postgres store: cannot connect", e))?;
        PgStore::from_pool(pool).await
    }

    /// A store on a pool you configured, with its tables where the connections'
    /// `search_path` puts them; migrates the schema.
    ///
    /// Give the pool an `acquire_timeout` of a few seconds, so calls fail rather than wait
    /// long when the database is unreachable.
    pub async fn from_pool(pool: PgPool) -> Result<Self, StoreError> {
        PgStore::migrated(pool, None).await
    }

    /// A store whose tables live in `schema` (created if missing); migrates it. Stores in
    /// different schemas of one database are independent.
    ///
    /// `schema` must be 1 to 63 ASCII letters, digits and underscores, not starting with a
    /// digit.
    pub async fn from_pool_in_schema(pool: PgPool, schema: &str) -> Result<Self, StoreError> {
        let valid = (1..=63).contains(&schema.len())
            && !schema.starts_with(|c: char| c.is_ascii_digit())
            && schema
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(StoreError::new(format!(
                "postgres store: schema name {schema:?} must be 1 to 63 ASCII letters, digits \
                 and underscores, not starting with a digit"
            )));
        }
        PgStore::migrated(pool, Some(schema)).await
    }

    /// The store's pool, to share with the rest of the application.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Closes the store's pool. Later calls on this store (and its clones, and anyone else
    /// using the pool) fail with a [`StoreError`]; the records stay in the database.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn migrated(pool: PgPool, schema: Option<&str>) -> Result<Self, StoreError> {
        // The name is checked above, and quoted so PostgreSQL keeps its case.
        let prefix = schema.map_or_else(String::new, |s| format!("\"{s}\"."));
        let store = PgStore {
            pool,
            sql: Statements::new(&prefix, ClaimStart::InsertOrRead),
        };
        store.migrate(schema).await.map_err(|e| {
            let place = schema.map_or_else(String::new, |s| format!(" in schema {s:?}"));
            e.into_store_error(format!("postgres store: cannot set up its tables{place}"))
        })?;
        Ok(store)
    }

    /// Brings the schema to the latest version. The advisory lock, taken first and held
    /// until commit, serializes migrators of the same schema across every connection to the
    /// database, so concurrent `CREATE ... IF NOT EXISTS` never race (they can fail on
    /// PostgreSQL's catalog otherwise).
    async fn migrate(&self, schema: Option<&str>) -> Result<(), MigrateError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(lock_id(schema.unwrap_or("")))
            .execute(&mut *tx)
            .await?;
        if let Some(schema) = schema {
            sqlx::query(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
                .execute(&mut *tx)
                .await?;
        }
        match sql::apply_migrations!(tx, &self.sql).await {
            Ok(()) => Ok(tx.commit().await?),
            Err(e) => {
                // At once, not at the connection's next use (which may never come): the
                // transaction holds the advisory lock and locks on the tables read.
                let _ = tx.rollback().await;
                Err(e)
            }
        }
    }
}

/// The advisory lock id of migrations into `schema`: a stable 64-bit FNV-1a hash of a name
/// unlikely to collide with an application's own advisory locks. A collision would only
/// make two migrations wait for each other.
fn lock_id(schema: &str) -> i64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in "tool-contract migrations ".bytes().chain(schema.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_be_bytes(hash.to_be_bytes())
}

sql::impl_stores!(PgStore, "postgres");
super::pending::impl_pending_store!(PgStore, "postgres");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_ids_differ_per_schema() {
        assert_eq!(lock_id("a"), lock_id("a"));
        assert_ne!(lock_id("a"), lock_id("b"));
        assert_ne!(lock_id(""), lock_id("a"));
    }
}
