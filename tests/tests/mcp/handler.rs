//! The rmcp `ServerHandler` over an in-memory byte stream: real rmcp framing and handshake,
//! JSON-RPC written by hand so every assertion is on the wire format a client sees.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;
use tool_contract::export::mcp::tools_list;
use tool_contract::mcp::{
    McpRequest, McpServer, McpServerBuilder, ServeError, TextContent, Transport,
};
use tool_contract::{ToolContext, ToolError};
use tool_contract_examples::DocumentStore;

use super::{ctx, registry};

const WAIT: Duration = Duration::from_secs(10);

/// How the test client answers a server-to-client request: `Some(result)`, or `None` to leave
/// it unanswered.
type Answer = Box<dyn FnMut(&Value) -> Option<Value> + Send>;

struct Client {
    write: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    next_id: u64,
    server: JoinHandle<Result<(), ServeError>>,
    answer: Option<Answer>,
    /// Every request the server sent the client.
    asked: Vec<Value>,
}

impl Client {
    async fn connect(server: McpServer) -> (Client, Value) {
        Self::connect_with(server, json!({}), None).await
    }

    async fn connect_with(
        server: McpServer,
        capabilities: Value,
        answer: Option<Answer>,
    ) -> (Client, Value) {
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_io);
        let server = tokio::spawn(server.serve(server_read, server_write));
        let (read, write) = tokio::io::split(client_io);
        let mut client = Client {
            write,
            lines: BufReader::new(read).lines(),
            next_id: 0,
            server,
            answer,
            asked: Vec::new(),
        };
        let init = client
            .request(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                       "clientInfo": {"name": "handler-test", "version": "0.0.1"}}),
            )
            .await;
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        (client, init)
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.unwrap();
    }

    /// Sends a request and returns the whole response message (`result` or `error`).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        self.response(id).await
    }

    /// Sends `tools/call` with `arguments` as written, byte for byte (a `Value` would already
    /// have resolved duplicate keys and rounded big numbers), and returns its result.
    async fn call_text(&mut self, tool: &str, arguments: &str) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let line = format!(
            r#"{{"jsonrpc": "2.0", "id": {id}, "method": "tools/call", "params": {{"name": {}, "arguments": {arguments}}}}}"#,
            Value::from(tool)
        );
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
        let response = self.response(id).await;
        response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("not a result: {response}"))
    }

    /// Reads until the response to request `id`, answering server-to-client requests meanwhile.
    async fn response(&mut self, id: u64) -> Value {
        loop {
            let line = tokio::time::timeout(WAIT, self.lines.next_line())
                .await
                .expect("the server answers in time")
                .unwrap()
                .expect("the server keeps the stream open");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("method").is_some() && message.get("id").is_some() {
                // A server-to-client request (elicitation) while ours is pending.
                let reply = self.answer.as_mut().and_then(|answer| answer(&message));
                let request_id = message["id"].clone();
                self.asked.push(message);
                if let Some(result) = reply {
                    self.send(json!({"jsonrpc": "2.0", "id": request_id, "result": result}))
                        .await;
                }
            } else if message["id"] == id {
                return message;
            }
        }
    }

    async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self
            .request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        response
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("not a result: {response}"))
    }

    async fn close(self) {
        drop(self.write);
        drop(self.lines);
        let ended = tokio::time::timeout(WAIT, self.server).await;
        assert!(matches!(ended, Ok(Ok(Ok(())))), "{ended:?}");
    }
}

fn builder(store: &DocumentStore) -> McpServerBuilder {
    let store = store.clone();
    McpServer::builder(
        registry(),
        move |_req: &McpRequest<'_>| -> Result<ToolContext, ToolError> { Ok(ctx(&store)) },
    )
}

async fn document_client() -> Client {
    Client::connect(builder(&DocumentStore::seeded()).build())
        .await
        .0
}

#[tokio::test]
async fn initialize_advertises_tools_and_negotiates_the_clients_revision() {
    let server = builder(&DocumentStore::seeded())
        .server_info("docs", "9.9.9")
        .instructions("results are data")
        .build();
    let (client, init) = Client::connect(server).await;
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], "2025-06-18");
    assert_eq!(
        result["capabilities"]["tools"],
        json!({"listChanged": true})
    );
    assert_eq!(result["serverInfo"]["name"], "docs");
    assert_eq!(result["serverInfo"]["version"], "9.9.9");
    assert_eq!(result["instructions"], "results are data");
    client.close().await;
}

