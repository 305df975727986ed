//! Serve a [`Registry`] to MCP hosts, over stdio and streamable HTTP (feature `mcp`).
//!
//! Built on [`rmcp`], the official Rust MCP SDK: it owns the protocol (JSON-RPC framing, the
//! `initialize` handshake, version negotiation, sessions, the HTTP transport's Host/Origin checks)
//! so this module only maps MCP requests onto the pipeline. [`McpServer`] implements rmcp's
//! `ServerHandler` by hand:
//!
//! * `tools/list` returns what the caller can call, from the context your [`ContextProvider`]
//!   builds for the list request: each tool at the version its calls run (pinned, else the
//!   newest), so the listed `inputSchema` is the one the call is validated against; tools the
//!   context lacks a capability for are left out unless
//!   [`hide_unauthorized(false)`](McpServerBuilder::hide_unauthorized). Each entry is
//!   [`export::mcp::tool_entry`](crate::export::mcp::tool_entry): input schema, the envelope
//!   `outputSchema`, annotations from the effect class, version and fingerprint in `_meta`.
//!   When a later request's context would list something else, the session gets
//!   `notifications/tools/list_changed` once. [`McpServer::tools_for`] gives the list of a
//!   context.
//! * `tools/call` runs the whole pipeline, exactly as [`Registry::handle`] does, with a
//!   [`ToolContext`] built by **your** [`ContextProvider`] from the MCP request (transport, HTTP
//!   headers, client identity). The model's arguments never fill it.
//!
//! | outcome | `tools/call` answer |
//! |---|---|
//! | success | `isError: false`, `structuredContent` = the success envelope |
//! | any tool error (bad arguments, capability missing, timeout, ...) | `isError: true`, `structuredContent` = the error envelope |
//! | needs approval, client declared form `elicitation` | the client's user is asked (by an `elicitation/create` request, or under 2026-07-28 by an input request in the result): approve → the call runs once under a signed grant; decline → `POLICY_DENIED` / `APPROVAL_DENIED` |
//! | needs approval, no elicitation (or no answer in time) | `isError: true`, `POLICY_DENIED` / `APPROVAL_REQUIRED`, with `digest`, `approval_id`, `not_asked_because` and `how_to_approve` in `safe_details`; the request waits in the registry's pending store for an operator to decide by id |
//! | the same call again, after an operator decided it | the result of the one approved execution, or `APPROVAL_DENIED` |
//! | unknown tool | JSON-RPC error `-32602` (invalid params), the `UNKNOWN_TOOL` envelope in `error.data` |
//!
//! **Flow control.** Each MCP session gets its own [`Session`] record (a stdio connection
//! is one session; over HTTP, each `initialize` starts one): every result the session's model
//! was given is recorded in it, so a value the model copies out of a tool result into a write
//! or an external read is traced and judged like anywhere else (see the `flow` module). The
//! MCP server never hears the user, so the record holds no trusted intent: a host that has the
//! user's words attaches its own record through the [`ContextProvider`]
//! ([`ToolContextBuilder::session`](crate::ToolContextBuilder::session)), which is then used
//! instead. Records are bounded by [`SessionLimits`] and dropped with the session;
//! [`McpServerBuilder::flow_sessions`] sets the limits or turns records off. A 2026-07-28
//! request over HTTP belongs to no session (each stands alone): such requests share one record
//! per caller (principal and tenant), so a value copied between two of them is still traced;
//! at most [`DEFAULT_MAX_SESSIONS`] callers keep one, the oldest dropped first.
//! An approval question asked by elicitation shows, for each argument traced to a tool result,
//! the tool, call and pointer it came from, and the flow rule it breaks.
//!
//! Every result also carries one text content block (see [`TextContent`]), because MCP asks
//! servers that return `structuredContent` to return it as text too, for clients that read only
//! `content`.
//!
//! **Why an unknown tool is a protocol error.** The MCP spec (2025-06-18 and 2025-11-25, "Error
//! Handling") lists unknown tools among *protocol errors*, and *tool execution errors*
//! (`isError: true`) for failures of a tool that exists, including invalid arguments, which the
//! model can repair. A host only calls tools it listed, so an unknown name is a client bug or a
//! stale list, not something the model fixes; the envelope still rides in the error's `data`.
//!
//! **Cancellation.** A client's `notifications/cancelled` stops a call that is still waiting
//! for approval (nothing has run), but not one already executing: the pipeline finishes it,
//! within the tool's timeouts, so a write is never cut off half-way; the client discards the
//! late result.
//!
//! **What rmcp decides before the pipeline sees the arguments.** rmcp decodes each JSON-RPC
//! message into `serde_json` values before any handler runs, so the proposal's text as the
//! client wrote it is gone. The arguments are re-encoded and go through
//! [`Registry::prepare_raw`], so the byte, depth and value caps and the number policy still
//! apply (an integer past `u64` arrives as a float and is still refused as
//! `NUMBER_OUT_OF_RANGE`, never rounded; `1e400` fails rmcp's own decoding). What cannot be
//! recovered is a **duplicate key**: serde_json keeps the last one, so the call runs with that
//! value instead of being refused with `DUPLICATE_KEY` as a raw proposal would be. The one
//! decoded value is still what is validated, approved, hashed and run; a proxy in front of the
//! server that reads the first of two keys would see a different call. The caps also bound
//! the re-encoded arguments, not the message rmcp has already read; over HTTP that message is
//! bounded by [`HttpConfig::max_body_bytes`].
//!
//! **Protocol versions.** The server serves 2024-11-05 to 2025-11-25, negotiated by
//! `initialize`, and 2026-07-28, which has no handshake: the client probes `server/discover`
//! and names the revision in each request's `_meta`; rmcp does the negotiation per client.
//! 2026-07-28 forbids server-to-client requests, so there the approval question goes through
//! the *input request* mechanism instead of elicitation (see the `input_request` module: the
//! question rides in the call's `input_required` result and the answer comes back with the
//! client's retry, bound to the call by a one-use handle), and `tools/list` carries the cache
//! hints `cacheScope: "private"` (the list depends on who asks) and `ttlMs`
//! ([`McpServerBuilder::tools_list_ttl`], zero by default). A 2026-07-28 client is not sent
//! `notifications/tools/list_changed` (that revision delivers it only on a
//! `subscriptions/listen` stream, which this server does not open); it re-lists when the hints
//! say so.
//!
//! ```no_run
//! use tool_contract::mcp::{McpRequest, McpServer};
//! use tool_contract::{Registry, ToolContext, ToolError};
//! # async fn run(registry: Registry) -> Result<(), Box<dyn std::error::Error>> {
//! // The host decides who is calling: here, one local user for the stdio session.
//! let server = McpServer::new(registry, |_req: &McpRequest<'_>| -> Result<ToolContext, ToolError> {
//!     Ok(ToolContext::builder()
//!         .principal("user:kim")
//!         .tenant("acme")
//!         .capabilities(["documents:search"])
//!         .build())
//! });
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```

mod approval;
mod call;
mod callers;
mod exposure;
mod http;
mod input_request;

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use tokio_util::sync::CancellationToken;

use crate::context::ToolContext;
use crate::error::ToolError;
use crate::flow::{Session, SessionLimits};
use crate::registry::Registry;
use crate::repair::RepairLoop;

/// The flow record each MCP session gets unless
/// [`McpServerBuilder::flow_sessions`] says otherwise: 256 observations, 1 MiB of observed
/// values, 64 KiB of intent. Smaller than a host's own [`SessionLimits::default`] because a
/// server holds one per live session (up to [`DEFAULT_MAX_SESSIONS`]
/// of them); past a bound the oldest observations go and the session turns strict.
pub const DEFAULT_FLOW_LIMITS: SessionLimits = SessionLimits {
    max_observations: 256,
    max_observed_bytes: 1 << 20,
    max_intent_bytes: 64 << 10,
};

pub use self::http::{
    CappedSessions, CappedSessionsError, HttpConfig, HttpServer, McpHttpService, ShutdownHandle,
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SESSIONS_PER_CLIENT, DEFAULT_SESSION_IDLE_TIMEOUT,
};

/// Builds the trusted [`ToolContext`] of one MCP `tools/call` or `tools/list` (and decides who
/// may call at all).
///
/// It sees the MCP request (transport, HTTP headers, client identity, request `_meta`), never
/// the model's arguments. Return an error to refuse the call; it reaches the client as an
/// `isError: true` envelope, e.g. `UNAUTHORIZED` when a bearer token is missing. For
/// `tools/list` ([`McpRequest::method`]) the context decides what is listed (see
/// [`McpServerBuilder::hide_unauthorized`]); a refused list shows what an empty context may
/// call.
///
/// Closures `Fn(&McpRequest<'_>) -> Result<ToolContext, ToolError>` implement it. It runs once
/// per `tools/call` and per `tools/list`, synchronously and on the request's task: keep it
/// cheap, and do slow work such as token introspection in a tower layer in front of
/// [`McpServer::http_service`], which can leave its result in the request extensions
/// ([`McpRequest::http_parts`]).
/// A panic in it becomes an `INTERNAL` / `CONTEXT_PROVIDER_PANICKED` envelope.
///
/// ```
/// use tool_contract::mcp::{ContextProvider, McpRequest};
/// use tool_contract::{ToolContext, ToolError};
///
/// fn from_http(req: &McpRequest<'_>) -> Result<ToolContext, ToolError> {
///     let user = req
///         .http_header("x-user")
///         .ok_or_else(|| ToolError::unauthorized("NO_USER", "the request names no user"))?;
///     Ok(ToolContext::builder().principal(user).tenant("acme").build())
/// }
/// fn assert_provider(_: impl ContextProvider) {}
/// assert_provider(from_http);
/// ```
pub trait ContextProvider: Send + Sync + 'static {
    /// The context for `request`, or the error that refuses it.
    fn context(&self, request: &McpRequest<'_>) -> Result<ToolContext, ToolError>;
}

impl<F> ContextProvider for F
where
    F: Fn(&McpRequest<'_>) -> Result<ToolContext, ToolError> + Send + Sync + 'static,
{
    fn context(&self, request: &McpRequest<'_>) -> Result<ToolContext, ToolError> {
        self(request)
    }
}

/// Which transport a request came over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transport {
    /// A byte stream: stdio, or whatever [`McpServer::serve`] was given.
    Stream,
    /// Streamable HTTP; [`McpRequest::http_header`] reads the request's headers.
    Http,
}

/// What a [`ContextProvider`] may look at: the MCP side of one `tools/call` or `tools/list`.
pub struct McpRequest<'a> {
    method: &'static str,
    tool: &'a str,
    rmcp: &'a RequestContext<RoleServer>,
}

