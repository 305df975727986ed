//! What `#[tool]` costs a user's build: writes five crates of the same tools and times a
//! clean build of each, in alternating rounds, with their dependencies already built.
//!
//! - `bt_baseline`: each tool's args struct (7 fields), an enum and an output type, with serde and
//!   schemars derives, and a plain `async fn` handler;
//! - `bt_tool_contract`: the same plus `#[derive(ToolArgs)]` and `#[tool(...)]`;
//! - `bt_tool_contract_served`: the same and a `Toolset` of them (registering a tool is what
//!   instantiates the pipeline's steps for its types: decoding, output checks);
//! - `bt_rmcp_router`: the same tools under rmcp's `#[tool_router]` (the MCP SDK's own macros),
//!   as `#[tool]` declares them: the router function the macro writes is private and nothing
//!   calls it, so only each tool's metadata (its schemas) is compiled;
//! - `bt_rmcp_served`: the same, and served: a public constructor builds the router and a
//!   `#[tool_handler]` implements `ServerHandler` with it, which is what compiles each tool's
//!   call (decoding `Parameters`, serializing `Json`). Its counterpart is
//!   `bt_tool_contract_served`.
//!
//! ```text
//! cargo run --release -p tool-contract-examples --bin build_time -- [--rounds 3] [--tools 50]
//! cargo run --release -p tool-contract-examples --bin build_time -- --instructions [--tools 50]
//! ```
//!
//! The crates live in `target/build-time`, a workspace of their own, so the repository's lock
//! file is untouched (the first run fetches rmcp's macros). Each round cleans each crate
//! (`cargo clean -p`) and builds it again in the dev profile; the table reports the medians and
//! each crate's ratio to the baseline measured in the same run, both as a ratio of the medians
//! and as the median of each round's ratio (builds of one round ran under the same load).
//!
//! With `--instructions`, each crate is built once with `rustc` under valgrind's cachegrind
//! (this program is cargo's `RUSTC_WRAPPER`, and wraps only the generated crates), and the table
//! gives the instructions each build executed: the same to within a thousandth from run to
//! run, where CPU time moves by a tenth on a shared machine. It counts everything `rustc` does
//! in user space (expansion, including the proc macros, type checking, code generation, all
//! threads), and nothing of the kernel's or of memory stalls.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use tool_contract_examples::proc_stat::{ticks_to_secs, CpuTicks};

// Named apart from every dependency: `cargo clean -p` must clean these crates only.
const CRATES: [&str; 5] = [
    "bt_baseline",
    "bt_tool_contract",
    "bt_tool_contract_served",
    "bt_rmcp_router",
    "bt_rmcp_served",
];

/// Set for the `rustc` runs this program wraps: where cachegrind writes its counts.
const WRAP_ENV: &str = "BUILD_TIME_CACHEGRIND_DIR";

