//! The properties the fuzz targets check, as functions of arbitrary bytes.
//!
//! The cargo-fuzz targets under `tool-contract/fuzz/` call these, and `cargo test` replays the
//! checked-in corpus through them (`tests/tests/fuzz_corpus.rs`), so a crash found once stays a
//! test on stable. Each function returns normally for input it has nothing to say about and
//! panics when a property fails.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tool_contract::envelope::{Meta, Observation, Provenance};
use tool_contract::mcp::{McpRequest, McpServer};
use tool_contract::{canonical, Prepared, Registry, Rejection, ToolContext, ToolError};
use tool_contract_examples::documents::{
    CreateDraftTicket, DeleteDocument, ReadDocumentSpan, SearchDocuments, SendEmail,
};
use tool_contract_examples::mcp::{document_registry, local_user, local_user_context};
use tool_contract_examples::store::DocumentStore;

/// Two registries over the example tools that differ only in the path a proposal takes.
struct Paths {
    fast: Registry,
    full: Registry,
    ctx: ToolContext,
}

fn paths() -> &'static Paths {
    static PATHS: OnceLock<Paths> = OnceLock::new();
    PATHS.get_or_init(|| {
        let tools = || {
            tool_contract::Toolset::new()
                .with(SearchDocuments)
                .with(ReadDocumentSpan)
                .with(CreateDraftTicket)
                .with(SendEmail)
                .with(DeleteDocument)
        };
        Paths {
            fast: Registry::builder().toolset(tools()).build().expect("fast"),
            full: Registry::builder()
                .toolset(tools())
                .fast_path(false)
                .build()
                .expect("full"),
            // No deadline: the context lives as long as the fuzzing session.
            ctx: local_user(&DocumentStore::seeded()).build(),
        }
    })
}

/// What a prepare decided, without what legitimately differs between two registries (the
/// generated call id, wall time).
fn verdict(prepared: Result<Prepared, Rejection>) -> Value {
    match prepared {
        Ok(Prepared::Ready(call)) => json!({
            "ready": call.tool(),
            "version": call.tool_version(),
            "arguments": call.arguments(),
            "key": call.idempotency_key().map(|k| format!("{k:?}")),
        }),
        Ok(Prepared::NeedsApproval(request)) => {
            let mut subject = serde_json::to_value(request.subject()).expect("subject");
            subject["call_id"] = Value::Null;
            json!({ "approval": subject })
        }
        Err(rejection) => {
            let mut v = rejection.into_observation().to_value();
            v["meta"]["latency_ms"] = json!(0);
            v["meta"]["call_id"] = Value::Null;
            v
        }
    }
}

/// The proposal parser, both paths: any bytes give the same verdict and the same validated
/// arguments on the fast and the full path, and never a panic.
pub fn proposal(data: &[u8]) {
    let Ok(raw) = std::str::from_utf8(data) else {
        return;
    };
    let p = paths();
    let fast = verdict(p.fast.prepare_raw(raw, &p.ctx));
    let full = verdict(p.full.prepare_raw(raw, &p.ctx));
    assert_eq!(fast, full, "the two paths disagree on {raw:?}");
}

/// Characters the prompt block must never pass through as they are.
const INVISIBLE: &[char] = &[
    '\u{2028}',
    '\u{2029}',
    '\u{202A}',
    '\u{202E}',
    '\u{2066}',
    '\u{2069}',
    '\u{200B}',
    '\u{200D}',
    '\u{FEFF}',
    '\u{E0001}',
    '\u{E007F}',
];

