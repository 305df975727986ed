//! A soak of the streamable HTTP endpoint: the document server under mixed traffic for a while,
//! then a report of requests served, outcomes by kind and resident memory (Linux).
//!
//! ```text
//! cargo run -p tool-contract-examples --bin mcp_soak -- [SECONDS] [CLIENTS]
//! ```
//!
//! SECONDS defaults to 600, CLIENTS to 8. Each client loops over a mix: tool calls, bad input
//! (invalid arguments, malformed JSON, an unknown tool), approvals answered by elicitation
//! (accepted and declined) and out of band, calls cancelled while awaiting approval or dropped
//! with their connection, and session churn (sessions deleted or abandoned to idle expiry).
//! The server runs in this process with the default limits except the per-address session cap
//! (every client shares 127.0.0.1) and a one-minute idle expiry, so abandoned sessions expire
//! within the run. Not part of CI.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tool_contract::mcp::{HttpConfig, DEFAULT_MAX_SESSIONS};
use tool_contract_examples::mcp::document_server;
use tool_contract_examples::DocumentStore;

/// How long a client waits for any one answer before counting a timeout.
const WAIT: Duration = Duration::from_secs(30);
/// The idle expiry during the soak, short so abandoned sessions expire within the run.
const IDLE: Duration = Duration::from_secs(60);

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: u64 = args.first().map_or(Ok(600), |s| s.parse())?;
    let clients: usize = args.get(1).map_or(Ok(8), |s| s.parse())?;

    let server = document_server(DocumentStore::seeded())?;
    let config = HttpConfig::new("127.0.0.1:0".parse()?)
        .max_sessions_per_client(DEFAULT_MAX_SESSIONS)
        .session_idle_timeout(IDLE);
    let http = server.bind_http(config).await?;
    let addr = http.local_addr()?;
    let stop = http.shutdown_handle();
    let serving = tokio::spawn(http.run());

    let stats = Arc::new(Stats::default());
    let start_rss = resident_kib();
    let peak = Arc::new(AtomicU64::new(start_rss.unwrap_or(0)));
    let sampler = {
        let peak = Arc::clone(&peak);
        tokio::spawn(async move {
            loop {
                if let Some(kib) = resident_kib() {
                    peak.fetch_max(kib, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        })
    };
    println!("soak: {secs} s, {clients} clients, http://{addr}/mcp");
    let until = Instant::now() + Duration::from_secs(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|i| {
            let stats = Arc::clone(&stats);
            tokio::spawn(async move { client(addr, i as u64, until, &stats).await })
        })
        .collect();
    let mut last = Instant::now();
    while Instant::now() < until {
        tokio::time::sleep(Duration::from_secs(1)).await;
        if last.elapsed() >= Duration::from_secs(60) {
            last = Instant::now();
            println!(
                "  {} requests, resident {} KiB",
                stats.served.load(Ordering::Relaxed),
                resident_kib().unwrap_or(0)
            );
        }
    }
    for task in tasks {
        task.await?;
    }
    let end_rss = resident_kib();
    sampler.abort();
    stop.shutdown();
    serving.await??;

    println!("requests served: {}", stats.served.load(Ordering::Relaxed));
    println!("outcomes by kind:");
    for (kind, n) in stats.kinds.lock().unwrap().iter() {
        println!("  {kind:<58} {n}");
    }
    match (start_rss, end_rss) {
        (Some(start), Some(end)) => println!(
            "resident memory: start {start} KiB, peak {} KiB, end {end} KiB",
            peak.load(Ordering::Relaxed)
        ),
        _ => println!("resident memory: SKIPPED (read from /proc, Linux only)"),
    }
    Ok(())
}

/// This process's resident memory in KiB; `None` off Linux.
fn resident_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[derive(Default)]
struct Stats {
    served: AtomicU64,
    kinds: Mutex<BTreeMap<String, u64>>,
}

impl Stats {
    fn count(&self, kind: impl Into<String>) {
        *self.kinds.lock().unwrap().entry(kind.into()).or_default() += 1;
    }

    /// Counts one answered request of operation `op` by what the answer says.
    fn answer(&self, op: &str, status: u16, message: Option<&Value>) {
        self.served.fetch_add(1, Ordering::Relaxed);
        let outcome = match message {
            _ if status >= 400 => format!("http {status}"),
            Some(m) if m.get("error").is_some() => {
                format!("jsonrpc error {}", m["error"]["code"])
            }
            Some(m) if m["result"]["isError"] == true => format!(
                "tool error {}",
                m["result"]["structuredContent"]["error"]["code"]
                    .as_str()
                    .unwrap_or("?")
            ),
            Some(_) => "ok".to_owned(),
            None if status == 202 => "accepted (202)".to_owned(),
            None => format!("http {status}, stream ended without an answer"),
        };
        self.count(format!("{op}: {outcome}"));
    }
}

/// A tiny xorshift: the mix needs variety, not quality.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One client's loop until `until`; every failure is counted, never fatal.
async fn client(addr: SocketAddr, seed: u64, until: Instant, stats: &Stats) {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (seed + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9));
    let mut n = seed * 1_000_000;
    let mut plain: Option<(Conn, String)> = None;
    let mut asking: Option<(Conn, String)> = None;
    while Instant::now() < until {
        n += 1;
        if plain.is_none() {
            plain = open_session(addr, false, stats).await;
        }
        if asking.is_none() {
            asking = open_session(addr, true, stats).await;
        }
        let (Some((conn, session)), Some((ask_conn, ask_session))) =
            (plain.as_mut(), asking.as_mut())
        else {
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        };
        let roll = rng.below(100);
        let outcome = match roll {
            0..=39 => {
                let args = json!({"query": "refund"});
                call(
                    conn,
                    addr,
                    session,
                    n,
                    ("search_documents", args),
                    "call",
                    stats,
                )
                .await
            }
            40..=49 => {
                let args = json!({"source_id": "policy/refund", "span_id": "p1:l1-l8"});
                call(
                    conn,
                    addr,
                    session,
                    n,
                    ("read_document_span", args),
                    "call",
                    stats,
                )
                .await
            }
            50..=57 => {
                let args = json!({"query": "x", "top_k": 99});
                call(
                    conn,
                    addr,
                    session,
                    n,
                    ("search_documents", args),
                    "invalid arguments",
                    stats,
                )
                .await
            }
            58..=61 => {
                let req = request(
                    addr,
                    "POST",
                    Some(session),
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":",
                );
                exchange(conn, &req, "malformed JSON", stats).await
            }
            62..=64 => {
                call(
                    conn,
                    addr,
                    session,
                    n,
                    ("no_such_tool", json!({})),
                    "unknown tool",
                    stats,
                )
                .await
            }
            65..=69 => {
                // Out of band: this session did not declare elicitation.
                call(
                    conn,
                    addr,
                    session,
                    n,
                    ("send_email", email(n)),
                    "approval out of band",
                    stats,
                )
                .await
            }
            70..=79 => approve(ask_conn, addr, ask_session, n, roll < 76, stats).await,
            80..=84 => cancel_while_asked(ask_conn, addr, ask_session, n, stats).await,
            85..=89 => {
                // The client goes away mid-request: the server must not mind.
                if let Ok(mut gone) = Conn::open(addr).await {
                    let body = call_body(n, "search_documents", &json!({"query": "refund"}));
                    let _ = gone
                        .write(&request(addr, "POST", Some(session), &body))
                        .await;
                    stats.count("call dropped with its connection");
                }
                Ok(())
            }
            _ => {
                // Churn: replace the plain session; most are deleted, some abandoned.
                let (mut old, id) = plain.take().expect("checked above");
                if rng.below(4) != 0 {
                    let delete = request(addr, "DELETE", Some(&id), "");
                    let _ = exchange(&mut old, &delete, "session delete", stats).await;
                } else {
                    stats.count("session abandoned to expiry");
                }
                Ok(())
            }
        };
        if let Err(kind) = outcome {
            stats.count(kind);
            // The connection state is unknown after a failure: start afresh.
            if (70..85).contains(&roll) {
                asking = None;
            } else {
                plain = None;
            }
        }
    }
}

fn email(n: u64) -> Value {
    // A bounded set of messages, so repeats exercise the idempotent replay too.
    json!({"to": "kim@example.com", "subject": format!("soak {}", n % 500), "body": "status"})
}

fn call_body(id: u64, tool: &str, args: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
    .to_string()
}

async fn open_session(
    addr: SocketAddr,
    elicitation: bool,
    stats: &Stats,
) -> Option<(Conn, String)> {
    let mut conn = match Conn::open(addr).await {
        Ok(conn) => conn,
        Err(_) => {
            stats.count("io: connect");
            return None;
        }
    };
    let capabilities = if elicitation {
        json!({"elicitation": {}})
    } else {
        json!({})
    };
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "clientInfo": {"name": "soak", "version": "0"}}});
    let reply = match conn
        .roundtrip(&request(addr, "POST", None, &init.to_string()))
        .await
    {
        Ok(reply) => reply,
        Err(kind) => {
            stats.count(kind);
            return None;
        }
    };
    stats.answer("initialize", reply.status, reply.messages.first());
    let id = reply.session?;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    exchange(
        &mut conn,
        &request(addr, "POST", Some(&id), initialized),
        "initialized",
        stats,
    )
    .await
    .ok()?;
    stats.count("session opened");
    Some((conn, id))
}