fn main() {
    if let Some(dir) = std::env::var_os(WRAP_ENV) {
        wrap_rustc(Path::new(&dir));
    }
    let mut rounds = 3usize;
    let mut tools = 50usize;
    let mut instructions = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = || -> usize {
            args.next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| usage(&format!("{arg} needs a number")))
        };
        match arg.as_str() {
            "--rounds" => rounds = number().max(1),
            "--tools" => tools = number().max(1),
            "--instructions" => instructions = true,
            "--help" | "-h" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples/ has a parent")
        .to_path_buf();
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo.join("target"), PathBuf::from)
        .join("build-time");
    write_workspace(&dir, &repo, tools);
    eprintln!(
        "build_time: building the dependencies once ({})",
        dir.display()
    );
    // One crate at a time, as they are timed: built alone, a crate's dependencies may be
    // built with other features than in a workspace build, and that must not be timed.
    for krate in CRATES {
        cargo(&dir, &["build", "--quiet", "-p", krate]);
    }
    if instructions {
        count_instructions(&dir, tools);
        return;
    }

    let mut wall: Vec<Vec<f64>> = vec![Vec::new(); CRATES.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); CRATES.len()];
    for round in 1..=rounds {
        for (i, krate) in CRATES.iter().enumerate() {
            cargo(&dir, &["clean", "--quiet", "-p", krate]);
            let (t0, c0) = (Instant::now(), children_cpu());
            cargo(&dir, &["build", "--quiet", "-p", krate]);
            let (took, used) = (t0.elapsed().as_secs_f64(), children_cpu() - c0);
            eprintln!("build_time: round {round}: {krate} {took:.2} s wall, {used:.2} s CPU");
            wall[i].push(took);
            cpu[i].push(used);
        }
    }
    // The rounds alternate the crates, so each round's CPU ratio compares builds made under
    // the same load; on a shared machine their median moves less than a ratio of medians.
    let per_round: Vec<Vec<f64>> = cpu
        .iter()
        .map(|c| c.iter().zip(&cpu[0]).map(|(c, b)| c / b).collect())
        .collect();
    let wall: Vec<f64> = wall.iter().map(|t| median(t)).collect();
    let cpu: Vec<f64> = cpu.iter().map(|t| median(t)).collect();
    println!(
        "\n{tools} tools, each a 7-field args struct, an enum and an output type; dev profile; \
         dependencies built; median of {rounds} alternating rounds\n"
    );
    println!(
        "| crate | clean build, wall (s) | vs baseline | CPU, user + system (s) | vs baseline | \
         CPU vs baseline per round: median (each round) |"
    );
    println!("|---|---|---|---|---|---|");
    for (i, krate) in CRATES.iter().enumerate() {
        let rounds: Vec<String> = per_round[i].iter().map(|r| format!("{r:.2}")).collect();
        println!(
            "| {krate} | {:.2} | {:+.0}% | {:.2} | {:+.0}% | {:+.0}% ({}) |",
            wall[i],
            (wall[i] / wall[0] - 1.0) * 100.0,
            cpu[i],
            (cpu[i] / cpu[0] - 1.0) * 100.0,
            (median(&per_round[i]) - 1.0) * 100.0,
            rounds.join(" / "),
        );
    }
}

/// User and system time of the children this process has waited for, in seconds; 0 where
/// `/proc/self/stat` does not exist. CPU time moves less than wall time when other work shares
/// the machine.
fn children_cpu() -> f64 {
    CpuTicks::read("/proc/self/stat").map_or(0.0, |t| ticks_to_secs(t.children))
}

fn usage(problem: &str) -> ! {
    if !problem.is_empty() {
        eprintln!("build_time: {problem}");
    }
    eprintln!("usage: build_time [--rounds N] [--tools N] | --instructions [--tools N]");
    std::process::exit(if problem.is_empty() { 0 } else { 2 })
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

fn cargo(dir: &Path, args: &[&str]) {
    cargo_with(dir, args, &[]);
}

fn cargo_with(dir: &Path, args: &[&str], env: &[(&str, &std::ffi::OsStr)]) {
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(args)
        .current_dir(dir)
        // The generated workspace builds in its own target directory, not the caller's.
        .env_remove("CARGO_TARGET_DIR")
        .envs(env.iter().copied())
        .status()
        .unwrap_or_else(|e| panic!("cargo {args:?}: {e}"));
    assert!(
        status.success(),
        "cargo {args:?} failed in {}",
        dir.display()
    );
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("a file path")).expect("create the directory");
    // Rewritten only when it changes, so a second run does not rebuild the dependencies.
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).expect("write the generated file");
    }
}

fn write_workspace(dir: &Path, repo: &Path, tools: usize) {
    let tc = repo.join("tool-contract");
    // A TOML array of strings reads as Rust's debug form of the names.
    let members = CRATES;
    write(
        &dir.join("Cargo.toml"),
        &format!(
            r#"[workspace]
resolver = "2"
members = {members:?}

[workspace.dependencies]
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
schemars = "1.2"
tool-contract = {{ path = "{}" }}
rmcp = {{ version = "3.11", default-features = false, features = ["server", "macros"] }}
"#,
            tc.display()
        ),
    );
    for krate in CRATES {
        let deps = match krate {
            "bt_baseline" => "serde.workspace = true\nschemars.workspace = true\n",
            "bt_tool_contract" | "bt_tool_contract_served" => {
                "serde.workspace = true\nschemars.workspace = true\ntool-contract.workspace = true\n"
            }
            _ => "serde.workspace = true\nserde_json.workspace = true\nschemars.workspace = true\nrmcp.workspace = true\n",
        };
        write(
            &dir.join(krate).join("Cargo.toml"),
            &format!(
                "[package]\nname = \"{krate}\"\nversion = \"0.1.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n{deps}"
            ),
        );
        write(&dir.join(krate).join("src/lib.rs"), &source(krate, tools));
    }
}