impl<'a> McpRequest<'a> {
    /// The MCP method: `tools/call` or `tools/list`.
    pub fn method(&self) -> &str {
        self.method
    }

    /// The tool name the client asked for (not yet checked against the registry); empty for
    /// `tools/list`.
    pub fn tool(&self) -> &str {
        self.tool
    }

    /// The protocol revision of this request: the one negotiated by `initialize`, or the one
    /// a 2026-07-28 request names in its own `_meta`.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.rmcp.protocol_version()
    }

    /// The transport the request came over.
    pub fn transport(&self) -> Transport {
        if self.http_parts().is_some() {
            Transport::Http
        } else {
            Transport::Stream
        }
    }

    /// The client's self-declared name and version from `initialize`: useful for logs, never
    /// proof of identity.
    pub fn client_info(&self) -> Option<Implementation> {
        self.rmcp.client_info()
    }

    /// An HTTP request header, when the request came over streamable HTTP and the header is
    /// valid UTF-8.
    pub fn http_header(&self, name: &str) -> Option<&str> {
        self.http_parts()?.headers.get(name)?.to_str().ok()
    }

    /// The HTTP request head (method, URI, headers, extensions such as auth data added by a
    /// tower layer), for streamable HTTP.
    pub fn http_parts(&self) -> Option<&'a ::http::request::Parts> {
        self.rmcp.extensions.get::<::http::request::Parts>()
    }

    /// rmcp's whole request context, for anything else (request `_meta`, the peer).
    pub fn rmcp_context(&self) -> &'a RequestContext<RoleServer> {
        self.rmcp
    }
}

