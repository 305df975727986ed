//! The streamable HTTP endpoint on loopback, spoken to with raw HTTP/1.1: routing, rmcp's
//! DNS-rebinding guard, a real `initialize`, and shutdown.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tool_contract::mcp::{HttpConfig, HttpServer, McpRequest, McpServer};
use tool_contract::{ToolContext, ToolError};
use tool_contract_examples::DocumentStore;

use super::{ctx, registry};

const WAIT: Duration = Duration::from_secs(10);

async fn bind() -> HttpServer {
    let store = DocumentStore::seeded();
    let server = McpServer::new(
        registry(),
        move |_req: &McpRequest<'_>| -> Result<ToolContext, ToolError> { Ok(ctx(&store)) },
    );
    server
        .bind_http(HttpConfig::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap()
}

/// One request on its own connection; returns the status line and the rest of the response.
async fn send(addr: std::net::SocketAddr, request: String) -> (String, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    // `Connection: close` ends the body with the connection.
    tokio::time::timeout(WAIT, stream.read_to_end(&mut response))
        .await
        .expect("the server answers in time")
        .unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let (status, rest) = text.split_once("\r\n").unwrap_or((&text, ""));
    (status.to_owned(), rest.to_owned())
}

fn post(host: &str, path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

#[tokio::test]
async fn the_endpoint_serves_mcp_at_its_path_to_loopback_hosts_only_and_stops_on_request() {
    let http = bind().await;
    let addr = http.local_addr().unwrap();
    assert!(addr.ip().is_loopback());
    assert_eq!(http.url().unwrap(), format!("http://{addr}/mcp"));
    let stop = http.shutdown_handle();
    let running = tokio::spawn(http.run());

    let (status, body) = send(addr, post(&addr.to_string(), "/mcp", INITIALIZE)).await;
    assert!(status.contains(" 200 "), "{status}\n{body}");
    assert!(body.contains("\"serverInfo\""), "{body}");
    assert!(
        body.to_ascii_lowercase().contains("mcp-session-id"),
        "{body}"
    );

    let (status, _) = send(addr, post(&addr.to_string(), "/other", INITIALIZE)).await;
    assert!(status.contains(" 404 "), "{status}");

    // DNS rebinding: a page on another origin resolving its name to 127.0.0.1.
    let (status, body) = send(addr, post("attacker.example", "/mcp", INITIALIZE)).await;
    assert!(status.contains(" 403 "), "{status}\n{body}");

    stop.shutdown();
    let ended = tokio::time::timeout(WAIT, running).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the listener is closed after shutdown"
    );
}

/// The value of `name` in a raw response head (case-insensitive).
fn header<'a>(response: &'a str, name: &str) -> Option<&'a str> {
    let head = response.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.trim()
            .eq_ignore_ascii_case(name)
            .then_some(value.trim())
    })
}

/// The JSON-RPC message in a response body, whether sent as JSON or as one SSE `data:` event.
fn message(response: &str) -> serde_json::Value {
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .chain(body.lines())
        .find_map(|l| {
            serde_json::from_str::<serde_json::Value>(l.trim())
                .ok()
                .filter(|v| v.get("jsonrpc").is_some())
        })
        .unwrap_or_else(|| panic!("no JSON-RPC message in {response}"))
}

#[tokio::test]
async fn over_http_the_context_provider_reads_the_request_headers() {
    let store = DocumentStore::seeded();
    let server = McpServer::new(registry(), move |req: &McpRequest<'_>| {
        if req.transport() != tool_contract::mcp::Transport::Http {
            return Err(ToolError::internal("WRONG_TRANSPORT", "not over HTTP"));
        }
        match req.http_header("x-user") {
            Some("kim") => Ok(ctx(&store)),
            _ => Err(ToolError::unauthorized(
                "NO_USER",
                "the request names no known user",
            )),
        }
    });
    let http = server
        .bind_http(HttpConfig::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = http.local_addr().unwrap();
    let stop = http.shutdown_handle();
    let running = tokio::spawn(http.run());
    let host = addr.to_string();

    let (status, rest) = send(addr, post(&host, "/mcp", INITIALIZE)).await;
    assert!(status.contains(" 200 "), "{status}\n{rest}");
    let session = header(&rest, "mcp-session-id")
        .expect("a session id")
        .to_owned();
    let with_session = |extra: &str, body: &str| {
        let request = post(&host, "/mcp", body);
        request.replacen(
            "\r\n",
            &format!(
                "\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n{extra}"
            ),
            1,
        )
    };
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _) = send(addr, with_session("", initialized)).await;
    assert!(status.contains(" 202 "), "{status}");

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"refund"}}}"#;
    let (_, rest) = send(addr, with_session("X-User: kim\r\n", call)).await;
    let answer = message(&rest);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let (_, rest) = send(addr, with_session("X-User: mallory\r\n", call)).await;
    let answer = message(&rest);
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["code"],
        "NO_USER"
    );

    stop.shutdown();
    let ended = tokio::time::timeout(WAIT, running).await;
    assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
}

/// What an authentication layer in front of the service would leave in the request.
#[derive(Clone)]
struct AuthenticatedUser(&'static str);

#[tokio::test]
async fn a_mounted_service_passes_layer_extensions_to_the_context_provider() {
    use http_body_util::{BodyExt, Full};

    let store = DocumentStore::seeded();
    let server = McpServer::new(registry(), move |req: &McpRequest<'_>| {
        let user = req
            .http_parts()
            .and_then(|parts| parts.extensions.get::<AuthenticatedUser>())
            .ok_or_else(|| ToolError::unauthorized("NOT_AUTHENTICATED", "no user"))?;
        assert_eq!(user.0, "kim");
        Ok(ctx(&store))
    });
    let (service, shutdown) = server.http_service(&HttpConfig::default());
    let request = |session: Option<&str>, body: &'static str, user: Option<&'static str>| {
        let mut builder = http::Request::post("/anywhere/the/router/says")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = session {
            builder = builder
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-06-18");
        }
        let mut request = builder
            .body(Full::new(bytes::Bytes::from_static(body.as_bytes())))
            .unwrap();
        if let Some(user) = user {
            request.extensions_mut().insert(AuthenticatedUser(user));
        }
        request
    };
    let response = service.handle(request(None, INITIALIZE, None)).await;
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let response = service
        .handle(request(
            Some(&session),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            None,
        ))
        .await;
    assert_eq!(response.status(), 202);
    const CALL: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_documents","arguments":{"query":"refund"}}}"#;
    for (user, is_error) in [(Some("kim"), false), (None, true)] {
        let response = service.handle(request(Some(&session), CALL, user)).await;
        let body = tokio::time::timeout(WAIT, response.into_body().collect())
            .await
            .expect("the response ends")
            .unwrap()
            .to_bytes();
        let text = format!("HTTP/1.1 200 OK\r\n\r\n{}", String::from_utf8_lossy(&body));
        let answer = message(&text);
        assert_eq!(answer["result"]["isError"], is_error, "{user:?}: {answer}");
    }
    shutdown.shutdown();
}
