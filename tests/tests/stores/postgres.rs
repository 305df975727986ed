//! `PgStore`: the conformance suite, the shared store checks, restart, migrations and two
//! OS processes racing on one key through the pipeline, each test in a schema of its own (dropped at the end) so they run in parallel.
//!
//! They need `DATABASE_URL` (CI: `postgres://postgres@127.0.0.1:5432/test`); without it
//! each prints `SKIPPED (DATABASE_URL not set): <test>` and passes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tool_contract::store::sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use tool_contract::store::sqlx::{self, Connection};
use tool_contract::store::PgStore;

// Included by each SQL backend's module: the checks are generic, the macro that
// instantiates them needs the module's own `fresh`.
#[allow(clippy::duplicate_mod)]
#[macro_use]
#[path = "sql_checks.rs"]
mod checks;

use crate::conformance::Backend;
use checks::Fixture;

/// The server's URL, or `None` after saying the running test is skipped.
fn database_url() -> Option<String> {
    match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            // libtest runs each test on a thread named after it. Straight to the process's
            // stderr, past libtest's capture, so a run without a database says so even when
            // every test passes.
            let thread = std::thread::current();
            let test = thread.name().unwrap_or("a postgres test");
            let line = format!("SKIPPED (DATABASE_URL not set): {test}\n");
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
            None
        }
    }
}

/// A schema name no other test (of this or another run) uses; dropped, with its tables,
/// when this guard is dropped, even when the test panicked.
struct Schema {
    url: String,
    name: String,
}

impl Schema {
    fn new(url: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let nanos = std::time::UNIX_EPOCH.elapsed().unwrap().subsec_nanos();
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        Schema {
            url: url.to_owned(),
            name: format!("tc_test_{}_{n}_{nanos}", std::process::id()),
        }
    }

    /// A store on a pool of its own, its tables in this schema.
    async fn store(&self) -> PgStore {
        PgStore::from_pool_in_schema(pool(&self.url).await, &self.name)
            .await
            .unwrap()
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let (url, sql) = (
            self.url.clone(),
            format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name),
        );
        // Drop runs inside the test's runtime, which cannot block on itself: use a thread
        // with a runtime of its own.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async {
                let mut conn = sqlx::PgConnection::connect(&url).await?;
                // A session left holding a lock on the schema must not hang the run.
                sqlx::query("SET lock_timeout = '10s'")
                    .execute(&mut conn)
                    .await?;
                sqlx::query(&sql).execute(&mut conn).await
            })
        })
        .join();
        if !matches!(dropped, Ok(Ok(_))) {
            eprintln!("could not drop test schema {}: {dropped:?}", self.name);
        }
    }
}

async fn pool(url: &str) -> PgPool {
    PgPoolOptions::new()
        .max_connections(8)
        .acquire_timeout(Duration::from_secs(10))
        .connect(url)
        .await
        .unwrap()
}

/// An empty store in a schema of its own.
async fn fresh() -> Option<Fixture<PgStore>> {
    let url = database_url()?;
    let schema = Schema::new(&url);
    let store = schema.store().await;
    Some(Fixture {
        store: Arc::new(store),
        _keep: Box::new(schema),
    })
}

store_checks!();

/// The conformance backend: a schema of its own for every store, all dropped with it at the
/// end of the test.
pub struct Pg {
    schemas: Mutex<Vec<Schema>>,
}

impl Pg {
    pub fn new() -> Self {
        Pg {
            schemas: Mutex::new(Vec::new()),
        }
    }

    async fn store(&self) -> Option<PgStore> {
        let url = database_url()?;
        let schema = Schema::new(&url);
        let store = schema.store().await;
        self.schemas.lock().unwrap().push(schema);
        Some(store)
    }
}

impl Backend for Pg {
    type Store = PgStore;
    type Down = PgStore;
    const NAME: &'static str = "postgres";

    async fn fresh(&self) -> Option<PgStore> {
        self.store().await
    }

    /// A store whose pool is closed: every call fails, as when the server is gone.
    async fn down(&self) -> Option<PgStore> {
        let store = self.store().await?;
        store.close().await;
        Some(store)
    }
}