async fn call(
    conn: &mut Conn,
    addr: SocketAddr,
    session: &str,
    id: u64,
    (tool, args): (&str, Value),
    op: &str,
    stats: &Stats,
) -> Result<(), String> {
    let body = call_body(id, tool, &args);
    exchange(
        conn,
        &request(addr, "POST", Some(session), &body),
        op,
        stats,
    )
    .await
}

/// One request, one whole answer, counted.
async fn exchange(conn: &mut Conn, request: &str, op: &str, stats: &Stats) -> Result<(), String> {
    let reply = conn.roundtrip(request).await?;
    let last = reply.messages.iter().rev().find(|m| m.get("id").is_some());
    stats.answer(op, reply.status, last);
    Ok(())
}

/// A call that needs approval, answered through elicitation (`yes`: approve, else decline).
async fn approve(
    conn: &mut Conn,
    addr: SocketAddr,
    session: &str,
    id: u64,
    yes: bool,
    stats: &Stats,
) -> Result<(), String> {
    let op = if yes {
        "approval accepted"
    } else {
        "approval declined"
    };
    let body = call_body(id, "send_email", &email(id));
    let status = conn
        .start(&request(addr, "POST", Some(session), &body))
        .await?;
    loop {
        let Some(message) = conn.next_message().await? else {
            stats.answer(op, status, None);
            return Ok(());
        };
        if message["method"] == "elicitation/create" {
            let answer = if yes {
                json!({"action": "accept", "content": {"approve": true}})
            } else {
                json!({"action": "decline"})
            };
            let response = json!({"jsonrpc": "2.0", "id": message["id"], "result": answer});
            let mut side = Conn::open(addr)
                .await
                .map_err(|_| "io: connect".to_owned())?;
            let req = request(addr, "POST", Some(session), &response.to_string());
            let reply = side.roundtrip(&req).await?;
            if reply.status != 202 {
                stats.count(format!("elicitation answer: http {}", reply.status));
            }
        } else if message.get("id").is_some() {
            stats.answer(op, status, Some(&message));
            conn.finish().await?;
            return Ok(());
        }
    }
}

