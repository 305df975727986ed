//! A deferred approval across processes: the `mcp_server` example keeps a call that needs
//! approval in its SQLite file, the `approvals` command (another process) decides it by id,
//! and the model's retry through the same MCP session runs it once.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

const SERVER: &str = env!("CARGO_BIN_EXE_mcp_server");
const APPROVALS: &str = env!("CARGO_BIN_EXE_approvals");
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// Kills and reaps the child when dropped, so no test leaves a process behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An MCP session with the server over its stdio, JSON-RPC written by hand.
struct Session {
    _child: Reaped,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl Session {
    fn start(db: &Path) -> Session {
        let mut child = Reaped(
            Command::new(SERVER)
                .arg("--pending-store")
                .arg(db)
                .arg("--stdio")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("start mcp_server"),
        );
        let stdin = child.0.stdin.take().unwrap();
        let stdout = child.0.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = Session {
            _child: child,
            stdin,
            lines,
            next_id: 0,
        };
        // No elicitation declared: approvals go out of band.
        session.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "approvals-test", "version": "0"}}),
        );
        writeln!(
            session.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        session
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        loop {
            let line = self
                .lines
                .recv_timeout(REPLY_TIMEOUT)
                .expect("mcp_server answers on stdout");
            let reply: Value = serde_json::from_str(&line).expect("stdout carries only JSON-RPC");
            if reply["id"] == id {
                return reply;
            }
        }
    }

    fn send_email(&mut self) -> Value {
        let args =
            json!({"to": "lee@acme.test", "subject": "Refund policy", "body": "From 1 July."});
        let reply = self.request(
            "tools/call",
            json!({"name": "send_email", "arguments": args}),
        );
        reply["result"].clone()
    }
}

/// Runs the `approvals` command; (exit code, stdout, stderr).
fn approvals(db: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(APPROVALS)
        .arg("--store")
        .arg(db)
        .args(args)
        .output()
        .expect("run approvals");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_call_waits_in_the_file_is_approved_by_the_command_and_runs_once_on_retry() {
    let dir = tempfile::TempDir::new().unwrap();
    let db = dir.path().join("pending.db");
    let mut session = Session::start(&db);

    let waiting = session.send_email();
    let error = &waiting["structuredContent"]["error"];
    assert_eq!(error["code"], "APPROVAL_REQUIRED", "{waiting}");
    let id = error["safe_details"]["approval_id"]
        .as_str()
        .expect("the envelope names the approval id")
        .to_owned();

    let (code, out, err) = approvals(&db, &["list"]);
    assert_eq!(code, 0, "{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed[0]["id"], id.as_str());
    assert_eq!(listed[0]["subject"]["arguments"]["to"], "lee@acme.test");
    assert_eq!(listed[0]["state"], "pending");

    let (code, _, err) = approvals(
        &db,
        &["--tenant", "globex", "approve", &id, "--reason", "x"],
    );
    assert_eq!(code, 1);
    assert!(err.contains("PENDING_APPROVAL_OTHER_TENANT"), "{err}");
    let (code, _, err) = approvals(&db, &["approve", &id]);
    assert_eq!(code, 2, "a decision needs a reason: {err}");

    let (code, out, err) = approvals(
        &db,
        &["approve", &id, "--reason", "expected", "--as", "user:lee"],
    );
    assert_eq!(code, 0, "{err}");
    let decided: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(decided["state"], "approved");
    assert_eq!(decided["approver"], "user:lee");

    let ran = session.send_email();
    assert_eq!(ran["isError"], false, "{ran}");
    assert_eq!(ran["structuredContent"]["meta"]["attempts"], 1);
    let again = session.send_email();
    assert_eq!(
        again["structuredContent"]["meta"]["idempotency"], "replayed",
        "{again}"
    );

    let (code, out, err) = approvals(&db, &["show", &id]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["state"],
        "used"
    );
    let (code, _, err) = approvals(&db, &["deny", &id, "--reason", "too late"]);
    assert_eq!(code, 1);
    assert!(err.contains("PENDING_APPROVAL_DECIDED"), "{err}");
}

/// The same through the official Python MCP SDK (`tests/interop/mcp_client.py --approvals`),
/// when `TC_MCP_PYTHON` names a python with `mcp` and `jsonschema` (`.ci/mcp-clients`
/// installs one); otherwise it prints `SKIPPED: ...` to stderr.
#[test]
fn the_python_sdk_client_gets_the_result_after_an_out_of_band_approval() {
    let Some(python) = std::env::var_os("TC_MCP_PYTHON").filter(|p| !p.is_empty()) else {
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the_python_sdk_client_gets_the_result_after_an_out_of_band_approval: \
             TC_MCP_PYTHON is not set; install the clients with `eval \"$(.ci/mcp-clients)\"`"
        );
        return;
    };
    let dir = tempfile::TempDir::new().unwrap();
    let db = dir.path().join("pending.db");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/interop/mcp_client.py");
    // The script bounds its own run, and every command it starts.
    let out = Command::new(python)
        .arg(script)
        .arg("--approvals")
        .arg(APPROVALS)
        .arg(&db)
        .args(["--stdio", SERVER, "--pending-store"])
        .arg(&db)
        .arg("--stdio")
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("SUMMARY PASS"),
        "Python MCP client failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for check in [
        "deferred_waiting.approval_id",
        "deferred_approved.command",
        "deferred_ran.once",
        "deferred_replayed.replay",
    ] {
        assert!(
            stdout.lines().any(|l| l == format!("PASS {check}")),
            "check {check} did not pass:\n{stdout}"
        );
    }
}
