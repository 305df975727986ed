//! `tools/list` per caller: the version each call would run, with that version's schema;
//! tools the caller lacks a capability for hidden (unless configured not to); and
//! `notifications/tools/list_changed` when a session's list changes. Through the public API
//! (a property over random contexts and pins) and through rmcp's own client.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use rmcp::model::{CallToolRequestParams, ClientConfig, Tool};
use rmcp::service::{NotificationContext, RoleClient};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{json, Value};
use tool_contract::mcp::{McpRequest, McpServer};
use tool_contract::{ErrorCategory, Proposal, Registry, ToolContext, ToolError};

pub mod orders {
    use tool_contract::{tool, ToolArgs, ToolError};

    #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    #[serde(deny_unknown_fields)]
    pub struct LookupOrderV1Args {
        /// The order number.
        #[schemars(length(min = 1, max = 40))]
        pub order_id: String,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    #[serde(deny_unknown_fields)]
    pub struct LookupOrderV2Args {
        /// The order number.
        #[schemars(length(min = 1, max = 40))]
        pub order_id: String,
        /// Whether to include the order lines.
        #[serde(default)]
        pub include_lines: bool,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    #[serde(deny_unknown_fields)]
    pub struct LookupOrderV3Args {
        /// The order number, in the new short form.
        #[schemars(length(min = 1, max = 12))]
        pub order_id: String,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    #[serde(deny_unknown_fields)]
    pub struct PingServiceArgs {}

    /// Looks up one order. Use it when the user names an order number.
    #[tool(
        name = "lookup_order",
        version = "1.0.0",
        effect = "pure_read",
        timeout_ms = 100
    )]
    pub async fn lookup_order_v1(args: LookupOrderV1Args) -> Result<String, ToolError> {
        Ok(format!("v1:{}", args.order_id))
    }

    /// Looks up one order, optionally with its lines. Use it when the user names an order.
    #[tool(
        name = "lookup_order",
        version = "2.0.0",
        effect = "pure_read",
        timeout_ms = 100,
        capabilities("orders:read")
    )]
    pub async fn lookup_order_v2(args: LookupOrderV2Args) -> Result<String, ToolError> {
        Ok(format!("v2:{}:{}", args.order_id, args.include_lines))
    }

    /// Looks up one order by its short number. Use it when the user names an order.
    #[tool(
        name = "lookup_order",
        version = "3.0.0",
        effect = "pure_read",
        timeout_ms = 100,
        capabilities("orders:read", "orders:admin")
    )]
    pub async fn lookup_order_v3(args: LookupOrderV3Args) -> Result<String, ToolError> {
        Ok(format!("v3:{}", args.order_id))
    }

    /// Checks that the service answers. Use it before a batch of calls; it changes nothing.
    #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    pub async fn ping_service(_args: PingServiceArgs) -> Result<bool, ToolError> {
        Ok(true)
    }
}

/// Three versions of `lookup_order`, each with its own schema and capabilities, and one
/// uncapped tool.
fn order_registry() -> Registry {
    Registry::builder()
        .tool(orders::LookupOrderV1)
        .tool(orders::LookupOrderV2)
        .tool(orders::LookupOrderV3)
        .tool(orders::PingService)
        .build()
        .unwrap()
}