impl fmt::Debug for McpRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpRequest")
            .field("method", &self.method)
            .field("tool", &self.tool)
            .field("transport", &self.transport())
            .finish_non_exhaustive()
    }
}

/// What the one text content block of a `tools/call` result holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TextContent {
    /// [`Observation::to_prompt_block`](crate::Observation::to_prompt_block): the envelope
    /// JSON inside `<tool_result trust="untrusted" ...>`, escaped so nothing inside can close
    /// the tag. The default, because many hosts hand `content` (not `structuredContent`) to the
    /// model, and the tag is what tells it the result is data, not instructions.
    #[default]
    PromptBlock,
    /// The envelope JSON alone, as the MCP spec suggests for clients that parse the text.
    Json,
}

/// Serves a [`Registry`] over MCP. Cheap to clone: HTTP sessions share one registry.
#[derive(Clone)]
pub struct McpServer {
    inner: Arc<Inner>,
    /// This MCP session's flow record; each session gets a fresh one (see [`Self::for_session`]).
    session: Option<Session>,
    /// The view this session was last listed, to tell it when that changes.
    listed: Arc<Mutex<Listed>>,
    /// This session's repairs per tool: the repair bound holds across the session's calls.
    repairs: Arc<Mutex<RepairLoop>>,
}