/// A call that needs approval, cancelled by the client while the question is open.
async fn cancel_while_asked(
    conn: &mut Conn,
    addr: SocketAddr,
    session: &str,
    id: u64,
    stats: &Stats,
) -> Result<(), String> {
    let body = call_body(id, "send_email", &email(id));
    let status = conn
        .start(&request(addr, "POST", Some(session), &body))
        .await?;
    let mut cancelled = false;
    loop {
        let Some(message) = conn.next_message().await? else {
            stats.answer("cancelled while asked", status, None);
            return Ok(());
        };
        if message["method"] == "elicitation/create" && !cancelled {
            cancelled = true;
            let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": id, "reason": "soak"}});
            let mut side = Conn::open(addr)
                .await
                .map_err(|_| "io: connect".to_owned())?;
            let reply = side
                .roundtrip(&request(addr, "POST", Some(session), &cancel.to_string()))
                .await?;
            stats.count(format!("cancel notification: http {}", reply.status));
        } else if message.get("id").is_some() && message.get("method").is_none() {
            stats.answer("cancelled while asked", status, Some(&message));
            conn.finish().await?;
            return Ok(());
        }
    }
}

fn request(addr: SocketAddr, method: &str, session: Option<&str>, body: &str) -> String {
    let session = session.map_or(String::new(), |id| {
        format!("Mcp-Session-Id: {id}\r\nMcp-Protocol-Version: 2025-06-18\r\n")
    });
    format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A raw HTTP/1.1 client on one keep-alive connection that reads SSE bodies event by event.
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// What is left of the current response body: a Content-Length count, chunked, or done.
    body: Body,
    /// Body bytes read but not yet split into SSE events.
    pending: String,
}