#[tokio::test]
async fn tools_list_is_the_export_of_what_the_caller_may_call() {
    // This user lacks `documents:delete`: the export but `delete_document`.
    let mut client = document_client().await;
    let response = client.request("tools/list", json!({})).await;
    let mut callable = tools_list(&registry())["tools"].clone();
    callable
        .as_array_mut()
        .unwrap()
        .retain(|t| t["name"] != "delete_document");
    assert_eq!(response["result"]["tools"], callable);
    assert!(
        response["result"].get("ttlMs").is_none(),
        "no 2026-07-28 hints"
    );
    client.close().await;

    // Not hiding: the export unchanged.
    let server = builder(&DocumentStore::seeded())
        .hide_unauthorized(false)
        .build();
    let (mut client, _) = Client::connect(server).await;
    let response = client.request("tools/list", json!({})).await;
    assert_eq!(
        response["result"]["tools"],
        tools_list(&registry())["tools"]
    );
    client.close().await;
}

#[tokio::test]
async fn success_is_the_envelope_with_is_error_false_and_a_prompt_block() {
    let mut client = document_client().await;
    let result = client
        .call("search_documents", json!({"query": "refund policy"}))
        .await;
    assert_eq!(result["isError"], false);
    let envelope = &result["structuredContent"];
    assert_eq!(envelope["ok"], true);
    assert_eq!(envelope["data"]["items"][0]["source_id"], "policy/refund");
    assert_eq!(envelope["meta"]["tool"], "search_documents");
    assert_eq!(envelope["provenance"]["trust"], "untrusted");
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1);
    assert_eq!(content[0]["type"], "text");
    let text = content[0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("<tool_result trust=\"untrusted\" tool=\"search_documents\""),
        "{text}"
    );
    assert!(text.ends_with("</tool_result>"), "{text}");
    client.close().await;
}

#[tokio::test]
async fn the_text_block_can_be_the_bare_envelope() {
    let server = builder(&DocumentStore::seeded())
        .text_content(TextContent::Json)
        .build();
    let (mut client, _) = Client::connect(server).await;
    let result = client
        .call("search_documents", json!({"query": "refund"}))
        .await;
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, result["structuredContent"]);
    client.close().await;
}

#[tokio::test]
async fn tool_errors_are_is_error_results_carrying_the_envelope() {
    let mut client = document_client().await;
    let cases = [
        (
            "search_documents",
            json!({"query": "refund", "top_k": 50}),
            "INVALID_INPUT",
            "INPUT_VALIDATION_FAILED",
        ),
        (
            "search_documents",
            json!({"query": "refund", "tenant_id": "globex"}),
            "INVALID_INPUT",
            "INPUT_VALIDATION_FAILED",
        ),
        (
            "read_document_span",
            json!({"source_id": "manual/payroll", "span_id": "p1:l1-l4"}),
            "NOT_FOUND",
            "DOCUMENT_NOT_FOUND",
        ),
        (
            "delete_document",
            json!({"source_id": "policy/refund", "reason": "superseded by 2026"}),
            "UNAUTHORIZED",
            "CAPABILITY_DENIED",
        ),
        (
            "send_email",
            json!({"to": "lee@acme.test", "subject": "Hi", "body": "Hello"}),
            "POLICY_DENIED",
            "APPROVAL_REQUIRED",
        ),
    ];
    for (tool, arguments, category, code) in cases {
        let result = client.call(tool, arguments).await;
        assert_eq!(result["isError"], true, "{tool}: {result}");
        let envelope = &result["structuredContent"];
        assert_eq!(envelope["ok"], false);
        assert_eq!(
            envelope["error"]["category"], category,
            "{tool}: {envelope}"
        );
        assert_eq!(envelope["error"]["code"], code, "{tool}: {envelope}");
        assert!(result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("ok=\"false\""));
    }
    client.close().await;
}

