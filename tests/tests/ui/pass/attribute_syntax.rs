// Each malformed attribute of `fail/attribute_syntax.rs`, written as its error says.
use tool_contract::contract::IdempotencySource;
use tool_contract::{tool, Effect, Tool, ToolArgs, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct PingArgs {}

/// Checks that the service answers. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_service(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the cache. Use it before other calls; it returns nothing else.
#[tool(effect = "pure_read", timeout_ms = 100, version = "1.0.0", retry(max_attempts = 3))]
async fn ping_cache(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the queue. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_queue(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the index. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_index(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the mailer. Use it before other calls; it returns nothing else.
#[tool(effect = "pure_read", version = "1.0.0", timeout_ms = 100)]
async fn ping_mailer(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
pub struct StoreArgs {
    /// The store to touch.
    #[schemars(length(min = 1, max = 64))]
    pub store: String,
}

/// Marks a store as in use. Use it before writing to the store; it changes nothing else.
#[tool(version = "1.0.0", effect = "reversible_write", timeout_ms = 100, idempotency(from = [store]))]
async fn touch_store(_args: StoreArgs) -> Result<bool, ToolError> {
    Ok(true)
}

/// Checks the database. Use it before other calls; it returns nothing else.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn ping_database(_args: PingArgs) -> Result<bool, ToolError> {
    Ok(true)
}

// The handler's keys on a handler; the args struct only derives.
#[derive(serde::Deserialize, schemars::JsonSchema, ToolArgs)]
#[serde(deny_unknown_fields)]
struct CountArgs {}

/// Counts the rows of the main table. Use it for a size estimate, not for exact totals.
#[tool(version = "1.0.0", effect = "pure_read", timeout_ms = 100)]
async fn count_rows(_args: CountArgs) -> Result<u32, ToolError> {
    Ok(0)
}

fn main() {
    for c in [
        PingService::contract(),
        PingCache::contract(),
        PingQueue::contract(),
        PingIndex::contract(),
        PingMailer::contract(),
        PingDatabase::contract(),
        CountRows::contract(),
    ] {
        assert_eq!((c.version.as_str(), c.effect, c.timeout_ms), ("1.0.0", Effect::PureRead, 100), "{}", c.name);
    }
    assert_eq!(PingCache::contract().retry.max_attempts, 3);
    assert_eq!(PingService::contract().retry.max_attempts, 1);
    assert_eq!(
        TouchStore::contract().idempotency.source,
        IdempotencySource::Derived { fields: vec!["store".into()] }
    );
    assert_eq!(PingDatabase::contract().name, "ping_database");
    assert_eq!(CountRows::contract().output_schema["type"], "integer");
}
