//! Over MCP: the repair bound per session and tool (schema and handler issues alike), and the
//! operator side of an error kept out of every MCP message.

use rmcp::model::CallToolRequestParams;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use tool_contract::mcp::{McpRequest, McpServer};
use tool_contract::{Registry, ToolContext, ToolError};

pub mod tools {
    use tool_contract::{tool, ToolArgs, ToolError};

    #[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
    #[serde(deny_unknown_fields)]
    pub struct BookRoomArgs {
        /// The room, e.g. `B-204`.
        #[schemars(length(min = 1, max = 8))]
        pub room: String,
    }

    /// Checks whether a room can be booked. Use it before proposing a meeting; it books nothing.
    #[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
    pub async fn check_room(args: BookRoomArgs) -> Result<String, ToolError> {
        match args.room.as_str() {
            "B-204" => Ok("free".into()),
            "DOWN" => Err(ToolError::transient(
                "CALENDAR_UNAVAILABLE",
                "the calendar backend is unavailable",
            )
            .with_source(std::io::Error::other(
                "ldap bind as cn=svc,password=hunter2 failed",
            ))
            .with_operator_detail("backend", "ldap://10.0.0.9 hunter2")),
            _ => Err(ToolError::invalid_argument(
                "room",
                "ROOM_UNKNOWN",
                "a room that exists, e.g. B-204",
            )),
        }
    }
}

fn server(max_repairs: Option<u32>) -> McpServer {
    let registry = Registry::builder().tool(tools::CheckRoom).build().unwrap();
    let mut builder = McpServer::builder(registry, |_: &McpRequest<'_>| {
        Ok::<_, ToolError>(ToolContext::builder().principal("user:kim").build())
    });
    if let Some(n) = max_repairs {
        builder = builder.max_repairs(n);
    }
    builder.build()
}

async fn connect(server: McpServer) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(server.serve(server_read, server_write));
    ().serve(client_io).await.unwrap()
}

fn call(room: &str) -> CallToolRequestParams {
    let Value::Object(arguments) = json!({ "room": room }) else {
        unreachable!()
    };
    CallToolRequestParams::new("check_room").with_arguments(arguments)
}

async fn error_of(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    room: &str,
) -> Value {
    let result = client.call_tool(call(room)).await.unwrap();
    result.structured_content.unwrap()["error"].clone()
}

#[tokio::test]
async fn the_repair_bound_holds_per_session_and_tool_for_schema_and_handler_issues() {
    let client = connect(server(None)).await;
    // 1: the schema refuses (too long); 2: the handler refuses (no such room); 3: past the bound.
    let first = error_of(&client, "a-room-name-too-long").await;
    assert_eq!(first["code"], "INPUT_VALIDATION_FAILED");
    assert_eq!(first["safe_details"]["repair_attempt"], 1);
    assert_eq!(first["safe_details"]["max_repair_attempts"], 2);
    let second = error_of(&client, "Z-999").await;
    assert_eq!(second["code"], "INPUT_VALIDATION_FAILED");
    assert_eq!(second["safe_details"]["issues"][0]["path"], "/room");
    assert_eq!(
        second["safe_details"]["issues"][0]["keyword"],
        "ROOM_UNKNOWN"
    );
    assert_eq!(second["safe_details"]["issues"][0]["actual"], "Z-999");
    assert_eq!(second["safe_details"]["repair_attempt"], 2);
    let third = error_of(&client, "Z-998").await;
    assert_eq!(third["code"], "TOOL_ARGUMENT_INVALID");
    assert_eq!(third["safe_details"]["repair_attempts"], 2);

    // A success resets the count.
    let ok = client.call_tool(call("B-204")).await.unwrap();
    assert_eq!(ok.is_error, Some(false));
    assert_eq!(
        error_of(&client, "Z-999").await["safe_details"]["repair_attempt"],
        1
    );

    // Another session has its own count.
    let other = connect(server(None)).await;
    assert_eq!(
        error_of(&other, "Z-999").await["safe_details"]["repair_attempt"],
        1
    );
    client.cancel().await.unwrap();
    other.cancel().await.unwrap();
}

#[tokio::test]
async fn max_repairs_is_configurable() {
    let client = connect(server(Some(0))).await;
    assert_eq!(
        error_of(&client, "Z-999").await["code"],
        "TOOL_ARGUMENT_INVALID",
        "no repairs allowed"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_operator_side_secret_is_in_no_mcp_message() {
    let client = connect(server(None)).await;
    let result = client.call_tool(call("DOWN")).await.unwrap();
    let wire = serde_json::to_string(&result).unwrap();
    assert!(wire.contains("CALENDAR_UNAVAILABLE"), "{wire}");
    for secret in ["hunter2", "ldap", "10.0.0.9"] {
        assert!(
            !wire.contains(secret),
            "{secret} reached the client: {wire}"
        );
    }
    client.cancel().await.unwrap();
}