/// What a session was shown by `tools/list`, and which change it was already told of.
#[derive(Default)]
struct Listed {
    shown: Option<exposure::ViewKey>,
    announced: Option<exposure::ViewKey>,
    /// The grants whose view was last held against `shown`: a call with the same grants has
    /// the same view, and the answer cannot have changed since (a new list resets it).
    checked: Option<crate::context::Grants>,
}

struct Inner {
    registry: Registry,
    context: Box<dyn ContextProvider>,
    info: Implementation,
    instructions: Option<String>,
    text: TextContent,
    how_to_approve: Cow<'static, str>,
    elicitation: bool,
    approval_timeout: Duration,
    /// Whether `tools/list` leaves out tools the caller lacks a capability for.
    hide_unauthorized: bool,
    /// The `ttlMs` cache hint of a 2026-07-28 `tools/list`.
    list_ttl: Duration,
    /// Every version's `tools/list` entry and the lists per view; built by `build`.
    exposure: exposure::Exposure,
    /// Approval questions asked by input request (2026-07-28), awaiting the retry.
    questions: input_request::PendingQuestions,
    /// Flow records of callers whose requests belong to no session (2026-07-28 over HTTP).
    callers: callers::CallerRecords,
    /// The bounds of each MCP session's flow record; `None` keeps no record.
    flow: Option<SessionLimits>,
    /// Repairs a session (or a sessionless caller) may make per tool.
    max_repairs: u32,
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("registry", &self.inner.registry)
            .field("server", &self.inner.info.name)
            .field("text", &self.inner.text)
            .field("elicitation", &self.inner.elicitation)
            .finish_non_exhaustive()
    }
}

/// Configures an [`McpServer`]; from [`McpServer::builder`].
pub struct McpServerBuilder {
    inner: Inner,
}

