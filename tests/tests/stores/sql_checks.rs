//! What the SQL backends' tests share, written once and run by `sqlite.rs` and
//! `postgres.rs`: store-level checks (through [`store_checks!`]), a keyed write tool whose
//! executions are lines in a file, restart through the pipeline, and the harness of two OS
//! processes racing on one key.
//!
//! Each backend module provides `async fn fresh() -> Option<Fixture<Store>>` (an empty store,
//! or `None` after printing why the running test is skipped) and includes this file.

use std::any::Any;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_contract::extract::State;
use tool_contract::store::{ApprovalStore, Claim, ClaimRequest, IdempotencyStore};
use tool_contract::{tool, Registry, ToolArgs, ToolContext, ToolError};

pub const DAY_MS: u64 = 86_400_000;
pub const ENVELOPE: &str = r#"{"ok":true,"data":{"sent":1}}"#;

/// An empty store and what keeps its database alive (a temp dir, a schema), dropped with it.
pub struct Fixture<S> {
    pub store: Arc<S>,
    pub _keep: Box<dyn Any + Send>,
}

/// A claim at `now` with a one-second lease and a day's retention.
pub fn req<'a>(key: &'a str, args: &'a str, token: &'a str, now: u64) -> ClaimRequest<'a> {
    ClaimRequest {
        key,
        args_hash: args,
        token,
        now_ms: now,
        lease_until_ms: now + 1_000,
        expires_at_ms: now + DAY_MS,
    }
}

/// The five cases of the record lifecycle, in the order of the `store` module docs.
pub async fn five_claim_cases<S: IdempotencyStore>(s: &S) {
    // 1. no record → acquired; past its retention → acquired again, by anyone, any args.
    assert_eq!(
        s.claim(req("k", "a", "t1", 0)).await.unwrap(),
        Claim::Acquired
    );
    // 4. in progress, lease running → in progress, with the holder's lease end.
    assert_eq!(
        s.claim(req("k", "a", "t2", 500)).await.unwrap(),
        Claim::InProgress {
            lease_until_ms: 1_000
        }
    );
    // 2. other arguments → reused, whether in progress or completed.
    assert_eq!(
        s.claim(req("k", "b", "t2", 500)).await.unwrap(),
        Claim::KeyReused
    );
    // 5. lease ended, same arguments → the lease passes to the new token...
    assert_eq!(
        s.claim(req("k", "a", "t3", 1_000)).await.unwrap(),
        Claim::Acquired
    );
    // ...so the first holder can no longer complete, and the new one can.
    assert!(!s.complete("k", "t1", "{}", DAY_MS).await.unwrap());
    assert!(s
        .complete("k", "t3", ENVELOPE, 1_000 + DAY_MS)
        .await
        .unwrap());
    // 3. completed → replay of the stored envelope, even long after the lease.
    assert_eq!(
        s.claim(req("k", "a", "t4", 50_000)).await.unwrap(),
        Claim::Replay(ENVELOPE.into())
    );
    assert_eq!(
        s.claim(req("k", "b", "t4", 50_000)).await.unwrap(),
        Claim::KeyReused
    );
    // A lease that ended never lets other arguments in.
    assert_eq!(
        s.claim(req("j", "a", "u1", 0)).await.unwrap(),
        Claim::Acquired
    );
    assert_eq!(
        s.claim(req("j", "b", "u2", 5_000)).await.unwrap(),
        Claim::KeyReused
    );
    // 1 again: retention over (expires_at_ms <= now) → a new record, other args welcome.
    let later = 1_000 + DAY_MS;
    assert_eq!(
        s.claim(req("k", "b", "t5", later)).await.unwrap(),
        Claim::Acquired
    );
    assert_eq!(
        s.claim(req("k", "b", "t6", later)).await.unwrap(),
        Claim::InProgress {
            lease_until_ms: later + 1_000
        }
    );
}

