//! The document service's five tools served over MCP (see `docs/mcp.md`).
//!
//! ```text
//! mcp_server --stdio                  one session over stdin/stdout (what MCP hosts launch)
//! mcp_server --http [ADDR]            streamable HTTP at http://ADDR/mcp (127.0.0.1:8080 by default;
//!                                     port 0 picks a free port); the URL is printed on stdout
//! mcp_server --pending-store FILE ... either of the above, keeping idempotency records, grant
//!                                     marks and approvals waiting for an operator in the SQLite
//!                                     file FILE, which the `approvals` command decides
//! ```
//!
//! Without elicitation in the client, a call that needs approval waits under an `approval_id`:
//!
//! ```text
//! approvals --store FILE list
//! approvals --store FILE approve <approval_id> --reason "expected"
//! ```
//!
//! after which the model's retry of the same call runs it, once.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use tool_contract::mcp::HttpConfig;
use tool_contract::store::SqliteStore;
use tool_contract_examples::mcp::{document_registry_builder, document_server_on};
use tool_contract_examples::DocumentStore;

const USAGE: &str = "usage: mcp_server [--pending-store FILE] --stdio | --http [ADDR]   (ADDR defaults to 127.0.0.1:8080)";

enum Mode {
    Stdio,
    Http(HttpConfig),
}

fn parse(args: &[String]) -> Result<Mode, String> {
    match args {
        [flag] if flag == "--stdio" => Ok(Mode::Stdio),
        [flag] if flag == "--http" => Ok(Mode::Http(HttpConfig::default())),
        [flag, addr] if flag == "--http" => {
            let a = addr
                .parse::<SocketAddr>()
                .map_err(|e| format!("`{addr}` is not an address like 127.0.0.1:8080: {e}"))?;
            // Every caller gets the local user's context: this example must not be reachable
            // from other machines. A real host authenticates callers in its context provider.
            if !a.ip().is_loopback() {
                return Err(format!(
                    "`{addr}` is not a loopback address; this example serves the local user only (use 127.0.0.1 or [::1])"
                ));
            }
            Ok(Mode::Http(HttpConfig::new(a)))
        }
        _ => Err(USAGE.to_owned()),
    }
}

/// Takes `--pending-store FILE` out of `args`.
fn pending_store(args: &mut Vec<String>) -> Result<Option<PathBuf>, String> {
    let Some(at) = args.iter().position(|a| a == "--pending-store") else {
        return Ok(None);
    };
    if at + 1 >= args.len() {
        return Err(USAGE.to_owned());
    }
    let file = args.remove(at + 1);
    args.remove(at);
    Ok(Some(PathBuf::from(file)))
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let pending = match pending_store(&mut args) {
        Ok(file) => file,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let mode = match parse(&args) {
        Ok(mode) => mode,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match run(mode, pending).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("mcp_server: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn run(mode: Mode, pending: Option<PathBuf>) -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = document_registry_builder();
    if let Some(file) = pending {
        // One file for every store: a restarted server still knows what it ran, and the
        // `approvals` command decides what waits in it.
        let store = SqliteStore::open(&file).await?;
        registry = registry.store(store.clone()).pending_approval_store(store);
    }
    let server = document_server_on(registry.build()?, DocumentStore::seeded());
    match mode {
        // stdout carries the protocol: nothing else may be printed there.
        Mode::Stdio => server.serve_stdio().await?,
        Mode::Http(config) => {
            let http = server.bind_http(config).await?;
            // The first stdout line is the endpoint, so scripts (and the interop tests) can
            // start it on port 0 and read where it landed.
            println!("{}", http.url()?);
            http.run_until(async {
                // If no signal handler can be installed, serve until killed.
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            })
            .await?;
        }
    }
    Ok(())
}