impl fmt::Debug for McpServerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("server", &self.inner.info.name)
            .finish_non_exhaustive()
    }
}

const DEFAULT_HOW_TO_APPROVE: &str = "This call needs a human's approval before it runs, and \
    the MCP client could not be asked for it (see not_asked_because). It was not run. It waits \
    under approval_id until approval_expires_at_ms for an operator, who approves or denies it by \
    that id with the host's approval command. Tell the user it is waiting for approval; once it \
    is decided, the same call again returns its result (it runs once) or the denial.";

impl McpServer {
    /// A server for `registry` with the default settings, whose calls run with the context
    /// `context` builds.
    pub fn new(registry: Registry, context: impl ContextProvider) -> Self {
        Self::builder(registry, context).build()
    }

    /// Starts configuring a server for `registry`. It names itself `tool-contract` with this
    /// crate's version unless [`server_info`](McpServerBuilder::server_info) says otherwise.
    pub fn builder(registry: Registry, context: impl ContextProvider) -> McpServerBuilder {
        McpServerBuilder {
            inner: Inner {
                registry,
                context: Box::new(context),
                info: Implementation::new("tool-contract", env!("CARGO_PKG_VERSION")),
                instructions: None,
                text: TextContent::default(),
                how_to_approve: Cow::Borrowed(DEFAULT_HOW_TO_APPROVE),
                elicitation: true,
                approval_timeout: approval::DEFAULT_APPROVAL_TIMEOUT,
                hide_unauthorized: true,
                list_ttl: Duration::ZERO,
                exposure: exposure::Exposure::default(),
                questions: input_request::PendingQuestions::default(),
                callers: callers::CallerRecords::default(),
                flow: Some(DEFAULT_FLOW_LIMITS),
                max_repairs: RepairLoop::DEFAULT_MAX_REPAIRS,
            },
        }
    }

    /// The registry served.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// This server for a new MCP session: same registry and settings, a fresh flow record.
    pub(crate) fn for_session(&self) -> McpServer {
        McpServer {
            inner: Arc::clone(&self.inner),
            session: self.inner.flow.map(Session::with_limits),
            listed: Arc::default(),
            repairs: Arc::new(Mutex::new(RepairLoop::new(self.inner.max_repairs))),
        }
    }

    /// The tools a caller with context `ctx` is shown by `tools/list`: each at the version its
    /// calls run (the pinned one, else the newest), so the listed `inputSchema` is the schema
    /// its arguments are validated against; without the tools whose pin names no registered
    /// version and, unless [`hide_unauthorized(false)`](McpServerBuilder::hide_unauthorized),
    /// those the context lacks a capability for.
    ///
    /// ```
    /// # use tool_contract::{tool, Registry, ToolArgs, ToolContext, ToolError};
    /// # use tool_contract::mcp::{McpRequest, McpServer};
    /// # #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    /// # #[serde(deny_unknown_fields)]
    /// # struct ReadAuditLogArgs {}
    /// /// Reads the audit log. Use it when an administrator asks who changed what.
    /// #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100,
    ///        capabilities("audit:read"))]
    /// async fn read_audit_log(_args: ReadAuditLogArgs) -> Result<bool, ToolError> { Ok(true) }
    ///
    /// let registry = Registry::builder().tool(ReadAuditLog).build().unwrap();
    /// let server = McpServer::new(registry, |_: &McpRequest<'_>| Ok(ToolContext::default()));
    /// assert!(server.tools_for(&ToolContext::default()).is_empty());
    /// let admin = ToolContext::builder().capability("audit:read").build();
    /// assert_eq!(server.tools_for(&admin)[0].name, "read_audit_log");
    /// ```
    pub fn tools_for(&self, ctx: &ToolContext) -> Vec<Tool> {
        let key = self.inner.exposure.key(ctx);
        self.inner.exposure.tools(&key).to_vec()
    }