/// Only the token holding a record completes or releases it, and only while in progress.
pub async fn only_the_holder_completes_or_releases<S: IdempotencyStore>(s: &S) {
    assert_eq!(
        s.claim(req("k", "a", "t1", 0)).await.unwrap(),
        Claim::Acquired
    );
    s.release("k", "other").await.unwrap();
    assert!(!s.complete("k", "other", "{}", DAY_MS).await.unwrap());
    assert!(matches!(
        s.claim(req("k", "a", "t2", 0)).await.unwrap(),
        Claim::InProgress { .. }
    ));
    // The holder releases: the key runs again at once.
    s.release("k", "t1").await.unwrap();
    assert_eq!(
        s.claim(req("k", "a", "t2", 0)).await.unwrap(),
        Claim::Acquired
    );
    assert!(s.complete("k", "t2", ENVELOPE, DAY_MS).await.unwrap());
    // Completed records are neither completed twice nor released.
    assert!(!s.complete("k", "t2", "{}", DAY_MS).await.unwrap());
    s.release("k", "t2").await.unwrap();
    assert_eq!(
        s.claim(req("k", "a", "t3", 10)).await.unwrap(),
        Claim::Replay(ENVELOPE.into())
    );
    // Nothing to complete or release on a key never claimed.
    assert!(!s.complete("none", "t1", "{}", DAY_MS).await.unwrap());
    s.release("none", "t1").await.unwrap();
}

/// `n` concurrent claims of one key with one set of arguments: exactly one acquires, the
/// rest see it in progress.
pub async fn concurrent_claims_acquire_once<S: IdempotencyStore>(s: Arc<S>, n: usize) {
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let s = Arc::clone(&s);
            tokio::spawn(async move {
                let token = format!("t{i}");
                s.claim(req("hot", "a", &token, 100)).await.unwrap()
            })
        })
        .collect();
    let mut acquired = 0;
    for task in tasks {
        match task.await.unwrap() {
            Claim::Acquired => acquired += 1,
            Claim::InProgress { lease_until_ms } => assert_eq!(lease_until_ms, 1_100),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(acquired, 1, "of {n} concurrent claims");
}

/// `n` concurrent consumers of one grant: exactly one consumes it; it stays consumed.
pub async fn concurrent_consumers_consume_once<S: ApprovalStore>(s: Arc<S>, n: usize) {
    let tasks: Vec<_> = (0..n)
        .map(|_| {
            let s = Arc::clone(&s);
            tokio::spawn(async move { s.consume_grant("g1", 600_000, 0).await.unwrap() })
        })
        .collect();
    let mut consumed = 0;
    for task in tasks {
        consumed += usize::from(task.await.unwrap());
    }
    assert_eq!(consumed, 1, "of {n} concurrent consumers");
    assert!(!s.consume_grant("g1", 600_000, 1).await.unwrap());
    assert!(s.consume_grant("g2", 600_000, 1).await.unwrap());
}

/// Purges delete exactly what expired (`expires_at_ms <= now`), and a purged key is new.
pub async fn purge_forgets_expired<S: IdempotencyStore + ApprovalStore>(s: &S) {
    assert_eq!(
        s.claim(req("old", "a", "t1", 0)).await.unwrap(),
        Claim::Acquired
    );
    assert!(s.complete("old", "t1", ENVELOPE, 1_000).await.unwrap());
    assert_eq!(
        s.claim(req("new", "a", "t2", 0)).await.unwrap(),
        Claim::Acquired
    );
    assert_eq!(s.purge_expired(999).await.unwrap(), 0);
    assert_eq!(s.purge_expired(1_000).await.unwrap(), 1);
    assert_eq!(s.purge_expired(1_000).await.unwrap(), 0);
    assert_eq!(
        s.claim(req("old", "b", "t3", 10)).await.unwrap(),
        Claim::Acquired
    );
    assert!(matches!(
        s.claim(req("new", "a", "t4", 10)).await.unwrap(),
        Claim::InProgress { .. }
    ));

    assert!(s.consume_grant("g-old", 1_000, 0).await.unwrap());
    assert!(s.consume_grant("g-new", 5_000, 0).await.unwrap());
    assert_eq!(s.purge_consumed_grants(999).await.unwrap(), 0);
    assert_eq!(s.purge_consumed_grants(1_000).await.unwrap(), 1);
    assert!(!s.consume_grant("g-new", 5_000, 1_000).await.unwrap());
}

/// Times beyond `i64::MAX` ms are refused with an error, never truncated or a panic, and
/// the refused call writes nothing.
pub async fn out_of_range_times_are_errors<S: IdempotencyStore + ApprovalStore>(s: &S) {
    let huge = ClaimRequest {
        expires_at_ms: u64::MAX,
        ..req("k", "a", "t1", 0)
    };
    let err = s.claim(huge).await.unwrap_err().to_string();
    assert!(err.contains("expires_at_ms"), "{err}");
    assert_eq!(
        s.claim(req("k", "a", "t1", 0)).await.unwrap(),
        Claim::Acquired
    );
    assert!(s.complete("k", "t1", "{}", u64::MAX).await.is_err());
    assert!(s.purge_expired(u64::MAX).await.is_err());
    assert!(s.consume_grant("g", u64::MAX, 0).await.is_err());
    assert!(s.purge_consumed_grants(u64::MAX).await.is_err());
    // Still in progress: the failed complete did not write.
    assert!(matches!(
        s.claim(req("k", "a", "t2", 0)).await.unwrap(),
        Claim::InProgress { .. }
    ));
}

/// Before a restart: one call completed, one still running.
pub async fn before_restart<S: IdempotencyStore>(s: &S) {
    assert_eq!(
        s.claim(req("done", "a", "t1", 0)).await.unwrap(),
        Claim::Acquired
    );
    assert!(s.complete("done", "t1", ENVELOPE, DAY_MS).await.unwrap());
    assert_eq!(
        s.claim(req("running", "a", "t1", 0)).await.unwrap(),
        Claim::Acquired
    );
}

/// After a restart on the same database: the completed call is replayed, not run again,
/// and the one that was running is ambiguous, so its lease still holds.
pub async fn after_restart<S: IdempotencyStore>(s: &S) {
    assert_eq!(
        s.claim(req("done", "a", "t2", 10)).await.unwrap(),
        Claim::Replay(ENVELOPE.into())
    );
    assert_eq!(
        s.claim(req("running", "a", "t2", 10)).await.unwrap(),
        Claim::InProgress {
            lease_until_ms: 1_000
        }
    );
}

/// Every call on a store whose database is gone returns an error, promptly.
pub async fn every_call_fails_when_down<S: IdempotencyStore + ApprovalStore>(s: &S) {
    let started = Instant::now();
    assert!(s.claim(req("k", "a", "t", 0)).await.is_err());
    assert!(s.complete("k", "t", "{}", DAY_MS).await.is_err());
    assert!(s.release("k", "t").await.is_err());
    assert!(s.purge_expired(0).await.is_err());
    assert!(s.consume_grant("g", DAY_MS, 0).await.is_err());
    assert!(s.purge_consumed_grants(0).await.is_err());
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "failing took {:?}",
        started.elapsed()
    );
}

