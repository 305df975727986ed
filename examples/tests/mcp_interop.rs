//! Interop of the `mcp_server` example with real third-party MCP clients, not mocks:
//!
//! * the official Python MCP SDK (`mcp` on PyPI), over stdio and over streamable HTTP, running
//!   `tests/interop/mcp_client.py`;
//! * the MCP Inspector (`@modelcontextprotocol/inspector` on npm) in `--cli` mode, over stdio and
//!   HTTP.
//!
//! Each lists the tools (the user is shown what it may call: not `delete_document`), calls one
//! that succeeds, one with bad arguments, the hidden one (the server refuses it for the missing
//! capability; the Inspector will not even send it) and one that needs approval (the Python
//! client also approves one call and declines another through MCP elicitation under
//! 2025-11-25, and again through input requests under 2026-07-28, which its high-level client
//! negotiates by itself), and checks every `structuredContent` against
//! the advertised `outputSchema` with a JSON Schema validator on the client side (Python
//! `jsonschema` in the script; the `jsonschema` crate here for the Inspector's output).
//!
//! The clients are installed inside the repository by `.ci/mcp-clients`, which prints the
//! variables these tests read: `TC_MCP_PYTHON` (a python with `mcp` and `jsonschema`) and
//! `TC_MCP_INSPECTOR` (the `mcp-inspector` executable; v1's `mcp-inspector-cli` works too). Without them each test prints
//! `SKIPPED: ...` to stderr; a variable naming a missing file fails the test.
//!
//! Two more tests need no third-party client and always run: the binary's argument errors, and
//! one stdio session spoken by hand (it answers, then exits when the client closes stdin).
//!
//! They live in the examples crate because they test its `mcp_server` binary, which Cargo
//! builds for them and names in `CARGO_BIN_EXE_mcp_server`. Every child process has a timeout
//! and is killed when a test ends, even by a panic; HTTP servers bind port 0 and report the
//! port they got.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

const SERVER: &str = env!("CARGO_BIN_EXE_mcp_server");
/// Per client run: generous for a loaded 2-core machine; a run takes about a second.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(90);
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(20);

fn interop_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/interop/mcp_client.py")
}

/// The client named by `var`, or `None` after printing why the test is skipped.
fn client(test: &str, var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(path) if !path.is_empty() => {
            let path = PathBuf::from(path);
            assert!(
                path.exists(),
                "{var}={} does not exist; re-run .ci/mcp-clients",
                path.display()
            );
            Some(path)
        }
        _ => {
            // Straight to the process's stderr: libtest captures `eprintln!` of passing tests,
            // and a skip must never look like a pass.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED: {test}: {var} is not set, so this interop test did not run; \
                 install the clients with `eval \"$(.ci/mcp-clients)\"`"
            );
            None
        }
    }
}

/// Kills and reaps the child when dropped, so no test leaves a process behind.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

fn drain(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

/// Waits for `child` to exit, failing the test after `CLIENT_TIMEOUT` (the caller's `Reaped`
/// then kills it).
fn wait(child: &mut Child, what: &str) -> ExitStatus {
    let deadline = Instant::now() + CLIENT_TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "{what} did not finish within {CLIENT_TIMEOUT:?}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `cmd` to completion within `CLIENT_TIMEOUT`, reading both pipes as it goes (a full
/// pipe would otherwise stall the child).
fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = Reaped(
        cmd.spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}")),
    );
    let stdout = drain(child.0.stdout.take());
    let stderr = drain(child.0.stderr.take());
    let status = wait(&mut child.0, &format!("{cmd:?}"));
    Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// The example server on streamable HTTP at a free loopback port; killed on drop.
struct HttpServer {
    _process: Reaped,
    url: String,
}

fn http_server() -> HttpServer {
    let mut child = Reaped(
        Command::new(SERVER)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start mcp_server --http"),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let url = rx
        .recv_timeout(SERVER_START_TIMEOUT)
        .expect("mcp_server --http prints its URL");
    let url = url.trim().to_owned();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url:?}"
    );
    HttpServer {
        _process: child,
        url,
    }
}

