// Malformed `#[tool(...)]` input, one mistake per item: each is a compile error on the token at
// fault, never a macro panic.
use tool_contract::{tool, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = , effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the cache. Use it before other calls; it returns nothing else.
#[tool(effect = "pure_read", timeout_ms = 100, version = "1.0.0", retry = 3)]
async fn ping_cache(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the queue. Use it before other calls; it returns nothing else.
#[tool(version = 1.0.0, effect = "pure_read", timeout_ms = 100)]
async fn ping_queue(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the index. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0" effect = "pure_read", timeout_ms = 100)]
async fn ping_index(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the mailer. Use it before other calls; it returns nothing else.
#[tool("pure_read", version = "1.0.0", timeout_ms = 100)]
async fn ping_mailer(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct StoreArgs {
    /// The store to touch.
    #[schemars(length(min = 1, max = 64))]
    store: String,
}

/// Marks a store as in use. Use it before writing to the store; it changes nothing else.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 100, idempotency(from = store))]
async fn touch_store(_args: StoreArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the database. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
struct PingDatabase;

// The handler's keys put on the args struct instead of the handler.
#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
#[serde(deny_unknown_fields)]
struct CountArgs {}

/// A name with nothing to make a struct name of. Use it never; it only shows the error.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn _1(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

fn main() {
    let _ = PingService::contract();
    let _ = PingCache::contract();
    let _ = PingQueue::contract();
    let _ = PingIndex::contract();
    let _ = PingMailer::contract();
    let _ = TouchStore::contract();
    let _ = PingDatabase;
    let _ = CountArgs {};
}
