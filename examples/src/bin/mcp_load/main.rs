//! The MCP server under load: the same `search_documents` tool, with the same output, served by
//! three servers over streamable HTTP and driven by one load generator in alternating rounds.
//!
//! ```text
//! mcp_load [--rounds R] [--secs S] [--warmup W] [--inflight 1,16] [--python PATH] [--servers A,B,C]
//! mcp_load --instructions N [--rounds R] [--inflight 1,16] [--servers A,B]
//! ```
//!
//! - A: the example server (`examples::mcp::document_server`, as `mcp_server --http` serves it):
//!   the whole pipeline.
//! - B: a bare rmcp server with one `#[tool]` method running the same search (`bare.rs`).
//! - C: the official Python MCP SDK's server (`examples/bench/python_server.py`), with the
//!   Python from `--python`, else `$TC_MCP_PYTHON` (`eval "$(.ci/mcp-clients)"` sets it), else
//!   `.ci/.venv/bin/python`; skipped, with a line saying so, when none starts.
//!
//! Each server is a child process (this binary re-run with `--serve a|b ADDR` for A and B), so
//! its CPU time, read from `/proc/<pid>/stat`, is its own. The generator opens one rmcp
//! streamable HTTP session per in-flight slot (protocol 2025-11-25, with `initialize`), calls
//! the tool with one fixed query and checks every answer against the Rust search's result.
//! Every round runs every concurrency against every server in turn (the order rotating per
//! round), each for a warm-up and then S measured seconds.
//!
//! With `--instructions N`, A and B run under valgrind's callgrind instead, and each row is the
//! user-space instructions the server spent on N calls, divided by N (see `instructions.rs`):
//! a figure the machine's load does not move.

mod bare;
mod instructions;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientConfig, JsonObject, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use tool_contract::mcp::HttpConfig;
use tool_contract_examples::mcp::document_server;
use tool_contract_examples::proc_stat::{CpuTicks, TICKS_PER_SEC};
use tool_contract_examples::{search, DocumentStore, SearchDocumentsArgs};

/// The one query every call sends: it matches both spans of the refund policy.
const QUERY: &str = "refund policy 2026";

const USAGE: &str = "usage: mcp_load [--rounds R] [--secs S] [--warmup W] [--inflight 1,16] [--python PATH] [--servers A,B,C] [--instructions N]";