enum Body {
    Done,
    Length(usize),
    Chunked,
}

struct Reply {
    status: u16,
    session: Option<String>,
    messages: Vec<Value>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> std::io::Result<Conn> {
        Ok(Conn {
            stream: TcpStream::connect(addr).await?,
            buf: Vec::new(),
            body: Body::Done,
            pending: String::new(),
        })
    }

    async fn write(&mut self, request: &str) -> Result<(), String> {
        self.stream
            .write_all(request.as_bytes())
            .await
            .map_err(|_| "io: write".to_owned())
    }

    async fn fill(&mut self) -> Result<(), String> {
        let mut chunk = [0u8; 16384];
        match tokio::time::timeout(WAIT, self.stream.read(&mut chunk)).await {
            Err(_) => Err("timeout".to_owned()),
            Ok(Err(_)) => Err("io: read".to_owned()),
            Ok(Ok(0)) => Err("io: closed by server".to_owned()),
            Ok(Ok(n)) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(())
            }
        }
    }

    async fn line(&mut self) -> Result<String, String> {
        loop {
            if let Some(at) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&self.buf[..at]).into_owned();
                self.buf.drain(..at + 2);
                return Ok(line);
            }
            self.fill().await?;
        }
    }

    async fn take(&mut self, n: usize) -> Result<Vec<u8>, String> {
        while self.buf.len() < n {
            self.fill().await?;
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// Sends a request and reads the response head; returns the status.
    async fn start(&mut self, request: &str) -> Result<u16, String> {
        Ok(self.start_head(request).await?.0)
    }

    async fn start_head(&mut self, request: &str) -> Result<(u16, Option<String>), String> {
        self.write(request).await?;
        let status_line = self.line().await?;
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| "bad status line".to_owned())?;
        let (mut length, mut chunked, mut session) = (0, false, None);
        loop {
            let line = self.line().await?;
            if line.is_empty() {
                break;
            }
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let (name, value) = (name.trim().to_ascii_lowercase(), value.trim());
            match name.as_str() {
                "content-length" => length = value.parse().unwrap_or(0),
                "transfer-encoding" => chunked = value.contains("chunked"),
                "mcp-session-id" => session = Some(value.to_owned()),
                _ => {}
            }
        }
        self.body = if chunked {
            Body::Chunked
        } else {
            Body::Length(length)
        };
        self.pending.clear();
        Ok((status, session))
    }

    /// The next body bytes, or `None` at the body's end.
    async fn next_bytes(&mut self) -> Result<Option<Vec<u8>>, String> {
        match self.body {
            Body::Done => Ok(None),
            Body::Length(n) => {
                self.body = Body::Done;
                self.take(n).await.map(Some)
            }
            Body::Chunked => {
                let size = self.line().await?;
                let size = usize::from_str_radix(size.trim(), 16).map_err(|_| "bad chunk")?;
                if size == 0 {
                    self.line().await?;
                    self.body = Body::Done;
                    return Ok(None);
                }
                let data = self.take(size).await?;
                self.line().await?;
                Ok(Some(data))
            }
        }
    }

    /// The next JSON-RPC message of the body (an SSE `data:` event or a plain JSON body).
    async fn next_message(&mut self) -> Result<Option<Value>, String> {
        loop {
            while let Some(end) = self.pending.find("\n\n") {
                let event: String = self.pending.drain(..end + 2).collect();
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim)
                    .collect();
                if let Ok(message) = serde_json::from_str::<Value>(&data) {
                    return Ok(Some(message));
                }
            }
            match self.next_bytes().await? {
                Some(bytes) => self.pending.push_str(&String::from_utf8_lossy(&bytes)),
                None => {
                    let rest = std::mem::take(&mut self.pending);
                    return Ok(serde_json::from_str(rest.trim()).ok());
                }
            }
        }
    }

    /// Reads the rest of the current body.
    async fn finish(&mut self) -> Result<(), String> {
        while self.next_bytes().await?.is_some() {}
        self.pending.clear();
        Ok(())
    }

    /// A request and its whole answer.
    async fn roundtrip(&mut self, request: &str) -> Result<Reply, String> {
        let (status, session) = self.start_head(request).await?;
        let mut messages = Vec::new();
        while let Some(message) = self.next_message().await? {
            messages.push(message);
        }
        Ok(Reply {
            status,
            session,
            messages,
        })
    }
}