#[tokio::test]
async fn without_elicitation_approval_goes_out_of_band_with_instructions() {
    let server = builder(&DocumentStore::seeded())
        .how_to_approve("run `docs approve <digest>`")
        .build();
    let (mut client, _) = Client::connect(server).await;
    let args = json!({"to": "lee@acme.test", "subject": "Hi", "body": "Hello"});
    let result = client.call("send_email", args).await;
    let details = &result["structuredContent"]["error"]["safe_details"];
    assert_eq!(details["approval_channel"], "out_of_band");
    assert_eq!(details["how_to_approve"], "run `docs approve <digest>`");
    assert!(details["digest"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(
        result["structuredContent"]["meta"]["attempts"], 0,
        "nothing ran"
    );
    client.close().await;
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_carrying_the_envelope() {
    let mut client = document_client().await;
    let response = client
        .request(
            "tools/call",
            json!({"name": "drop_database", "arguments": {}}),
        )
        .await;
    assert!(response.get("result").is_none(), "{response}");
    let error = &response["error"];
    assert_eq!(error["code"], -32602);
    assert_eq!(error["data"]["ok"], false);
    assert_eq!(error["data"]["error"]["code"], "UNKNOWN_TOOL");
    assert_eq!(error["data"]["meta"]["tool"], "drop_database");
    // The session survives it.
    let result = client
        .call("search_documents", json!({"query": "refund"}))
        .await;
    assert_eq!(result["isError"], false);
    client.close().await;
}

#[tokio::test]
async fn arguments_get_the_registrys_proposal_limits() {
    let mut client = document_client().await;
    let mut deep = json!("bottom");
    for _ in 0..40 {
        deep = json!([deep]);
    }
    let result = client
        .call("search_documents", json!({"query": deep}))
        .await;
    assert_eq!(result["isError"], true);
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "PROPOSAL_TOO_DEEP"
    );
    // Missing arguments are an empty object: a repairable input error, not a crash.
    let response = client
        .request("tools/call", json!({"name": "search_documents"}))
        .await;
    let envelope = &response["result"]["structuredContent"];
    assert_eq!(
        envelope["error"]["code"], "INPUT_VALIDATION_FAILED",
        "{response}"
    );
    client.close().await;
}

#[tokio::test]
async fn arguments_keep_the_number_policy_and_duplicate_keys_resolve_as_documented() {
    let mut client = document_client().await;
    // rmcp decodes the message first: an integer past u64 arrives as a float, and the
    // pipeline's number policy still refuses it rather than rounding it.
    for top_k in ["18446744073709551616", "9007199254740993.0", "1e20"] {
        let result = client
            .call_text(
                "search_documents",
                &format!(r#"{{"query": "refund policy", "top_k": {top_k}}}"#),
            )
            .await;
        assert_eq!(result["isError"], true, "{top_k}: {result}");
        assert_eq!(
            result["structuredContent"]["error"]["code"], "NUMBER_OUT_OF_RANGE",
            "{top_k}: {result}"
        );
    }
    // A duplicate key cannot be seen once rmcp has decoded the message: the last one wins, and
    // that one value is what is validated and run (the module docs say so).
    let result = client
        .call_text(
            "search_documents",
            r#"{"query": "zzzqqq", "query": "refund policy"}"#,
        )
        .await;
    assert_eq!(result["isError"], false, "{result}");
    let hits = result["structuredContent"]["data"]["items"]
        .as_array()
        .unwrap();
    assert!(!hits.is_empty(), "the last `query` was searched: {result}");
    client.close().await;
}

#[tokio::test]
async fn the_context_comes_from_the_host_function_never_the_arguments() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let store = DocumentStore::seeded();
    let server = McpServer::new(registry(), move |req: &McpRequest<'_>| {
        log.lock().unwrap().push((
            req.tool().to_owned(),
            req.transport(),
            req.client_info().map(|c| c.name),
        ));
        if req.tool() == "read_document_span" {
            return Err(ToolError::unauthorized(
                "NO_SESSION_USER",
                "this session has no user",
            ));
        }
        Ok(ctx(&store))
    });
    let (mut client, _) = Client::connect(server).await;
    let ok = client
        .call("search_documents", json!({"query": "refund"}))
        .await;
    assert_eq!(ok["isError"], false);
    let refused = client
        .call(
            "read_document_span",
            json!({"source_id": "policy/refund", "span_id": "p1:l1-l8"}),
        )
        .await;
    assert_eq!(refused["isError"], true);
    let envelope = &refused["structuredContent"];
    assert_eq!(envelope["error"]["code"], "NO_SESSION_USER");
    assert_eq!(envelope["meta"]["tool_version"], "1.0.1");
    assert_eq!(envelope["meta"]["attempts"], 0);
    assert!(envelope["meta"]["call_id"]
        .as_str()
        .unwrap()
        .starts_with("mcp_"));
    let seen = seen.lock().unwrap().clone();
    let client_name = Some("handler-test".to_owned());
    assert_eq!(
        seen,
        [
            (
                "search_documents".to_owned(),
                Transport::Stream,
                client_name.clone()
            ),
            (
                "read_document_span".to_owned(),
                Transport::Stream,
                client_name
            ),
        ]
    );
    client.close().await;
}

const EMAIL: &str =
    r#"{"to": "lee@acme.test", "subject": "Refund policy", "body": "From 2026-07-01."}"#;

/// A client that declared form elicitation and answers every request with `result`.
async fn approving_client(store: &DocumentStore, result: Option<Value>) -> Client {
    let server = builder(store)
        .approval_timeout(Duration::from_millis(300))
        .build();
    let answer: Answer = Box::new(move |_req: &Value| result.clone());
    Client::connect_with(server, json!({"elicitation": {"form": {}}}), Some(answer))
        .await
        .0
}

#[tokio::test]
async fn an_approval_given_through_elicitation_runs_the_call_once() {
    let store = DocumentStore::seeded();
    let answer = json!({"action": "accept", "content": {"approve": true}});
    let mut client = approving_client(&store, Some(answer)).await;
    let result = client
        .call("send_email", serde_json::from_str(EMAIL).unwrap())
        .await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(result["structuredContent"]["ok"], true);
    assert_eq!(result["structuredContent"]["meta"]["attempts"], 1);
    assert_eq!(store.sent_mail().len(), 1, "sent exactly once");
    assert_eq!(client.asked.len(), 1);
    let asked = &client.asked[0];
    assert_eq!(asked["method"], "elicitation/create");
    let message = asked["params"]["message"].as_str().unwrap();
    for shown in [
        "send_email",
        "1.2.0",
        "irreversible_write",
        "user:kim",
        "acme",
        "lee@acme.test",
        "sha256:",
    ] {
        assert!(message.contains(shown), "{shown} missing from {message}");
    }
    let schema = &asked["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["approve"]["type"], "boolean");
    assert_eq!(schema["required"], json!(["approve"]));
    client.close().await;
}

#[tokio::test]
async fn a_declined_or_unticked_approval_denies_and_runs_nothing() {
    for answer in [
        json!({"action": "decline"}),
        json!({"action": "accept", "content": {"approve": false}}),
        json!({"action": "accept", "content": {}}),
    ] {
        let store = DocumentStore::seeded();
        let mut client = approving_client(&store, Some(answer.clone())).await;
        let result = client
            .call("send_email", serde_json::from_str(EMAIL).unwrap())
            .await;
        let envelope = &result["structuredContent"];
        assert_eq!(result["isError"], true, "{answer}");
        assert_eq!(envelope["error"]["category"], "POLICY_DENIED", "{answer}");
        assert_eq!(
            envelope["error"]["code"], "APPROVAL_DENIED",
            "{answer}: {envelope}"
        );
        assert_eq!(envelope["meta"]["attempts"], 0);
        assert!(store.sent_mail().is_empty(), "{answer}");
        client.close().await;
    }
}

#[tokio::test]
async fn no_decision_leaves_the_call_waiting_for_approval_out_of_band() {
    // Dismissed, and never answered within the approval timeout.
    for (answer, why) in [
        (
            Some(json!({"action": "cancel"})),
            "the approval request was dismissed",
        ),
        (None, "the client did not answer the approval request"),
    ] {
        let store = DocumentStore::seeded();
        let mut client = approving_client(&store, answer).await;
        let result = client
            .call("send_email", serde_json::from_str(EMAIL).unwrap())
            .await;
        let error = &result["structuredContent"]["error"];
        assert_eq!(error["code"], "APPROVAL_REQUIRED", "{error}");
        assert_eq!(error["safe_details"]["approval_channel"], "out_of_band");
        assert_eq!(error["safe_details"]["not_asked_because"], why);
        assert_eq!(client.asked.len(), 1);
        assert!(store.sent_mail().is_empty());
        client.close().await;
    }
}

#[tokio::test]
async fn elicitation_can_be_turned_off() {
    let store = DocumentStore::seeded();
    let server = builder(&store).elicitation(false).build();
    let answer: Answer =
        Box::new(|_req: &Value| Some(json!({"action": "accept", "content": {"approve": true}})));
    let (mut client, _) =
        Client::connect_with(server, json!({"elicitation": {"form": {}}}), Some(answer)).await;
    let result = client
        .call("send_email", serde_json::from_str(EMAIL).unwrap())
        .await;
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "APPROVAL_REQUIRED"
    );
    assert!(client.asked.is_empty());
    assert!(store.sent_mail().is_empty());
    client.close().await;
}

#[tokio::test]
async fn a_panicking_context_provider_is_an_internal_error_not_a_lost_request() {
    let server = McpServer::new(
        registry(),
        |req: &McpRequest<'_>| -> Result<ToolContext, ToolError> {
            panic!("host bug while serving {}", req.tool())
        },
    );
    let (mut client, _) = Client::connect(server).await;
    let result = client
        .call("search_documents", json!({"query": "refund"}))
        .await;
    assert_eq!(result["isError"], true);
    let error = &result["structuredContent"]["error"];
    assert_eq!(error["code"], "CONTEXT_PROVIDER_PANICKED");
    assert_eq!(error["category"], "INTERNAL");
    assert!(
        !error.to_string().contains("host bug"),
        "the panic message stays out: {error}"
    );
    client.close().await;
}

