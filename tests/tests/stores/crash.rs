//! Crashes at every step of a keyed write: a child process runs one call and is killed with
//! `SIGKILL` at a failpoint (the runtime crate's `failpoints` feature); a fresh process then
//! retries the same call on the same store. Per failpoint and store the effect runs at most
//! once, except where the docs say a second run with the same key follows a crash between the
//! effect and its record; the matrix is printed and kept in the `idempotency` module's docs.

use std::fs;
use std::future::Future;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_contract::extract::State;
use tool_contract::store::{ApprovalStore, IdempotencyStore};
use tool_contract::{
    tool, ApprovalGrant, ApprovalKey, Prepared, Registry, ToolArgs, ToolContext, ToolError,
};

/// Where the child's journal, grant and output go.
pub const CRASH_DIR: &str = "TC_CRASH_DIR";
const CRASH_POINT: &str = "TC_CRASH_POINT";
const CRASH_REQUEST: &str = "TC_CRASH_REQUEST";

/// A line per run of the tool, in a file every process can read.
#[derive(Clone)]
pub struct CrashJournal(std::path::PathBuf);

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct RecordArgs {
    /// Client-chosen request id; repeating it never records twice.
    #[tool(idempotency_key)]
    #[schemars(length(min = 1, max = 64))]
    pub request_id: String,
}

#[derive(Serialize, JsonSchema)]
pub struct Recorded {
    /// The process that ran the effect.
    pub pid: u32,
}

fn append(journal: &CrashJournal, request_id: &str) -> Result<Recorded, ToolError> {
    let mut file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&journal.0)
        .map_err(|e| ToolError::internal("JOURNAL", e.to_string()))?;
    let line = format!("{} {request_id}\n", std::process::id());
    std::io::Write::write_all(&mut file, line.as_bytes())
        .map_err(|e| ToolError::internal("JOURNAL", e.to_string()))?;
    Ok(Recorded {
        pid: std::process::id(),
    })
}

/// Records a request in the journal. Use it only when asked to record something.
#[tool(
    version = "1.0.0",
    effect = "reversible_write",
    timeout_ms = 200,
    capabilities("journal:write")
)]
pub async fn record_request(
    args: RecordArgs,
    journal: State<CrashJournal>,
) -> Result<Recorded, ToolError> {
    append(&journal, &args.request_id)
}

/// Records a request in the journal after a human approved it. Use it only when asked.
#[tool(
    version = "1.0.0",
    effect = "reversible_write",
    approval,
    timeout_ms = 200,
    capabilities("journal:write")
)]
pub async fn record_approved(
    args: RecordArgs,
    journal: State<CrashJournal>,
) -> Result<Recorded, ToolError> {
    append(&journal, &args.request_id)
}

/// One row of the matrix: where the child dies, and what the retry must see.
struct Point {
    name: &'static str,
    /// Through the approval flow (`record_approved`, the child's grant reused).
    approved: bool,
    /// Runs of the effect once the child is dead.
    effect_after_crash: usize,
    /// What the retry ends with, after any `IDEMPOTENCY_IN_PROGRESS`.
    retry: &'static str,
    /// Runs of the effect after the retry.
    effect_after_retry: usize,
}

const POINTS: &[Point] = &[
    Point {
        name: "tc::claimed",
        approved: false,
        effect_after_crash: 0,
        retry: "ran",
        effect_after_retry: 1,
    },
    Point {
        name: "tc::before_effect",
        approved: false,
        effect_after_crash: 0,
        retry: "ran",
        effect_after_retry: 1,
    },
    Point {
        name: "tc::after_effect",
        approved: false,
        effect_after_crash: 1,
        retry: "ran",
        effect_after_retry: 2,
    },
    Point {
        name: "tc::recorded",
        approved: false,
        effect_after_crash: 1,
        retry: "replayed",
        effect_after_retry: 1,
    },
    Point {
        name: "tc::grant_consumed",
        approved: true,
        effect_after_crash: 0,
        retry: "APPROVAL_GRANT_CONSUMED",
        effect_after_retry: 0,
    },
];

/// The same key for every process, so grants made by one verify in another.
fn approval_key() -> ApprovalKey {
    ApprovalKey::new(b"crash-test approval key, 32 bytes or more").unwrap()
}

fn registry<S: IdempotencyStore + ApprovalStore>(store: S) -> Registry {
    let store = std::sync::Arc::new(store);
    Registry::builder()
        .tool(RecordRequest)
        .tool(RecordApproved)
        .idempotency_store(std::sync::Arc::clone(&store))
        .approval_store(store)
        .approval_key(approval_key())
        // A short lease, so the retry's wait for it is short.
        .lease_grace(Duration::from_millis(100))
        .build()
        .unwrap()
}

fn ctx(dir: &Path) -> ToolContext {
    ToolContext::builder()
        .tenant("acme")
        .principal("user:kim")
        .capability("journal:write")
        .state(CrashJournal(dir.join("journal")))
        .build()
}

fn proposal(approved: bool, request_id: &str) -> String {
    let tool = if approved {
        "record_approved"
    } else {
        "record_request"
    };
    format!(
        r#"{{"id": "call_crash", "name": "{tool}", "arguments": {{"request_id": "{request_id}"}}}}"#
    )
}

fn effects(dir: &Path) -> usize {
    fs::read_to_string(dir.join("journal"))
        .unwrap_or_default()
        .lines()
        .count()
}

