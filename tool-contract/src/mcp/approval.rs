//! Approval over MCP: ask the connected client by elicitation when it can, otherwise say how to
//! approve out of band.
//!
//! With elicitation, the client shows its user the approval subject (tool, version, effect,
//! principal, tenant, canonical arguments, where each value copied from a tool result came
//! from and the flow rule it breaks, digest) and a form with one required boolean,
//! `approve`. The answer maps onto the registry's grant API, whose rules apply unchanged:
//!
//! | client answer | outcome |
//! |---|---|
//! | accept, `approve: true` | [`Registry::grant`] in the session principal's name, then [`Registry::execute_approved`] (one execution) |
//! | accept, `approve: false`, or decline | [`Registry::deny`]: `POLICY_DENIED` / `APPROVAL_DENIED` |
//! | cancel, no answer in time, the request failed, or the call was cancelled meanwhile | nothing decided: `APPROVAL_REQUIRED`, out of band |
//!
//! Out of band, the request is kept in the registry's pending store
//! ([`RegistryBuilder::pending_approval_store`](crate::RegistryBuilder::pending_approval_store))
//! and the envelope names its `approval_id`. An operator approves or denies it by id
//! ([`Registry::approve_pending`](crate::Registry::approve_pending),
//! [`Registry::deny_pending`](crate::Registry::deny_pending)); the model's retry of the same
//! call (same digest, same tenant) then gets the result of the one approved execution, or the
//! denial, without asking the client again. Before any of this, a keyed call whose completed
//! result the idempotency store holds is replayed: it runs nothing, so nobody is asked.
//!
//! [`Registry::grant`]: crate::Registry::grant
//! [`Registry::execute_approved`]: crate::Registry::execute_approved
//! [`Registry::deny`]: crate::Registry::deny

use std::time::Duration;

use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, RequestContext, RoleServer};
use serde_json::Value;

use super::Inner;
use crate::approval::ApprovalRequest;
use crate::context::ToolContext;
use crate::envelope::Observation;
use crate::flow::Source;
use crate::registry::{PendingApproval, Settled};

/// Each argument's value is shortened to this many characters in the question.
const MAX_VALUE_SHOWN: usize = 400;
/// A question whose arguments take more than this is not asked: the call goes out of band.
const MAX_ARGUMENTS_SHOWN: usize = 8000;

/// The observation for a call that needs approval.
pub(super) async fn resolve(
    inner: &Inner,
    request: ApprovalRequest,
    rmcp: &RequestContext<RoleServer>,
    ctx: &ToolContext,
) -> Observation {
    let (request, existing) = match settle(inner, request).await {
        Ok(waiting) => waiting,
        Err(observation) => return observation,
    };
    let can_ask = inner.elicitation
        && rmcp
            .peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form);
    if !can_ask {
        return out_of_band(
            inner,
            request,
            existing,
            "the client did not declare form elicitation",
        )
        .await;
    }
    // Never wait past the caller's deadline: a late "yes" would only run into it.
    let mut wait = inner.approval_timeout;
    if let Some(deadline) = ctx.deadline() {
        wait = wait.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
    }
    let Ok(requested_schema) = form() else {
        return out_of_band(
            inner,
            request,
            existing,
            "the approval form could not be built",
        )
        .await;
    };
    let Some(message) = question(&request) else {
        return out_of_band(
            inner,
            request,
            existing,
            "the arguments are too long to show in the client",
        )
        .await;
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    };
    let asked = rmcp
        .peer
        .create_elicitation_with_timeout(params, Some(wait));
    let answer = tokio::select! {
        answer = asked => match answer {
            Ok(answer) => answer,
            Err(err) => {
                tracing::info!(error = %err, tool = %request.subject().tool, "approval elicitation failed");
                return out_of_band(inner, request, existing, "the client did not answer the approval request").await;
            }
        },
        // Nothing has run yet, so a cancelled call can stop here.
        () = rmcp.ct.cancelled() => {
            return out_of_band(inner, request, existing, "the client cancelled the call").await;
        }
    };
    let approver = approver(ctx);
    let approved = answer
        .content
        .as_ref()
        .and_then(|c| c.get("approve"))
        .and_then(Value::as_bool);
    decide(inner, request, existing, answer.action, approved, &approver).await
}

/// What the client's answer decides, on either approval path (elicitation, or the input
/// request of 2026-07-28): accept with `approve: true` runs the call once under a grant;
/// accept with anything else, or decline, is a denial; cancel decides nothing. The same
/// call waiting out of band from an earlier try is closed with the answer, so an
/// operator's later decision cannot release a second execution.
pub(super) async fn decide(
    inner: &Inner,
    request: ApprovalRequest,
    existing: Option<Box<PendingApproval>>,
    action: ElicitationAction,
    approved: Option<bool>,
    approver: &str,
) -> Observation {
    let (approve, reason) = match (action, approved) {
        (ElicitationAction::Accept, Some(true)) => (true, "approved in the MCP client"),
        (ElicitationAction::Accept, _) | (ElicitationAction::Decline, _) => {
            (false, "declined in the MCP client")
        }
        // Cancel (dismissed without a choice) decides nothing.
        _ => {
            return out_of_band(
                inner,
                request,
                existing,
                "the approval request was dismissed",
            )
            .await
        }
    };
    if let Some(pending) = &existing {
        inner
            .registry
            .close_pending(pending, approve, approver, reason)
            .await;
    }
    if approve {
        let grant = inner.registry.grant(&request, approver);
        inner.registry.execute_approved(request, &grant).await
    } else {
        inner.registry.deny(request, approver, reason)
    }
}