/// The crate's source: each tool's types, then its handler as the crate serves it.
fn source(krate: &str, tools: usize) -> String {
    let mut out = String::from(
        "#![allow(dead_code, unused_variables, clippy::all)]\nuse schemars::JsonSchema;\nuse serde::{Deserialize, Serialize};\n",
    );
    match krate {
        "bt_tool_contract" | "bt_tool_contract_served" => {
            out.push_str("use tool_contract::{tool, ToolArgs, ToolError};\n")
        }
        "bt_rmcp_router" | "bt_rmcp_served" => out.push_str(
            "use rmcp::handler::server::wrapper::{Json, Parameters};\nuse rmcp::{tool, tool_router};\n\n#[derive(Clone)]\npub struct Server {\n    router: rmcp::handler::server::router::tool::ToolRouter<Server>,\n}\n",
        ),
        _ => out.push_str("#[derive(Debug)]\npub struct ToolError;\n"),
    }
    for i in 0..tools {
        let args_derive = if krate.starts_with("bt_tool_contract") {
            "#[derive(Debug, Deserialize, JsonSchema, ToolArgs)]"
        } else {
            "#[derive(Debug, Deserialize, JsonSchema)]"
        };
        let _ = write!(
            out,
            r#"
/// How results of tool {i} are ordered.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Order{i} {{
    Newest,
    Oldest,
    Relevance,
}}

/// Arguments of tool {i}.
{args_derive}
#[serde(deny_unknown_fields)]
pub struct Args{i} {{
    /// What to look for.
    #[schemars(length(min = 1, max = 200))]
    pub query: String,
    /// How many results.
    #[schemars(range(min = 1, max = 20))]
    pub top_k: u32,
    /// The order.
    pub order: Order{i},
    /// Only after this day (YYYY-MM-DD).
    #[schemars(length(max = 10))]
    pub after: Option<String>,
    /// Include archived items.
    pub archived: bool,
    /// A tag to filter by.
    #[schemars(length(max = 40))]
    pub tag: Option<String>,
    /// The page.
    #[schemars(range(min = 0, max = 100))]
    pub page: u32,
}}

/// The output of tool {i}.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Output{i} {{
    /// The items.
    pub items: Vec<String>,
    /// Whether more exist.
    pub truncated: bool,
}}
"#
        );
        let body = format!(
            "Ok(Output{i} {{ items: vec![args.query.clone()], truncated: args.archived }})"
        );
        match krate {
            "bt_tool_contract" | "bt_tool_contract_served" => {
                let _ = write!(
                    out,
                    r#"
/// Searches collection {i}. Use it to find items in collection {i}; it changes nothing.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 1000)]
pub async fn search_{i}(args: Args{i}) -> Result<Output{i}, ToolError> {{
    {body}
}}
"#
                );
            }
            "bt_rmcp_router" | "bt_rmcp_served" => {}
            _ => {
                let _ = write!(
                    out,
                    r#"
/// Searches collection {i}.
pub async fn search_{i}(args: Args{i}) -> Result<Output{i}, ToolError> {{
    {body}
}}
"#
                );
            }
        }
    }
    if krate == "bt_tool_contract_served" {
        // Served, as `bt_rmcp_served` serves its tools: registering is what instantiates the
        // pipeline's steps for each tool.
        out.push_str(
            "\npub fn toolset() -> tool_contract::Toolset {\n    tool_contract::Toolset::new()",
        );
        for i in 0..tools {
            let _ = write!(out, "\n        .with(Search{i})");
        }
        out.push_str("\n}\n");
    }
    if krate.starts_with("bt_rmcp") {
        out.push_str("\n#[tool_router]\nimpl Server {\n");
        for i in 0..tools {
            let _ = write!(
                out,
                r#"    /// Searches collection {i}. Use it to find items in collection {i}; it changes nothing.
    #[tool]
    async fn search_{i}(&self, Parameters(args): Parameters<Args{i}>) -> Result<Json<Output{i}>, String> {{
        Ok(Json(Output{i} {{ items: vec![args.query.clone()], truncated: args.archived }}))
    }}
"#
            );
        }
        out.push_str("}\n");
    }
    if krate == "bt_rmcp_served" {
        // What serving takes: `tool_router()` is private, so without a caller rustc compiles
        // none of the routes it builds, nor the handler that calls them.
        out.push_str(
            "\nimpl Server {\n    pub fn new() -> Server {\n        Server { router: Server::tool_router() }\n    }\n}\n\n#[rmcp::tool_handler(router = self.router)]\nimpl rmcp::ServerHandler for Server {}\n",
        );
    }
    out
}

