//! A repeatable instruction-count probe for the pipeline bench (BENCHMARKS.md).
//!
//! Wall-clock benches are noisy on a shared machine; instruction counts under callgrind are
//! not. This runs `N` iterations of one workload, the same ones `benches/pipeline.rs` times:
//!
//! ```sh
//! cargo build --release -p tool-contract-examples --bin perf_probe
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.floor \
//!     --toggle-collect='perf_probe::run_*::{{closure}}' target/release/perf_probe floor 2000
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.full \
//!     --toggle-collect='perf_probe::run_*::{{closure}}' target/release/perf_probe full 2000
//! ```
//!
//! Flow control: `session` is `full` with a session of 50 observations in the context;
//! `session_index N` records N results and indexes them at once (count it with
//! `--toggle-collect='tool_contract::flow::session::Session::observed'`, divide by N);
//! `session_memory N` prints the heap a session holds per observation, recorded and indexed.
//!
//! With `--toggle-collect`, set-up (registry build, schema compilation, runtime) is not
//! counted, so the total divided by `N` is the per-call cost. The calls run in one `block_on`,
//! as the bench's do. Adding `--cache-sim=yes --branch-sim=yes` simulates this machine's
//! 32 KiB L1 caches: the misses per call show whether a workload's memory fits in them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Counts heap allocations, so every run can print how many a call makes: on this machine an
/// allocation costs more time than its instruction count shows. (The count is an atomic add
/// per allocation: time `cargo bench`, not this probe.)
struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
/// Bytes allocated and not yet freed: what a data structure holds.
static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(layout.size(), Relaxed);
        LIVE.fetch_add(layout.size(), Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        BYTES.fetch_add(new_size, Relaxed);
        LIVE.fetch_add(new_size, Relaxed);
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

use tool_contract::extract::{State, Tenant};
use tool_contract::{Registry, ToolContext};
use tool_contract_examples::{
    search_documents, DocumentStore, SearchDocuments, SearchDocumentsArgs,
};

// The same inputs as `benches/pipeline.rs`.
const ARGS: &str =
    r#"{"query": "refund policy", "source_types": ["policy", "manual"], "top_k": 5}"#;
const PROPOSAL: &str = r#"{"id": "call_bench", "name": "search_documents", "arguments": {"query": "refund policy", "source_types": ["policy", "manual"], "top_k": 5}}"#;

/// The floor: typed parse, direct handler call, serialized output.
#[inline(never)]
fn run_floor(rt: &tokio::runtime::Runtime, store: &DocumentStore, n: usize) -> usize {
    rt.block_on(async {
        let mut len = 0;
        for _ in 0..n {
            let args: SearchDocumentsArgs = serde_json::from_str(black_box(ARGS)).unwrap();
            let out = search_documents(args, Tenant::new("acme"), State(store.clone()))
                .await
                .unwrap();
            len += black_box(serde_json::to_string(&out).unwrap()).len();
        }
        len
    })
}

/// The full pipeline: `Registry::handle` and the serialized observation.
#[inline(never)]
fn run_full(rt: &tokio::runtime::Runtime, reg: &Registry, ctx: &ToolContext, n: usize) -> usize {
    rt.block_on(async {
        let mut len = 0;
        for _ in 0..n {
            let obs = reg.handle(black_box(PROPOSAL), ctx).await;
            assert!(obs.ok);
            len += black_box(obs.to_json()).len();
        }
        len
    })
}

/// Indexes every observation `session` holds (what the first call that needs a trace pays).
fn run_index(session: &tool_contract::flow::Session) -> usize {
    let index = || black_box(session.observed()).0;
    index()
}

/// A context whose session holds 50 observations of the workload's own output and a user
/// message, as a conversation some turns in would.
fn session_ctx(rt: &tokio::runtime::Runtime, reg: &Registry, store: &DocumentStore) -> ToolContext {
    let session = tool_contract::flow::Session::with_limits(
        tool_contract::flow::SessionLimits::default().max_observations(50),
    );
    session.add_user_message("What does the refund policy say about returns after 30 days?");
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capability("documents:search")
        .state(store.clone())
        .session(session)
        .build();
    rt.block_on(async {
        for _ in 0..50 {
            assert!(reg.handle(PROPOSAL, &ctx).await.ok);
        }
    });
    ctx
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "full".into());
    let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = DocumentStore::seeded();
    let ctx = ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capability("documents:search")
        .state(store.clone())
        .build();
    let reg = Registry::builder()
        .tool(SearchDocuments)
        .build()
        .expect("registry");

    let before = (ALLOCS.load(Relaxed), BYTES.load(Relaxed));
    let len = match which.as_str() {
        "floor" => run_floor(&rt, &store, n),
        "full" => run_full(&rt, &reg, &ctx, n),
        // The same call with flow control: a session already holding 50 observations (each
        // call records one more and the oldest is dropped, so it stays at 50).
        "session" => run_full(&rt, &reg, &session_ctx(&rt, &reg, &store), n),
        // What a session holds per observation: `n` results of the workload recorded into
        // an unbounded-enough session, live heap bytes before and after, divided by `n`.
        "session_memory" => {
            let obs = rt.block_on(reg.handle(PROPOSAL, &ctx));
            let output = obs.to_value()["data"].clone();
            let session = tool_contract::flow::Session::with_limits(
                tool_contract::flow::SessionLimits::default()
                    .max_observations(n)
                    .max_observed_bytes(usize::MAX),
            );
            let live = LIVE.load(Relaxed);
            for i in 0..n {
                session.record_external("search_documents", &format!("call_{i}"), &output, false);
            }
            // Recorded, each observation is held as its JSON text until a check needs the
            // index; `observed()` indexes them all.
            let recorded = LIVE.load(Relaxed) - live;
            let (count, bytes) = session.observed();
            let indexed = LIVE.load(Relaxed) - live;
            println!(
                "{count} observations: recorded {recorded} live heap bytes ({} per observation); indexed {indexed} ({} per observation, {} bytes of observed strings each)",
                recorded / count.max(1),
                indexed / count.max(1),
                bytes / count.max(1)
            );
            return;
        }
        // What indexing costs: `n` results of the workload recorded (not counted), then
        // indexed at once, as the first check that needs a trace does.
        "session_index" => {
            let obs = rt.block_on(reg.handle(PROPOSAL, &ctx));
            let output = obs.to_value()["data"].clone();
            let session = tool_contract::flow::Session::with_limits(
                tool_contract::flow::SessionLimits::default()
                    .max_observations(n)
                    .max_observed_bytes(usize::MAX),
            );
            for i in 0..n {
                session.record_external("search_documents", &format!("call_{i}"), &output, false);
            }
            println!("indexed {} observations", run_index(&session));
            return;
        }
        // The observation the workload returns, as the model would see it.
        "show" => {
            let obs = rt.block_on(reg.handle(PROPOSAL, &ctx));
            println!("{}", obs.to_json());
            return;
        }
        // Futures are moved (memcpy) when polled through `block_on` and when nested: their
        // size is part of the per-call cost.
        "sizes" => {
            println!(
                "Registry::handle future: {} bytes",
                std::mem::size_of_val(&reg.handle(PROPOSAL, &ctx))
            );
            println!(
                "PreparedCall: {} bytes, Prepared: {} bytes, Observation: {} bytes",
                std::mem::size_of::<tool_contract::PreparedCall>(),
                std::mem::size_of::<tool_contract::Prepared>(),
                std::mem::size_of::<tool_contract::envelope::Observation>()
            );
            return;
        }
        other => {
            eprintln!(
                "usage: perf_probe floor|full|session|session_memory|session_index|show|sizes [N]; unknown workload {other:?}"
            );
            std::process::exit(2);
        }
    };
    let allocs = ALLOCS.load(Relaxed) - before.0;
    let bytes = BYTES.load(Relaxed) - before.1;
    println!(
        "{which}: {n} calls ({len} output bytes); per call {:.1} allocations (reallocs included) of {:.0} bytes",
        allocs as f64 / n as f64,
        bytes as f64 / n as f64
    );
}