    /// Serves one MCP session over stdin/stdout until the client closes it.
    ///
    /// Nothing else may write to stdout meanwhile: log to stderr.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves one MCP session over any byte stream (a pipe, a Unix socket, an in-memory
    /// duplex in tests) until the peer closes it.
    pub async fn serve<R, W>(self, read: R, write: W) -> Result<(), ServeError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let running = ServiceExt::serve(self.for_session(), (read, write))
            .await
            .map_err(|e| ServeError(e.to_string()))?;
        running
            .waiting()
            .await
            .map(drop)
            .map_err(|e| ServeError(e.to_string()))
    }

    /// Binds streamable HTTP on `config`'s address (loopback by default);
    /// [`HttpServer::run`] then serves until shut down.
    pub async fn bind_http(self, config: HttpConfig) -> std::io::Result<HttpServer> {
        HttpServer::bind(self, config).await
    }

    /// The streamable HTTP endpoint as a tower `Service` (rmcp's), to mount in your own HTTP
    /// stack (an axum route, a hyper server) behind your own layers, e.g. authentication that
    /// leaves the user in the request extensions for the [`ContextProvider`]. Of `config`, the
    /// allowed `Host` names, the total session cap, the session idle expiry and the body size
    /// cap apply; address, path, connection and body-time limits are your router's. The handle
    /// closes the open sessions when your server stops.
    pub fn http_service(self, config: &HttpConfig) -> (McpHttpService, ShutdownHandle) {
        let shutdown = CancellationToken::new();
        let service = http::service(self, config, shutdown.clone());
        (service, ShutdownHandle(shutdown))
    }
}

impl McpServerBuilder {
    /// The name and version the server reports in `initialize` (`serverInfo`).
    #[must_use]
    pub fn server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.inner.info = Implementation::new(name, version);
        self
    }

    /// Instructions for the host's model, sent in `initialize`.
    #[must_use]
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.inner.instructions = Some(text.into());
        self
    }

    /// What the text content block holds; [`TextContent::PromptBlock`] by default.
    #[must_use]
    pub fn text_content(mut self, text: TextContent) -> Self {
        self.inner.text = text;
        self
    }

    /// The sentence put in `safe_details.how_to_approve` of an `APPROVAL_REQUIRED` envelope
    /// when the client cannot be asked: tell the model (and the user reading along) how your
    /// operators approve the request by its `approval_id` out of band, e.g. your command for
    /// [`Registry::approve_pending`](crate::Registry::approve_pending).
    #[must_use]
    pub fn how_to_approve(mut self, text: impl Into<Cow<'static, str>>) -> Self {
        self.inner.how_to_approve = text.into();
        self
    }

    /// Whether to ask for approval through MCP elicitation when the client declared it (on by
    /// default): an `elicitation/create` request, or under 2026-07-28 an input request in the
    /// call's result. Off, every approval goes out of band.
    #[must_use]
    pub fn elicitation(mut self, on: bool) -> Self {
        self.inner.elicitation = on;
        self
    }

    /// How long to wait for the user's answer to an approval request (5 minutes by default,
    /// and never past the call's deadline); without an answer the call stays unapproved. Under
    /// 2026-07-28 it is how long a question stays open for the client's retry.
    #[must_use]
    pub fn approval_timeout(mut self, timeout: Duration) -> Self {
        self.inner.approval_timeout = timeout;
        self
    }

    /// Whether `tools/list` leaves out the tools the caller's context lacks a capability for
    /// (on by default). A call to a hidden tool is answered as before, with the `UNAUTHORIZED`
    /// envelope: hiding only keeps the model from being offered what it cannot use.
    #[must_use]
    pub fn hide_unauthorized(mut self, hide: bool) -> Self {
        self.inner.hide_unauthorized = hide;
        self
    }

    /// The `ttlMs` cache hint of `tools/list` under protocol 2026-07-28 (zero by default:
    /// re-list every time). The list depends on the caller's context, so it is always marked
    /// `cacheScope: "private"`; a host whose capabilities and pins hold for a while can let
    /// clients keep it that long. Clients of older revisions are told of changes by
    /// `notifications/tools/list_changed` instead.
    #[must_use]
    pub fn tools_list_ttl(mut self, ttl: Duration) -> Self {
        self.inner.list_ttl = ttl;
        self
    }

    /// The bounds of the flow record each MCP session gets ([`DEFAULT_FLOW_LIMITS`] unless
    /// set); `None` keeps no record, which turns flow control off for calls whose context
    /// carries no session of the host's own.
    #[must_use]
    pub fn flow_sessions(mut self, limits: Option<SessionLimits>) -> Self {
        self.inner.flow = limits;
        self
    }

    /// How many times a session may repair a tool's arguments (default
    /// [`RepairLoop::DEFAULT_MAX_REPAIRS`]): past it, the next repairable failure of that
    /// tool in the session is the terminal `TOOL_ARGUMENT_INVALID`. Schema, semantic-rule and
    /// handler-reported issues ([`ToolError::invalid_argument`]) all count; a success resets
    /// the tool's count.
    #[must_use]
    pub fn max_repairs(mut self, n: u32) -> Self {
        self.inner.max_repairs = n;
        self
    }

    /// The server; every version's `tools/list` entry is built here, once: the registry is
    /// immutable.
    pub fn build(mut self) -> McpServer {
        self.inner.exposure =
            exposure::Exposure::new(&self.inner.registry, self.inner.hide_unauthorized);
        let server = McpServer {
            inner: Arc::new(self.inner),
            session: None,
            listed: Arc::default(),
            repairs: Arc::default(),
        };
        server.for_session()
    }
}