struct Options {
    rounds: usize,
    secs: u64,
    warmup: u64,
    inflight: Vec<usize>,
    python: Option<PathBuf>,
    servers: String,
    /// Calls counted under callgrind per server and concurrency, instead of timed rounds.
    instructions: Option<usize>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut opts = Options {
        rounds: 3,
        secs: 10,
        warmup: 2,
        inflight: vec![1, 16],
        python: None,
        servers: "ABC".to_owned(),
        instructions: None,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        let number = || {
            value
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("{flag} takes a positive number, not `{value}`"))
        };
        match flag.as_str() {
            "--rounds" => opts.rounds = usize::try_from(number()?).unwrap_or(usize::MAX),
            "--secs" => opts.secs = number()?,
            "--warmup" => opts.warmup = number()?,
            "--inflight" => {
                opts.inflight = value
                    .split(',')
                    .map(|n| n.trim().parse::<usize>().ok().filter(|n| *n > 0))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| format!("--inflight takes numbers like 1,16, not `{value}`"))?;
            }
            "--python" => opts.python = Some(PathBuf::from(value)),
            "--instructions" => {
                opts.instructions = Some(usize::try_from(number()?).unwrap_or(usize::MAX));
            }
            "--servers" => {
                opts.servers = value.to_ascii_uppercase().replace(',', "");
                if opts.servers.is_empty() || !opts.servers.chars().all(|c| "ABC".contains(c)) {
                    return Err(format!(
                        "--servers takes letters among A,B,C, not `{value}`"
                    ));
                }
            }
            _ => return Err(USAGE.to_owned()),
        }
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, which, addr] = args.as_slice() {
        if flag == "--serve" {
            return serve(which, addr);
        }
    }
    let opts = match parse(&args) {
        Ok(opts) => opts,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("mcp_load: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(bench(&opts)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mcp_load: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Runs server A or B in this process, as a child of the generator.
fn serve(which: &str, addr: &str) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("mcp_load: no runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let result: Result<(), Box<dyn std::error::Error>> = runtime.block_on(async {
        match which {
            // Exactly what `mcp_server --http ADDR` runs.
            "a" => {
                let addr: SocketAddr = addr.parse()?;
                let http = document_server(DocumentStore::seeded())?
                    .bind_http(HttpConfig::new(addr))
                    .await?;
                println!("{}", http.url()?);
                http.run_until(std::future::pending()).await?;
            }
            "b" => bare::serve(addr).await?,
            _ => return Err(format!("unknown server `{which}`").into()),
        }
        Ok(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mcp_load server {which}: {err}");
            ExitCode::FAILURE
        }
    }
}

/// A server child process; killed when dropped.
struct Server {
    label: &'static str,
    child: Child,
    url: String,
    // Kept open: the child may still write to it.
    _stdout: Option<BufReader<ChildStdout>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn cpu_ticks(&self) -> Option<u64> {
        cpu_ticks(&format!("/proc/{}/stat", self.child.id()))
    }
}

/// utime + stime of a process, in clock ticks.
fn cpu_ticks(stat_path: &str) -> Option<u64> {
    CpuTicks::read(stat_path).map(|t| t.own)
}

fn ticks_to_us(ticks: u64) -> f64 {
    ticks as f64 * 1_000_000.0 / TICKS_PER_SEC as f64
}

/// Server A or B as a child process; under callgrind, dumping to `callgrind`, when given.
fn spawn_rust(
    label: &'static str,
    which: &str,
    callgrind: Option<&Path>,
) -> Result<Server, String> {
    let exe = std::env::current_exe().map_err(|e| format!("own path unknown: {e}"))?;
    let mut command = match callgrind {
        Some(prefix) => instructions::wrap(&exe, prefix),
        None => Command::new(exe),
    };
    let mut child = command
        .args(["--serve", which, "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| match callgrind {
            Some(_) => {
                format!("server {label} did not start under valgrind (is it installed?): {e}")
            }
            None => format!("server {label} did not start: {e}"),
        })?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut url = String::new();
    stdout
        .read_line(&mut url)
        .map_err(|e| format!("server {label} printed no URL: {e}"))?;
    let url = url.trim().to_owned();
    if url.is_empty() {
        let _ = child.kill();
        return Err(format!("server {label} exited before printing its URL"));
    }
    Ok(Server {
        label,
        child,
        url,
        _stdout: Some(stdout),
    })
}

/// The Python SDK's server, or why it is not there.
fn spawn_python(python: &Path, expected: &Value, dir: &Path) -> Result<Server, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/python_server.py");
    let expected_file = dir.join("mcp_load_expected.json");
    std::fs::write(&expected_file, expected.to_string())
        .map_err(|e| format!("cannot write {}: {e}", expected_file.display()))?;
    // A free port: the SDK's server cannot report the one it bound.
    let port = TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| format!("no free port: {e}"))?
        .port();
    let mut child = Command::new(python)
        .arg(&script)
        .arg(port.to_string())
        .arg(&expected_file)
        .arg(QUERY)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("`{}` did not start: {e}", python.display()))?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the Python server exited ({status}); is the `mcp` SDK installed for `{}`?",
                python.display()
            ));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the Python server did not listen within 30 s".to_owned());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(Server {
        label: "C",
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
        _stdout: None,
    })
}

fn python_path(opts: &Options) -> Option<PathBuf> {
    if let Some(p) = &opts.python {
        return Some(p.clone());
    }
    if let Some(p) = std::env::var_os("TC_MCP_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.ci/.venv/bin/python");
    venv.exists().then_some(venv)
}

type Client = RunningService<RoleClient, ClientConfig>;

async fn connect(url: &str) -> Result<Client, String> {
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    // A session per client: the revision with `initialize`.
    let info = ClientConfig::default().with_protocol_version(ProtocolVersion::V_2025_11_25);
    let client = info
        .serve(transport)
        .await
        .map_err(|e| format!("cannot open a session at {url}: {e}"))?;
    // As a host does before its model calls anything.
    let tools = client
        .list_tools(None)
        .await
        .map_err(|e| format!("tools/list at {url}: {e}"))?;
    if !tools.tools.iter().any(|t| t.name == "search_documents") {
        return Err(format!("{url} does not list search_documents"));
    }
    Ok(client)
}

/// What every answer must carry: the search's result, as the envelope's `data` for A and as
/// the structured content itself for B and C.
struct Expected {
    output: Value,
}

