//! Protocol revisions with rmcp's own client (no pinned third-party client speaks 2026-07-28
//! yet): negotiation per client, the `tools/list` cache hints of 2026-07-28, and approval by
//! input request where 2026-07-28 has no elicitation request.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities,
    ClientConfig, ElicitRequestParams, ElicitResult, Implementation, InputRequest, ProtocolVersion,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, RequestContext, RoleClient, RunningService,
};
use rmcp::{ClientHandler, ErrorData};
use serde_json::{json, Value};
use tool_contract::mcp::{McpRequest, McpServer, McpServerBuilder};
use tool_contract::ToolError;
use tool_contract_examples::DocumentStore;

use super::{ctx, registry};

/// A client that may declare form elicitation and answers each question with `answer`.
#[derive(Clone)]
struct Answering {
    elicitation: bool,
    protocol: Option<ProtocolVersion>,
    answer: Option<Value>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Answering {
    fn new(elicitation: bool, answer: Option<Value>) -> Self {
        Answering {
            elicitation,
            protocol: None,
            answer,
            asked: Arc::default(),
        }
    }
}

impl ClientHandler for Answering {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = if self.elicitation {
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap()
        } else {
            ClientCapabilities::default()
        };
        let info = ClientConfig::new(capabilities, Implementation::new("revision-test", "0.0.1"));
        match &self.protocol {
            Some(version) => info.with_protocol_version(version.clone()),
            None => info,
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.asked.lock().unwrap().push(message.clone());
        }
        match &self.answer {
            Some(answer) => Ok(serde_json::from_value(answer.clone()).unwrap()),
            None => Err(ErrorData::internal_error("no answer configured", None)),
        }
    }
}

fn builder(store: &DocumentStore) -> McpServerBuilder {
    let store = store.clone();
    McpServer::builder(registry(), move |_: &McpRequest<'_>| {
        Ok::<_, ToolError>(ctx(&store))
    })
}

/// Connects `handler` to `server` over an in-memory stream, with `lifecycle`.
async fn connect(
    server: McpServer,
    handler: Answering,
    lifecycle: ClientLifecycleMode,
) -> RunningService<RoleClient, Answering> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(server.serve(server_read, server_write));
    handler
        .serve_with_lifecycle(client_io, lifecycle)
        .await
        .expect("the client connects")
}

fn modern() -> ClientLifecycleMode {
    ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    }
}

fn email() -> CallToolRequestParams {
    let Value::Object(args) =
        json!({"to": "lee@acme.test", "subject": "Refund policy", "body": "From 2026-07-01."})
    else {
        unreachable!()
    };
    CallToolRequestParams::new("send_email").with_arguments(args)
}

fn envelope(result: &CallToolResult) -> &Value {
    result.structured_content.as_ref().expect("an envelope")
}

