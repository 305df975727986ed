//! The pipeline's cost on the example `search_documents`, as ratios against a floor measured in
//! the same run (BENCHMARKS.md). `cargo bench -p tool-contract-examples --bench pipeline`.
//!
//! * floor: serde parse into the args struct + direct handler call + serialize the output;
//! * full pipeline: parse with limits, lookup, schema + semantic validation, policy, timeout,
//!   output-schema validation, envelope, serialized;
//! * the same with flow control: a session of 50 observations in the context, each call's
//!   output recorded into it;
//! * naive: the floor plus compiling the input schema on every call, as hosts often do, and
//!   the same with the output schema compiled and checked too (the checks the pipeline makes);
//! * throughput: 6400 full-pipeline calls from 1 task, and from 64 tasks (each with its own
//!   context, as each request has), on a 2-worker runtime; the same split for the floor and for
//!   register arithmetic, as controls of what the machine itself gives.

mod common;
use common::mean_ns;

use criterion::{black_box, Criterion};
use tool_contract::extract::{State, Tenant};
use tool_contract::{Registry, Tool, ToolContext};
use tool_contract_examples::{
    search_documents, DocumentStore, SearchDocuments, SearchDocumentsArgs,
};

const ARGS: &str =
    r#"{"query": "refund policy", "source_types": ["policy", "manual"], "top_k": 5}"#;
const PROPOSAL: &str = r#"{"id": "call_bench", "name": "search_documents", "arguments": {"query": "refund policy", "source_types": ["policy", "manual"], "top_k": 5}}"#;
const BATCH: usize = 6400;

fn ctx(store: &DocumentStore) -> ToolContext {
    ToolContext::builder()
        .principal("user:kim")
        .tenant("acme")
        .capability("documents:search")
        .state(store.clone())
        .build()
}

/// One floor call: typed parse, direct handler call, serialized output.
async fn floor_call(store: &DocumentStore) -> String {
    let args: SearchDocumentsArgs = serde_json::from_str(black_box(ARGS)).unwrap();
    let out = search_documents(args, Tenant::new("acme"), State(store.clone()))
        .await
        .unwrap();
    black_box(serde_json::to_string(&out).unwrap())
}

/// One full-pipeline call and its serialized observation.
async fn full_call(reg: &Registry, ctx: &ToolContext) -> String {
    let obs = reg.handle(black_box(PROPOSAL), ctx).await;
    debug_assert!(obs.ok);
    black_box(obs.to_json())
}

/// What a batch runs.
#[derive(Clone, Copy)]
enum Work {
    /// The full pipeline.
    Full,
    /// The floor alone: how far this machine scales serde, the handler and the allocator.
    Floor,
    /// Register arithmetic only, no memory traffic and no allocation: how much of its two
    /// cores the host gives at that moment, whatever the code.
    Spin,
}

/// One unit of `Work::Spin`: about as long as a floor call (1.1 ns a step here), and nothing
/// but a dependent chain of multiply-adds. `black_box` on every step, because without it LLVM
/// folds the chain and a unit takes 33 ns, which measures task spawning instead.
fn spin() -> u64 {
    let mut x = black_box(1u64);
    for _ in 0..black_box(1_500u32) {
        x = black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
    }
    x
}