/// Generates the store-level tests for a backend module that has `fresh` in scope.
macro_rules! store_checks {
    () => {
        #[tokio::test]
        async fn claim_decides_the_five_cases() {
            let Some(f) = fresh().await else {
                return;
            };
            checks::five_claim_cases(&*f.store).await;
        }

        #[tokio::test]
        async fn only_the_holder_completes_or_releases() {
            let Some(f) = fresh().await else {
                return;
            };
            checks::only_the_holder_completes_or_releases(&*f.store).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn thousand_concurrent_claims_acquire_once() {
            let Some(f) = fresh().await else {
                return;
            };
            checks::concurrent_claims_acquire_once(f.store.clone(), 1_000).await;
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn hundred_concurrent_consumers_consume_a_grant_once() {
            let Some(f) = fresh().await else {
                return;
            };
            checks::concurrent_consumers_consume_once(f.store.clone(), 100).await;
        }

        #[tokio::test]
        async fn purge_forgets_expired_records_and_grants() {
            let Some(f) = fresh().await else {
                return;
            };
            checks::purge_forgets_expired(&*f.store).await;
        }

        #[tokio::test]
        async fn out_of_range_times_are_errors() {
            let Some(f) = fresh().await else {
                return;
            };
            checks::out_of_range_times_are_errors(&*f.store).await;
        }

        #[tokio::test]
        async fn closed_store_fails_every_call() {
            let Some(f) = fresh().await else {
                return;
            };
            f.store.close().await;
            checks::every_call_fails_when_down(&*f.store).await;
        }
    };
}

// ---------------------------------------------------------------------------------------
// Two OS processes racing on one key.

/// Environment of a racing child process.
pub const RACE_DIR: &str = "TC_RACE_DIR";
const RACE_ID: &str = "TC_RACE_ID";
/// Concurrent claimers in each child.
pub const RACERS_PER_PROCESS: usize = 20;
const PROCESS_TIMEOUT: Duration = Duration::from_secs(90);

/// The name libtest gives test `name` of the module whose `module_path!()` is `module`:
/// the path without the crate, so it works whichever binary includes the module.
pub fn test_name(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_, inner)) => format!("{inner}::{name}"),
        None => name.to_owned(),
    }
}

