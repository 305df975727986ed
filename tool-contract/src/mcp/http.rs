//! Streamable HTTP: rmcp's `StreamableHttpService` (sessions, SSE, Host checks) on a hyper
//! HTTP/1.1 listener, at one path.
//!
//! # Limits
//!
//! The endpoint bounds what one client, or many, can make it hold. Each cap is set on
//! [`HttpConfig`]; past it, a client gets an HTTP status and a JSON-RPC error (`id` echoed when
//! it could be read, else `null`; `error.code` -32000, `error.data.code` naming the cap), never a
//! hang:
//!
//! | cap | default | past it |
//! |---|---|---|
//! | live sessions, total ([`max_sessions`](HttpConfig::max_sessions)) | [`DEFAULT_MAX_SESSIONS`] | `initialize` refused: 503, `Retry-After`, `SESSION_LIMIT` |
//! | live sessions per client address ([`max_sessions_per_client`](HttpConfig::max_sessions_per_client)) | [`DEFAULT_MAX_SESSIONS_PER_CLIENT`] | `initialize` refused: 429, `Retry-After`, `CLIENT_SESSION_LIMIT` |
//! | session idle time ([`session_idle_timeout`](HttpConfig::session_idle_timeout)) | [`DEFAULT_SESSION_IDLE_TIMEOUT`] | the session is closed; its id then answers 404 (the client initializes again) |
//! | concurrent connections ([`max_connections`](HttpConfig::max_connections)) | [`DEFAULT_MAX_CONNECTIONS`] | each request on a new connection: 503, `Retry-After`, `CONNECTION_LIMIT`, then the connection closes |
//! | request body read time ([`body_read_timeout`](HttpConfig::body_read_timeout)) | [`DEFAULT_BODY_READ_TIMEOUT`] | 408, `BODY_TIMEOUT`, the connection closes |
//! | request body size ([`max_body_bytes`](HttpConfig::max_body_bytes)) | [`DEFAULT_MAX_BODY_BYTES`] | 413, `BODY_TOO_LARGE`, the connection closes |
//! | request head read time, and a keep-alive connection's idle time | 30 s | the connection closes |
//!
//! A session's slot is freed when the client deletes it (`DELETE` with its `Mcp-Session-Id`),
//! when it idles past the expiry, or at shutdown. What a live session holds is bounded too: an
//! idle one some tens of kilobytes (rmcp's worker and channels), plus its flow record, up to its
//! [`SessionLimits`](crate::flow::SessionLimits), once it has been given tool results; the session cap
//! times both bounds the whole. A service mounted in another router
//! ([`McpServer::http_service`]) keeps the total session cap, the idle expiry and the body size
//! cap; connections, body read time and per-address counts are the router's to bound.

mod sessions;

use std::cell::RefCell;
use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use self::sessions::{CappedSessions, CappedSessionsError};
use self::sessions::{Refusal, SessionSlots, RESERVED};
use super::McpServer;

/// Default cap on live MCP sessions, all clients together.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// Default cap on live MCP sessions of one client IP address.
pub const DEFAULT_MAX_SESSIONS_PER_CLIENT: usize = 64;
/// Default time a session may stay idle (no request, no open stream activity) before it is
/// closed.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// Default cap on open TCP connections.
pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
/// Default time a client has to send a whole request body.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Default cap on a request body: room for a proposal at the parser's default 1 MiB cap and
/// its JSON-RPC envelope.
pub const DEFAULT_MAX_BODY_BYTES: usize = 2 << 20;