/// Serving failed before or while the session ran (handshake refused, transport broken).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeError(String);

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MCP session failed: {}", self.0)
    }
}

impl std::error::Error for ServeError {}

/// The newest protocol revision served; see the module docs.
const MAX_PROTOCOL: ProtocolVersion = ProtocolVersion::V_2026_07_28;
/// The newest revision an `initialize` handshake can agree on (2026-07-28 has none).
const MAX_HANDSHAKE_PROTOCOL: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// Whether `version` is 2026-07-28 or later: no server-to-client requests, per-request
/// lifecycle, cache hints on lists.
fn is_2026_07_28(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let mut config = ServerConfig::new(capabilities)
            .with_server_info(self.inner.info.clone())
            .with_protocol_version(MAX_HANDSHAKE_PROTOCOL);
        if let Some(text) = &self.inner.instructions {
            config = config.with_instructions(text.clone());
        }
        config
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&MAX_PROTOCOL))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let request = McpRequest {
            method: "tools/list",
            tool: "",
            rmcp: &context,
        };
        // A refused list shows what an empty context may call, as an unknown tool's error does.
        let ctx = call::provide(&self.inner, &request).unwrap_or_default();
        let key = self.inner.exposure.key(&ctx);
        let tools = self.inner.exposure.tools(&key).to_vec();
        let mut listed = self
            .listed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        listed.shown = Some(key);
        listed.announced = None;
        listed.checked = Some(ctx.grants());
        drop(listed);
        let mut result = ListToolsResult::with_all_items(tools);
        if is_2026_07_28(context.protocol_version().as_ref()) {
            // Older revisions define neither hint, so their clients get none. The list depends
            // on who asks: private.
            result = result
                .with_ttl_ms(u64::try_from(self.inner.list_ttl.as_millis()).unwrap_or(u64::MAX))
                .with_cache_scope(CacheScope::Private);
        }
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        // rmcp asks without a request (to check `Mcp-Param-*` headers against the schema):
        // the newest version is the only context-free answer.
        self.inner.exposure.newest(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        call::call_tool(self, request, context).await
    }
}