/// `BATCH` calls split over `tasks` spawned tasks, awaited. Each task has its own context, as
/// each request in a server has, so no two tasks share its reference count.
async fn batch(tasks: usize, work: Work, reg: &Registry, store: &DocumentStore) {
    let per_task = BATCH / tasks;
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let reg = reg.clone();
            let store = store.clone();
            let ctx = ctx(&store);
            tokio::spawn(async move {
                for _ in 0..per_task {
                    match work {
                        Work::Full => drop(full_call(&reg, &ctx).await),
                        Work::Floor => drop(floor_call(&store).await),
                        Work::Spin => drop(spin()),
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.await.unwrap();
    }
}

/// A context whose session holds 50 observations of the workload's own output and a user
/// message, as a conversation some turns in would: each call is traced against it and records
/// one more observation (the oldest is dropped, so it stays at 50).
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

fn registry() -> Registry {
    Registry::builder()
        .tool(SearchDocuments)
        .build()
        .expect("registry")
}

fn latency(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = DocumentStore::seeded();
    let ctx = ctx(&store);
    let reg = registry();
    let schema = SearchDocuments::contract().input_schema.clone();
    let output_schema = SearchDocuments::contract().output_schema.clone();

    let mut g = c.benchmark_group("pipeline");
    g.bench_function("floor", |b| b.to_async(&rt).iter(|| floor_call(&store)));
    g.bench_function("full_pipeline", |b| {
        b.to_async(&rt).iter(|| full_call(&reg, &ctx))
    });
    let traced = session_ctx(&rt, &reg, &store);
    g.bench_function("full_pipeline_session50", |b| {
        b.to_async(&rt).iter(|| full_call(&reg, &traced))
    });
    g.bench_function("naive_compile_per_call", |b| {
        b.to_async(&rt).iter(|| naive(&schema, None, &store))
    });
    g.bench_function("naive_compile_both_per_call", |b| {
        b.to_async(&rt)
            .iter(|| naive(&schema, Some(&output_schema), &store))
    });
    g.finish();
}

/// The naive host: compile the input schema (and, if given, the output schema) on every call.
async fn naive(
    input: &serde_json::Value,
    output: Option<&serde_json::Value>,
    store: &DocumentStore,
) -> String {
    let value: serde_json::Value = serde_json::from_str(black_box(ARGS)).unwrap();
    assert!(jsonschema::validator_for(input).unwrap().is_valid(&value));
    let args: SearchDocumentsArgs = serde_json::from_value(value).unwrap();
    let out = search_documents(args, Tenant::new("acme"), State(store.clone()))
        .await
        .unwrap();
    let Some(schema) = output else {
        return black_box(serde_json::to_string(&out).unwrap());
    };
    let out = serde_json::to_value(&out).unwrap();
    assert!(jsonschema::validator_for(schema).unwrap().is_valid(&out));
    black_box(serde_json::to_string(&out).unwrap())
}

fn throughput(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let store = DocumentStore::seeded();
    let reg = registry();

    let mut g = c.benchmark_group("throughput");
    g.throughput(criterion::Throughput::Elements(BATCH as u64));
    // The same split for the floor alone and for pure arithmetic: how far this machine's two
    // cores scale at all.
    for (prefix, work) in [
        ("", Work::Full),
        ("floor_", Work::Floor),
        ("spin_", Work::Spin),
    ] {
        for tasks in [1usize, 64] {
            g.bench_function(format!("{prefix}{tasks}_tasks_x{BATCH}"), |b| {
                b.to_async(&rt).iter(|| batch(tasks, work, &reg, &store))
            });
        }
    }
    g.finish();
}

/// Prints the ratios BENCHMARKS.md records, from this run's estimates.
fn report() {
    let (Some(floor), Some(full), Some(naive)) = (
        mean_ns("pipeline", "floor"),
        mean_ns("pipeline", "full_pipeline"),
        mean_ns("pipeline", "naive_compile_per_call"),
    ) else {
        return;
    };
    let naive_both = mean_ns("pipeline", "naive_compile_both_per_call");
    let one = mean_ns("throughput", &format!("1_tasks_x{BATCH}"));
    let many = mean_ns("throughput", &format!("64_tasks_x{BATCH}"));
    println!("\n| measurement | mean | ratio | target |");
    println!("|---|---|---|---|");
    println!(
        "| floor (parse + call + serialize) | {:.2} µs | 1.00× | |",
        floor / 1e3
    );
    println!(
        "| full pipeline | {:.2} µs | {:.2}× floor | ≤ 2.0× |",
        full / 1e3,
        full / floor
    );
    println!(
        "| naive (compile schema per call) | {:.2} µs | {:.1}× full pipeline | ≥ 10× |",
        naive / 1e3,
        naive / full
    );
    if let Some(session) = mean_ns("pipeline", "full_pipeline_session50") {
        println!(
            "| full pipeline, flow control with a session of 50 observations | {:.2} µs | {:.2}× full pipeline | ≤ 1.10× |",
            session / 1e3,
            session / full
        );
    }
    if let Some(both) = naive_both {
        println!(
            "| naive, input and output schemas compiled per call | {:.2} µs | {:.1}× full pipeline | ≥ 10× |",
            both / 1e3,
            both / full
        );
    }
    if let (Some(one), Some(many)) = (one, many) {
        let per = |ns: f64| BATCH as f64 / (ns / 1e9);
        println!("| throughput, 1 task | {:.0} calls/s | 1.00× | |", per(one));
        println!(
            "| throughput, 64 tasks, 2 workers | {:.0} calls/s | {:.2}× 1 task | ≥ 1.8× |",
            per(many),
            one / many
        );
    }
    for (prefix, label) in [
        ("floor_", "control: the floor alone"),
        ("spin_", "control: register arithmetic alone"),
    ] {
        let one = mean_ns("throughput", &format!("{prefix}1_tasks_x{BATCH}"));
        let many = mean_ns("throughput", &format!("{prefix}64_tasks_x{BATCH}"));
        if let (Some(one), Some(many)) = (one, many) {
            println!(
                "| {label}, 64 tasks vs 1 | | {:.2}× 1 task | the machine's own scaling |",
                one / many
            );
        }
    }
}

/// The same ratios measured in alternation: criterion times each bench in its own stretch of
/// seconds, and on a shared host the machine's speed drifts between stretches by more than
/// the differences measured (BENCHMARKS.md). Here each round times the two sides of a ratio
/// back to back, so a drift slower than a round cancels out; the median round is printed,
/// with the range.
fn paired() {
    // Many short rounds: a burst of host load spoils a few rounds, not the median.
    const ROUNDS: usize = 301;
    const CALLS: usize = 1_000;
    fn time(f: impl FnOnce()) -> f64 {
        let t = std::time::Instant::now();
        f();
        t.elapsed().as_secs_f64()
    }
    fn summary(mut ratios: Vec<f64>) -> String {
        ratios.sort_by(f64::total_cmp);
        format!(
            "{:.2}× (rounds {:.2}–{:.2})",
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        )
    }
    let store = DocumentStore::seeded();
    let ctx = ctx(&store);
    let reg = registry();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let traced = session_ctx(&rt, &reg, &store);
    let calls = |side: u8| {
        time(|| {
            rt.block_on(async {
                for _ in 0..CALLS {
                    match side {
                        0 => drop(floor_call(&store).await),
                        1 => drop(full_call(&reg, &ctx).await),
                        _ => drop(full_call(&reg, &traced).await),
                    }
                }
            })
        })
    };
    calls(1);
    calls(2);
    let (mut latency, mut flow) = (vec![], vec![]);
    for _ in 0..ROUNDS {
        let full = calls(1);
        latency.push(full / calls(0));
        flow.push(calls(2) / full);
    }

    let mt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let batches = |tasks: usize, work: Work| {
        time(|| {
            mt.block_on(async {
                batch(tasks, work, &reg, &store).await;
            })
        })
    };
    batches(64, Work::Full);
    // The three splits share each round, so the pipeline's scaling is set against the
    // machine's at the same moment, and their per-round quotient cancels what the host did.
    let (mut scaling, mut control, mut spin, mut relative) = (vec![], vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        let full = batches(1, Work::Full) / batches(64, Work::Full);
        let floor = batches(1, Work::Floor) / batches(64, Work::Floor);
        spin.push(batches(1, Work::Spin) / batches(64, Work::Spin));
        scaling.push(full);
        control.push(floor);
        relative.push(full / floor);
    }

    println!("\n| paired, {ROUNDS} alternating rounds | median ratio | target |");
    println!("|---|---|---|");
    println!("| full pipeline / floor | {} | ≤ 2.0× |", summary(latency));
    println!(
        "| with a session of 50 observations / full pipeline | {} | ≤ 1.10× |",
        summary(flow)
    );
    println!(
        "| throughput, 64 tasks / 1 task | {} | ≥ 1.8× |",
        summary(scaling)
    );
    println!(
        "| control: the floor, 64 tasks / 1 task | {} | the machine's own scaling |",
        summary(control)
    );
    println!(
        "| control: register arithmetic, 64 tasks / 1 task | {} | the machine's own scaling |",
        summary(spin)
    );
    println!(
        "| the pipeline's scaling / the floor's, per round | {} | |",
        summary(relative)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo bench -p tool-contract-examples --bench pipeline -- paired`: the paired rounds only.
    if args.iter().any(|a| a == "paired") {
        paired();
        return;
    }
    let mut c = common::criterion();
    latency(&mut c);
    throughput(&mut c);
    c.final_summary();
    report();
    // Not in `cargo test --benches` (a smoke run) or a filtered run of single benches.
    if !args
        .iter()
        .any(|a| a == "--test" || a == "--list" || !a.starts_with('-'))
    {
        paired();
    }
}