conformance_tests!(Pg::new());

mod deferred {
    use super::*;
    pending_tests!(Pg::new());
}

/// A claim that meets a live record decides without locking it: another transaction holding
/// a share lock on the row (which any row-locking statement would wait for) does not hold up a
/// replay, an in-progress answer or a reused-key refusal, and a new key is still taken beside
/// it. A row lock would also be a commit (a WAL flush) per replay.
#[tokio::test]
async fn claims_that_meet_a_live_record_take_no_row_lock() {
    use tool_contract::store::{Claim, IdempotencyStore};
    let Some(url) = database_url() else {
        return;
    };
    let schema = Schema::new(&url);
    let store = schema.store().await;
    assert_eq!(
        store
            .claim(checks::req("done", "a", "t1", 0))
            .await
            .unwrap(),
        Claim::Acquired
    );
    assert!(store
        .complete("done", "t1", "{}", 86_400_000)
        .await
        .unwrap());
    assert_eq!(
        store
            .claim(checks::req("running", "a", "t1", 0))
            .await
            .unwrap(),
        Claim::Acquired
    );

    let mut locker = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut locker).await.unwrap();
    let lock = format!(
        "SELECT scoped_key FROM \"{}\".tc_idempotency FOR SHARE",
        schema.name
    );
    let locked = sqlx::query(&lock).fetch_all(&mut locker).await.unwrap();
    assert_eq!(locked.len(), 2);

    // Each claim's own key and arguments, a second caller's token.
    let store = &store;
    let claim = |key, args| async move {
        store
            .claim(checks::req(key, args, "t2", 500))
            .await
            .unwrap()
    };
    let decide = async {
        (
            claim("done", "a").await,
            claim("running", "a").await,
            claim("done", "b").await,
            claim("new", "a").await,
        )
    };
    let (replay, running, reused, new) = tokio::time::timeout(Duration::from_secs(5), decide)
        .await
        .expect("a claim waited for another transaction's row lock");
    assert_eq!(replay, Claim::Replay("{}".into()));
    assert_eq!(
        running,
        Claim::InProgress {
            lease_until_ms: 1_000
        }
    );
    assert_eq!(reused, Claim::KeyReused);
    assert_eq!(new, Claim::Acquired);
    sqlx::query("ROLLBACK").execute(&mut locker).await.unwrap();
}

#[tokio::test]
async fn restart_replays_through_the_pipeline() {
    let Some(url) = database_url() else {
        return;
    };
    let schema = Schema::new(&url);
    let open = || schema.store();
    checks::pipeline_restart(open().await, open()).await;
}

#[tokio::test]
async fn restart_replays_a_completed_call() {
    let Some(url) = database_url() else {
        return;
    };
    let schema = Schema::new(&url);
    let store = schema.store().await;
    checks::before_restart(&store).await;
    store.close().await;
    drop(store);

    let store = schema.store().await;
    checks::after_restart(&store).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_stores_on_a_new_schema_migrate_once() {
    let Some(url) = database_url() else {
        return;
    };
    let schema = Arc::new(Schema::new(&url));
    let opens: Vec<_> = (0..6)
        .map(|_| {
            let (url, schema) = (url.clone(), Arc::clone(&schema));
            tokio::spawn(async move {
                // Separate pools: separate sessions, like separate replicas.
                PgStore::from_pool_in_schema(pool(&url).await, &schema.name).await
            })
        })
        .collect();
    let mut stores = Vec::new();
    for open in opens {
        stores.push(open.await.unwrap().unwrap());
    }
    let versions: Vec<i64> = sqlx::query_scalar(&format!(
        "SELECT version FROM \"{}\".tc_schema_version",
        schema.name
    ))
    .fetch_all(stores[0].pool())
    .await
    .unwrap();
    assert_eq!(versions, [1, 2, 3]);
}

#[tokio::test]
async fn from_pool_puts_the_tables_on_the_search_path() {
    let Some(url) = database_url() else {
        return;
    };
    let schema = Schema::new(&url);
    let admin = pool(&url).await;
    let create = format!("CREATE SCHEMA \"{}\"", schema.name);
    sqlx::query(&create).execute(&admin).await.unwrap();
    let options: PgConnectOptions = url.parse().unwrap();
    let options = options.options([("search_path", schema.name.as_str())]);
    let scoped = PgPoolOptions::new().connect_with(options).await.unwrap();
    let store = PgStore::from_pool(scoped).await.unwrap();
    checks::five_claim_cases(&store).await;
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1",
    )
    .bind(&schema.name)
    .fetch_one(&admin)
    .await
    .unwrap();
    assert_eq!(
        tables, 5,
        "tc_idempotency, tc_consumed_grants, tc_standing_rule_uses, tc_pending_approvals, \
         tc_schema_version"
    );
}

