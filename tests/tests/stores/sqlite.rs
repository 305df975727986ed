//! `SqliteStore`: the conformance suite and the shared store checks on temp files, restart,
//! migrations, bad files, and two OS processes racing on one key through the pipeline.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tempfile::TempDir;
use tool_contract::store::sqlx::{self, Connection};
use tool_contract::store::{Claim, IdempotencyStore, SqliteStore};

// Included by each SQL backend's module: the checks are generic, the macro that
// instantiates them needs the module's own `fresh`.
#[allow(clippy::duplicate_mod)]
#[macro_use]
#[path = "sql_checks.rs"]
mod checks;

use crate::conformance::Backend;
use checks::{req, Fixture};

/// An empty store in a new temp dir; SQLite needs no server, so it never skips.
async fn fresh() -> Option<Fixture<SqliteStore>> {
    let dir = TempDir::new().unwrap();
    let store = SqliteStore::open(dir.path().join("tc.db")).await.unwrap();
    Some(Fixture {
        store: Arc::new(store),
        _keep: Box::new(dir),
    })
}

/// A plain connection to the file, to look at what the store wrote.
async fn raw(path: &std::path::Path) -> sqlx::SqliteConnection {
    let url = format!("sqlite://{}", path.display());
    sqlx::SqliteConnection::connect(&url).await.unwrap()
}

store_checks!();

/// The conformance backend: SQLite files in a temp dir of the test's own.
pub struct Sqlite {
    dir: TempDir,
    files: AtomicUsize,
}

impl Sqlite {
    pub fn new() -> Self {
        Sqlite {
            dir: TempDir::new().unwrap(),
            files: AtomicUsize::new(0),
        }
    }
}

impl Backend for Sqlite {
    type Store = SqliteStore;
    type Down = SqliteStore;
    const NAME: &'static str = "sqlite";

    async fn fresh(&self) -> Option<SqliteStore> {
        let n = self.files.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.path().join(format!("store-{n}.db"));
        Some(SqliteStore::open(path).await.unwrap())
    }

    /// A store whose connections are closed: every call fails, as when the file is gone.
    async fn down(&self) -> Option<SqliteStore> {
        let store = self.fresh().await?;
        store.close().await;
        Some(store)
    }
}

conformance_tests!(Sqlite::new());

mod deferred {
    use super::*;
    pending_tests!(Sqlite::new());
}

#[tokio::test]
async fn restart_replays_through_the_pipeline() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("tc.db");
    let before = SqliteStore::open(&path).await.unwrap();
    checks::pipeline_restart(before, async { SqliteStore::open(&path).await.unwrap() }).await;
}

#[tokio::test]
async fn in_memory_store_decides_the_five_cases() {
    let store = SqliteStore::in_memory().await.unwrap();
    checks::five_claim_cases(&store).await;
}

#[tokio::test]
async fn open_creates_the_file_in_wal_mode() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("new.db");
    let store = SqliteStore::open(&path).await.unwrap();
    assert!(path.exists());
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut raw(&path).await)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    store.close().await;
}

#[tokio::test]
async fn restart_replays_a_completed_call() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("tc.db");
    let store = SqliteStore::open(&path).await.unwrap();
    checks::before_restart(&store).await;
    store.close().await;
    drop(store);

    let store = SqliteStore::open(&path).await.unwrap();
    checks::after_restart(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_opens_of_a_new_file_migrate_once() {
    let dir = TempDir::new().unwrap();
    let path = Arc::new(dir.path().join("tc.db"));
    let opens: Vec<_> = (0..8)
        .map(|_| {
            let path = Arc::clone(&path);
            tokio::spawn(async move { SqliteStore::open(&*path).await })
        })
        .collect();
    for open in opens {
        open.await.unwrap().unwrap();
    }
    let versions: Vec<i64> = sqlx::query_scalar("SELECT version FROM tc_schema_version")
        .fetch_all(&mut raw(&path).await)
        .await
        .unwrap();
    assert_eq!(versions, [1, 2, 3]);
}

#[tokio::test]
async fn another_writer_is_waited_for_not_failed() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("tc.db");
    let store = SqliteStore::open(&path).await.unwrap();
    // Another process (here: another connection) holds the file's write lock.
    let mut other = raw(&path).await;
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut other)
        .await
        .unwrap();
    let reopen = tokio::spawn({
        let path = path.clone();
        async move { SqliteStore::open(path).await }
    });
    let claim = tokio::spawn({
        let store = store.clone();
        async move { store.claim(req("k", "a", "t1", 0)).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        !reopen.is_finished() && !claim.is_finished(),
        "they wait for the lock"
    );
    sqlx::query("COMMIT").execute(&mut other).await.unwrap();
    let reopened = reopen.await.unwrap().unwrap();
    assert_eq!(claim.await.unwrap().unwrap(), Claim::Acquired);
    assert!(matches!(
        reopened.claim(req("k", "a", "t2", 0)).await.unwrap(),
        Claim::InProgress { .. }
    ));
}

#[tokio::test]
async fn a_file_from_a_newer_version_is_refused() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("tc.db");
    SqliteStore::open(&path).await.unwrap().close().await;
    sqlx::query("INSERT INTO tc_schema_version (version) VALUES (999)")
        .execute(&mut raw(&path).await)
        .await
        .unwrap();
    let err = SqliteStore::open(&path).await.unwrap_err().to_string();
    assert!(
        err.contains("schema version 999") && err.contains("newer"),
        "{err}"
    );
}

#[tokio::test]
async fn a_file_that_is_not_a_database_is_an_error() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, vec![b'x'; 4096]).unwrap();
    let err = SqliteStore::open(&path).await.unwrap_err().to_string();
    assert!(
        err.contains("cannot open") && err.contains("notes.txt"),
        "{err}"
    );

    let missing_dir = dir.path().join("no/such/dir/tc.db");
    assert!(SqliteStore::open(&missing_dir).await.is_err());
}

#[test]
fn two_processes_race_one_key() {
    let dir = TempDir::new().unwrap();
    let child = checks::test_name(module_path!(), "race_child");
    // The file does not exist yet: the children also race to create and migrate it.
    let db = dir.path().join("shared.db");
    let db = db.to_str().unwrap();
    let outputs = checks::race_two_processes(&child, dir.path(), &[("TC_RACE_DB", db)]);
    checks::assert_exactly_one_execution(&outputs, dir.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a child process of two_processes_race_one_key"]
async fn race_child() {
    let (Ok(dir), Ok(db)) = (std::env::var(checks::RACE_DIR), std::env::var("TC_RACE_DB")) else {
        return;
    };
    let store = SqliteStore::open(db).await.unwrap();
    checks::race_child(store, dir.as_ref()).await;
}

/// A keyed write killed at each step, then retried from a fresh process (`crate::crash`).
#[test]
fn a_crash_at_every_step_runs_the_effect_at_most_once() {
    let dir = TempDir::new().unwrap();
    let db = dir.path().join("crash.db");
    let child = checks::test_name(module_path!(), "crash_child");
    let open = || async {
        SqliteStore::open(dir.path().join("crash.db"))
            .await
            .unwrap()
    };
    crate::crash::matrix(
        "sqlite",
        &child,
        &[("TC_CRASH_DB", db.to_str().unwrap())],
        open,
    );
}

#[tokio::test]
#[ignore = "a child process of a_crash_at_every_step_runs_the_effect_at_most_once"]
async fn crash_child() {
    let Ok(db) = std::env::var("TC_CRASH_DB") else {
        return;
    };
    crate::crash::child(SqliteStore::open(db).await.unwrap()).await;
}
