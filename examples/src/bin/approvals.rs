//! The host's approval command for the example MCP server: lists, approves and denies, by id,
//! the calls waiting for a human in the SQLite file `mcp_server --pending-store FILE` keeps.
//!
//! ```text
//! approvals --store FILE [--tenant T] list
//! approvals --store FILE [--tenant T] show ID
//! approvals --store FILE [--tenant T] approve ID --reason TEXT [--as APPROVER]
//! approvals --store FILE [--tenant T] deny ID --reason TEXT [--as APPROVER]
//! ```
//!
//! The tenant defaults to `acme` (the example's local user); an id of another tenant is
//! refused. A decision runs nothing here: the call runs when the model retries it through the
//! server (once), or the retry gets the denial. Output is JSON on stdout; errors are the
//! error's code and message on stderr, with exit status 1 (2 for bad usage).

use std::path::PathBuf;
use std::process::ExitCode;

use tool_contract::store::SqliteStore;
use tool_contract::Registry;

const USAGE: &str = "usage: approvals --store FILE [--tenant T] list | show ID | approve ID --reason TEXT [--as APPROVER] | deny ID --reason TEXT [--as APPROVER]";

enum Command {
    List,
    Show(String),
    Decide {
        approve: bool,
        id: String,
        reason: String,
        approver: String,
    },
}

struct Args {
    store: PathBuf,
    tenant: String,
    command: Command,
}

fn parse(mut args: Vec<String>) -> Result<Args, String> {
    let mut take = |flag: &str| -> Result<Option<String>, String> {
        let Some(at) = args.iter().position(|a| a == flag) else {
            return Ok(None);
        };
        if at + 1 >= args.len() {
            return Err(format!("{flag} needs a value\n{USAGE}"));
        }
        let value = args.remove(at + 1);
        args.remove(at);
        Ok(Some(value))
    };
    let store = take("--store")?.ok_or_else(|| format!("--store is required\n{USAGE}"))?;
    let tenant = take("--tenant")?.unwrap_or_else(|| "acme".to_owned());
    let reason = take("--reason")?;
    let approver = take("--as")?.unwrap_or_else(|| "operator:approvals-cli".to_owned());
    let command = match (args.as_slice(), reason) {
        ([c], None) if c == "list" => Command::List,
        ([c, id], None) if c == "show" => Command::Show(id.clone()),
        ([c, id], Some(reason)) if c == "approve" || c == "deny" => Command::Decide {
            approve: c == "approve",
            id: id.clone(),
            reason,
            approver,
        },
        _ => return Err(USAGE.to_owned()),
    };
    Ok(Args {
        store: PathBuf::from(store),
        tenant,
        command,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match parse(std::env::args().skip(1).collect()) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("approvals: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), String> {
    let store = SqliteStore::open(&args.store)
        .await
        .map_err(|e| e.to_string())?;
    // Deciding needs no tools and no approval key: only the stores the server shares.
    let registry = Registry::builder()
        .store(store.clone())
        .pending_approval_store(store)
        .build()
        .map_err(|e| e.to_string())?;
    let tenant = Some(args.tenant.as_str());
    let failed = |e: tool_contract::ToolError| format!("{}: {}", e.code(), e.message());
    let shown = match args.command {
        Command::List => {
            serde_json::to_value(registry.pending_approvals(tenant).await.map_err(failed)?)
        }
        Command::Show(id) => serde_json::to_value(
            registry
                .pending_approval(tenant, &id)
                .await
                .map_err(failed)?,
        ),
        Command::Decide {
            approve,
            id,
            reason,
            approver,
        } => {
            let decided = if approve {
                registry
                    .approve_pending(tenant, &id, &approver, &reason)
                    .await
            } else {
                registry.deny_pending(tenant, &id, &approver, &reason).await
            };
            serde_json::to_value(decided.map_err(failed)?)
        }
    };
    let shown = shown.map_err(|e| e.to_string())?;
    println!(
        "{}",
        serde_json::to_string_pretty(&shown).map_err(|e| e.to_string())?
    );
    Ok(())
}