#[tokio::test]
async fn a_schema_from_a_newer_version_is_refused() {
    let Some(url) = database_url() else {
        return;
    };
    let schema = Schema::new(&url);
    let store = schema.store().await;
    let bump = format!(
        "INSERT INTO \"{}\".tc_schema_version (version) VALUES (999)",
        schema.name
    );
    sqlx::query(&bump).execute(store.pool()).await.unwrap();
    let err = PgStore::from_pool_in_schema(pool(&url).await, &schema.name)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("schema version 999") && err.contains("newer"),
        "{err}"
    );
}

#[tokio::test]
async fn a_bad_schema_name_is_refused_before_any_sql() {
    // A lazy pool to nowhere: the name is refused without touching the database.
    let pool = PgPoolOptions::new()
        .connect_lazy("postgres://nobody@127.0.0.1:9/none")
        .unwrap();
    for bad in ["", "1abc", "a-b", "a\"; DROP TABLE x; --", &"x".repeat(64)] {
        let err = PgStore::from_pool_in_schema(pool.clone(), bad)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("schema name"), "{bad:?}: {err}");
    }
}

#[tokio::test]
async fn an_unreachable_server_fails_within_seconds() {
    // Nothing listens on the discard port: connections are refused and retried until the
    // store's acquire timeout, then reported.
    let started = Instant::now();
    let err = PgStore::connect("postgres://postgres@127.0.0.1:9/test")
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot connect"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn two_processes_race_one_key() {
    let Some(url) = database_url() else {
        return;
    };
    let dir = tempfile::TempDir::new().unwrap();
    // The schema does not exist yet: the children also race to create and migrate it.
    let schema = Schema::new(&url);
    let child = checks::test_name(module_path!(), "race_child");
    let env = [
        ("TC_RACE_URL", url.as_str()),
        ("TC_RACE_SCHEMA", &schema.name),
    ];
    let outputs = checks::race_two_processes(&child, dir.path(), &env);
    checks::assert_exactly_one_execution(&outputs, dir.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "a child process of two_processes_race_one_key"]
async fn race_child() {
    let vars = ["TC_RACE_URL", "TC_RACE_SCHEMA", checks::RACE_DIR].map(std::env::var);
    let [Ok(url), Ok(schema), Ok(dir)] = vars else {
        return;
    };
    let store = PgStore::from_pool_in_schema(pool(&url).await, &schema)
        .await
        .unwrap();
    checks::race_child(store, dir.as_ref()).await;
}

/// A keyed write killed at each step, then retried from a fresh process (`crate::crash`).
#[test]
fn a_crash_at_every_step_runs_the_effect_at_most_once() {
    let Some(url) = database_url() else {
        return;
    };
    let schema = Schema::new(&url);
    let child = checks::test_name(module_path!(), "crash_child");
    let env = [
        ("TC_CRASH_URL", url.as_str()),
        ("TC_CRASH_SCHEMA", &schema.name),
    ];
    let open = || schema.store();
    crate::crash::matrix("postgres", &child, &env, open);
}

#[tokio::test]
#[ignore = "a child process of a_crash_at_every_step_runs_the_effect_at_most_once"]
async fn crash_child() {
    let vars = ["TC_CRASH_URL", "TC_CRASH_SCHEMA"].map(std::env::var);
    let [Ok(url), Ok(schema)] = vars else {
        return;
    };
    let store = PgStore::from_pool_in_schema(pool(&url).await, &schema)
        .await
        .unwrap();
    crate::crash::child(store).await;
}