/// The child's side: arms the failpoint named in the environment to kill this process, then
/// runs the call. Returns only if the failpoint never fired.
pub async fn child<S: IdempotencyStore + ApprovalStore>(store: S) {
    let vars = [CRASH_DIR, CRASH_POINT, CRASH_REQUEST].map(std::env::var);
    let [Ok(dir), Ok(point), Ok(request_id)] = vars else {
        return;
    };
    let dir = Path::new(&dir);
    let approved = point == "tc::grant_consumed";
    fail::cfg_callback(point.as_str(), || {
        // SIGKILL: no destructor, no flush, no unwinding, as a crash or an OOM kill.
        let _ = Command::new("sh")
            .args(["-c", &format!("kill -9 {}", std::process::id())])
            .status();
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    })
    .unwrap();
    let registry = registry(store);
    let ctx = ctx(dir);
    let raw = proposal(approved, &request_id);
    if approved {
        let Ok(Prepared::NeedsApproval(request)) = registry.prepare_raw(&raw, &ctx) else {
            panic!("no approval asked");
        };
        let grant = registry.grant(&request, "ops:lee");
        fs::write(
            dir.join("grant.json"),
            serde_json::to_string(&grant).unwrap(),
        )
        .unwrap();
        registry.execute_approved(request, &grant).await;
    } else {
        registry.handle(&raw, &ctx).await;
    }
    println!("\nCRASH the failpoint {point} never fired");
}

/// Retries the call until it is no longer `IDEMPOTENCY_IN_PROGRESS`: the outcome (`ran`,
/// `replayed` or an error code) and whether it was in progress first.
async fn retry(
    registry: &Registry,
    dir: &Path,
    approved: bool,
    request_id: &str,
) -> (String, bool) {
    let raw = proposal(approved, request_id);
    let ctx = ctx(dir);
    let give_up = Instant::now() + Duration::from_secs(30);
    let mut in_progress = false;
    loop {
        let obs = if approved {
            let grant: ApprovalGrant =
                serde_json::from_str(&fs::read_to_string(dir.join("grant.json")).unwrap()).unwrap();
            match registry.prepare_raw(&raw, &ctx) {
                Ok(Prepared::NeedsApproval(request)) => {
                    registry.execute_approved(request, &grant).await
                }
                other => panic!("no approval asked: {:?}", other.map(|_| ())),
            }
        } else {
            registry.handle(&raw, &ctx).await
        };
        match (obs.ok, obs.meta.idempotency.as_deref(), obs.code()) {
            (true, Some("replayed"), _) => return ("replayed".into(), in_progress),
            (true, _, _) => return ("ran".into(), in_progress),
            (false, _, Some("IDEMPOTENCY_IN_PROGRESS")) => {
                in_progress = true;
                assert!(Instant::now() < give_up, "still in progress after 30 s");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            (false, _, code) => return (code.unwrap_or("?").to_owned(), in_progress),
        }
    }
}

/// Runs the whole matrix for one store: for each failpoint a child (`child_test` of this
/// binary, with `env` naming the store) is killed there, and a retry through a store from
/// `open` must see what the row says. Prints one line per row.
pub fn matrix<S, F, Fut>(store_name: &str, child_test: &str, env: &[(&str, &str)], open: F)
where
    S: IdempotencyStore + ApprovalStore,
    F: Fn() -> Fut,
    Fut: Future<Output = S>,
{
    let exe = std::env::current_exe().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (i, point) in POINTS.iter().enumerate() {
        let dir = tempfile::TempDir::new().unwrap();
        let nanos = std::time::UNIX_EPOCH.elapsed().unwrap().as_nanos();
        let request_id = format!("crash-{i}-{nanos}");
        let out = dir.path().join("child.out");
        let mut child = Command::new(&exe)
            .args(["--exact", child_test, "--include-ignored", "--nocapture"])
            .args(["--test-threads", "1"])
            .env(CRASH_DIR, dir.path())
            .env(CRASH_POINT, point.name)
            .env(CRASH_REQUEST, &request_id)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(fs::File::create(&out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{store_name} {}: the child did not die", point.name);
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(
            status.signal(),
            Some(9),
            "{store_name} {}: the child was not killed at the failpoint ({status}):\n{}",
            point.name,
            fs::read_to_string(&out).unwrap_or_default()
        );
        let after_crash = effects(dir.path());
        let registry = registry(rt.block_on(open()));
        let (outcome, in_progress) =
            rt.block_on(retry(&registry, dir.path(), point.approved, &request_id));
        let after_retry = effects(dir.path());
        println!(
            "crash matrix {store_name} {}: effect ran {after_crash}x before the retry; the retry got {}{outcome}; effect ran {after_retry}x in all",
            point.name,
            if in_progress {
                "IDEMPOTENCY_IN_PROGRESS, then "
            } else {
                ""
            },
        );
        let row = format!("{store_name} {}", point.name);
        // Every run carried the same key, so a downstream that takes it drops a repeat.
        let journal = fs::read_to_string(dir.path().join("journal")).unwrap_or_default();
        assert!(
            journal.lines().all(|l| l.ends_with(&request_id)),
            "{row}: {journal}"
        );
        assert_eq!(after_crash, point.effect_after_crash, "{row}");
        assert_eq!(outcome, point.retry, "{row}");
        assert_eq!(after_retry, point.effect_after_retry, "{row}");
        // A claim held by the dead process is waited out, never stolen early.
        assert_eq!(
            in_progress,
            point.name != "tc::recorded",
            "{row}: in progress first"
        );
    }
}