/// The `Retry-After` of a refused session: slots free as other sessions end.
const SESSION_RETRY_AFTER_SECS: u64 = 5;
/// The `Retry-After` of a refused connection: connections are short-lived.
const CONNECTION_RETRY_AFTER_SECS: u64 = 1;
/// Connections past the cap that are still answered (with 503); beyond them, a connection is
/// closed unanswered, so refusing costs a bounded amount too.
const MAX_REFUSING_CONNECTIONS: usize = 64;
/// How long a refused connection may take to send its request before it is closed.
const REFUSAL_READ_TIMEOUT: Duration = Duration::from_secs(2);
/// How much of a refused connection's request body is read (so the client sees the answer
/// instead of a reset).
const REFUSAL_MAX_BODY_BYTES: usize = 64 << 10;

/// Where and how to serve streamable HTTP.
///
/// The default listens on loopback `127.0.0.1:8080` at `/mcp` and accepts only loopback `Host`
/// headers (rmcp's DNS-rebinding guard). Serving another interface is a deliberate choice:
/// set the address *and* the host names clients use.
///
/// ```
/// use tool_contract::mcp::HttpConfig;
/// let config = HttpConfig::new("127.0.0.1:0".parse().unwrap()).path("/tools");
/// assert_eq!(config.addr().port(), 0); // port 0: the OS picks a free one
/// ```
#[derive(Clone, Debug)]
pub struct HttpConfig {
    addr: SocketAddr,
    path: String,
    pub(super) allowed_hosts: Option<Vec<String>>,
    max_sessions: usize,
    max_sessions_per_client: usize,
    session_idle_timeout: Duration,
    max_connections: usize,
    body_read_timeout: Duration,
    max_body_bytes: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig::new(SocketAddr::from((Ipv4Addr::LOCALHOST, 8080)))
    }
}

impl HttpConfig {
    /// Serve on `addr`, at `/mcp`.
    pub fn new(addr: SocketAddr) -> Self {
        HttpConfig {
            addr,
            path: "/mcp".to_owned(),
            allowed_hosts: None,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_sessions_per_client: DEFAULT_MAX_SESSIONS_PER_CLIENT,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            body_read_timeout: DEFAULT_BODY_READ_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }

    /// The address to bind.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL path of the MCP endpoint (`/mcp` by default); other paths answer 404.
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        let path = path.into();
        self.path = if path.starts_with('/') {
            path
        } else {
            format!("/{path}")
        };
        self
    }

    /// The `Host` header values accepted (`name` or `name:port`); by default only
    /// `localhost`, `127.0.0.1` and `::1`. Needed when serving a non-loopback address.
    #[must_use]
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// The most live sessions, all clients together ([`DEFAULT_MAX_SESSIONS`]); an `initialize`
    /// past it is answered 503 with `Retry-After`. At least 1.
    #[must_use]
    pub fn max_sessions(mut self, n: usize) -> Self {
        self.max_sessions = n.max(1);
        self
    }

    /// The most live sessions of one client IP address ([`DEFAULT_MAX_SESSIONS_PER_CLIENT`]),
    /// so that one client cannot take every slot; past it, 429 with `Retry-After`. At least 1.
    #[must_use]
    pub fn max_sessions_per_client(mut self, n: usize) -> Self {
        self.max_sessions_per_client = n.max(1);
        self
    }

    /// How long a session may stay idle before it is closed and its slot freed
    /// ([`DEFAULT_SESSION_IDLE_TIMEOUT`]).
    #[must_use]
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// The most open connections ([`DEFAULT_MAX_CONNECTIONS`]); a request on a connection past
    /// it is answered 503 with `Retry-After`. At least 1.
    #[must_use]
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// How long a client has to send a whole request body ([`DEFAULT_BODY_READ_TIMEOUT`]);
    /// past it, 408.
    #[must_use]
    pub fn body_read_timeout(mut self, timeout: Duration) -> Self {
        self.body_read_timeout = timeout;
        self
    }

    /// The largest request body in bytes ([`DEFAULT_MAX_BODY_BYTES`]); a larger one, 413.
    #[must_use]
    pub fn max_body_bytes(mut self, n: usize) -> Self {
        self.max_body_bytes = n;
        self
    }
}