#[tokio::test]
async fn each_client_gets_the_revision_it_speaks() {
    let store = DocumentStore::seeded();
    let server = builder(&store)
        .tools_list_ttl(Duration::from_secs(30))
        .build();

    // 2026-07-28: no handshake, the version rides in each request; tools/list carries the
    // cache hints, private because the list depends on who asks.
    let client = connect(server.clone(), Answering::new(false, None), modern()).await;
    assert_eq!(
        client.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2026_07_28
    );
    let listed = client.list_tools(None).await.unwrap();
    assert_eq!(listed.ttl_ms, Some(30_000));
    assert_eq!(listed.cache_scope, Some(CacheScope::Private));
    assert_eq!(
        listed.tools.len(),
        4,
        "delete_document is hidden from this user"
    );
    let result = client
        .call_tool(
            CallToolRequestParams::new("search_documents")
                .with_arguments(json!({"query": "refund"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(envelope(&result)["ok"], true, "{result:?}");
    client.cancel().await.unwrap();

    // Older revisions negotiate by `initialize` and get no hints they do not define.
    for version in [
        ProtocolVersion::V_2025_11_25,
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::V_2025_03_26,
    ] {
        let mut handler = Answering::new(false, None);
        handler.protocol = Some(version.clone());
        let client = connect(server.clone(), handler, ClientLifecycleMode::Initialize).await;
        assert_eq!(client.peer_info().unwrap().protocol_version, version);
        let listed = client.list_tools(None).await.unwrap();
        assert_eq!(listed.ttl_ms, None, "{version}");
        assert_eq!(listed.cache_scope, None, "{version}");
        assert_eq!(listed.tools.len(), 4);
        client.cancel().await.unwrap();
    }

    // A client that offers only a revision the server does not serve is refused.
    let refused = Answering::new(false, None)
        .serve_with_lifecycle(
            {
                let (client_io, server_io) = tokio::io::duplex(1 << 16);
                let (r, w) = tokio::io::split(server_io);
                tokio::spawn(server.clone().serve(r, w));
                client_io
            },
            ClientLifecycleMode::Discover {
                preferred_versions: vec![serde_json::from_value::<ProtocolVersion>(json!(
                    "2099-01-01"
                ))
                .unwrap()],
            },
        )
        .await;
    assert!(refused.is_err(), "no common revision");
}

#[tokio::test]
async fn under_2026_07_28_approval_is_an_input_request_answered_on_retry() {
    let store = DocumentStore::seeded();
    let answer = json!({"action": "accept", "content": {"approve": true}});
    let handler = Answering::new(true, Some(answer));
    let asked = Arc::clone(&handler.asked);
    let client = connect(builder(&store).build(), handler, modern()).await;
    // rmcp's client fulfils the input request through its handler and retries.
    let result = client.call_tool(email()).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(envelope(&result)["meta"]["attempts"], 1);
    assert_eq!(store.sent_mail().len(), 1, "sent exactly once");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    for shown in [
        "send_email",
        "1.2.0",
        "user:kim",
        "lee@acme.test",
        "sha256:",
    ] {
        assert!(
            asked[0].contains(shown),
            "{shown} missing from {}",
            asked[0]
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn under_2026_07_28_a_declined_or_absent_answer_runs_nothing() {
    for (elicitation, answer, code) in [
        (true, Some(json!({"action": "decline"})), "APPROVAL_DENIED"),
        (
            true,
            Some(json!({"action": "accept", "content": {"approve": false}})),
            "APPROVAL_DENIED",
        ),
        (true, Some(json!({"action": "cancel"})), "APPROVAL_REQUIRED"),
        (false, None, "APPROVAL_REQUIRED"),
    ] {
        let store = DocumentStore::seeded();
        let handler = Answering::new(elicitation, answer.clone());
        let client = connect(builder(&store).build(), handler, modern()).await;
        let result = client.call_tool(email()).await.unwrap();
        let envelope = envelope(&result);
        assert_eq!(result.is_error, Some(true), "{answer:?}");
        assert_eq!(envelope["error"]["code"], code, "{answer:?}: {envelope}");
        assert_eq!(envelope["meta"]["attempts"], 0);
        assert!(store.sent_mail().is_empty(), "{answer:?}");
        if !elicitation {
            assert_eq!(
                envelope["error"]["safe_details"]["not_asked_because"],
                "the client did not declare form elicitation"
            );
        }
        client.cancel().await.unwrap();
    }
}

/// One round by hand: the question and its handle.
async fn ask(
    client: &RunningService<RoleClient, Answering>,
    call: CallToolRequestParams,
) -> String {
    match client.call_tool_once(call).await.unwrap() {
        CallToolResponse::InputRequired(question) => {
            let requests = question.input_requests.expect("one input request");
            assert_eq!(requests.len(), 1);
            assert!(matches!(requests["approval"], InputRequest::Elicitation(_)));
            question.request_state.expect("a handle")
        }
        other => panic!("not a question: {other:?}"),
    }
}

fn answered(call: CallToolRequestParams, handle: &str, approve: bool) -> CallToolRequestParams {
    let mut responses = std::collections::BTreeMap::new();
    responses.insert(
        "approval".to_owned(),
        json!({"action": "accept", "content": {"approve": approve}}),
    );
    call.with_input_responses(responses)
        .with_request_state(handle)
}

async fn complete(
    client: &RunningService<RoleClient, Answering>,
    call: CallToolRequestParams,
) -> CallToolResult {
    match client.call_tool_once(call).await.unwrap() {
        CallToolResponse::Complete(result) => result,
        other => panic!("not complete: {other:?}"),
    }
}

#[tokio::test]
async fn an_input_answer_counts_once_and_only_for_the_call_it_was_asked_about() {
    let store = DocumentStore::seeded();
    let client = connect(
        builder(&store).build(),
        Answering::new(true, None),
        modern(),
    )
    .await;

    // Moved to other arguments: not this question's answer, and the handle is used up.
    let handle = ask(&client, email()).await;
    let mut other = email();
    other
        .arguments
        .as_mut()
        .unwrap()
        .insert("to".into(), json!("mallory@evil.test"));
    let moved = complete(&client, answered(other, &handle, true)).await;
    assert_eq!(envelope(&moved)["error"]["code"], "APPROVAL_REQUIRED");
    assert_eq!(
        envelope(&moved)["error"]["safe_details"]["not_asked_because"],
        "the answer was given for another call (its arguments or caller differ)"
    );
    let after = complete(&client, answered(email(), &handle, true)).await;
    assert_eq!(
        envelope(&after)["error"]["safe_details"]["not_asked_because"],
        "the answer came back for no open question (unknown, already answered or expired)"
    );
    // A made-up handle decides nothing either.
    let forged = complete(
        &client,
        answered(email(), "00112233445566778899aabbccddeeff", true),
    )
    .await;
    assert_eq!(envelope(&forged)["error"]["code"], "APPROVAL_REQUIRED");
    assert!(store.sent_mail().is_empty());

    // Answered as asked: runs once; the same answer replayed runs nothing more (the call's
    // key already holds its result, which is replayed without asking anyone).
    let handle = ask(&client, email()).await;
    let ran = complete(&client, answered(email(), &handle, true)).await;
    assert_eq!(envelope(&ran)["ok"], true, "{ran:?}");
    let replayed = complete(&client, answered(email(), &handle, true)).await;
    assert_eq!(
        envelope(&replayed)["meta"]["idempotency"],
        "replayed",
        "{replayed:?}"
    );
    assert_eq!(store.sent_mail().len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_2025_client_is_still_asked_by_elicitation() {
    let store = DocumentStore::seeded();
    let answer = json!({"action": "accept", "content": {"approve": true}});
    let handler = Answering::new(true, Some(answer));
    let asked = Arc::clone(&handler.asked);
    let client = connect(
        builder(&store).build(),
        handler,
        ClientLifecycleMode::Initialize,
    )
    .await;
    assert_eq!(
        client.peer_info().unwrap().protocol_version,
        ProtocolVersion::V_2025_11_25
    );
    let result = client.call_tool(email()).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert_eq!(asked.lock().unwrap().len(), 1);
    assert_eq!(store.sent_mail().len(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn under_2026_07_28_a_call_approved_out_of_band_runs_on_retry() {
    let store = DocumentStore::seeded();
    let server = builder(&store).build();
    let registry = server.registry().clone();
    // rmcp's client, speaking 2026-07-28, without elicitation: the call waits out of band.
    let client = connect(server, Answering::new(false, None), modern()).await;
    let waiting = complete(&client, email()).await;
    let error = &envelope(&waiting)["error"];
    assert_eq!(error["code"], "APPROVAL_REQUIRED", "{waiting:?}");
    let id = error["safe_details"]["approval_id"]
        .as_str()
        .expect("the envelope names the approval id")
        .to_owned();
    registry
        .approve_pending(Some("acme"), &id, "user:lee", "expected")
        .await
        .unwrap();
    let ran = complete(&client, email()).await;
    assert_eq!(envelope(&ran)["ok"], true, "{ran:?}");
    assert_eq!(store.sent_mail().len(), 1);
    client.cancel().await.unwrap();
}
