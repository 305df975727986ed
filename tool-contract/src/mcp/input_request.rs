//! Approval under MCP 2026-07-28, where a server sends no requests of its own: the question
//! travels as an *input request* in the `tools/call` result, and the answer comes back with the
//! client's retry of the same call.
//!
//! 1. The call needs approval and the client declared form elicitation: the server answers
//!    `resultType: "input_required"` with one `elicitation/create` input request, `approval`
//!    (the same question and one-boolean form as elicitation under 2025-11-25), and an opaque
//!    `requestState`: a random handle to a question the server keeps, never the call itself.
//! 2. The client asks its user and calls the tool again with the same arguments, the answer in
//!    `inputResponses.approval` and the handle echoed back.
//! 3. The retry goes through the whole pipeline again. The handle is used up whatever happens
//!    next, and it counts only if the retry's approval digest is the one the question was
//!    asked about (same tool version, arguments, principal, tenant): an answer cannot be moved
//!    to another call, replayed, or forged by changing the handle.
//!
//! The answer then maps onto the registry's grant API exactly as an elicitation answer does
//! (see the `approval` module). Pending questions are bounded
//! ([`MAX_PENDING`]) and expire after the approval timeout; an unknown, used or expired handle
//! decides nothing: `APPROVAL_REQUIRED`, out of band.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, InputRequest,
    InputRequiredResult,
};
use tokio::time::Instant;

use super::{approval, Inner};
use crate::approval::ApprovalRequest;
use crate::context::ToolContext;
use crate::envelope::Observation;
use crate::registry::PendingApproval;

/// The key of the one input request a question carries.
pub(super) const APPROVAL_INPUT: &str = "approval";

/// Questions awaiting an answer, all sessions together; past it a new one goes out of band
/// (a client that never answers must not make the server hold unbounded state).
pub(super) const MAX_PENDING: usize = 1024;

/// The questions asked and not yet answered, by handle.
#[derive(Default)]
pub(super) struct PendingQuestions {
    map: Mutex<HashMap<String, Pending>>,
}

struct Pending {
    digest: String,
    expires: Instant,
}

impl PendingQuestions {
    /// Files a question about `digest` and returns its handle, or `None` when the store is
    /// full of live questions or no random handle could be drawn.
    fn ask(&self, digest: &str, expires: Instant) -> Option<String> {
        let handle = crate::random::bytes::<16>().ok()?;
        let handle: String = handle.iter().map(|b| format!("{b:02x}")).collect();
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if map.len() >= MAX_PENDING {
            let now = Instant::now();
            map.retain(|_, p| p.expires > now);
            if map.len() >= MAX_PENDING {
                return None;
            }
        }
        map.insert(
            handle.clone(),
            Pending {
                digest: digest.to_owned(),
                expires,
            },
        );
        Some(handle)
    }

    /// Uses up `handle`: the digest it was asked about, if it is live.
    fn take(&self, handle: &str) -> Option<String> {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        let pending = map.remove(handle)?;
        (pending.expires > Instant::now()).then_some(pending.digest)
    }
}

/// What becomes of a call that needs approval under 2026-07-28.
pub(super) enum Outcome {
    /// The envelope to return.
    Done(Observation),
    /// The question to return; the client retries with the answer.
    Ask(InputRequiredResult),
}