/// What a call needing approval meets before anyone is asked: `Err` with the observation
/// when it is settled already, else the request and the same call's record waiting out of
/// band, if any.
pub(super) async fn settle(
    inner: &Inner,
    request: ApprovalRequest,
) -> Result<(ApprovalRequest, Option<Box<PendingApproval>>), Observation> {
    // A keyed call whose result is recorded runs nothing: replay it, ask nobody.
    let request = match inner.registry.replay_instead(request).await {
        Ok(replayed) => return Err(replayed),
        Err(request) => request,
    };
    // An operator may already have decided this exact call (same digest, same tenant) out
    // of band: the model's retry gets the one approved execution, or the denial.
    match inner.registry.settle(request).await {
        Settled::Done(observation) => Err(observation),
        Settled::Waiting(request, existing) => Ok((request, existing)),
    }
}

/// `APPROVAL_REQUIRED`, with why the client was not (successfully) asked and how to approve:
/// the request waits in the registry's pending store (`existing`, or a new record) under the
/// `approval_id` the envelope names, for an operator to decide by id.
pub(super) async fn out_of_band(
    inner: &Inner,
    request: ApprovalRequest,
    existing: Option<Box<PendingApproval>>,
    why: &str,
) -> Observation {
    let (mut observation, stored) = inner.registry.wait_for_decision(request, existing).await;
    let how = if stored {
        inner.how_to_approve.as_ref()
    } else {
        NOT_STORED
    };
    observation.error = observation.error.map(|err| {
        err.with_detail("approval_channel", "out_of_band")
            .with_detail("not_asked_because", why.to_owned())
            .with_detail("how_to_approve", how)
    });
    observation
}

/// `how_to_approve` when the pending store could not keep the request.
const NOT_STORED: &str = "This call needs a human's approval before it runs, and the MCP \
    client could not be asked for it (see not_asked_because). It was not run, and it could not \
    be kept for an operator to decide right now; try again later.";

/// Who approved, as far as the server can tell: the connected client asserts that its user
/// said yes. The grant records it as such; a host that needs a stronger approver turns
/// elicitation off and approves out of band.
fn approver(ctx: &ToolContext) -> String {
    match ctx.principal() {
        Some(principal) => format!("{principal} (client-asserted, via MCP elicitation)"),
        None => "unknown MCP client user (client-asserted, via MCP elicitation)".to_owned(),
    }
}

/// The question the client's user answers, or `None` when the arguments cannot be shown whole
/// enough to decide on (then the call goes out of band instead).
///
/// Every top-level argument is shown, each value shortened on its own and in key order (not
/// the model's order), so a long field cannot push another one out of view.
pub(super) fn question(request: &ApprovalRequest) -> Option<String> {
    let s = request.subject();
    let mut arguments = String::new();
    match &s.arguments {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            for key in keys {
                let value = map[key].to_string();
                let count = value.chars().count();
                let shown: String = value.chars().take(MAX_VALUE_SHOWN).collect();
                arguments.push_str(&format!("  {key}: {shown}"));
                if count > MAX_VALUE_SHOWN {
                    arguments
                        .push_str(&format!(" … ({} more characters)", count - MAX_VALUE_SHOWN));
                }
                arguments.push('\n');
            }
        }
        other => arguments = format!("  {other}\n"),
    }
    // Where copied values came from: the reviewer must see that a recipient was taken from a
    // document before saying yes to it.
    let mut sources = String::new();
    for arg in &s.provenance {
        if let Source::Observation {
            tool,
            call_id,
            pointer,
            confidential,
        } = &arg.source
        {
            sources.push_str(&format!(
                "  {} <- copied from the result of {tool} (call {call_id}) at {}{}\n",
                arg.pointer,
                if pointer.is_empty() { "/" } else { pointer },
                if *confidential { ", confidential" } else { "" },
            ));
        }
    }
    for reason in &s.flow_reasons {
        sources.push_str(&format!("  flow rule: {reason}\n"));
    }
    if !sources.is_empty() {
        sources.insert_str(
            0,
            "values copied from tool results (untrusted; a document may have planted them):\n",
        );
    }
    if arguments.chars().count() + sources.chars().count() > MAX_ARGUMENTS_SHOWN {
        return None;
    }
    // A bidi override or a zero-width character in a value would make the reviewer read
    // something other than what runs: every invisible character is shown as an escape.
    let question = format!(
        "Approve this tool call?\n\ntool: {} {} ({})\nfor: {} in tenant {}\narguments (proposed by the model; data, not instructions):\n{}{}digest: {}",
        s.tool,
        s.tool_version,
        s.effect,
        s.principal.as_deref().unwrap_or("(no principal)"),
        s.tenant.as_deref().unwrap_or("(no tenant)"),
        arguments,
        sources,
        request.digest(),
    );
    Some(crate::envelope::escape_invisible(&question).into_owned())
}

pub(super) fn form() -> Result<ElicitationSchema, &'static str> {
    ElicitationSchema::builder()
        .required_bool_with("approve", |b| {
            b.title("Approve").description("Run this exact call once.")
        })
        .build()
}

/// How long to wait for the user's answer by default.
pub(super) const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_form_asks_one_required_boolean() {
        let form = serde_json::to_value(form().unwrap()).unwrap();
        assert_eq!(form["properties"]["approve"]["type"], "boolean");
        assert_eq!(form["required"], json!(["approve"]));
    }
}
