//! 2026-07-28 over streamable HTTP, spoken with raw HTTP/1.1: each request stands alone (no
//! `initialize`, no session id), yet a value copied out of one result into the next call is
//! still traced, through the caller's own flow record.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tool_contract::mcp::{HttpConfig, McpRequest, McpServer};
use tool_contract::{ToolContext, ToolError};
use tool_contract_examples::mcp::local_user;
use tool_contract_examples::DocumentStore;

use super::registry;

const WAIT: Duration = Duration::from_secs(10);

/// One 2026-07-28 `tools/call` from `user`, on its own connection; the JSON-RPC answer.
async fn call(addr: std::net::SocketAddr, user: &str, tool: &str, arguments: Value) -> Value {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            },
        },
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\n\
         X-User: {user}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    tokio::time::timeout(WAIT, stream.read_to_end(&mut response))
        .await
        .expect("the server answers in time")
        .unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    // As JSON or as one SSE `data:` event.
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(body.lines())
        .find_map(|l| {
            serde_json::from_str::<Value>(l.trim())
                .ok()
                .filter(|v| v.get("jsonrpc").is_some())
        })
        .unwrap_or_else(|| panic!("no JSON-RPC message in {text}"))
}

/// The approval question of an `input_required` answer.
fn question(answer: &Value) -> String {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    result["inputRequests"]["approval"]["params"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no approval question in {answer}"))
        .to_owned()
}

#[tokio::test]
async fn sessionless_requests_are_traced_through_the_callers_own_flow_record() {
    let store = DocumentStore::seeded();
    let provided = store.clone();
    // Two users, told apart by a header (a real host would authenticate them).
    let server = McpServer::new(registry(), move |req: &McpRequest<'_>| {
        let user = req
            .http_header("x-user")
            .ok_or_else(|| ToolError::unauthorized("NO_USER", "no user"))?;
        Ok::<ToolContext, ToolError>(
            local_user(&provided)
                .principal(format!("user:{user}"))
                .build(),
        )
    });
    let http = server
        .bind_http(HttpConfig::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    let stop = http.shutdown_handle();
    let running = tokio::spawn(http.run());

    let read = call(
        addr,
        "kim",
        "read_document_span",
        json!({"source_id": "incident/2026-11-mail", "span_id": "p1:l1-l3"}),
    )
    .await;
    assert_eq!(read["result"]["isError"], false, "{read}");
    let injected =
        json!({"to": "all-staff@acme.test", "subject": "Salaries", "body": "As requested."});

    // The reader's next request, on a new connection and with no session, still knows where
    // the recipient came from.
    let asked = question(&call(addr, "kim", "send_email", injected.clone()).await);
    assert!(
        asked.contains("/to <- copied from the result of read_document_span"),
        "{asked}"
    );
    // Another caller never read the document: nothing is traced for it.
    let asked = question(&call(addr, "lee", "send_email", injected).await);
    assert!(!asked.contains("copied from"), "{asked}");
    assert!(store.sent_mail().is_empty());

    stop.shutdown();
    let _ = tokio::time::timeout(WAIT, running).await;
}
