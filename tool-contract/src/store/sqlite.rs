//! The SQLite backend (feature `sqlite`): durable on one node, shared by its processes.
//!
//! # Why sqlx
//!
//! Both SQL backends use [sqlx](https://docs.rs/sqlx) 0.8: one async API and one connection
//! pool for SQLite and PostgreSQL, maintained by LaunchBadge and used across the Tokio
//! ecosystem. Only the `runtime-tokio` and `sqlite` / `postgres` features are on: no macros
//! (queries are plain strings, so building needs no database), no `any`, no TLS. The `sqlite`
//! feature bundles SQLite itself, so a fresh machine needs nothing but the Rust toolchain.
//! rusqlite would be as good a SQLite driver, but it is blocking, so every call would need
//! `spawn_blocking`, and PostgreSQL would need a second, different API.
//!
//! # Sharing one file between processes
//!
//! [`SqliteStore::open`] sets the database to WAL mode (readers never block the writer) and
//! gives every connection a busy timeout, so processes on the node that open the same file
//! wait for each other's writes instead of failing. SQLite runs one write at a time for the
//! whole file, which is what makes each claim atomic across processes. `synchronous = FULL`
//! keeps a completed record on disk even through a power cut: an idempotency record lost
//! after its side effect would let the side effect happen twice. Do not put the file on a
//! network file system: SQLite's locking is not reliable there; use `PgStore` across
//! machines.
//!
//! # Schema
//!
//! The tables (`tc_idempotency`, `tc_consumed_grants`, `tc_standing_rule_uses`,
//! `tc_pending_approvals`, `tc_schema_version`) are created and migrated on open, inside one
//! `BEGIN IMMEDIATE` transaction, so two processes opening a new file at once do it one after
//! the other. A file written by a newer version of this
//! crate is refused rather than misread.

use std::path::Path;
use std::time::{Duration, Instant};

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use super::sql::{self, ClaimStart, MigrateError, Statements};
use super::StoreError;

/// How long a connection waits for another connection's (or process's) write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a call waits for a free pooled connection before it fails.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);
/// Pooled connections of a file store. SQLite writes one at a time anyway; a few
/// connections let reads (the second half of a refused claim) run beside a write.
const MAX_CONNECTIONS: u32 = 4;
/// How long [`SqliteStore::open`] retries while another process holds the file exclusively
/// (switching a new file to WAL mode takes a lock the busy timeout does not wait for).
const OPEN_DEADLINE: Duration = Duration::from_secs(10);

/// Idempotency records and grant marks in a SQLite file: durable on one node and shared by
/// every process there that opens the same file.
///
/// ```no_run
/// use tool_contract::store::{Claim, ClaimRequest, IdempotencyStore, SqliteStore};
/// # async fn demo() -> Result<(), tool_contract::store::StoreError> {
/// let store = SqliteStore::open("/var/lib/my-agent/tool-contract.db").await?;
/// let req = ClaimRequest { key: "k", args_hash: "a", token: "t1", now_ms: 0,
///                          lease_until_ms: 1_000, expires_at_ms: 86_400_000 };
/// assert_eq!(store.claim(req).await?, Claim::Acquired);
/// assert!(store.complete("k", "t1", r#"{"ok":true}"#, 86_400_000).await?);
/// store.close().await;
///
/// // After a restart the record is still there: the call is replayed, not run again.
/// let store = SqliteStore::open("/var/lib/my-agent/tool-contract.db").await?;
/// let again = ClaimRequest { token: "t2", ..req };
/// assert_eq!(store.claim(again).await?, Claim::Replay(r#"{"ok":true}"#.into()));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    sql: Statements,
}

impl SqliteStore {
    /// Opens (creating it if missing) the database file at `path` and migrates its schema.
    ///
    /// Fails, without waiting forever, when the file cannot be created or opened, is not a
    /// SQLite database, or was written by a newer version of this crate.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new()
            .filename(path.as_ref())
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(BUSY_TIMEOUT);
        let deadline = Instant::now() + OPEN_DEADLINE;
        let mut backoff = Duration::from_millis(5);
        loop {
            let pool = SqlitePoolOptions::new()
                .max_connections(MAX_CONNECTIONS)
                .acquire_timeout(ACQUIRE_TIMEOUT)
                .connect_lazy_with(options.clone());
            match SqliteStore::migrated(pool).await {
                Err(Opening::Busy(e)) if Instant::now() < deadline => {
                    tracing::debug!(error = %e, "sqlite store: file busy while opening, retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(200));
                }
                Err(Opening::Busy(e)) => {
                    return Err(MigrateError::Driver(e).into_store_error(format!(
                        "sqlite store: {} stayed locked by another process",
                        path.as_ref().display()
                    )))
                }
                Err(Opening::Failed(e)) => {
                    return Err(e.into_store_error(format!(
                        "sqlite store: cannot open {}",
                        path.as_ref().display()
                    )))
                }
                Ok(store) => return Ok(store),
            }
        }
    }

    /// A store in this process's memory, gone when the store is closed or dropped: for
    /// tests and examples that want the SQL code path without a file.
    ///
    /// It holds exactly one connection (each SQLite in-memory connection is its own
    /// database), so its calls run one at a time.
    pub async fn in_memory() -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::new().in_memory(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .connect_lazy_with(options);
        SqliteStore::migrated(pool).await.map_err(|e| {
            let e = match e {
                Opening::Busy(e) => MigrateError::Driver(e),
                Opening::Failed(e) => e,
            };
            e.into_store_error("sqlite store: cannot open an in-memory database".into())
        })
    }

    /// Closes the store's connections. Later calls on this store (and its clones) fail
    /// with a [`StoreError`]; the file and its records stay.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn migrated(pool: SqlitePool) -> Result<Self, Opening> {
        let store = SqliteStore {
            pool,
            sql: Statements::new("", ClaimStart::Read),
        };
        if let Err(e) = store.migrate().await {
            store.pool.close().await;
            return Err(e);
        }
        Ok(store)
    }

    /// Brings the schema to the latest version. `BEGIN IMMEDIATE` takes the file's write
    /// lock before the version is read, so concurrent openers migrate one at a time and the
    /// second finds the work done.
    async fn migrate(&self) -> Result<(), Opening> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        match sql::apply_migrations!(tx, &self.sql).await {
            Ok(()) => Ok(tx.commit().await?),
            Err(e) => {
                // At once, not at the connection's next use: the transaction holds the
                // file's write lock until it ends.
                let _ = tx.rollback().await;
                Err(e.into())
            }
        }
    }
}

/// Why opening failed: `Busy` is worth retrying until the open deadline.
enum Opening {
    Busy(sqlx::Error),
    Failed(MigrateError),
}

impl From<sqlx::Error> for Opening {
    fn from(e: sqlx::Error) -> Self {
        // SQLITE_BUSY is primary result code 5; extended codes keep it in the low byte.
        let busy = e
            .as_database_error()
            .and_then(|d| d.code())
            .and_then(|code| code.parse::<i32>().ok())
            .is_some_and(|code| code & 0xff == 5);
        if busy {
            Opening::Busy(e)
        } else {
            Opening::Failed(MigrateError::Driver(e))
        }
    }
}

impl From<MigrateError> for Opening {
    fn from(e: MigrateError) -> Self {
        match e {
            MigrateError::Driver(e) => Opening::from(e),
            too_new => Opening::Failed(too_new),
        }
    }
}

sql::impl_stores!(SqliteStore, "sqlite");
super::pending::impl_pending_store!(SqliteStore, "sqlite");