/// The checks the Python script must report as passed: if one disappeared, the script changed
/// and this test should notice.
const PYTHON_CHECKS: &[&str] = &[
    "initialize.tools_capability",
    "initialize.version",
    "initialize.list_changed",
    "list.names",
    "list.search_documents.annotations",
    "list.send_email.annotations",
    "list.send_email.meta",
    "call_ok.is_error",
    "call_ok.matches_output_schema",
    "call_ok.data",
    "call_bad_args.matches_output_schema",
    "call_bad_args.category",
    "call_denied_capability.matches_output_schema",
    "call_denied_capability.category",
    "call_needs_approval.matches_output_schema",
    "call_needs_approval.out_of_band",
    "call_unknown.protocol_error",
    "elicit.question",
    "elicit_approved.matches_output_schema",
    "elicit_approved.sent",
    "elicit_declined.matches_output_schema",
    "elicit_declined.denied",
    "modern.version",
    "modern.list.names",
    "modern.list.cache_hints",
    "modern.approved.matches_output_schema",
    "modern.approved.sent",
    "modern.declined.matches_output_schema",
    "modern.declined.denied",
];

fn assert_python_passed(out: &Output) {
    assert!(
        out.status.success() && out.stdout.contains("SUMMARY PASS"),
        "Python MCP client failed ({}):\n{}\n{}",
        out.status,
        out.stdout,
        out.stderr
    );
    for check in PYTHON_CHECKS {
        assert!(
            out.stdout.lines().any(|l| l == format!("PASS {check}")),
            "check {check} did not pass:\n{}",
            out.stdout
        );
    }
    assert!(!out.stdout.contains("\nFAIL "), "{}", out.stdout);
}

#[test]
fn python_sdk_over_stdio() {
    let Some(python) = client("python_sdk_over_stdio", "TC_MCP_PYTHON") else {
        return;
    };
    let out = run(Command::new(python)
        .arg(interop_script())
        .args(["--stdio", SERVER, "--stdio"]));
    assert_python_passed(&out);
}

#[test]
fn python_sdk_over_streamable_http() {
    let Some(python) = client("python_sdk_over_streamable_http", "TC_MCP_PYTHON") else {
        return;
    };
    let server = http_server();
    let out = run(Command::new(python)
        .arg(interop_script())
        .args(["--http", &server.url]));
    assert_python_passed(&out);
}

/// How the Inspector reaches the server.
enum Target<'a> {
    Stdio,
    Http(&'a str),
}

/// Runs the inspector and returns what it printed. `expect_error`: the call answers
/// `isError: true`, which v2 reports with a failing exit status (v1 exits 0); otherwise the run
/// must succeed.
fn inspector(cli: &Path, target: &Target<'_>, method_args: &[&str], expect_error: bool) -> Value {
    let mut cmd = Command::new(cli);
    // v1 (`inspector-cli` 1.0.3) looks for its package.json with a path relative to the
    // *working directory* (fs.existsSync("../package.json")) but imports it relative to its
    // module, so it only starts from its own `build/`; v2 does not care. Running from the
    // executable's directory suits both.
    let build_dir = std::fs::canonicalize(cli)
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf));
    if let Some(dir) = build_dir {
        cmd.current_dir(dir);
    }
    // v2 keeps state under ~/.mcp-inspector: point it at the build's scratch space instead.
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-inspector-home");
    std::fs::create_dir_all(&home).expect("scratch HOME for the inspector");
    cmd.env("HOME", &home).arg("--cli");
    match target {
        Target::Stdio => cmd.args([SERVER, "--stdio"]),
        Target::Http(url) => cmd.args([url, "--transport", "http"]),
    };
    cmd.args(method_args);
    let out = run(&mut cmd);
    assert!(
        expect_error || out.status.success(),
        "inspector {method_args:?} failed ({}):\n{}\n{}",
        out.status,
        out.stdout,
        out.stderr
    );
    // The CLI's own errors (as opposed to the server's answers) go to stderr.
    let printed = if out.stdout.trim().is_empty() {
        &out.stderr
    } else {
        &out.stdout
    };
    serde_json::from_str(printed).unwrap_or_else(|e| {
        panic!(
            "inspector printed no JSON ({e}):\n{}\n{}",
            out.stdout, out.stderr
        )
    })
}

