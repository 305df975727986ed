//! `tools/call`: the MCP request → the pipeline → the envelope as a `CallToolResult`.

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::ErrorData;
use serde_json::{Map, Value};

use super::input_request::{self, Outcome, APPROVAL_INPUT};
use super::{approval, is_2026_07_28, Inner, McpRequest, McpServer, TextContent, Transport};
use crate::context::ToolContext;
use crate::envelope::{Meta, Observation, Provenance};
use crate::error::ToolError;
use crate::prepare::Prepared;
use crate::repair::{RepairLoop, RepairStep};

/// The host's context for `request`. Host code: a panic must not take the request down with
/// no answer (rmcp would never respond); it becomes an INTERNAL error, its message kept out.
pub(super) fn provide(inner: &Inner, request: &McpRequest<'_>) -> Result<ToolContext, ToolError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| inner.context.context(request))).unwrap_or_else(
        |_| {
            Err(ToolError::internal(
                "CONTEXT_PROVIDER_PANICKED",
                "the server failed unexpectedly while identifying the caller",
            ))
        },
    )
}

pub(super) async fn call_tool(
    server: &McpServer,
    request: CallToolRequestParams,
    rmcp: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let inner = &*server.inner;
    let name = request.name.as_ref();
    let request_view = McpRequest {
        method: "tools/call",
        tool: name,
        rmcp: &rmcp,
    };
    let revision = rmcp.protocol_version();
    let new_revision = is_2026_07_28(revision.as_ref());
    let mut repairs = Arc::clone(&server.repairs);
    let ctx = match provide(inner, &request_view) {
        Ok(ctx) => {
            if !new_revision && list_changed(server, &ctx) {
                // Boxed: rare, and its state would sit in every call's future.
                let notifying = rmcp.peer.notify_tool_list_changed();
                if let Err(err) = Box::pin(notifying).await {
                    tracing::debug!(error = %err, "notifications/tools/list_changed not sent");
                }
            }
            // A 2026-07-28 request over HTTP stands alone (rmcp serves it on a fresh handler):
            // its caller's record, not the handler's, is what spans the calls.
            let sessionless = new_revision && request_view.transport() == Transport::Http;
            if sessionless {
                repairs = inner.callers.repairs(&ctx, inner.max_repairs);
            }
            let served = if sessionless {
                inner.flow.map(|limits| inner.callers.record(&ctx, limits))
            } else {
                server.session.clone()
            };
            match &served {
                Some(session) => ctx.with_served_session(session),
                None => ctx,
            }
        }
        // An unknown tool stays a protocol error whoever asks: the registry answers it below,
        // with an empty context (so its list of usable tools names only uncapped ones).
        Err(_) if !inner.exposure.knows(name) => ToolContext::default(),
        Err(err) => return Ok(result(inner, &refused(inner, name, err, &rmcp)).into()),
    };
    // Through the raw-text entry point so MCP calls get the registry's proposal limits (size,
    // depth, value count, number policy) like every other proposal.
    let raw = proposal_text(name, request.arguments.as_ref());
    let observation = match inner.registry.prepare_raw(&raw, &ctx) {
        Ok(Prepared::Ready(call)) => inner.registry.execute(call).await,
        // 2026-07-28 has no server-to-client requests: the question rides in the result.
        Ok(Prepared::NeedsApproval(pending)) if new_revision => {
            let answer = request.request_state.as_deref().map(|handle| {
                let response = request
                    .input_responses
                    .as_ref()
                    .and_then(|r| r.get(APPROVAL_INPUT));
                (handle, response)
            });
            let client = rmcp.client_capabilities();
            // Boxed, as is the approval path below: inline, their states made every call's
            // future several KiB larger, and rmcp moves that future (into its task, into a
            // span) on every call, approval or not.
            let resolving = input_request::resolve(inner, pending, answer, client.as_ref(), &ctx);
            match Box::pin(resolving).await {
                Outcome::Done(observation) => observation,
                Outcome::Ask(question) => return Ok(question.into()),
            }
        }
        Ok(Prepared::NeedsApproval(pending)) => {
            Box::pin(approval::resolve(inner, pending, &rmcp, &ctx)).await
        }
        Err(rejection) if rejection.observation().code() == Some("UNKNOWN_TOOL") => {
            // A protocol error, per the spec's error handling section (see the module docs).
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {}", truncate(name)),
                Some(rejection.observation().to_value()),
            ));
        }
        Err(rejection) => rejection.into_observation(),
    };
    let observation = bound_repairs(&repairs, name, observation);
    Ok(result(inner, &observation).into())
}