/// The envelope and prompt-block writers: any JSON value as a tool's output gives envelope
/// text that serde_json reads back to the same envelope, and a prompt block with exactly one
/// closing tag, no invisible characters, and the same envelope inside.
pub fn envelope(data: &[u8]) {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    // Strings from the input also go into the attributes.
    let text_of = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let meta: Meta = serde_json::from_value(json!({
        "tool": "fuzz_tool",
        "tool_version": "1.0.0",
        "call_id": text_of("call_id").unwrap_or_else(|| "call_1".into()),
        "latency_ms": 0,
        "attempts": 1,
    }))
    .expect("meta");
    let provenance = Provenance::untrusted(text_of("source").unwrap_or_default(), text_of("rev"));
    let obs = Observation::success(value.clone(), meta, provenance);
    let text = obs.to_json();
    let back: Value = serde_json::from_str(&text).expect("the envelope is JSON");
    assert_eq!(back, obs.to_value(), "the writer and serde_json disagree");
    assert_eq!(back["data"], value, "the data changed on the way");
    let block = obs.to_prompt_block();
    assert_eq!(block.matches("</tool_result>").count(), 1, "{block}");
    assert_eq!(block.matches("<tool_result").count(), 1, "{block}");
    assert!(
        !block.contains(INVISIBLE),
        "an invisible character passed: {block:?}"
    );
    let body = block.lines().nth(1).expect("a body line");
    let inside: Value = serde_json::from_str(body).expect("the block's body is JSON");
    assert_eq!(inside, back);
}

/// A number as the canonical form means it: integers exactly, anything else by its `f64`
/// value, an integral float equal to the same integer (`8`, `8.0` and `8e0` are one number).
#[derive(PartialEq, Debug)]
enum Num {
    Int(i128),
    Float(u64),
}

fn num(n: &serde_json::Number) -> Num {
    if let Some(i) = n.as_i64() {
        return Num::Int(i128::from(i));
    }
    if let Some(u) = n.as_u64() {
        return Num::Int(i128::from(u));
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.fract() == 0.0 && f.abs() < 1e38 {
        // Exact: an integral f64 below 2^126 converts to i128 without rounding.
        #[allow(clippy::cast_possible_truncation)]
        return Num::Int(f as i128);
    }
    Num::Float(f.to_bits())
}

/// Whether two values mean the same arguments: the reference the canonical form is checked
/// against.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num(x) == num(y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// The digest behind approvals, argument hashes and derived keys: for a JSON array of two
/// values, the digests are equal if and only if the values mean the same arguments, and the
/// canonical text reads back to an equal value.
pub fn digest(data: &[u8]) {
    let Ok(Value::Array(pair)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let [a, b] = pair.as_slice() else {
        return;
    };
    assert_eq!(
        canonical::sha256(a) == canonical::sha256(b),
        same(a, b),
        "digest equality and meaning disagree for {a} and {b}"
    );
    for v in [a, b] {
        let text = canonical::to_vec(v);
        let back: Value = serde_json::from_slice(&text).expect("canonical text is JSON");
        assert!(same(&back, v), "{v} came back as {back}");
    }
}

/// The MCP request path: after a normal handshake, any line of bytes sent as a message gets
/// answers that are each one JSON value, the server ends when the client does, and nothing
/// panics or hangs.
pub fn mcp_request(data: &[u8]) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let store = DocumentStore::seeded();
        let context = move |_req: &McpRequest<'_>| -> Result<ToolContext, ToolError> {
            Ok(local_user_context(&store))
        };
        let server = McpServer::builder(document_registry().expect("registry"), context)
            .approval_timeout(Duration::from_millis(50))
            .build();
        let (client, server_io) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server_io);
        let serving = tokio::spawn(server.serve(read, write));
        let (client_read, mut client_write) = tokio::io::split(client);
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(client_read).lines();
            let mut answers = 0usize;
            while let Ok(Some(line)) = lines.next_line().await {
                serde_json::from_str::<Value>(&line)
                    .unwrap_or_else(|e| panic!("an answer that is not JSON ({e}): {line}"));
                answers += 1;
            }
            answers
        });
        let handshake = concat!(
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            "\n"
        );
        let wrote = async {
            client_write.write_all(handshake.as_bytes()).await?;
            client_write.write_all(data).await?;
            client_write.write_all(b"\n").await?;
            client_write.shutdown().await
        };
        // The server may close first (a message it cannot read ends the session).
        let _ = wrote.await;
        let ended = tokio::time::timeout(Duration::from_secs(10), serving)
            .await
            .expect("the server hung after its client closed");
        if let Err(e) = ended {
            assert!(!e.is_panic(), "the server panicked: {e}");
        }
        let answers = tokio::time::timeout(Duration::from_secs(10), reader)
            .await
            .expect("the answers never ended")
            .expect("an answer was not JSON");
        assert!(answers >= 1, "the handshake was not answered");
    });
}