/// The streamable HTTP endpoint as rmcp's tower service; see [`McpServer::http_service`].
pub type McpHttpService = StreamableHttpService<McpServer, CappedSessions>;
type Service = McpHttpService;

pub(super) fn service(
    server: McpServer,
    config: &HttpConfig,
    shutdown: CancellationToken,
) -> McpHttpService {
    service_with_slots(server, config, shutdown, slots(config))
}

fn slots(config: &HttpConfig) -> Arc<SessionSlots> {
    SessionSlots::new(config.max_sessions, config.max_sessions_per_client)
}

fn service_with_slots(
    server: McpServer,
    config: &HttpConfig,
    shutdown: CancellationToken,
    slots: Arc<SessionSlots>,
) -> McpHttpService {
    // The spec requires rejecting foreign `Origin`s (a web page driving a local server);
    // requests without `Origin` (non-browser clients) are unaffected.
    let mut http = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown)
        .with_allowed_origins(LOOPBACK_ORIGINS)
        .with_max_request_body_bytes(config.max_body_bytes);
    if let Some(hosts) = config.allowed_hosts.clone() {
        http = http.with_allowed_hosts(hosts);
    }
    let mut local = LocalSessionManager::default();
    local.session_config.keep_alive = Some(config.session_idle_timeout);
    StreamableHttpService::new(
        // Called once per MCP session: each gets its own flow record.
        move || Ok(server.for_session()),
        Arc::new(CappedSessions::new(local, slots)),
        http,
    )
}

/// Browser origins accepted by default: pages served from this machine.
const LOOPBACK_ORIGINS: [&str; 3] = ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"];

/// How long a client may take to send a request head.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A bound streamable HTTP endpoint; [`run`](Self::run) serves it.
pub struct HttpServer {
    listener: TcpListener,
    shared: Arc<Shared>,
    max_connections: usize,
    shutdown: CancellationToken,
}

/// What every connection task reads.
struct Shared {
    service: Service,
    path: Box<str>,
    slots: Arc<SessionSlots>,
    body_read_timeout: Duration,
    max_body_bytes: usize,
}

impl fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.listener.local_addr().ok())
            .field("path", &self.shared.path)
            .finish_non_exhaustive()
    }
}

/// Stops an [`HttpServer`] (no new connections, open sessions closed), or closes the sessions
/// of an [`McpServer::http_service`].
#[derive(Clone, Debug)]
pub struct ShutdownHandle(pub(super) CancellationToken);

impl ShutdownHandle {
    /// Asks the server to stop; [`HttpServer::run`] returns soon after.
    pub fn shutdown(&self) {
        self.0.cancel();
    }
}

impl HttpServer {
    pub(super) async fn bind(server: McpServer, config: HttpConfig) -> std::io::Result<Self> {
        let listener = TcpListener::bind(config.addr).await?;
        let shutdown = CancellationToken::new();
        let slots = slots(&config);
        let service =
            service_with_slots(server, &config, shutdown.child_token(), Arc::clone(&slots));
        Ok(HttpServer {
            listener,
            shared: Arc::new(Shared {
                service,
                path: config.path.into(),
                slots,
                body_read_timeout: config.body_read_timeout,
                max_body_bytes: config.max_body_bytes,
            }),
            max_connections: config.max_connections,
            shutdown,
        })
    }

    /// The bound address (with the real port when the config asked for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:8080/mcp`, for the host's configuration.
    pub fn url(&self) -> std::io::Result<String> {
        Ok(format!("http://{}{}", self.local_addr()?, self.shared.path))
    }