/// A child process killed if the parent gives up (timeout, panic) before it exits.
struct Racer(Child);

impl Drop for Racer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `child_test` of this binary in two processes at once, sharing `dir` (and `env`),
/// starts them together, and returns what each printed. Panics, after killing both, when
/// either fails or outlives the timeout.
pub fn race_two_processes(child_test: &str, dir: &Path, env: &[(&str, &str)]) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    let deadline = Instant::now() + PROCESS_TIMEOUT;
    let mut racers: Vec<(Racer, PathBuf, PathBuf)> = (0..2)
        .map(|id| {
            let out = dir.join(format!("racer-{id}.out"));
            let err = dir.join(format!("racer-{id}.err"));
            let child = Command::new(&exe)
                .args(["--exact", child_test, "--include-ignored", "--nocapture"])
                .args(["--test-threads", "1"])
                .env(RACE_DIR, dir)
                .env(RACE_ID, id.to_string())
                .envs(env.iter().copied())
                .stdin(Stdio::null())
                .stdout(fs::File::create(&out).unwrap())
                .stderr(fs::File::create(&err).unwrap())
                .spawn()
                .unwrap();
            (Racer(child), out, err)
        })
        .collect();
    // Both get ready (store opened, tasks spawned) before either claims.
    while !(0..2).all(|id| dir.join(format!("ready-{id}")).exists()) {
        for (racer, _, err) in &mut racers {
            if let Some(status) = racer.0.try_wait().unwrap() {
                panic!(
                    "racer exited before the start ({status}):\n{}",
                    fs::read_to_string(err).unwrap_or_default()
                );
            }
        }
        assert!(
            Instant::now() < deadline,
            "racers did not get ready in time"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    fs::write(dir.join("go"), b"").unwrap();
    let mut outputs = Vec::new();
    for (mut racer, out, err) in racers {
        let status = loop {
            if let Some(status) = racer.0.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "racer did not finish in time");
            std::thread::sleep(Duration::from_millis(10));
        };
        let stdout = fs::read_to_string(&out).unwrap_or_default();
        assert!(
            status.success(),
            "racer failed ({status}):\n{stdout}\n{}",
            fs::read_to_string(&err).unwrap_or_default()
        );
        outputs.push(stdout);
    }
    outputs
}

// A keyed write whose side effect is a line in a file, so "how many times did it run" can
// be read from outside every process and every restart.

/// Where `append_entry` writes.
#[derive(Clone)]
pub struct Journal(pub PathBuf);

impl Journal {
    /// The lines appended so far.
    pub fn lines(&self) -> Vec<String> {
        fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct AppendEntryArgs {
    /// Client-chosen request id; repeating it never appends twice.
    #[tool(idempotency_key)]
    #[schemars(length(min = 1, max = 64))]
    pub request_id: String,
    /// The entry to append.
    #[schemars(length(min = 1, max = 200))]
    pub entry: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Appended {
    /// The process that appended the entry.
    pub pid: u32,
}

/// Appends an entry to the shared journal. Use it only when asked to record something.
#[tool(
    version = "1.0.0",
    effect = "reversible_write",
    timeout_ms = 10000,
    capabilities("journal:write")
)]
pub async fn append_entry(
    args: AppendEntryArgs,
    journal: State<Journal>,
) -> Result<Appended, ToolError> {
    let Journal(path) = &*journal;
    let line = format!(
        "{} {} {}\n",
        std::process::id(),
        args.request_id,
        args.entry
    );
    let mut file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| ToolError::internal("JOURNAL", e.to_string()))?;
    std::io::Write::write_all(&mut file, line.as_bytes())
        .map_err(|e| ToolError::internal("JOURNAL", e.to_string()))?;
    // Long enough for every other caller, in this process and the other, to find the key
    // in progress.
    tokio::time::sleep(Duration::from_millis(100)).await;
    Ok(Appended {
        pid: std::process::id(),
    })
}

/// A registry with `append_entry` whose records live in `store`.
pub fn journal_registry<S: IdempotencyStore + ApprovalStore>(store: S) -> Registry {
    let store = Arc::new(store);
    Registry::builder()
        .tool(AppendEntry)
        .idempotency_store(Arc::clone(&store))
        .approval_store(store)
        .build()
        .unwrap()
}