fn inspector_scenario(cli: &Path, target: Target<'_>) {
    let listed = inspector(cli, &target, &["--method", "tools/list"], false);
    let tools = listed["tools"].as_array().expect("a tools array");
    let mut names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "create_draft_ticket",
            "read_document_span",
            "search_documents",
            "send_email"
        ],
        "delete_document is hidden: the user lacks its capability"
    );
    let schema_of = |name: &str| -> Value {
        let tool = tools.iter().find(|t| t["name"] == name).unwrap();
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        assert_eq!(tool["outputSchema"]["type"], "object", "{name}");
        tool["outputSchema"].clone()
    };
    // The Inspector calls only what the list offers: the hidden tool never reaches the server
    // (the server's answer to such a call, `UNAUTHORIZED`, is checked with the Python SDK).
    let hidden = inspector(
        cli,
        &target,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "delete_document",
            "--tool-arg",
            "source_id=policy/refund",
        ],
        true,
    );
    assert_eq!(hidden["error"]["code"], "tool_not_found", "{hidden}");
    let cases: [(&str, &[&str], Option<&str>); 3] = [
        ("search_documents", &["query=refund policy"], None),
        (
            "search_documents",
            &["query=refund", "top_k=50"],
            Some("INVALID_INPUT"),
        ),
        (
            "send_email",
            &[
                "to=lee@acme.test",
                "subject=Refund policy",
                "body=From 2026-07-01.",
            ],
            Some("POLICY_DENIED"),
        ),
    ];
    for (tool, args, failure) in cases {
        let mut method = vec!["--method", "tools/call", "--tool-name", tool, "--tool-arg"];
        method.extend_from_slice(args);
        let result = inspector(cli, &target, &method, failure.is_some());
        let envelope = &result["structuredContent"];
        assert_eq!(
            result["isError"].as_bool().unwrap_or(false),
            failure.is_some(),
            "{tool} {args:?}: {result}"
        );
        assert_eq!(envelope["ok"], failure.is_none(), "{tool}: {envelope}");
        if let Some(category) = failure {
            assert_eq!(
                envelope["error"]["category"], category,
                "{tool}: {envelope}"
            );
        }
        let schema = schema_of(tool);
        let validator = jsonschema::draft202012::new(&schema).expect("outputSchema compiles");
        let errors: Vec<String> = validator
            .iter_errors(envelope)
            .map(|e| e.to_string())
            .collect();
        assert!(
            errors.is_empty(),
            "{tool}: structuredContent breaks outputSchema: {errors:?}"
        );
    }
}

#[test]
fn inspector_cli_over_stdio() {
    let Some(cli) = client("inspector_cli_over_stdio", "TC_MCP_INSPECTOR") else {
        return;
    };
    inspector_scenario(&cli, Target::Stdio);
}

#[test]
fn inspector_cli_over_streamable_http() {
    let Some(cli) = client("inspector_cli_over_streamable_http", "TC_MCP_INSPECTOR") else {
        return;
    };
    let server = http_server();
    inspector_scenario(&cli, Target::Http(&server.url));
}

// Without third-party clients: the binary itself, so a machine without them still checks it.

#[test]
fn the_binary_refuses_bad_arguments_with_usage() {
    for args in [&["--bogus"][..], &["--http", "not-an-address"], &[]] {
        let out = run(Command::new(SERVER).args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("usage: mcp_server") || out.stderr.contains("not an address"),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
}

#[test]
fn the_binary_speaks_mcp_on_stdio_and_exits_when_the_client_closes() {
    use std::io::Write as _;
    let mut child = Reaped(
        Command::new(SERVER)
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mcp_server --stdio"),
    );
    let mut stdin = child.0.stdin.take().unwrap();
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let messages = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli-test","version":"0"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"refund policy"}}}"#,
    ];
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
    }
    let mut replies: Vec<Value> = Vec::new();
    while !replies.iter().any(|r| r["id"] == 2) {
        let line = rx
            .recv_timeout(SERVER_START_TIMEOUT)
            .expect("mcp_server answers on stdout");
        replies.push(serde_json::from_str(&line).expect("stdout carries only JSON-RPC"));
    }
    // Closing stdin ends the session; the server must exit on its own.
    drop(stdin);
    let status = wait(&mut child.0, "mcp_server after EOF on stdin");
    assert!(status.success(), "{status}");
    let reply = |id: u64| replies.iter().find(|r| r["id"] == id).cloned();
    assert_eq!(
        reply(1).expect("initialize answered")["result"]["serverInfo"]["name"],
        "tool-contract-documents"
    );
    let call = reply(2).expect("tools/call answered");
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(call["result"]["structuredContent"]["ok"], true);
}