fn server(registry: Registry, hide: bool) -> McpServer {
    McpServer::builder(registry, |_: &McpRequest<'_>| Ok(ToolContext::default()))
        .hide_unauthorized(hide)
        .build()
}

fn digest_of(registry: &Registry, version: &str) -> String {
    registry
        .contracts()
        .into_iter()
        .find(|c| c.name == "lookup_order" && c.version == version)
        .unwrap()
        .fingerprint
        .contract_sha256
        .clone()
}

fn listed_version(tool: &Tool) -> String {
    tool.meta.as_ref().unwrap()["dev.tool-contract/version"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[derive(Clone, Debug)]
enum Pin {
    None,
    Version(&'static str),
    Digest(&'static str),
    UnknownDigest,
}

fn pin_strategy() -> impl Strategy<Value = Pin> {
    prop_oneof![
        Just(Pin::None),
        prop::sample::select(vec!["1.0.0", "2.0.0", "3.0.0", "9.9.9"]).prop_map(Pin::Version),
        prop::sample::select(vec!["1.0.0", "2.0.0", "3.0.0"]).prop_map(Pin::Digest),
        Just(Pin::UnknownDigest),
    ]
}

/// Arguments valid for some versions and not others.
fn arguments_strategy() -> impl Strategy<Value = Value> {
    prop::sample::select(vec![
        json!({"order_id": "o-1"}),
        json!({"order_id": "o-1", "include_lines": true}),
        json!({"order_id": "o-1234567890-long"}),
        json!({"order_id": ""}),
        json!({}),
        json!({"order_id": 5}),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Whatever the context's capabilities and pin: a listed tool is listed at the version its
    /// call runs, with that version's input schema byte for byte, and that schema accepts
    /// exactly the arguments the call accepts; a tool left out is one whose pin names no
    /// version, or (when hiding) one the call would refuse as unauthorized.
    #[test]
    fn the_listed_schema_is_the_one_the_call_is_validated_against(
        read in any::<bool>(),
        admin in any::<bool>(),
        pin in pin_strategy(),
        hide in any::<bool>(),
        arguments in arguments_strategy(),
    ) {
        let registry = order_registry();
        let mut builder = ToolContext::builder();
        if read { builder = builder.capability("orders:read"); }
        if admin { builder = builder.capability("orders:admin"); }
        builder = match &pin {
            Pin::None => builder,
            Pin::Version(v) => builder.pin_version("lookup_order", *v),
            Pin::Digest(v) => builder.pin_digest("lookup_order", digest_of(&registry, v)),
            Pin::UnknownDigest => {
                builder.pin_digest("lookup_order", format!("sha256:{}", "0".repeat(64)))
            }
        };
        let ctx = builder.build();
        let tools = server(registry.clone(), hide).tools_for(&ctx);

        for name in ["lookup_order", "ping_service"] {
            let listed = tools.iter().find(|t| t.name == name);
            let proposal = Proposal::new(name, arguments.clone());
            let validated = registry.validate(proposal, &ctx);
            // The version the call path chose, whether the arguments passed or not.
            let ran = match &validated {
                Ok(call) => Some(call.tool_version().to_owned()),
                Err(rejection) => rejection
                    .observation()
                    .meta
                    .tool_version
                    .as_deref()
                    .map(str::to_owned),
            };
            match listed {
                Some(tool) => {
                    let version = listed_version(tool);
                    prop_assert_eq!(ran.as_deref(), Some(version.as_str()));
                    let contract = registry
                        .contracts()
                        .into_iter()
                        .find(|c| c.name == name && c.version == version)
                        .unwrap();
                    prop_assert_eq!(
                        serde_json::to_string(&*tool.input_schema).unwrap(),
                        serde_json::to_string(&contract.input_schema).unwrap()
                    );
                    let schema = Value::Object((*tool.input_schema).clone());
                    let validator = jsonschema::draft202012::new(&schema).unwrap();
                    prop_assert_eq!(
                        validator.is_valid(&arguments),
                        validated.is_ok(),
                        "{} {} with {}", name, version, arguments
                    );
                    if hide {
                        prop_assert!(contract
                            .authorization
                            .capabilities
                            .iter()
                            .all(|c| ctx.has_capability(c)));
                    }
                }
                None => {
                    let refused = registry
                        .handle(&json!({"name": name, "arguments": arguments}).to_string(), &ctx)
                        .await_blocking();
                    match ran {
                        None => prop_assert_eq!(refused.code(), Some("TOOL_VERSION_NOT_FOUND")),
                        Some(version) => {
                            prop_assert!(hide, "{} {} left out without hiding", name, version);
                            if validated.is_ok() {
                                prop_assert_eq!(refused.category(), Some(ErrorCategory::Unauthorized));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Runs a future to completion on a fresh runtime (proptest bodies are synchronous).
trait AwaitBlocking: std::future::Future + Sized {
    fn await_blocking(self) -> Self::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(self)
    }
}

impl<F: std::future::Future> AwaitBlocking for F {}

/// rmcp's client, counting `notifications/tools/list_changed`.
#[derive(Clone, Default)]
struct Counting {
    changed: Arc<AtomicUsize>,
    notified: Arc<tokio::sync::Notify>,
}

impl ClientHandler for Counting {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::default()
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.fetch_add(1, Ordering::SeqCst);
        self.notified.notify_one();
    }
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    CallToolRequestParams::new(name.to_owned()).with_arguments(arguments)
}

fn as_values(tools: &[Tool]) -> Vec<Value> {
    tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect()
}

#[tokio::test]
async fn each_session_is_listed_what_its_context_can_call_and_told_when_that_changes() {
    // The host's provider answers from whatever context the test set last, cloned: each
    // context's calls share its grants, as a host that builds them once shares them.
    let nobody = ToolContext::default();
    let current = Arc::new(Mutex::new(nobody.clone()));
    let provided = Arc::clone(&current);
    let server = McpServer::new(order_registry(), move |_: &McpRequest<'_>| {
        Ok::<_, ToolError>(provided.lock().unwrap().clone())
    });
    let reference = server.clone();

    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    let serving = tokio::spawn(server.serve(server_read, server_write));
    let handler = Counting::default();
    let client = handler.clone().serve(client_io).await.unwrap();
    let capabilities = client.peer_info().unwrap().capabilities.clone();
    assert_eq!(
        capabilities.tools.and_then(|t| t.list_changed),
        Some(true),
        "the server declares listChanged"
    );

    // No capability: every version of lookup_order needs one (v1 is not what a call runs).
    let first = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = first.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["ping_service"]);
    assert_eq!(
        as_values(&first),
        as_values(&reference.tools_for(&ToolContext::default()))
    );
    // Hidden is not callable, and the call is answered as before: UNAUTHORIZED.
    let hidden = client
        .call_tool(call("lookup_order", json!({"order_id": "o-1"})))
        .await
        .unwrap();
    assert_eq!(hidden.is_error, Some(true));
    let envelope = hidden.structured_content.unwrap();
    assert_eq!(envelope["error"]["category"], "UNAUTHORIZED", "{envelope}");
    assert_eq!(envelope["error"]["code"], "CAPABILITY_DENIED");
    assert_eq!(handler.changed.load(Ordering::SeqCst), 0, "nothing changed");

    // The host now pins version 2 and grants what it needs.
    let pinned = ToolContext::builder()
        .capability("orders:read")
        .pin_version("lookup_order", "2.0.0")
        .build();
    *current.lock().unwrap() = pinned.clone();
    let ok = client
        .call_tool(call("ping_service", json!({})))
        .await
        .unwrap();
    assert_eq!(ok.is_error, Some(false));
    tokio::time::timeout(Duration::from_secs(10), handler.notified.notified())
        .await
        .expect("notifications/tools/list_changed arrives");
    // Once per change, not once per call.
    client
        .call_tool(call("ping_service", json!({})))
        .await
        .unwrap();
    assert_eq!(handler.changed.load(Ordering::SeqCst), 1);

    let second = client.list_all_tools().await.unwrap();
    assert_eq!(as_values(&second), as_values(&reference.tools_for(&pinned)));
    let lookup = second.iter().find(|t| t.name == "lookup_order").unwrap();
    assert_eq!(listed_version(lookup), "2.0.0");
    assert!(
        lookup.input_schema["properties"]
            .as_object()
            .unwrap()
            .contains_key("include_lines"),
        "version 2's schema"
    );
    // And the call runs the version listed, with the listed schema's field.
    let ran = client
        .call_tool(call(
            "lookup_order",
            json!({"order_id": "o-1", "include_lines": true}),
        ))
        .await
        .unwrap();
    assert_eq!(
        ran.structured_content.unwrap()["data"],
        "v2:o-1:true",
        "the pinned version ran"
    );
    assert_eq!(
        handler.changed.load(Ordering::SeqCst),
        1,
        "listed again: nothing stale"
    );

    // Back to the first context, whose calls were already held against a list: the list is
    // now the pinned one, so it changed.
    *current.lock().unwrap() = nobody.clone();
    let ping = || client.call_tool(call("ping_service", json!({})));
    ping().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), handler.notified.notified())
        .await
        .expect("notifications/tools/list_changed arrives");
    ping().await.unwrap();
    assert_eq!(handler.changed.load(Ordering::SeqCst), 2);
    // Listed with it, called with it: nothing stale.
    let third = client.list_all_tools().await.unwrap();
    assert_eq!(as_values(&third), as_values(&first));
    ping().await.unwrap();
    assert_eq!(handler.changed.load(Ordering::SeqCst), 2);
    // Listed by the pinned context, then called by the first again: the session was told
    // nothing of this list, so the first context's calls announce it, though they were
    // checked before and nothing about that context changed.
    *current.lock().unwrap() = pinned.clone();
    let fourth = client.list_all_tools().await.unwrap();
    assert_eq!(as_values(&fourth), as_values(&second));
    *current.lock().unwrap() = nobody.clone();
    ping().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), handler.notified.notified())
        .await
        .expect("notifications/tools/list_changed arrives for a list held by another context");
    assert_eq!(handler.changed.load(Ordering::SeqCst), 3);

    client.cancel().await.unwrap();
    serving.await.unwrap().unwrap();
}

#[tokio::test]
async fn hiding_can_be_turned_off_without_changing_any_call() {
    let registry = order_registry();
    let shown = server(registry.clone(), false);
    let hidden = server(registry, true);
    let nobody = ToolContext::default();
    let names = |tools: Vec<Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.into_owned()).collect()
    };
    assert_eq!(
        names(shown.tools_for(&nobody)),
        ["lookup_order", "ping_service"]
    );
    assert_eq!(names(hidden.tools_for(&nobody)), ["ping_service"]);
    // A pin to a version that does not exist leaves the tool out either way: its call fails.
    let stale = ToolContext::builder()
        .pin_version("lookup_order", "9.9.9")
        .build();
    assert_eq!(names(shown.tools_for(&stale)), ["ping_service"]);
}

#[tokio::test]
async fn the_provider_is_asked_for_the_list_too_and_a_refused_list_shows_only_uncapped_tools() {
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let record = Arc::clone(&seen);
    let server = McpServer::new(order_registry(), move |req: &McpRequest<'_>| {
        record
            .lock()
            .unwrap()
            .push((req.method().to_owned(), req.tool().to_owned()));
        // Knows nobody, but would grant everything if it did.
        Err::<ToolContext, _>(ToolError::unauthorized("NO_USER", "no user"))
    });
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(server.serve(server_read, server_write));
    let client = Counting::default().serve(client_io).await.unwrap();
    let listed = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["ping_service"], "what an empty context may call");
    let refused = client
        .call_tool(call("ping_service", json!({})))
        .await
        .unwrap();
    assert_eq!(
        refused.structured_content.unwrap()["error"]["code"],
        "NO_USER"
    );
    assert_eq!(
        *seen.lock().unwrap(),
        [
            ("tools/list".to_owned(), String::new()),
            ("tools/call".to_owned(), "ping_service".to_owned())
        ]
    );
    client.cancel().await.unwrap();
}