/// The outcome for `request` given what the retry (if it is one) brought back.
pub(super) async fn resolve(
    inner: &Inner,
    request: ApprovalRequest,
    answer: Option<(&str, Option<&serde_json::Value>)>,
    client: Option<&ClientCapabilities>,
    ctx: &ToolContext,
) -> Outcome {
    // A replay, or a call an operator already decided out of band, asks nobody.
    let (request, existing) = match approval::settle(inner, request).await {
        Ok(waiting) => waiting,
        Err(observation) => {
            // The answer this retry brought is used up with the call: replayed later, it must
            // not release the call a second time.
            if let Some((handle, _)) = answer {
                inner.questions.take(handle);
            }
            return Outcome::Done(observation);
        }
    };
    if let Some((handle, response)) = answer {
        return Outcome::Done(answered(inner, request, existing, handle, response, ctx).await);
    }
    if !inner.elicitation || !client.is_some_and(form_elicitation) {
        return Outcome::Done(
            approval::out_of_band(
                inner,
                request,
                existing,
                "the client did not declare form elicitation",
            )
            .await,
        );
    }
    let Some(message) = approval::question(&request) else {
        return Outcome::Done(
            approval::out_of_band(
                inner,
                request,
                existing,
                "the arguments are too long to show in the client",
            )
            .await,
        );
    };
    let Ok(requested_schema) = approval::form() else {
        return Outcome::Done(
            approval::out_of_band(
                inner,
                request,
                existing,
                "the approval form could not be built",
            )
            .await,
        );
    };
    // A question outlives no deadline of the call that asked it.
    let mut expires = Instant::now() + inner.approval_timeout;
    if let Some(deadline) = ctx.deadline() {
        expires = expires.min(deadline);
    }
    let Some(handle) = inner.questions.ask(request.digest(), expires) else {
        return Outcome::Done(
            approval::out_of_band(
                inner,
                request,
                existing,
                "too many approval questions are waiting for an answer",
            )
            .await,
        );
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    };
    let mut requests = BTreeMap::new();
    requests.insert(
        APPROVAL_INPUT.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(params)),
    );
    Outcome::Ask(InputRequiredResult::new(Some(requests), Some(handle)))
}

/// The retry of a call that asked: the answer applies only to the question it answers.
async fn answered(
    inner: &Inner,
    request: ApprovalRequest,
    existing: Option<Box<PendingApproval>>,
    handle: &str,
    response: Option<&serde_json::Value>,
    ctx: &ToolContext,
) -> Observation {
    let Some(asked_about) = inner.questions.take(handle) else {
        return approval::out_of_band(
            inner,
            request,
            existing,
            "the answer came back for no open question (unknown, already answered or expired)",
        )
        .await;
    };
    if asked_about != request.digest() {
        return approval::out_of_band(
            inner,
            request,
            existing,
            "the answer was given for another call (its arguments or caller differ)",
        )
        .await;
    }
    let Some(result) =
        response.and_then(|r| serde_json::from_value::<ElicitResult>(r.clone()).ok())
    else {
        return approval::out_of_band(
            inner,
            request,
            existing,
            "the client sent no approval answer",
        )
        .await;
    };
    let approved = result
        .content
        .as_ref()
        .and_then(|c| c.get("approve"))
        .and_then(serde_json::Value::as_bool);
    // The same mapping as an elicitation answer.
    approval::decide(
        inner,
        request,
        existing,
        result.action,
        approved,
        &approver(ctx),
    )
    .await
}

/// Whether `client` declared form elicitation (an empty elicitation capability means form).
fn form_elicitation(client: &ClientCapabilities) -> bool {
    client
        .elicitation
        .as_ref()
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// Who approved, as far as the server can tell: the client asserts that its user said yes,
/// as with elicitation.
fn approver(ctx: &ToolContext) -> String {
    match ctx.principal() {
        Some(principal) => format!("{principal} (client-asserted, via MCP input request)"),
        None => "unknown MCP client user (client-asserted, via MCP input request)".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_handle_is_used_once_and_not_after_it_expires() {
        let questions = PendingQuestions::default();
        let later = Instant::now() + Duration::from_secs(60);
        let handle = questions.ask("sha256:a", later).unwrap();
        assert_eq!(handle.len(), 32, "128 random bits, hex");
        assert_ne!(questions.ask("sha256:a", later).unwrap(), handle);
        assert_eq!(questions.take(&handle).as_deref(), Some("sha256:a"));
        assert_eq!(questions.take(&handle), None, "used up");
        let expired = questions.ask("sha256:b", Instant::now()).unwrap();
        assert_eq!(questions.take(&expired), None, "expired");
    }

    #[test]
    fn open_questions_are_bounded_and_expired_ones_make_room() {
        let questions = PendingQuestions::default();
        let later = Instant::now() + Duration::from_secs(60);
        for _ in 0..MAX_PENDING - 1 {
            questions.ask("sha256:live", later).unwrap();
        }
        questions.ask("sha256:old", Instant::now()).unwrap();
        // Full, but one is expired: it goes, the new one fits.
        let fits = questions.ask("sha256:new", later).unwrap();
        assert_eq!(questions.take(&fits).as_deref(), Some("sha256:new"));
        questions.ask("sha256:new", later).unwrap();
        assert_eq!(
            questions.ask("sha256:more", later),
            None,
            "full of live questions"
        );
    }
}