/// `--instructions`: one build of each crate with its `rustc` under cachegrind, this program as
/// cargo's `RUSTC_WRAPPER`. Cargo does not rebuild dependencies for a new wrapper, and the
/// wrapper passes every other crate's `rustc` through untouched.
fn count_instructions(dir: &Path, tools: usize) {
    if Command::new("valgrind").arg("--version").output().is_err() {
        usage("--instructions needs valgrind (cachegrind), which did not run");
    }
    let out = dir.join("cachegrind");
    std::fs::create_dir_all(&out).expect("create the cachegrind directory");
    let exe = std::env::current_exe().expect("this program's path");
    let mut counts = Vec::new();
    for krate in CRATES {
        let file = out.join(format!("{krate}.out"));
        let _ = std::fs::remove_file(&file);
        cargo(dir, &["clean", "--quiet", "-p", krate]);
        cargo_with(
            dir,
            &["build", "--quiet", "-p", krate],
            &[
                ("RUSTC_WRAPPER", exe.as_os_str()),
                (WRAP_ENV, out.as_os_str()),
            ],
        );
        let count = cachegrind_total(&file).unwrap_or_else(|e| {
            eprintln!("build_time: {e}");
            std::process::exit(1)
        });
        eprintln!("build_time: {krate}: {count} instructions");
        counts.push(count);
    }
    println!(
        "\n{tools} tools, each a 7-field args struct, an enum and an output type; dev profile; \
         dependencies built; instructions rustc executed for a clean build (cachegrind)\n"
    );
    println!("| crate | instructions | vs baseline |");
    println!("|---|---:|---:|");
    for (krate, count) in CRATES.iter().zip(&counts) {
        println!(
            "| {krate} | {count} | {:+.1}% |",
            (*count as f64 / counts[0] as f64 - 1.0) * 100.0
        );
    }
}

/// The wrapper: `ARGS` is `RUSTC RUSTC_ARGS...`. The generated crates run under
/// cachegrind, writing `DIR/CRATE.out`; every other invocation (dependencies, cargo's probes
/// of the compiler) runs as is. Exits with `rustc`'s status.
fn wrap_rustc(dir: &Path) -> ! {
    let mut args = std::env::args_os().skip(1);
    let Some(rustc) = args.next() else {
        eprintln!("build_time: run as RUSTC_WRAPPER without a compiler to wrap");
        std::process::exit(2)
    };
    let args: Vec<_> = args.collect();
    let krate = args
        .windows(2)
        .find(|pair| pair[0] == "--crate-name")
        .and_then(|pair| pair[1].to_str())
        .filter(|name| CRATES.contains(name));
    let mut command = match krate {
        Some(krate) => {
            let mut command = Command::new("valgrind");
            command
                .arg("--tool=cachegrind")
                .arg("--cache-sim=no")
                // Cache sizes given, so cachegrind does not warn (before its log file is
                // open, on the compiler's stderr) about the machine's; nothing is simulated.
                .args(["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"])
                .arg(format!(
                    "--cachegrind-out-file={}",
                    dir.join(format!("{krate}.out")).display()
                ))
                // Valgrind's own notes would reach cargo as compiler output.
                .arg(format!(
                    "--log-file={}",
                    dir.join(format!("{krate}.log")).display()
                ))
                .arg(&rustc);
            command
        }
        None => Command::new(&rustc),
    };
    let status = command.args(&args).status().unwrap_or_else(|e| {
        eprintln!("build_time: cannot run {}: {e}", rustc.to_string_lossy());
        std::process::exit(1)
    });
    std::process::exit(status.code().unwrap_or(1))
}

/// The instruction total of a cachegrind output file: its `summary:` line.
fn cachegrind_total(file: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("no cachegrind output {}: {e}", file.display()))?;
    text.lines()
        .find_map(|line| line.strip_prefix("summary:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("{} has no summary line", file.display()))
}