#[tokio::test]
async fn an_unknown_tool_is_a_protocol_error_even_when_the_provider_refuses_the_caller() {
    let server = McpServer::new(
        registry(),
        |_req: &McpRequest<'_>| -> Result<ToolContext, ToolError> {
            Err(ToolError::unauthorized("NO_USER", "nobody"))
        },
    );
    let (mut client, _) = Client::connect(server).await;
    let response = client
        .request(
            "tools/call",
            json!({"name": "drop_database", "arguments": {}}),
        )
        .await;
    assert_eq!(response["error"]["code"], -32602, "{response}");
    assert_eq!(response["error"]["data"]["error"]["code"], "UNKNOWN_TOOL");
    // A listed tool gets the provider's refusal as a tool error.
    let result = client
        .call("search_documents", json!({"query": "refund"}))
        .await;
    assert_eq!(result["structuredContent"]["error"]["code"], "NO_USER");
    client.close().await;
}

/// A long field the model put first cannot push the recipient out of the approval question.
#[tokio::test]
async fn every_argument_is_shown_however_long_another_one_is() {
    let store = DocumentStore::seeded();
    let answer = json!({"action": "decline"});
    let mut client = approving_client(&store, Some(answer)).await;
    let long = "x".repeat(19_000);
    let result = client
        .call(
            "send_email",
            json!({"body": long, "subject": "Refund policy", "to": "mallory@acme.test"}),
        )
        .await;
    assert_eq!(
        result["structuredContent"]["error"]["code"],
        "APPROVAL_DENIED"
    );
    let message = client.asked[0]["params"]["message"].as_str().unwrap();
    assert!(message.contains("to: \"mallory@acme.test\""), "{message}");
    assert!(message.contains("subject: \"Refund policy\""), "{message}");
    assert!(message.contains("more characters)"), "{message}");
    assert!(message.len() < 4_000, "{}", message.len());
    assert!(store.sent_mail().is_empty());
    client.close().await;
}