pub fn journal_ctx(journal: &Journal) -> ToolContext {
    ToolContext::builder()
        .tenant("acme")
        .principal("user:kim")
        .capability("journal:write")
        .state(journal.clone())
        .build()
}

pub const APPEND: &str = r#"{"name": "append_entry", "arguments":
    {"request_id": "req-1", "entry": "refund approved"}}"#;

/// Runs [`APPEND`] until it has an answer other than `IDEMPOTENCY_IN_PROGRESS`; `true` when
/// this call executed it, `false` when it got the replay.
pub async fn append_until_answered(registry: &Registry, ctx: &ToolContext) -> bool {
    let give_up = Instant::now() + Duration::from_secs(60);
    loop {
        let obs = registry.handle(APPEND, ctx).await;
        match (obs.ok, obs.meta.idempotency.as_deref(), obs.code()) {
            (true, None, _) => return true,
            (true, Some("replayed"), _) => return false,
            (false, _, Some("IDEMPOTENCY_IN_PROGRESS")) => {
                assert!(Instant::now() < give_up, "never answered");
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            _ => panic!("unexpected observation: {}", obs.to_value()),
        }
    }
}

/// The child's side: in the shared dir, says it is ready, waits for the start, then races
/// [`RACERS_PER_PROCESS`] callers of [`APPEND`] through a registry on `store`. Prints
/// `RACE acquired=A replayed=R` (executed and replayed calls).
pub async fn race_child<S: IdempotencyStore + ApprovalStore>(store: S, dir: &Path) {
    let id = std::env::var(RACE_ID).unwrap();
    let registry = Arc::new(journal_registry(store));
    let ctx = Arc::new(journal_ctx(&Journal(dir.join("executions"))));
    let tasks: Vec<_> = (0..RACERS_PER_PROCESS)
        .map(|_| {
            let (registry, ctx, go) = (Arc::clone(&registry), Arc::clone(&ctx), dir.join("go"));
            tokio::spawn(async move {
                while !go.exists() {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                append_until_answered(&registry, &ctx).await
            })
        })
        .collect();
    fs::write(dir.join(format!("ready-{id}")), b"").unwrap();
    let mut acquired = 0;
    for task in tasks {
        acquired += usize::from(task.await.unwrap());
    }
    // On a line of its own: libtest has just printed the test's name without a newline.
    println!(
        "\nRACE acquired={acquired} replayed={}",
        RACERS_PER_PROCESS - acquired
    );
}

/// Restart through the pipeline: a call executed on `before`'s store is replayed, not run
/// again, by a new registry on `reopen`'s, after everything of the first was dropped.
pub async fn pipeline_restart<S, F>(before: S, reopen: F)
where
    S: IdempotencyStore + ApprovalStore,
    F: std::future::Future<Output = S>,
{
    let dir = tempfile::TempDir::new().unwrap();
    let journal = Journal(dir.path().join("journal"));
    let ctx = journal_ctx(&journal);
    let registry = journal_registry(before);
    assert!(append_until_answered(&registry, &ctx).await);
    drop(registry);

    let registry = journal_registry(reopen.await);
    let obs = registry.handle(APPEND, &ctx).await;
    assert!(obs.ok, "{}", obs.to_value());
    assert_eq!(obs.meta.idempotency.as_deref(), Some("replayed"));
    assert_eq!(journal.lines().len(), 1, "{:?}", journal.lines());
}

/// Checks the two children's reports and the side effects: exactly one execution.
pub fn assert_exactly_one_execution(outputs: &[String], dir: &Path) {
    let mut acquired = 0;
    let mut replayed = 0;
    for out in outputs {
        let line = out
            .lines()
            .find_map(|l| l.strip_prefix("RACE "))
            .unwrap_or_else(|| panic!("no RACE line in:\n{out}"));
        for part in line.split(' ') {
            match part.split_once('=') {
                Some(("acquired", n)) => acquired += n.parse::<usize>().unwrap(),
                Some(("replayed", n)) => replayed += n.parse::<usize>().unwrap(),
                _ => panic!("bad RACE line {line:?}"),
            }
        }
    }
    assert_eq!(acquired, 1, "claims acquired across both processes");
    assert_eq!(replayed, 2 * RACERS_PER_PROCESS - 1);
    let executions = Journal(dir.join("executions")).lines();
    assert_eq!(executions.len(), 1, "executions: {executions:?}");
}
