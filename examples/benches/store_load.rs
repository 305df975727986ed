//! Exactly-once on the durable stores under load: keyed writes and replays per second through
//! `PgStore` and `SqliteStore`, each next to what the database does with the same statements
//! and nothing else, measured in the same run (BENCHMARKS.md).
//!
//! ```sh
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p tool-contract-examples --bench store_load -- --rounds 3 --secs 10
//! ```
//!
//! * **PostgreSQL**: the store's `claim` + `complete` on a new key per write, next to `pgbench`
//!   (same server, same table, same concurrency, prepared statements) running the two
//!   statements a keyed write cannot do without: the conditional claim upsert and the
//!   completion update. A replay (`claim` on a completed key) is set next to `pgbench` running
//!   the one read of the record by key.
//! * **SQLite**: the same, next to a plain sqlx loop running those statements on the same file
//!   with the same settings (WAL, `synchronous = FULL`, the same pool size).
//!
//! Every round runs each pair in turn, the order swapped every round, and the table sums the
//! rounds. PostgreSQL is skipped, with a line saying so, without `DATABASE_URL` or `pgbench`.
//! The anchors' statements mirror `take`, `complete` and `read` in `tool-contract`'s
//! `store/sql.rs`; keys, hashes, tokens and envelopes have the sizes the pipeline writes.

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tool_contract::store::sqlx::{
    self,
    postgres::{PgPool, PgPoolOptions},
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
    SqlitePool,
};
use tool_contract::store::{Claim, ClaimRequest, IdempotencyStore, PgStore, SqliteStore};
use tool_contract_examples::proc_stat::{ticks_to_secs, total_named, CpuTicks};

/// The schema the PostgreSQL store and the anchor share for the run (dropped at the end).
const SCHEMA: &str = "tc_store_load";
/// A digest of canonical arguments, as long as the pipeline's.
const ARGS_HASH: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
/// Times far from each other and from now, so no record expires or loses its lease mid-run.
const NOW_MS: u64 = 1_000_000;
const LEASE_UNTIL_MS: u64 = 4_000_000_000_000;
const EXPIRES_AT_MS: u64 = 8_000_000_000_000;
/// Completed records in the PostgreSQL table before each measurement.
const FILLER_RECORDS: u32 = 20_000;
/// The SQLite store's pool size, which the plain loop gets too.
const SQLITE_CONNECTIONS: u32 = 4;

/// A stored success envelope of a small write tool, about the size the pipeline records.
fn envelope() -> String {
    let mut env = String::from(
        r#"{"ok":true,"tool":"save_note","version":"1.0.0","data":{"id":"req-1","len":45},"meta":{"call_id":"c","trust":"untrusted_tool_output","provenance":{"source":"tool:save_note@1.0.0","retrieved_at":"2026-12-04T00:00:00Z"},"idempotency":null,"padding":""#,
    );
    while env.len() < 600 {
        env.push('x');
    }
    env.push_str("\"}}");
    env
}

struct Opts {
    secs: u64,
    rounds: usize,
    warmup: Duration,
    callers: Vec<usize>,
}

fn opts() -> Opts {
    let mut o = Opts {
        secs: 10,
        rounds: 3,
        warmup: Duration::from_secs(1),
        callers: vec![1, 16],
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| panic!("{name} needs a value; see --help"))
        };
        match a.as_str() {
            "--secs" => o.secs = value("--secs").parse().expect("--secs: whole seconds"),
            "--rounds" => o.rounds = value("--rounds").parse().expect("--rounds: a count"),
            "--callers" => {
                o.callers = value("--callers")
                    .split(',')
                    .map(|c| c.trim().parse().expect("--callers: e.g. 1,16"))
                    .collect()
            }
            // What `cargo bench` passes to every bench target.
            "--bench" => {}
            "--help" | "-h" => {
                println!(
                    "store_load [--secs N (10)] [--rounds N (3)] [--callers 1,16]\n\
                     PostgreSQL is measured when DATABASE_URL is set and pgbench is on PATH."
                );
                std::process::exit(0);
            }
            other => panic!("unknown argument {other:?}; see --help"),
        }
    }
    assert!(
        o.secs > 0 && o.rounds > 0 && !o.callers.is_empty(),
        "nothing to measure"
    );
    o
}