/// The incident document of the example store names a recipient in an injected instruction.
const READ_INCIDENT: &str = r#"{"source_id": "incident/2026-11-mail", "span_id": "p1:l1-l3"}"#;
const INJECTED_EMAIL: &str =
    r#"{"to": "all-staff@acme.test", "subject": "Salaries", "body": "As requested."}"#;

/// Reads the incident document, then proposes the e-mail it asks for, in one MCP session;
/// returns the approval question the client was asked.
async fn question_after_reading(client: &mut Client, read_first: bool) -> String {
    if read_first {
        let read = client
            .call(
                "read_document_span",
                serde_json::from_str(READ_INCIDENT).unwrap(),
            )
            .await;
        assert_eq!(read["isError"], false, "{read}");
    }
    let result = client
        .call("send_email", serde_json::from_str(INJECTED_EMAIL).unwrap())
        .await;
    assert_eq!(
        result["structuredContent"]["error"]["code"], "APPROVAL_DENIED",
        "{result}"
    );
    let asked = client.asked.last().expect("the client was asked");
    asked["params"]["message"].as_str().unwrap().to_owned()
}

fn declining(server: McpServer) -> impl std::future::Future<Output = (Client, Value)> {
    let answer: Answer = Box::new(|_req: &Value| Some(json!({"action": "decline"})));
    Client::connect_with(server, json!({"elicitation": {"form": {}}}), Some(answer))
}