/// The proposal `{"name": …, "arguments": …}` as JSON text, serialized straight from the
/// request's parts rather than through an intermediate `Value` tree (absent arguments are
/// `{}`).
fn proposal_text(name: &str, arguments: Option<&Map<String, Value>>) -> String {
    #[derive(serde::Serialize)]
    struct Wire<'a> {
        name: &'a str,
        arguments: &'a Map<String, Value>,
    }
    let empty = Map::new();
    let wire = Wire {
        name,
        arguments: arguments.unwrap_or(&empty),
    };
    // Cannot fail: string keys only, and the writer is a `Vec`. An empty text would only be
    // refused by the parser as malformed, never run.
    serde_json::to_string(&wire).unwrap_or_default()
}

/// Counts a repairable failure against the session's bound for this tool: the model is told
/// which repair this is, and past the bound gets the terminal `TOOL_ARGUMENT_INVALID` (a
/// model that keeps sending arguments the schema or the handler refuses must not loop).
fn bound_repairs(repairs: &Mutex<RepairLoop>, tool: &str, observation: Observation) -> Observation {
    let step = repairs
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .on_observation(tool, &observation);
    match step {
        None => observation,
        Some(RepairStep::Stop(end)) => *end,
        Some(RepairStep::Repair(feedback)) => {
            let mut observation = observation;
            observation.error = observation.error.map(|err| {
                err.with_detail("repair_attempt", feedback.repair_attempt)
                    .with_detail("max_repair_attempts", feedback.max_repair_attempts)
            });
            observation
        }
    }
}

/// Whether to send `notifications/tools/list_changed` now: once, when the list this session
/// would now see differs from the one it was last given (the host's provider returned other
/// capabilities or pins). Only after a `tools/list`: a session that never listed has nothing
/// stale.
fn list_changed(server: &McpServer, ctx: &ToolContext) -> bool {
    let mut listed = server
        .listed
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Most sessions never list, and their calls need not work out the view at all.
    let Some(shown) = &listed.shown else {
        return false;
    };
    // A host that builds its callers' contexts once and clones them per call gives a session
    // the same grants call after call: the view (one check per tool name) is worked out once.
    if listed.checked.as_ref().is_some_and(|grants| grants.of(ctx)) {
        return false;
    }
    let key = server.inner.exposure.key(ctx);
    let unchanged = *shown == key || listed.announced.as_ref() == Some(&key);
    listed.checked = Some(ctx.grants());
    if unchanged {
        return false;
    }
    listed.announced = Some(key);
    true
}

/// The MCP result for an envelope: `structuredContent` is the envelope, `isError` is `!ok`,
/// plus one text block.
pub(super) fn result(inner: &Inner, observation: &Observation) -> CallToolResult {
    let envelope = observation.to_value();
    let text = match inner.text {
        TextContent::PromptBlock => observation.to_prompt_block(),
        TextContent::Json => envelope.to_string(),
    };
    // Not `CallToolResult::structured`: it serializes the whole envelope into a text block,
    // which would be thrown away for the one above on every call.
    let content = vec![ContentBlock::text(text)];
    let mut result = if observation.ok {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    result.structured_content = Some(envelope);
    result
}

/// The envelope for a call the host's context provider refused.
fn refused(
    inner: &Inner,
    name: &str,
    err: ToolError,
    rmcp: &RequestContext<RoleServer>,
) -> Observation {
    match err.operator_report() {
        Some(operator) => {
            tracing::warn!(tool = %truncate(name), code = err.code(), %operator, "MCP call refused by the context provider")
        }
        None => {
            tracing::info!(tool = %truncate(name), code = err.code(), "MCP call refused by the context provider")
        }
    }
    let contract = inner
        .registry
        .contracts()
        .into_iter()
        .find(|c| c.name == name);
    let meta = Meta {
        tool: Cow::Owned(truncate(name)),
        tool_version: contract.map(|c| Cow::Borrowed(c.version.as_str())),
        // The registry numbers only calls it saw; this one never reached it.
        call_id: format!("mcp_{}", rmcp.id),
        latency_ms: 0,
        attempts: 0,
        fingerprint: contract.map(|c| Cow::Borrowed(c.fingerprint.contract_sha256.as_str())),
        idempotency: None,
    };
    let source = format!("tool://{}", truncate(name));
    Observation::failure(err, meta, Provenance::untrusted(source, None))
}

/// Names echoed back are cut to MCP's 128 chars: the client controls them.
fn truncate(name: &str) -> String {
    name.chars()
        .take(crate::export::mcp::MAX_NAME_LEN)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The proposal text is written by hand; it must mean what the `json!` tree it
        /// replaced meant, for any name and any arguments.
        #[test]
        fn proposal_text_is_the_json_tree(
            name in any::<String>(),
            arguments in proptest::option::of(crate::json::tests::any_json()),
        ) {
            let arguments = arguments.map(|v| match v {
                Value::Object(map) => map,
                other => Map::from_iter([("v".to_owned(), other)]),
            });
            let text = proposal_text(&name, arguments.as_ref());
            let expected = serde_json::json!({
                "name": name,
                "arguments": Value::Object(arguments.unwrap_or_default()),
            });
            prop_assert_eq!(&text, &expected.to_string());
            prop_assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected);
        }
    }
}
