//! Streamable HTTP: rmcp's `StreamableHttpService` (sessions, SSE, Host checks) on a hyper
//! HTTP/1.1 listener, at one path.

use std::convert::Infallible;
use std::fmt;
use std::future::Future;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::McpServer;

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
}

/// The streamable HTTP endpoint as rmcp's tower service; see [`McpServer::http_service`].
pub type McpHttpService = StreamableHttpService<McpServer, LocalSessionManager>;
type Service = McpHttpService;

pub(super) fn service(
    server: McpServer,
    allowed_hosts: Option<Vec<String>>,
    shutdown: CancellationToken,
) -> McpHttpService {
    // The spec requires rejecting foreign `Origin`s (a web page driving a local server);
    // requests without `Origin` (non-browser clients) are unaffected.
    let mut http = StreamableHttpServerConfig::default()
        .with_cancellation_token(shutdown)
        .with_allowed_origins(LOOPBACK_ORIGINS);
    if let Some(hosts) = allowed_hosts {
        http = http.with_allowed_hosts(hosts);
    }
    StreamableHttpService::new(
        // Called once per MCP session: each gets its own flow record.
        move || Ok(server.for_session()),
        Arc::new(LocalSessionManager::default()),
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
    service: Service,
    path: Arc<str>,
    shutdown: CancellationToken,
}

impl fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpServer")
            .field("addr", &self.listener.local_addr().ok())
            .field("path", &self.path)
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
        let service = service(server, config.allowed_hosts, shutdown.child_token());
        Ok(HttpServer {
            listener,
            service,
            path: config.path.into(),
            shutdown,
        })
    }

    /// The bound address (with the real port when the config asked for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The endpoint's URL, e.g. `http://127.0.0.1:8080/mcp`, for the host's configuration.
    pub fn url(&self) -> std::io::Result<String> {
        Ok(format!("http://{}{}", self.local_addr()?, self.path))
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
            service,
            path,
            shutdown,
        } = self;
        tokio::pin!(signal);
        loop {
            let (stream, _peer) = tokio::select! {
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
            let service = service.clone();
            let path = Arc::clone(&path);
            let stop = shutdown.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let service = service.clone();
                    let path = Arc::clone(&path);
                    async move { Ok::<_, Infallible>(route(&service, &path, req).await) }
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
            });
        }
        shutdown.cancel();
        Ok(())
    }
}

async fn route(
    service: &Service,
    path: &str,
    req: Request<Incoming>,
) -> Response<BoxBody<Bytes, Infallible>> {
    if req.uri().path() != path {
        let mut response =
            Response::new(Full::from("not found; the MCP endpoint is elsewhere").boxed());
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    service.handle(req).await
}