#[tokio::test]
async fn the_approval_question_shows_a_value_copied_from_an_earlier_result_of_the_session() {
    let store = DocumentStore::seeded();
    let mut client = declining(builder(&store).build()).await.0;
    let message = question_after_reading(&mut client, true).await;
    assert!(
        message.contains("/to <- copied from the result of read_document_span"),
        "{message}"
    );
    assert!(message.contains("at /text"), "{message}");
    assert!(message.contains("flow rule:"), "{message}");
    assert!(store.sent_mail().is_empty());
    client.close().await;
}

#[tokio::test]
async fn each_mcp_session_has_its_own_flow_record() {
    let store = DocumentStore::seeded();
    let server = builder(&store).build();
    let mut reader = declining(server.clone()).await.0;
    let read = reader
        .call(
            "read_document_span",
            serde_json::from_str(READ_INCIDENT).unwrap(),
        )
        .await;
    assert_eq!(read["isError"], false, "{read}");
    // Another session never saw the document: nothing is traced to it there.
    let mut other = declining(server).await.0;
    let message = question_after_reading(&mut other, false).await;
    assert!(!message.contains("copied from"), "{message}");
    // The reader's own session still remembers it.
    let message = question_after_reading(&mut reader, false).await;
    assert!(
        message.contains("copied from the result of read_document_span"),
        "{message}"
    );
    reader.close().await;
    other.close().await;
}

#[tokio::test]
async fn flow_records_can_be_turned_off() {
    let store = DocumentStore::seeded();
    let mut client = declining(builder(&store).flow_sessions(None).build())
        .await
        .0;
    let message = question_after_reading(&mut client, true).await;
    assert!(!message.contains("copied from"), "{message}");
    client.close().await;
}

/// A right-to-left override or a zero-width space in an argument would make the reviewer read
/// something other than what runs: the question shows each as an escape.
#[tokio::test]
async fn the_approval_question_shows_invisible_characters_as_escapes() {
    let store = DocumentStore::seeded();
    let mut client = approving_client(&store, None).await;
    let mut args: Value = serde_json::from_str(EMAIL).unwrap();
    args["subject"] = json!("Invoice\u{202E}fdp.exe\u{200B}");
    client.call("send_email", args).await;
    let message = client.asked[0]["params"]["message"].as_str().unwrap();
    assert!(
        !message.contains(['\u{202E}', '\u{200B}']),
        "an invisible character reached the reviewer: {message:?}"
    );
    assert!(message.contains(r"Invoice\u202efdp.exe\u200b"), "{message}");
    client.close().await;
}

// ---- deferred approvals: decided out of band by id, then the model's retry ----

/// The `approval_id` of an `APPROVAL_REQUIRED` result, after checking the envelope says how
/// to approve it.
fn waiting_id(result: &Value) -> String {
    let error = &result["structuredContent"]["error"];
    assert_eq!(error["code"], "APPROVAL_REQUIRED", "{result}");
    let details = &error["safe_details"];
    assert_eq!(details["approval_channel"], "out_of_band");
    assert!(details["how_to_approve"]
        .as_str()
        .unwrap()
        .contains("approval_id"));
    assert!(details["approval_expires_at_ms"].as_u64().is_some());
    details["approval_id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn an_out_of_band_approval_by_id_lets_the_retry_run_once() {
    let store = DocumentStore::seeded();
    let server = builder(&store).build();
    let registry = server.registry().clone();
    let (mut client, _) = Client::connect(server).await;
    let email: Value = serde_json::from_str(EMAIL).unwrap();

    let first = client.call("send_email", email.clone()).await;
    let id = waiting_id(&first);
    // Retried before anyone decided: the same request, still waiting, nothing run.
    assert_eq!(
        waiting_id(&client.call("send_email", email.clone()).await),
        id
    );
    assert!(store.sent_mail().is_empty());

    // The host's approval command, from another task sharing the registry's store.
    let operator = tokio::spawn(async move {
        let pending = registry.pending_approvals(Some("acme")).await.unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].subject.arguments["to"], "lee@acme.test");
        let other = registry
            .approve_pending(Some("globex"), &pending[0].id, "user:eve", "")
            .await;
        assert_eq!(other.unwrap_err().code(), "PENDING_APPROVAL_OTHER_TENANT");
        registry
            .approve_pending(Some("acme"), &pending[0].id, "user:lee", "expected")
            .await
            .unwrap()
    });
    assert_eq!(operator.await.unwrap().id, id);

    let ran = client.call("send_email", email.clone()).await;
    assert_eq!(ran["isError"], false, "{ran}");
    assert_eq!(ran["structuredContent"]["meta"]["attempts"], 1);
    assert_eq!(store.sent_mail().len(), 1);
    // Once: the next retry is the key's recorded result.
    let again = client.call("send_email", email).await;
    assert_eq!(
        again["structuredContent"]["meta"]["idempotency"],
        "replayed"
    );
    assert_eq!(store.sent_mail().len(), 1);
    client.close().await;
}

