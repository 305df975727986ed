//! `tool-contract`: compares tool contracts across versions.
//!
//! ```text
//! cargo install tool-contract --features cli
//! tool-contract diff OLD NEW [--format table|json] [--caller-deadline-ms MS]
//! ```
//!
//! `OLD` and `NEW` are contract locks (`tools.lock.json`) or JSON arrays of contracts (as a
//! registry's contracts serialize); `-` reads one of them from stdin. Exit codes: 0 every
//! version bump covers its changes, 1 a bump (or a reviewer's note) is missing, 2 bad
//! arguments or unreadable input.

use std::io::Read;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use comfy_table::{presets, Table};
use tool_contract::evolve::Rules;
use tool_contract::lock::{DiffReport, Finding, Lock};

#[derive(Debug, Parser)]
#[command(
    name = "tool-contract",
    version,
    about = "Checks that tool contracts evolve with their versions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Classifies every change between two locks and checks each tool's version bump.
    ///
    /// Each change is major (old calls may fail or consumers break), major-security (a more
    /// dangerous contract: needs a major bump and a reviewer's note in NEW's lock entry), minor
    /// (compatible additions) or patch (documentation). Exits with 1 when a tool's version
    /// does not cover its changes.
    Diff(DiffArgs),
}

#[derive(Debug, Args)]
struct DiffArgs {
    /// The old state: the base branch's tools.lock.json, or its contracts (`-`: stdin).
    old: String,
    /// The new state: the pull request's tools.lock.json, or its contracts (`-`: stdin).
    new: String,
    /// Output for people (a Markdown table) or for machines.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// The callers' deadline for one attempt: a timeout raised past it is major.
    #[arg(long, value_name = "MS")]
    caller_deadline_ms: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    /// A Markdown table of changes, then one verdict per tool.
    Table,
    /// One JSON object: `ok`, `changes` (one per change) and `tools` (the bump each needs).
    Json,
}

fn main() -> ExitCode {
    let Command::Diff(args) = Cli::parse().command;
    match diff(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Runs `diff`; `Ok(false)` when a version fix is needed.
fn diff(args: &DiffArgs) -> Result<bool, String> {
    if args.old == "-" && args.new == "-" {
        return Err("only one of OLD and NEW can be read from stdin".to_owned());
    }
    let old = load("OLD", &args.old)?;
    let new = load("NEW", &args.new)?;
    let mut rules = Rules::default();
    if let Some(ms) = args.caller_deadline_ms {
        rules = rules.caller_deadline_ms(ms);
    }
    let findings = old.compare_with(&new, &rules);
    let report = DiffReport::new(&findings);
    match args.format {
        Format::Json => {
            let text = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
            println!("{text}");
        }
        Format::Table => print!("{}", table(&report, &findings)),
    }
    Ok(report.ok)
}

fn load(which: &str, source: &str) -> Result<Lock, String> {
    let text = if source == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read {which} from stdin: {e}"))?;
        text
    } else {
        std::fs::read_to_string(source)
            .map_err(|e| format!("cannot read {which} ({source}): {e}"))?
    };
    let lock = Lock::from_json(&text).map_err(|e| {
        format!("{which} ({source}) is not a contract lock nor a list of contracts: {e}")
    })?;
    if lock.format < tool_contract::lock::FORMAT {
        eprintln!(
            "note: {which} ({source}) is a format-{} lock (hashes only): its changes are found by hash and cannot be classified, so each counts as major; rewrite it with TOOL_CONTRACT_LOCK=overwrite",
            lock.format
        );
    }
    Ok(lock)
}

/// The changes as a Markdown table (pasteable into a pull request), then one line per finding.
fn table(report: &DiffReport, findings: &[Finding]) -> String {
    let mut out = String::new();
    if !report.changes.is_empty() {
        let mut table = Table::new();
        table.load_style(presets::ASCII_MARKDOWN);
        table.set_header(["tool", "old", "new", "class", "change", "pointer", "reason"]);
        for row in &report.changes {
            table.add_row([
                cell(&row.tool),
                cell(row.old_version.as_deref().unwrap_or("")),
                cell(row.new_version.as_deref().unwrap_or("")),
                row.class.as_str().to_owned(),
                row.change.as_str().to_owned(),
                cell(&row.pointer),
                cell(&row.reason),
            ]);
        }
        out.push_str(&table.to_string());
        out.push_str("\n\n");
    }
    for (row, finding) in report.tools.iter().zip(findings) {
        let verdict = if row.fails {
            "FAIL"
        } else if matches!(finding, Finding::Bumped { .. }) {
            "ok"
        } else {
            "note"
        };
        let versions = match (&row.old_version, &row.new_version) {
            (Some(a), Some(b)) if a != b => format!(" {a} -> {b}"),
            (Some(a), _) | (None, Some(a)) => format!(" {a}"),
            (None, None) => String::new(),
        };
        let tool = row.tool.as_deref().unwrap_or("(lock)");
        out.push_str(&format!("{verdict} {tool}{versions}: {}\n", row.message));
    }
    let failing = report.tools.iter().filter(|t| t.fails).count();
    out.push_str(&match (findings.is_empty(), failing) {
        (true, _) => "no tool changed\n".to_owned(),
        (false, 0) => "every version covers its changes\n".to_owned(),
        (false, n) => format!("{n} version fix{} needed\n", if n == 1 { "" } else { "es" }),
    });
    out
}

/// A Markdown table cell: `|` escaped, lines joined.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