    /// A handle that stops [`run`](Self::run) from elsewhere.
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle(self.shutdown.clone())
    }

    /// Serves until a [`ShutdownHandle`] stops it.
    pub async fn run(self) -> std::io::Result<()> {
        self.run_until(std::future::pending()).await
    }

    /// Serves until `signal` completes (e.g. `tokio::signal::ctrl_c()`) or a
    /// [`ShutdownHandle`] stops it; then closes the sessions and returns.
    pub async fn run_until(self, signal: impl Future<Output = ()>) -> std::io::Result<()> {
        let HttpServer {
            listener,
            shared,
            max_connections,
            shutdown,
        } = self;
        let connections = Arc::new(Semaphore::new(max_connections));
        let refusing = Arc::new(Semaphore::new(MAX_REFUSING_CONNECTIONS));
        tokio::pin!(signal);
        loop {
            let (stream, peer) = tokio::select! {
                () = shutdown.cancelled() => break,
                () = &mut signal => break,
                accepted = listener.accept() => match accepted {
                    Ok(conn) => conn,
                    Err(err) => {
                        // Out of file descriptors and the like: back off instead of spinning.
                        tracing::warn!(error = %err, "MCP HTTP accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            if let Ok(permit) = Arc::clone(&connections).try_acquire_owned() {
                let shared = Arc::clone(&shared);
                let stop = shutdown.clone();
                tokio::spawn(async move {
                    serve_connection(stream, peer.ip(), shared, stop).await;
                    drop(permit);
                });
            } else if let Ok(permit) = Arc::clone(&refusing).try_acquire_owned() {
                tokio::spawn(async move {
                    refuse_connection(stream).await;
                    drop(permit);
                });
            } else {
                // Even refusals are saturated: dropping the socket is the only bounded answer.
                tracing::debug!(%peer, "MCP HTTP connection dropped: connection limit");
            }
        }
        shutdown.cancel();
        Ok(())
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: IpAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
) {
    let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
        let shared = Arc::clone(&shared);
        async move { Ok::<_, Infallible>(route(&shared, peer, req).await) }
    });
    // With a timer, hyper drops a client that trickles its request head
    // (slowloris) after HEADER_READ_TIMEOUT instead of holding the socket forever.
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .serve_connection(TokioIo::new(stream), handler);
    tokio::pin!(conn);
    let result = tokio::select! {
        result = conn.as_mut() => result,
        () = stop.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(err) = result {
        tracing::debug!(error = %err, "MCP HTTP connection ended with an error");
    }
}

/// Answers every request of a connection past the cap with 503, then closes it. The request
/// is read (briefly, boundedly) first, so that the client reads the answer instead of a reset.
async fn refuse_connection(stream: TcpStream) {
    let handler = hyper::service::service_fn(|req: Request<Incoming>| async move {
        let body = Limited::new(req.into_body(), REFUSAL_MAX_BODY_BYTES);
        let _ = tokio::time::timeout(REFUSAL_READ_TIMEOUT, body.collect()).await;
        Ok::<_, Infallible>(refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "CONNECTION_LIMIT",
            "the server has too many open connections; retry later",
            None,
            Some(CONNECTION_RETRY_AFTER_SECS),
        ))
    });
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(REFUSAL_READ_TIMEOUT)
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), handler);
    if let Err(err) = conn.await {
        tracing::debug!(error = %err, "refused MCP HTTP connection ended with an error");
    }
}

type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