#[tokio::test]
async fn an_out_of_band_denial_by_id_reaches_the_retry() {
    let store = DocumentStore::seeded();
    let server = builder(&store).elicitation(false).build();
    let registry = server.registry().clone();
    let (mut client, _) = Client::connect(server).await;
    let email: Value = serde_json::from_str(EMAIL).unwrap();
    let id = waiting_id(&client.call("send_email", email.clone()).await);
    registry
        .deny_pending(Some("acme"), &id, "user:lee", "wrong recipient")
        .await
        .unwrap();
    let denied = client.call("send_email", email).await;
    let error = &denied["structuredContent"]["error"];
    assert_eq!(error["code"], "APPROVAL_DENIED", "{denied}");
    assert_eq!(error["safe_details"]["reason"], "wrong recipient");
    assert!(store.sent_mail().is_empty());
    client.close().await;
}

#[tokio::test]
async fn an_approval_decided_out_of_band_is_not_asked_again_by_elicitation() {
    let store = DocumentStore::seeded();
    // The first call's elicitation is dismissed, so the call waits out of band.
    let server = builder(&store)
        .approval_timeout(Duration::from_millis(300))
        .build();
    let registry = server.registry().clone();
    let answer: Answer = Box::new(|_req: &Value| Some(json!({"action": "cancel"})));
    let (mut client, _) =
        Client::connect_with(server, json!({"elicitation": {"form": {}}}), Some(answer)).await;
    let email: Value = serde_json::from_str(EMAIL).unwrap();
    let id = waiting_id(&client.call("send_email", email.clone()).await);
    assert_eq!(client.asked.len(), 1);
    registry
        .approve_pending(Some("acme"), &id, "user:lee", "ok")
        .await
        .unwrap();
    let ran = client.call("send_email", email).await;
    assert_eq!(ran["isError"], false, "{ran}");
    assert_eq!(
        client.asked.len(),
        1,
        "the decision was taken; nobody is asked"
    );
    assert_eq!(store.sent_mail().len(), 1);
    client.close().await;
}

#[tokio::test]
async fn an_approval_given_by_elicitation_closes_the_request_waiting_out_of_band() {
    let store = DocumentStore::seeded();
    let server = builder(&store)
        .approval_timeout(Duration::from_millis(300))
        .build();
    let registry = server.registry().clone();
    // Dismissed the first time, approved the second.
    let mut asked = 0;
    let answer: Answer = Box::new(move |_req: &Value| {
        asked += 1;
        Some(if asked == 1 {
            json!({"action": "cancel"})
        } else {
            json!({"action": "accept", "content": {"approve": true}})
        })
    });
    let (mut client, _) =
        Client::connect_with(server, json!({"elicitation": {"form": {}}}), Some(answer)).await;
    let email: Value = serde_json::from_str(EMAIL).unwrap();
    let id = waiting_id(&client.call("send_email", email.clone()).await);
    let ran = client.call("send_email", email).await;
    assert_eq!(ran["isError"], false, "{ran}");
    assert_eq!(store.sent_mail().len(), 1);
    // The operator can no longer release a second execution with the old request.
    let late = registry
        .approve_pending(Some("acme"), &id, "user:lee", "")
        .await;
    assert_eq!(late.unwrap_err().code(), "PENDING_APPROVAL_DECIDED");
    let closed = registry.pending_approval(Some("acme"), &id).await.unwrap();
    assert_eq!(closed.state.name(), "used");
    client.close().await;
}

/// A pending store that cannot be reached.
struct Unreachable;