impl Expected {
    fn check(&self, label: &str, result: &rmcp::model::CallToolResult) -> Result<(), String> {
        if result.is_error == Some(true) {
            return Err(format!("isError: {:?}", result.structured_content));
        }
        let content = result
            .structured_content
            .as_ref()
            .ok_or("no structuredContent")?;
        let output = if label == "A" {
            if content.get("ok") != Some(&Value::Bool(true)) {
                return Err(format!("envelope not ok: {content}"));
            }
            content.get("data").ok_or("envelope without data")?
        } else {
            content
        };
        if *output == self.output {
            Ok(())
        } else {
            Err(format!("unexpected output: {output}"))
        }
    }
}

/// One `tools/call` with the fixed arguments, its answer checked.
async fn call_checked(
    client: &Client,
    args: &JsonObject,
    label: &str,
    expected: &Expected,
) -> Result<(), String> {
    let answer = client
        .call_tool(CallToolRequestParams::new("search_documents").with_arguments(args.clone()))
        .await
        .map_err(|e| e.to_string())?;
    expected.check(label, &answer)
}

fn arguments() -> JsonObject {
    match json!({ "query": QUERY }) {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// One server at one concurrency, summed over rounds.
#[derive(Default)]
struct Acc {
    requests: u64,
    failures: u64,
    first_failure: Option<String>,
    measured: Duration,
    latencies_us: Vec<u32>,
    server_ticks: u64,
    generator_ticks: u64,
    round_rps: Vec<f64>,
}

struct Slot {
    ok: u64,
    failures: u64,
    first_failure: Option<String>,
    latencies_us: Vec<u32>,
}

/// One slot's calls until `end`; those completed from `start` on are counted.
async fn run_slot(
    client: Arc<Client>,
    label: &'static str,
    expected: Arc<Expected>,
    start: Instant,
    end: Instant,
) -> Slot {
    let mut slot = Slot {
        ok: 0,
        failures: 0,
        first_failure: None,
        latencies_us: Vec::new(),
    };
    let args = arguments();
    while Instant::now() < end {
        let sent = Instant::now();
        let checked = call_checked(&client, &args, label, &expected).await;
        let done = Instant::now();
        if done < start || done >= end {
            continue;
        }
        match checked {
            Ok(()) => {
                slot.ok += 1;
                let us = done.duration_since(sent).as_micros();
                slot.latencies_us
                    .push(u32::try_from(us).unwrap_or(u32::MAX));
            }
            Err(message) => {
                slot.failures += 1;
                slot.first_failure.get_or_insert(message);
            }
        }
    }
    slot
}

async fn measure(
    server: &Server,
    clients: &[Arc<Client>],
    inflight: usize,
    expected: &Arc<Expected>,
    opts: &Options,
    acc: &mut Acc,
) {
    let start = Instant::now() + Duration::from_secs(opts.warmup);
    let end = start + Duration::from_secs(opts.secs);
    let tasks: Vec<_> = clients[..inflight]
        .iter()
        .map(|client| {
            tokio::spawn(run_slot(
                Arc::clone(client),
                server.label,
                Arc::clone(expected),
                start,
                end,
            ))
        })
        .collect();
    tokio::time::sleep_until(start.into()).await;
    let server_before = server.cpu_ticks();
    let generator_before = cpu_ticks("/proc/self/stat");
    tokio::time::sleep_until(end.into()).await;
    let server_after = server.cpu_ticks();
    let generator_after = cpu_ticks("/proc/self/stat");
    let mut requests = 0;
    for task in tasks {
        match task.await {
            Ok(slot) => {
                requests += slot.ok;
                acc.failures += slot.failures;
                if acc.first_failure.is_none() {
                    acc.first_failure = slot.first_failure;
                }
                acc.latencies_us.extend(slot.latencies_us);
            }
            Err(err) => {
                acc.failures += 1;
                acc.first_failure.get_or_insert(err.to_string());
            }
        }
    }
    acc.requests += requests;
    acc.measured += end - start;
    acc.round_rps.push(requests as f64 / opts.secs as f64);
    if let (Some(b), Some(a)) = (server_before, server_after) {
        acc.server_ticks += a.saturating_sub(b);
    }
    if let (Some(b), Some(a)) = (generator_before, generator_after) {
        acc.generator_ticks += a.saturating_sub(b);
    }
}

/// The `q`-quantile of sorted samples.
fn quantile(sorted: &[u32], q: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The summary of one row of the table.
struct Row {
    rps: f64,
    p50: u32,
    p99: u32,
    cpu_us_per_req: f64,
}

fn row(acc: &mut Acc) -> Row {
    acc.latencies_us.sort_unstable();
    let secs = acc.measured.as_secs_f64().max(f64::MIN_POSITIVE);
    Row {
        rps: acc.requests as f64 / secs,
        p50: quantile(&acc.latencies_us, 0.50),
        p99: quantile(&acc.latencies_us, 0.99),
        cpu_us_per_req: ticks_to_us(acc.server_ticks) / acc.requests.max(1) as f64,
    }
}

async fn bench(opts: &Options) -> Result<(), String> {
    let args: SearchDocumentsArgs = serde_json::from_value(Value::Object(arguments()))
        .map_err(|e| format!("fixed arguments: {e}"))?;
    let output = serde_json::to_value(search(&DocumentStore::seeded(), "acme", &args))
        .map_err(|e| format!("search output: {e}"))?;
    let expected = Arc::new(Expected { output });

    let dir = std::env::temp_dir();
    let callgrind = |label: &str| {
        opts.instructions
            .map(|_| instructions::out_prefix(&dir, label))
    };
    let mut servers = Vec::new();
    if opts.servers.contains('A') {
        servers.push(spawn_rust("A", "a", callgrind("A").as_deref())?);
    }
    if opts.servers.contains('B') {
        servers.push(spawn_rust("B", "b", callgrind("B").as_deref())?);
    }
    match python_path(opts).filter(|_| opts.servers.contains('C')) {
        _ if opts.instructions.is_some() && opts.servers.contains('C') => {
            println!("C skipped: --instructions counts the Rust servers only");
        }
        None if !opts.servers.contains('C') => {}
        None => println!(
            "C skipped: no Python with the MCP SDK (run `eval \"$(.ci/mcp-clients)\"` or pass --python)"
        ),
        Some(python) => {
            match spawn_python(&python, &expected.output, &dir) {
                Ok(server) => servers.push(server),
                Err(why) => println!("C skipped: {why}"),
            }
        }
    }

    // One session per in-flight slot, opened once and reused by every round.
    let most = opts.inflight.iter().copied().max().unwrap_or(1);
    let mut clients: Vec<Vec<Arc<Client>>> = Vec::new();
    for server in &servers {
        let mut sessions = Vec::with_capacity(most);
        for _ in 0..most {
            sessions.push(Arc::new(connect(&server.url).await?));
        }
        clients.push(sessions);
    }

    if let Some(calls) = opts.instructions {
        let result = count_instructions(opts, &servers, &clients, &expected, &dir, calls).await;
        close(clients).await;
        return result;
    }

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "MCP load: tools/call search_documents {{\"query\":\"{QUERY}\"}}; {} round(s) x {} s measured (+{} s warm-up) per server and concurrency, servers alternating; {cores} cores; load average before: {}",
        opts.rounds,
        opts.secs,
        opts.warmup,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );

    let mut accs: BTreeMap<(usize, &'static str), Acc> = BTreeMap::new();
    for round in 0..opts.rounds {
        for &inflight in &opts.inflight {
            for k in 0..servers.len() {
                // The order rotates per round, so no server always runs right after another.
                let i = (k + round) % servers.len();
                let server = &servers[i];
                let acc = accs.entry((inflight, server.label)).or_default();
                measure(server, &clients[i], inflight, &expected, opts, acc).await;
                eprintln!(
                    "round {}/{}: {} at {inflight} in flight: {:.0} req/s",
                    round + 1,
                    opts.rounds,
                    server.label,
                    acc.round_rps.last().copied().unwrap_or(0.0)
                );
            }
        }
    }
    close(clients).await;

    print_report(opts, &mut accs, cores);
    Ok(())
}

async fn close(clients: Vec<Vec<Arc<Client>>>) {
    for sessions in clients {
        for client in sessions {
            if let Ok(client) = Arc::try_unwrap(client) {
                let _ = client.cancel().await;
            }
        }
    }
}

/// The `--instructions` table: user-space instructions per call, per round, and A/B.
async fn count_instructions(
    opts: &Options,
    servers: &[Server],
    clients: &[Vec<Arc<Client>>],
    expected: &Arc<Expected>,
    dir: &Path,
    calls: usize,
) -> Result<(), String> {
    println!(
        "MCP load, instructions: tools/call search_documents {{\"query\":\"{QUERY}\"}}; {calls} calls per server and concurrency under callgrind (user space only), {} round(s)",
        opts.rounds
    );
    let mut counts: BTreeMap<(usize, &'static str), Vec<f64>> = BTreeMap::new();
    for round in 0..opts.rounds {
        for &inflight in &opts.inflight {
            for k in 0..servers.len() {
                let i = (k + round) % servers.len();
                let server = &servers[i];
                let prefix = instructions::out_prefix(dir, server.label);
                let n = instructions::per_call(
                    server,
                    &prefix,
                    &clients[i][..inflight],
                    expected,
                    calls,
                )
                .await?;
                eprintln!(
                    "round {}/{}: {} at {inflight} in flight: {n:.0} instructions per call",
                    round + 1,
                    opts.rounds,
                    server.label
                );
                counts.entry((inflight, server.label)).or_default().push(n);
            }
        }
    }
    println!();
    println!("| server | in flight | instructions per call | per round |");
    println!("|---|---:|---:|---|");
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    for (&(inflight, label), rounds) in &counts {
        let per_round: Vec<String> = rounds.iter().map(|n| format!("{:.0}", n)).collect();
        println!(
            "| {label} | {inflight} | {:.0} | {} |",
            median(rounds),
            per_round.join(" / ")
        );
    }
    println!();
    for &inflight in &opts.inflight {
        if let (Some(a), Some(b)) = (counts.get(&(inflight, "A")), counts.get(&(inflight, "B"))) {
            println!(
                "  at {inflight:>2} in flight: A/B instructions per call {:.2}x (medians)",
                median(a) / median(b)
            );
        }
    }
    println!(
        "callgrind's dumps, one per row and round: {}/mcp_load.<server>.<pid>.<n> (`callgrind_annotate` reads them)",
        dir.display()
    );
    Ok(())
}

fn print_report(opts: &Options, accs: &mut BTreeMap<(usize, &'static str), Acc>, cores: usize) {
    println!();
    println!("| server | in flight | req/s | req/s per round | p50 us | p99 us | failures | server CPU us/req | server cores | generator cores |");
    println!("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    let mut rows: BTreeMap<(usize, &'static str), Row> = BTreeMap::new();
    for (&(inflight, label), acc) in accs.iter_mut() {
        let r = row(acc);
        let secs = acc.measured.as_secs_f64().max(f64::MIN_POSITIVE);
        let per_round: Vec<String> = acc.round_rps.iter().map(|x| format!("{x:.0}")).collect();
        println!(
            "| {label} | {inflight} | {:.0} | {} | {} | {} | {} | {:.0} | {:.2} | {:.2} |",
            r.rps,
            per_round.join(" / "),
            r.p50,
            r.p99,
            acc.failures,
            r.cpu_us_per_req,
            ticks_to_us(acc.server_ticks) / 1e6 / secs,
            ticks_to_us(acc.generator_ticks) / 1e6 / secs,
        );
        if let Some(failure) = &acc.first_failure {
            let short: String = failure.chars().take(300).collect();
            println!("  {label} at {inflight}: first failure: {short}");
        }
        rows.insert((inflight, label), r);
    }
    println!();
    println!("ratios (target in brackets):");
    for &inflight in &opts.inflight {
        let (Some(a), Some(b)) = (rows.get(&(inflight, "A")), rows.get(&(inflight, "B"))) else {
            continue;
        };
        let verdict = |met: bool| if met { "met" } else { "NOT met" };
        let tput = a.rps / b.rps;
        let p99 = f64::from(a.p99) / f64::from(b.p99.max(1));
        let cpu = a.cpu_us_per_req / b.cpu_us_per_req.max(f64::MIN_POSITIVE);
        println!(
            "  at {inflight:>2} in flight: A/B throughput {tput:.2}x [>= 0.9: {}], A/B p99 {p99:.2}x [<= 1.2: {}], A/B server CPU per request {cpu:.2}x [<= 1.1: {}]",
            verdict(tput >= 0.9),
            verdict(p99 <= 1.2),
            verdict(cpu <= 1.1),
        );
        if let Some(c) = rows.get(&(inflight, "C")) {
            let ac = a.rps / c.rps.max(f64::MIN_POSITIVE);
            let cpu_ca = c.cpu_us_per_req / a.cpu_us_per_req.max(f64::MIN_POSITIVE);
            println!(
                "  at {inflight:>2} in flight: A/C throughput {ac:.1}x [>= 10: {}]; C's server CPU per request is {cpu_ca:.1}x A's",
                verdict(ac >= 10.0)
            );
        }
    }
    println!(
        "server cores / generator cores: CPU seconds per measured second ({cores} cores on this machine); when they add up to about {cores}, the machine, not a server, bounds req/s: compare server CPU per request."
    );
}