async fn route(shared: &Shared, peer: IpAddr, req: Request<Incoming>) -> HttpResponse {
    if req.uri().path() != &*shared.path {
        let mut response =
            Response::new(Full::from("not found; the MCP endpoint is elsewhere").boxed());
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    let (parts, body) = req.into_parts();
    let too_large = || {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "BODY_TOO_LARGE",
            &format!(
                "the request body is larger than {} bytes",
                shared.max_body_bytes
            ),
            None,
            None,
        )
    };
    let declared = parts
        .headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > shared.max_body_bytes as u64) {
        // Refused before reading a byte of it.
        return too_large();
    }
    // rmcp reads the whole body before decoding it anyway; reading it here bounds the time a
    // client may take (hyper only bounds the head) and lets a refusal carry a JSON-RPC error.
    let limited = Limited::new(body, shared.max_body_bytes);
    let bytes = match tokio::time::timeout(shared.body_read_timeout, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(err)) if err.downcast_ref::<LengthLimitError>().is_some() => return too_large(),
        Ok(Err(err)) => {
            tracing::debug!(error = %err, "MCP HTTP request body unreadable");
            return refusal(
                StatusCode::BAD_REQUEST,
                "BODY_UNREADABLE",
                "the request body could not be read",
                None,
                None,
            );
        }
        Err(_elapsed) => {
            return refusal(
                StatusCode::REQUEST_TIMEOUT,
                "BODY_TIMEOUT",
                &format!(
                    "the request body did not arrive within {} ms",
                    shared.body_read_timeout.as_millis()
                ),
                None,
                None,
            );
        }
    };
    let head = (parts.method == hyper::Method::POST
        && !parts.headers.contains_key("mcp-session-id"))
    .then(|| serde_json::from_slice::<MessageHead>(&bytes).ok())
    .flatten();
    let req = Request::from_parts(parts, Full::new(bytes));
    match head {
        // Only an `initialize` without a session creates one: reserve its slot first, so a
        // refusal is a clear status and not rmcp's internal error.
        Some(head) if head.method.as_deref() == Some("initialize") => {
            match shared.slots.reserve(Some(peer)) {
                Ok(slot) => {
                    let handling = shared.service.handle(req);
                    Box::pin(RESERVED.scope(RefCell::new(Some(slot)), handling)).await
                }
                Err(Refusal::Total) => refusal(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "SESSION_LIMIT",
                    &format!(
                        "the server holds its maximum of {} sessions; retry later",
                        shared.slots.max_total()
                    ),
                    head.id,
                    Some(SESSION_RETRY_AFTER_SECS),
                ),
                Err(Refusal::PerClient) => refusal(
                    StatusCode::TOO_MANY_REQUESTS,
                    "CLIENT_SESSION_LIMIT",
                    &format!(
                        "this address holds its maximum of {} sessions; delete one (DELETE with its Mcp-Session-Id) or retry later",
                        shared.slots.max_per_client()
                    ),
                    head.id,
                    Some(SESSION_RETRY_AFTER_SECS),
                ),
            }
        }
        // Boxed: rmcp's request future is several KiB, and inline it would make this one as
        // large; hyper moves this one into its in-flight slot on every request and sizes a
        // per-connection allocation by it. rmcp's own tower service boxes it the same way.
        _ => Box::pin(shared.service.handle(req)).await,
    }
}

/// The part of a JSON-RPC message the limits look at.
#[derive(serde::Deserialize)]
struct MessageHead {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default)]
    method: Option<String>,
}

/// A refusal: `status`, an optional `Retry-After`, and a JSON-RPC error naming the cap in
/// `error.data.code`. Past a body or connection cap the connection is closed after it (its body
/// may be left unread); a refused session keeps it, the request having been read whole.
fn refusal(
    status: StatusCode,
    code: &str,
    message: &str,
    id: Option<serde_json::Value>,
    retry_after_secs: Option<u64>,
) -> HttpResponse {
    let mut data = serde_json::json!({ "code": code });
    if let Some(secs) = retry_after_secs {
        data["retry_after_secs"] = secs.into();
    }
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(serde_json::Value::Null),
        "error": { "code": -32000, "message": message, "data": data },
    });
    let mut response = Response::new(Full::from(body.to_string()).boxed());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    if !matches!(code, "SESSION_LIMIT" | "CLIENT_SESSION_LIMIT") {
        headers.insert(
            hyper::header::CONNECTION,
            hyper::header::HeaderValue::from_static("close"),
        );
    }
    if let Some(secs) = retry_after_secs {
        headers.insert(hyper::header::RETRY_AFTER, secs.into());
    }
    response
}