/// One measured run: operations, seconds, and the CPU this process (the client) and a local
/// PostgreSQL server spent meanwhile.
#[derive(Debug, Clone, Copy)]
struct Run {
    ops: f64,
    secs: f64,
    client_ticks: u64,
    server_ticks: u64,
}

impl Run {
    fn rate(&self) -> f64 {
        self.ops / self.secs
    }
}

/// CPU ticks of a local PostgreSQL server's processes, backends that exited included.
fn server_ticks() -> u64 {
    let t = total_named("postgres");
    t.own + t.children
}

/// Runs `callers` tasks of `op(caller, n)` (n counts each caller's operations) for the warm-up
/// and then `secs` seconds, and measures the `secs`.
async fn drive<F, Fut>(callers: usize, warmup: Duration, secs: u64, op: F) -> Run
where
    F: Fn(usize, u64) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let op = Arc::new(op);
    let measuring = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = (0..callers)
        .map(|caller| {
            let (op, measuring, stop, done) =
                (op.clone(), measuring.clone(), stop.clone(), done.clone());
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    op(caller, n).await;
                    n += 1;
                    if measuring.load(Ordering::Relaxed) {
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    tokio::time::sleep(warmup).await;
    let (client0, server0) = (own_ticks(), server_ticks());
    measuring.store(true, Ordering::Relaxed);
    let start = Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    let count = done.load(Ordering::Relaxed);
    let elapsed = start.elapsed();
    let (client1, server1) = (own_ticks(), server_ticks());
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.expect("a load task panicked");
    }
    Run {
        ops: count as f64,
        secs: elapsed.as_secs_f64(),
        client_ticks: client1.saturating_sub(client0),
        server_ticks: server1.saturating_sub(server0),
    }
}

/// CPU ticks of the children this process has waited for (pgbench).
fn children_ticks() -> u64 {
    CpuTicks::read("/proc/self/stat").map_or(0, |t| t.children)
}

/// CPU ticks of this process so far.
fn own_ticks() -> u64 {
    CpuTicks::read("/proc/self/stat").map_or(0, |t| t.own)
}

/// A unique 64-character key per caller, operation and run.
fn key(run: &str, caller: usize, n: u64) -> String {
    format!("{:0>64}", format!("{run}-{caller}-{n}"))
}

/// The key a caller replays.
fn replay_key(caller: usize) -> String {
    format!("{:0>64}", format!("replay-{caller}"))
}

/// One keyed write through the store: claim a new key, then record the envelope.
async fn keyed_write(store: &dyn IdempotencyStore, key: &str, token: &str, envelope: &str) {
    let req = ClaimRequest {
        key,
        args_hash: ARGS_HASH,
        token,
        now_ms: NOW_MS,
        lease_until_ms: LEASE_UNTIL_MS,
        expires_at_ms: EXPIRES_AT_MS,
    };
    match store.claim(req).await {
        Ok(Claim::Acquired) => {}
        other => panic!("a new key must be acquired, got {other:?}"),
    }
    let recorded = store.complete(key, token, envelope, EXPIRES_AT_MS).await;
    assert!(
        matches!(recorded, Ok(true)),
        "completion failed: {recorded:?}"
    );
}

/// One replay through the store.
async fn replay(store: &dyn IdempotencyStore, key: &str) {
    let req = ClaimRequest {
        key,
        args_hash: ARGS_HASH,
        token: "replayer",
        now_ms: NOW_MS,
        lease_until_ms: LEASE_UNTIL_MS,
        expires_at_ms: EXPIRES_AT_MS,
    };
    match store.claim(req).await {
        Ok(Claim::Replay(_)) => {}
        other => panic!("a completed key must replay, got {other:?}"),
    }
}

/// The anchor statements, with `{t}` for the table.
const TAKE: &str = "INSERT INTO {t} AS r
    (scoped_key, args_hash, token, lease_until_ms, expires_at_ms, envelope)
 VALUES ({key}, '{args}', {token}, {lease}, {expires}, NULL)
 ON CONFLICT (scoped_key) DO UPDATE SET
    args_hash = excluded.args_hash, token = excluded.token,
    lease_until_ms = excluded.lease_until_ms, expires_at_ms = excluded.expires_at_ms,
    envelope = NULL
 WHERE r.expires_at_ms <= {now}
    OR (r.envelope IS NULL AND r.lease_until_ms <= {now} AND r.args_hash = excluded.args_hash)
 RETURNING token";
const COMPLETE: &str = "UPDATE {t} SET envelope = {envelope}, expires_at_ms = {expires}
 WHERE scoped_key = {key} AND token = {token} AND envelope IS NULL";
const READ: &str = "SELECT args_hash, lease_until_ms, expires_at_ms, envelope
 FROM {t} WHERE scoped_key = {key}";

/// An anchor statement with its constants filled in and the given expressions for the
/// key, token and envelope (placeholders or pgbench variables).
fn statement(template: &str, table: &str, key: &str, token: &str, envelope: &str) -> String {
    template
        .replace("{t}", table)
        .replace("{key}", key)
        .replace("{token}", token)
        .replace("{envelope}", envelope)
        .replace("{args}", ARGS_HASH)
        .replace("{lease}", &LEASE_UNTIL_MS.to_string())
        .replace("{expires}", &EXPIRES_AT_MS.to_string())
        .replace("{now}", &NOW_MS.to_string())
        // pgbench reads one line per SQL command unless it ends with `;`: keep each on one.
        .replace('\n', " ")
}

/// One row of the report: the store's runs and the anchor's, one of each per round.
struct Row {
    what: &'static str,
    callers: usize,
    store: Vec<Run>,
    anchor: Vec<Run>,
}

impl Row {
    /// Prints the rows as a markdown table: rates, their ratio over all rounds and per round,
    /// and CPU per operation of the client and, with `server`, of the PostgreSQL server.
    fn print(rows: &[Row], store_name: &str, anchor_name: &str, server: bool) {
        let server_head = if server {
            " server CPU µs/op, store / anchor |"
        } else {
            ""
        };
        println!(
            "\n| {store_name} | callers | store ops/s | {anchor_name} ops/s | ratio | ratio per round | client CPU µs/op, store / anchor |{server_head}"
        );
        println!(
            "|---|---:|---:|---:|---:|---|---|{}",
            if server { "---|" } else { "" }
        );
        for r in rows {
            let total = |runs: &[Run], f: fn(&Run) -> f64| runs.iter().map(f).sum::<f64>();
            let rate = |runs: &[Run]| total(runs, |r| r.ops) / total(runs, |r| r.secs);
            let per_op = |runs: &[Run], f: fn(&Run) -> u64| {
                ticks_to_secs(runs.iter().map(f).sum()) * 1e6 / total(runs, |r| r.ops).max(1.0)
            };
            let (s, a) = (rate(&r.store), rate(&r.anchor));
            let per: Vec<String> = r
                .store
                .iter()
                .zip(&r.anchor)
                .map(|(s, a)| format!("{:.2}", s.rate() / a.rate()))
                .collect();
            let server_cell = if server {
                format!(
                    " {:.0} / {:.0} |",
                    per_op(&r.store, |r| r.server_ticks),
                    per_op(&r.anchor, |r| r.server_ticks)
                )
            } else {
                String::new()
            };
            println!(
                "| {} | {} | {:.0} | {:.0} | **{:.2}×** | {} | {:.0} / {:.0} |{server_cell}",
                r.what,
                r.callers,
                s,
                a,
                s / a,
                per.join(" / "),
                per_op(&r.store, |r| r.client_ticks),
                per_op(&r.anchor, |r| r.client_ticks),
            );
        }
    }
}

// ---------------------------------------------------------------- PostgreSQL

struct Pg {
    url: String,
    admin: PgPool,
    store: Arc<PgStore>,
    table: String,
    dir: tempfile::TempDir,
}

impl Pg {
    async fn setup(url: String, max_callers: usize) -> Pg {
        let admin = PgPoolOptions::new()
            .max_connections(1)
            .connect(&url)
            .await
            .expect("connect to DATABASE_URL");
        sqlx::query(&format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"))
            .execute(&admin)
            .await
            .expect("drop the bench schema");
        // The pool a service would give a store serving this many callers at once.
        let pool = PgPoolOptions::new()
            .max_connections(u32::try_from(max_callers).expect("callers"))
            .acquire_timeout(Duration::from_secs(5))
            .test_before_acquire(false)
            .connect(&url)
            .await
            .expect("connect to DATABASE_URL");
        let store = PgStore::from_pool_in_schema(pool, SCHEMA)
            .await
            .expect("postgres store");
        Pg {
            url,
            admin,
            store: Arc::new(store),
            table: format!("\"{SCHEMA}\".tc_idempotency"),
            dir: tempfile::TempDir::new().expect("temp dir"),
        }
    }

    async fn exec(&self, sql: &str) {
        sqlx::query(sql)
            .execute(&self.admin)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// An empty table, then `callers` completed records to replay (`replay-<caller>`: pgbench
    /// numbers its clients from 0 as the store's callers are).
    async fn reset(&self, callers: usize) {
        self.exec(&format!("TRUNCATE {}", self.table)).await;
        for caller in 0..callers {
            let sql = statement(
                "INSERT INTO {t} VALUES ({key}, '{args}', 't', {lease}, {expires}, {envelope})",
                &self.table,
                &format!("'{}'", replay_key(caller)),
                "",
                &format!("'{}'", envelope()),
            );
            self.exec(&sql).await;
        }
        // Records a store in use holds. Without them the table's statistics describe a few
        // rows, and the planner answers a lookup by key with a sequential scan, which gets
        // slower with every row the run writes: the figures would measure that plan.
        let filler = statement(
            "INSERT INTO {t} SELECT lpad('filler-' || g, 64, '0'), '{args}', 't', {lease},
                {expires}, {envelope} FROM generate_series(1, {FILLER_RECORDS}) AS g",
            &self.table,
            "",
            "",
            &format!("'{}'", envelope()),
        )
        .replace("{FILLER_RECORDS}", &FILLER_RECORDS.to_string());
        self.exec(&filler).await;
        self.exec(&format!("VACUUM ANALYZE {}", self.table)).await;
    }

    /// Runs a pgbench script: its transactions (script runs), pgbench's own CPU as the
    /// client's, the server's CPU meanwhile.
    fn pgbench(&self, name: &str, script: &str, callers: usize, secs: u64) -> Run {
        let path = self.dir.path().join(format!("{name}.sql"));
        std::fs::write(&path, script).expect("write pgbench script");
        let (client0, server0) = (children_ticks(), server_ticks());
        let out = Command::new("pgbench")
            .args(["-n", "-M", "prepared", "-T", &secs.to_string()])
            .args([
                "-c",
                &callers.to_string(),
                "-j",
                &callers.min(2).to_string(),
            ])
            .arg("-f")
            .arg(&path)
            .arg(&self.url)
            .output()
            .expect("run pgbench");
        // pgbench's backends exit after it does; their time reaches the postmaster once it
        // has reaped them.
        std::thread::sleep(Duration::from_millis(500));
        let (client1, server1) = (children_ticks(), server_ticks());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "pgbench failed: {text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let tps = text
            .lines()
            .find_map(|l| l.strip_prefix("tps = "))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok());
        let tps: f64 = tps.unwrap_or_else(|| panic!("no tps in pgbench's output: {text}"));
        Run {
            ops: tps * secs as f64,
            secs: secs as f64,
            client_ticks: client1.saturating_sub(client0),
            server_ticks: server1.saturating_sub(server0),
        }
    }

    /// Checks that pgbench's write script did what the store does: keys completed with the
    /// whole envelope, none left claimed but for one a client may have been stopped between
    /// its two statements.
    async fn check_anchor_writes(&self, callers: usize) {
        let sql = format!(
            "SELECT count(*) FILTER (WHERE envelope = $1), count(*) FILTER (WHERE envelope IS NULL)
             FROM {} WHERE scoped_key LIKE '%pgbench-%'",
            self.table
        );
        let (completed, claimed): (i64, i64) = sqlx::query_as(&sql)
            .bind(envelope())
            .fetch_one(&self.admin)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
        assert!(completed > 0, "pgbench completed no keyed write");
        assert!(
            usize::try_from(claimed).is_ok_and(|n| n <= callers),
            "pgbench left {claimed} keys claimed and not completed"
        );
    }

    fn write_script(&self) -> String {
        let key = "lpad('pgbench-' || :client_id::text || '-' || :k::text, 64, '0')";
        let token = "'pgbench-' || :client_id::text || '-' || :k::text";
        // pgbench turns every `:name` in a command into a parameter, string literals
        // included, and the envelope holds `"ok":true`: its colons go in as an escape.
        let env = envelope();
        assert!(
            !env.contains(['\\', '\'']),
            "the envelope is written as a plain literal"
        );
        let env = format!("E'{}'", env.replace(':', "\\072"));
        format!(
            "\\set k random(1, 9000000000000000000)\n{};\n{};\n",
            statement(TAKE, &self.table, key, token, &env),
            statement(COMPLETE, &self.table, key, token, &env)
        )
    }

    fn read_script(&self) -> String {
        let key = "lpad('replay-' || :client_id::text, 64, '0')";
        format!("{};\n", statement(READ, &self.table, key, "", ""))
    }

    async fn store_writes(&self, run: &'static str, callers: usize, o: &Opts) -> Run {
        let store = self.store.clone();
        let env: Arc<str> = envelope().into();
        drive(callers, o.warmup, o.secs, move |caller, n| {
            let (store, env) = (store.clone(), env.clone());
            async move {
                let key = key(run, caller, n);
                keyed_write(&*store, &key, &key, &env).await;
            }
        })
        .await
    }

    async fn store_replays(&self, callers: usize, o: &Opts) -> Run {
        let store = self.store.clone();
        drive(callers, o.warmup, o.secs, move |caller, _| {
            let store = store.clone();
            async move { replay(&*store, &replay_key(caller)).await }
        })
        .await
    }
}

async fn postgres(o: &Opts) -> Option<(Vec<Row>, Vec<Row>)> {
    let url = match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => url,
        _ => {
            println!("PostgreSQL SKIPPED: DATABASE_URL is not set");
            return None;
        }
    };
    if Command::new("pgbench").arg("--version").output().is_err() {
        println!("PostgreSQL SKIPPED: pgbench is not on PATH (Debian: postgresql-client)");
        return None;
    }
    let max = *o.callers.iter().max().expect("callers");
    let pg = Pg::setup(url, max).await;
    let (write, read) = (pg.write_script(), pg.read_script());
    let mut writes: Vec<Row> = Vec::new();
    let mut replays: Vec<Row> = Vec::new();
    for &c in &o.callers {
        writes.push(Row {
            what: "keyed write",
            callers: c,
            store: vec![],
            anchor: vec![],
        });
        replays.push(Row {
            what: "replay",
            callers: c,
            store: vec![],
            anchor: vec![],
        });
    }
    for round in 0..o.rounds {
        for (i, &c) in o.callers.iter().enumerate() {
            let run: &'static str = Box::leak(format!("r{round}c{c}").into_boxed_str());
            pg.reset(c).await;
            let (s, a) = if round % 2 == 0 {
                let s = pg.store_writes(run, c, o).await;
                pg.reset(c).await;
                let a = pg.pgbench("write", &write, c, o.secs);
                pg.check_anchor_writes(c).await;
                (s, a)
            } else {
                let a = pg.pgbench("write", &write, c, o.secs);
                pg.check_anchor_writes(c).await;
                pg.reset(c).await;
                (pg.store_writes(run, c, o).await, a)
            };
            writes[i].store.push(s);
            writes[i].anchor.push(a);
            let (s, a) = if round % 2 == 0 {
                let s = pg.store_replays(c, o).await;
                (s, pg.pgbench("read", &read, c, o.secs))
            } else {
                let a = pg.pgbench("read", &read, c, o.secs);
                (pg.store_replays(c, o).await, a)
            };
            replays[i].store.push(s);
            replays[i].anchor.push(a);
            eprintln!(
                "postgres round {} callers {c}: writes {:.0}/{:.0}, replays {:.0}/{:.0}",
                round + 1,
                writes[i].store[round].rate(),
                writes[i].anchor[round].rate(),
                replays[i].store[round].rate(),
                replays[i].anchor[round].rate()
            );
        }
    }
    pg.exec(&format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE"))
        .await;
    Some((writes, replays))
}

// ---------------------------------------------------------------- SQLite

/// A plain sqlx loop of the anchor statements on the store's file, with the store's settings.
struct PlainSqlite {
    pool: SqlitePool,
    take: String,
    complete: String,
    read: String,
}

impl PlainSqlite {
    async fn open(path: &std::path::Path) -> PlainSqlite {
        let options = SqliteConnectOptions::new()
            .filename(path)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(SQLITE_CONNECTIONS)
            .acquire_timeout(Duration::from_secs(5))
            .connect_with(options)
            .await
            .expect("open the SQLite file");
        let t = "tc_idempotency";
        PlainSqlite {
            pool,
            take: statement(TAKE, t, "$1", "$2", ""),
            complete: statement(COMPLETE, t, "$1", "$2", "$3"),
            read: statement(READ, t, "$1", "", ""),
        }
    }

    async fn write(&self, key: &str, envelope: &str) {
        let token: Option<String> = sqlx::query_scalar(&self.take)
            .bind(key)
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .expect("take");
        assert_eq!(token.as_deref(), Some(key), "a new key must be taken");
        let done = sqlx::query(&self.complete)
            .bind(key)
            .bind(key)
            .bind(envelope)
            .execute(&self.pool)
            .await
            .expect("complete");
        assert_eq!(done.rows_affected(), 1);
    }

    async fn read(&self, key: &str) {
        let row: Option<(String, i64, i64, Option<String>)> = sqlx::query_as(&self.read)
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .expect("read");
        assert!(row.is_some_and(|r| r.3.is_some()), "a completed record");
    }
}

async fn sqlite(o: &Opts) -> (Vec<Row>, Vec<Row>) {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let path = dir.path().join("store.db");
    let store = Arc::new(SqliteStore::open(&path).await.expect("sqlite store"));
    let plain = Arc::new(PlainSqlite::open(&path).await);
    let env: Arc<str> = envelope().into();
    let max = *o.callers.iter().max().expect("callers");
    for caller in 0..max {
        keyed_write(&*store, &replay_key(caller), "t", &env).await;
    }
    let mut writes = Vec::new();
    let mut replays = Vec::new();
    for &c in &o.callers {
        let mut w = Row {
            what: "keyed write",
            callers: c,
            store: vec![],
            anchor: vec![],
        };
        let mut r = Row {
            what: "replay",
            callers: c,
            store: vec![],
            anchor: vec![],
        };
        for round in 0..o.rounds {
            let run: &'static str = Box::leak(format!("r{round}c{c}").into_boxed_str());
            let plain_run: &'static str = Box::leak(format!("plain-r{round}c{c}").into_boxed_str());
            let by_store = {
                let (store, env) = (store.clone(), env.clone());
                move |caller, n| {
                    let (store, env) = (store.clone(), env.clone());
                    async move {
                        let key = key(run, caller, n);
                        keyed_write(&*store, &key, &key, &env).await;
                    }
                }
            };
            let by_plain = {
                let (plain, env) = (plain.clone(), env.clone());
                move |caller, n| {
                    let (plain, env) = (plain.clone(), env.clone());
                    async move { plain.write(&key(plain_run, caller, n), &env).await }
                }
            };
            let replay_store = {
                let store = store.clone();
                move |caller, _| {
                    let store = store.clone();
                    async move { replay(&*store, &replay_key(caller)).await }
                }
            };
            let replay_plain = {
                let plain = plain.clone();
                move |caller, _| {
                    let plain = plain.clone();
                    async move { plain.read(&replay_key(caller)).await }
                }
            };
            let (ws, wa, rs, ra);
            if round % 2 == 0 {
                ws = drive(c, o.warmup, o.secs, by_store).await;
                wa = drive(c, o.warmup, o.secs, by_plain).await;
                rs = drive(c, o.warmup, o.secs, replay_store).await;
                ra = drive(c, o.warmup, o.secs, replay_plain).await;
            } else {
                wa = drive(c, o.warmup, o.secs, by_plain).await;
                ws = drive(c, o.warmup, o.secs, by_store).await;
                ra = drive(c, o.warmup, o.secs, replay_plain).await;
                rs = drive(c, o.warmup, o.secs, replay_store).await;
            }
            eprintln!(
                "sqlite round {} callers {c}: writes {:.0}/{:.0}, replays {:.0}/{:.0}",
                round + 1,
                ws.rate(),
                wa.rate(),
                rs.rate(),
                ra.rate()
            );
            w.store.push(ws);
            w.anchor.push(wa);
            r.store.push(rs);
            r.anchor.push(ra);
        }
        writes.push(w);
        replays.push(r);
    }
    store.close().await;
    plain.pool.close().await;
    (writes, replays)
}

fn main() {
    let o = opts();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    rt.block_on(async {
        println!(
            "store_load: {} round(s) of {} s per measurement, callers {:?}",
            o.rounds, o.secs, o.callers
        );
        if let Some((writes, replays)) = postgres(&o).await {
            let rows: Vec<Row> = writes.into_iter().chain(replays).collect();
            Row::print(&rows, "PostgreSQL", "pgbench", true);
        }
        let (writes, replays) = sqlite(&o).await;
        let rows: Vec<Row> = writes.into_iter().chain(replays).collect();
        Row::print(&rows, "SQLite", "plain loop", false);
    });
}