#[async_trait::async_trait]
impl tool_contract::store::PendingApprovalStore for Unreachable {
    async fn put(
        &self,
        _: &tool_contract::store::PendingRecord,
    ) -> Result<(), tool_contract::store::StoreError> {
        Err(tool_contract::store::StoreError::new("unreachable"))
    }
    async fn get(
        &self,
        _: &str,
    ) -> Result<Option<tool_contract::store::PendingRecord>, tool_contract::store::StoreError> {
        Err(tool_contract::store::StoreError::new("unreachable"))
    }
    async fn list_pending(
        &self,
        _: Option<&str>,
        _: u64,
        _: u32,
    ) -> Result<Vec<tool_contract::store::PendingRecord>, tool_contract::store::StoreError> {
        Err(tool_contract::store::StoreError::new("unreachable"))
    }
    async fn decide(
        &self,
        _: &str,
        _: tool_contract::store::Decision<'_>,
    ) -> Result<bool, tool_contract::store::StoreError> {
        Err(tool_contract::store::StoreError::new("unreachable"))
    }
    async fn find(
        &self,
        _: Option<&str>,
        _: &str,
        _: u64,
    ) -> Result<Option<tool_contract::store::PendingRecord>, tool_contract::store::StoreError> {
        Err(tool_contract::store::StoreError::new("unreachable"))
    }
    async fn mark_used(&self, _: &str) -> Result<bool, tool_contract::store::StoreError> {
        Err(tool_contract::store::StoreError::new("unreachable"))
    }
    async fn purge_pending(&self, _: u64) -> Result<u64, tool_contract::store::StoreError> {
        Err(tool_contract::store::StoreError::new("unreachable"))
    }
}

#[tokio::test]
async fn an_unreachable_pending_store_leaves_the_call_unrun_and_says_it_was_not_kept() {
    let store = DocumentStore::seeded();
    let registry = tool_contract_examples::mcp::document_registry_builder()
        .approval_store(tool_contract::store::MemoryStore::new())
        .pending_approval_store(Unreachable)
        .build()
        .unwrap();
    let server = tool_contract_examples::mcp::document_server_on(registry, store.clone());
    let (mut client, _) = Client::connect(server).await;
    let result = client
        .call("send_email", serde_json::from_str(EMAIL).unwrap())
        .await;
    let error = &result["structuredContent"]["error"];
    assert_eq!(error["code"], "APPROVAL_REQUIRED", "{result}");
    assert!(error["safe_details"].get("approval_id").is_none());
    assert!(error["safe_details"]["how_to_approve"]
        .as_str()
        .unwrap()
        .contains("could not be kept"));
    assert!(
        !error.to_string().contains("unreachable"),
        "no store text reaches the model"
    );
    assert!(store.sent_mail().is_empty());
    client.close().await;
}

// ---- standing approvals through the MCP server ----

/// A call a standing rule approves runs at once over MCP, with no approval question and no
/// out-of-band wait; a call outside the rule still waits for a human.
#[tokio::test]
async fn a_standing_rule_approves_over_mcp_without_asking() {
    let store = DocumentStore::seeded();
    let registry = registry();
    registry
        .add_standing_rule(
            tool_contract::standing::StandingRule::builder("mcp-colleagues", "send_email")
                .versions("^1.2")
                .principal("user:kim")
                .tenant("acme")
                .constraints(json!({"properties": {"to": {"pattern": "@acme\\.test$"}}}))
                .expires_at_ms(u64::MAX)
                .max_uses(1)
                .granted_by("user:lee")
                .build()
                .unwrap(),
        )
        .unwrap();
    let provider_store = store.clone();
    let server = McpServer::builder(
        registry,
        move |_req: &McpRequest<'_>| -> Result<ToolContext, ToolError> { Ok(ctx(&provider_store)) },
    )
    .build();
    // A client that would approve anything it is asked: the rule must not need it.
    let answer: Answer =
        Box::new(|_| Some(json!({"action": "accept", "content": {"approve": true}})));
    let (mut client, _) =
        Client::connect_with(server, json!({"elicitation": {"form": {}}}), Some(answer)).await;
    let to_lee = json!({"to": "lee@acme.test", "subject": "Hi", "body": "Hello"});
    let result = client.call("send_email", to_lee).await;
    assert_eq!(result["isError"], false, "{result}");
    assert!(
        client.asked.is_empty(),
        "nobody was asked: {:?}",
        client.asked
    );
    assert_eq!(store.sent_mail().len(), 1);
    // Its one use is gone: the next call is refused, then asks the human again.
    let to_ops = json!({"to": "ops@acme.test", "subject": "Hi", "body": "Hello"});
    let result = client.call("send_email", to_ops.clone()).await;
    assert_eq!(
        result["structuredContent"]["error"]["code"], "APPROVAL_RULE_EXHAUSTED",
        "{result}"
    );
    let result = client.call("send_email", to_ops).await;
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(client.asked.len(), 1, "the human was asked this time");
    assert_eq!(store.sent_mail().len(), 2);
    client.close().await;
}
