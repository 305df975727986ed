//! What exactly-once costs: a keyed write through each idempotency store, as a ratio to the
//! same call without idempotency, measured in one run (BENCHMARKS.md).
//! `cargo bench -p tool-contract-examples --bench idempotency` (with `DATABASE_URL` set to
//! measure PostgreSQL too).
//!
//! * `unkeyed`: the full pipeline on a tool with no idempotency key (the baseline);
//! * `keyed_<store>`: the same arguments and handler as a keyed write, a new key every call,
//!   so every call claims, runs and records (the exactly-once path);
//! * `replay_<store>`: the same key every call, so every call after the first is a replay.

use std::sync::atomic::{AtomicU64, Ordering};

mod common;
use common::mean_ns;

use criterion::{black_box, Criterion};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_contract::store::sqlx::{
    self,
    postgres::{PgPool, PgPoolOptions},
};
use tool_contract::store::{ApprovalStore, IdempotencyStore, MemoryStore, PgStore, SqliteStore};
use tool_contract::{tool, Registry, ToolArgs, ToolContext, ToolError};

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct NoteArgs {
    /// Client-chosen id of this request.
    #[tool(idempotency_key)]
    #[schemars(length(min = 1, max = 64))]
    request_id: String,
    /// The note's text.
    #[schemars(length(min = 1, max = 500))]
    text: String,
}

#[derive(Deserialize, JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PlainNoteArgs {
    /// Client-chosen id of this request (not used as a key here).
    #[schemars(length(min = 1, max = 64))]
    request_id: String,
    /// The note's text.
    #[schemars(length(min = 1, max = 500))]
    text: String,
}

#[derive(Serialize, JsonSchema)]
struct Saved {
    /// The note's id.
    id: String,
    /// Its length.
    len: usize,
}

/// Saves a note. Use it to keep a fact for later turns.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 1000)]
async fn save_note(args: NoteArgs) -> Result<Saved, ToolError> {
    Ok(Saved {
        len: args.text.len(),
        id: args.request_id,
    })
}

/// Saves a note without idempotency: the baseline. Use it to keep a fact for later turns.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 1000)]
async fn save_note_plain(args: PlainNoteArgs) -> Result<Saved, ToolError> {
    Ok(Saved {
        len: args.text.len(),
        id: args.request_id,
    })
}

fn proposal(tool: &str, key: u64) -> String {
    format!(
        r#"{{"name": "{tool}", "arguments": {{"request_id": "req-{key}", "text": "The refund policy takes effect on 2026-07-01."}}}}"#
    )
}

fn registry(store: impl IdempotencyStore + ApprovalStore) -> Registry {
    Registry::builder()
        .tool(SaveNote)
        .tool(SaveNotePlain)
        .store(store)
        .build()
        .expect("registry")
}

/// The stores measured in this run, each named for the report: memory, a SQLite file in a
/// temp dir, and PostgreSQL when `DATABASE_URL` is set (in a schema of its own).
async fn stores() -> (Vec<(&'static str, Registry)>, Cleanup) {
    let mut stores = vec![("memory", registry(MemoryStore::new()))];
    let dir = tempfile::TempDir::new().expect("temp dir");
    let sqlite = SqliteStore::open(dir.path().join("bench.db")).await;
    stores.push(("sqlite", registry(sqlite.expect("sqlite store"))));
    let mut pg = None;
    match std::env::var("DATABASE_URL") {
        Ok(url) if !url.is_empty() => {
            let pool = PgPoolOptions::new().connect(&url).await.expect("postgres");
            let schema = format!("tc_bench_{}", std::process::id());
            let store = PgStore::from_pool_in_schema(pool.clone(), &schema).await;
            stores.push(("postgres", registry(store.expect("postgres store"))));
            pg = Some((pool, schema));
        }
        _ => eprintln!("postgres store not measured: DATABASE_URL not set"),
    }
    (stores, Cleanup { _dir: dir, pg })
}

/// What the stores leave behind: the SQLite temp dir (removed on drop) and the PostgreSQL
/// schema, dropped by [`Cleanup::run`].
struct Cleanup {
    _dir: tempfile::TempDir,
    pg: Option<(PgPool, String)>,
}

impl Cleanup {
    async fn run(self) {
        if let Some((pool, schema)) = &self.pg {
            let drop = format!("DROP SCHEMA IF EXISTS \"{schema}\" CASCADE");
            if let Err(e) = sqlx::query(&drop).execute(pool).await {
                eprintln!("could not drop bench schema {schema}: {e}");
            }
        }
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .build();
    let (stores, cleanup) = rt.block_on(stores());
    let next = AtomicU64::new(0);
    let mut g = c.benchmark_group("idempotency");
    let (_, baseline) = &stores[0];
    g.bench_function("unkeyed", |b| {
        b.iter(|| {
            let raw = proposal("save_note_plain", next.fetch_add(1, Ordering::Relaxed));
            let obs = rt.block_on(baseline.handle(&raw, &ctx));
            black_box(obs)
        })
    });
    for (name, reg) in &stores {
        g.bench_function(format!("keyed_{name}"), |b| {
            b.iter(|| {
                let raw = proposal("save_note", next.fetch_add(1, Ordering::Relaxed));
                let obs = rt.block_on(reg.handle(&raw, &ctx));
                debug_assert!(obs.ok && obs.meta.idempotency.is_none());
                black_box(obs)
            })
        });
        let same = proposal("save_note", u64::MAX);
        g.bench_function(format!("replay_{name}"), |b| {
            b.iter(|| {
                let obs = rt.block_on(reg.handle(&same, &ctx));
                black_box(obs)
            })
        });
    }
    g.finish();
    rt.block_on(cleanup.run());
    report(&stores.iter().map(|(n, _)| *n).collect::<Vec<_>>());
}

/// Prints the table BENCHMARKS.md records, from this run's estimates.
fn report(stores: &[&str]) {
    let Some(base) = mean_ns("idempotency", "unkeyed") else {
        return;
    };
    println!("\n| measurement | mean | ratio to unkeyed |");
    println!("|---|---|---|");
    println!(
        "| unkeyed (no idempotency) | {:.1} µs | 1.00× |",
        base / 1e3
    );
    for s in stores {
        for kind in ["keyed", "replay"] {
            if let Some(ns) = mean_ns("idempotency", &format!("{kind}_{s}")) {
                println!(
                    "| {kind}, {s} store | {:.1} µs | {:.2}× |",
                    ns / 1e3,
                    ns / base
                );
            }
        }
    }
}

fn main() {
    let mut c = common::criterion();
    bench(&mut c);
    c.final_summary();
}
